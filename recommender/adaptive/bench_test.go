package adaptive

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
)

// BenchmarkAdaptive measures container samples per second (a CPU and a memory sample into the state of one
// of 1000 containers, scored against every candidate):
//   - samples: the samples alone;
//   - recommend-per-3-samples: and a recommendation of every container each minute, with 3 samples per
//     container and minute (3 pods: the shared traces have 1 to 4 pods per container);
//   - recommend-per-sample: the same with 1 pod, the worst case.
//
// Two cases of each: warmup/ starts with states one sample old, so the timed samples (a few simulated hours
// at most) fall within the 24 h warmup, where upstream wins and no winner is chosen, and the daily
// candidates have no schedule; warm/ starts with states fed 8 days of samples (every 5 minutes, a
// recommendation every 6 hours, every hour on the last day; untimed, about 10 s),
// past the warmup and the 7-day daily candidates' history, so that every 5 minutes the winners are chosen
// and every hour the daily schedules are made anew, as in a recommender that has run for days.
func BenchmarkAdaptive(b *testing.B) {
	for _, warm := range []bool{false, true} {
		for _, bc := range []struct {
			name string
			pods int // samples per container and minute; 0: no recommendation
		}{{"samples", 0}, {"recommend-per-3-samples", 3}, {"recommend-per-sample", 1}} {
			name := "warmup/" + bc.name
			if warm {
				name = "warm/" + bc.name
			}
			b.Run(name, func(b *testing.B) { benchAdaptive(b, bc.pods, warm) })
		}
	}
}

// warmDays is the history the warm/ cases start with.
const warmDays = 8

func benchAdaptive(b *testing.B, pods int, warm bool) {
	m := mustModel(b, Defaults(recommender.Defaults()))
	const n = 1000
	states := make([]*State, n)
	for i := range states {
		states[i] = m.NewState()
	}
	rng := rand.New(rand.NewSource(1))
	cpu, mem := make([]float64, 4096), make([]float64, 4096)
	for i := range cpu {
		cpu[i] = 0.2 + rng.Float64()*0.6
		mem[i] = 300e6 + rng.Float64()*200e6
	}
	up := recommender.Recommendation{Target: recommender.Amounts{CPUMilli: 700, MemoryBytes: 6e8}, UncappedTarget: recommender.Amounts{CPUMilli: 700, MemoryBytes: 6e8},
		LowerBound: recommender.Amounts{CPUMilli: 300, MemoryBytes: 3e8}, UpperBound: recommender.Amounts{CPUMilli: 2000, MemoryBytes: 2e9}}
	p := recommender.DefaultPolicy()
	for _, st := range states { // every candidate has a target, as after the first interval
		st.AddCPU(t0, 0.5)
		st.AddMemory(t0, 4e8)
		st.Recommend(t0.Add(time.Second), up, 1, p)
	}
	start := t0
	if warm {
		start = warmUp(states, cpu, mem, up, p)
		if !warmed(states[0]) {
			b.Fatal("the states are not warm: before the warmup, or a daily candidate without a schedule")
		}
	}
	per := max(pods, 1)
	b.ReportAllocs()
	began := time.Now()
	i := 0
	for b.Loop() {
		minute := i / (n * per)
		s := states[i%n]
		at := start.Add(time.Duration(minute+1)*time.Minute + time.Duration((i/n)%per)*time.Second)
		s.AddCPU(at, cpu[i&4095])
		s.AddMemory(at, mem[i&4095])
		if pods > 0 && i%(n*per) == n*per-1 { // a minute of samples: one recommendation per container
			for _, st := range states {
				st.Recommend(at.Add(30*time.Second), up, 1, p)
			}
		}
		i++
	}
	b.ReportMetric(float64(i)/time.Since(began).Seconds(), "samples/s")
	b.ReportMetric(float64(i/(n*per))/60, "simulated-hours")
}

// warmed: past the warmup, and every daily candidate (the 7-day ones too) has a schedule.
func warmed(s *State) bool {
	for i := range s.specs {
		if s.sched[i] == ([24]float64{}) {
			return false
		}
	}
	return s.warm && len(s.specs) > 0
}

// warmUp feeds every state warmDays of samples after t0, a sample every 5 minutes on a day curve (so that
// the daily candidates have hours that differ), and a recommendation every 6 hours, every hour on the last
// day (the scores' half-life is 12 h; each recommendation in a new hour makes the daily schedules anew, about
// 0.2 ms a container: at every 5 minutes the warmup would take minutes), and returns the time the samples
// end at.
func warmUp(states []*State, cpu, mem []float64, up recommender.Recommendation, p recommender.Policy) time.Time {
	const step = 5 * time.Minute
	end := t0.Add(warmDays * 24 * time.Hour)
	k := 0
	for at := t0.Add(step); at.Before(end); at = at.Add(step) {
		curve := 1 + 0.3*math.Sin(2*math.Pi*float64(at.Unix()%86400)/86400)
		for _, st := range states {
			st.AddCPU(at, cpu[k&4095]*curve)
			st.AddMemory(at, mem[k&4095])
			if at.Minute() == 0 && (at.Hour()%6 == 0 || end.Sub(at) <= 24*time.Hour) {
				st.Recommend(at.Add(time.Second), up, 1, p)
			}
			k++
		}
	}
	return end
}
