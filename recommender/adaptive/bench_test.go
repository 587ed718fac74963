package adaptive

import (
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
func BenchmarkAdaptive(b *testing.B) {
	for _, bc := range []struct {
		name string
		pods int // samples per container and minute; 0: no recommendation
	}{{"samples", 0}, {"recommend-per-3-samples", 3}, {"recommend-per-sample", 1}} {
		b.Run(bc.name, func(b *testing.B) { benchAdaptive(b, bc.pods) })
	}
}

func benchAdaptive(b *testing.B, pods int) {
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
	per := max(pods, 1)
	b.ReportAllocs()
	start := time.Now()
	i := 0
	for b.Loop() {
		minute := i / (n * per)
		s := states[i%n]
		at := t0.Add(time.Duration(minute+1)*time.Minute + time.Duration((i/n)%per)*time.Second)
		s.AddCPU(at, cpu[i&4095])
		s.AddMemory(at, mem[i&4095])
		if pods > 0 && i%(n*per) == n*per-1 { // a minute of samples: one recommendation per container
			for _, st := range states {
				st.Recommend(at.Add(30*time.Second), up, 1, p)
			}
		}
		i++
	}
	b.ReportMetric(float64(i)/time.Since(start).Seconds(), "samples/s")
}
