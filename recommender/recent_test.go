package recommender

import (
	"math"
	"testing"
	"time"
)

// TestMemoryRise pins the memory rise of a workload total's recent load: the largest factor by which memory
// rose within RiseWindow, an OOM kill's served memory counting as a rise (its needed memory as the sample),
// and the samples of killed and restarted containers (from a storm's first kill to RiseWindow after its last,
// their memory stopped at the limit or starts low again) no base of a rise.
func TestMemoryRise(t *testing.T) {
	const gi = float64(1 << 30)
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	type step struct {
		minute int
		mem    float64
		oom    bool    // an OOM kill that needed mem
		served float64 // the kill's served memory (0: mem)
	}
	cases := map[string]struct {
		steps []step
		want  float64
	}{
		"steady: no rise":          {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0}, {2, 4 * gi, false, 0}}, want: 0},
		"a rise within the window": {steps: []step{{0, 4 * gi, false, 0}, {1, 5 * gi, false, 0}, {2, 6 * gi, false, 0}}, want: 0.5},
		"a rise slower than the window is no rise": {steps: []step{{0, 4 * gi, false, 0}, {4, 5 * gi, false, 0}, {8, 6 * gi, false, 0}},
			want: 0},
		"an OOM kill counts what it needed": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0}, {2, 8 * gi, true, 0}}, want: 1},
		// one pod of two served the load when it was killed (the other starting): the next decisions size both
		// pods for its bump (the sample), but the load rose by the bump alone
		"a kill of a pod serving alone rises by what it served": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0},
			{2, 9.6 * gi, true, 4.8 * gi}}, want: 0.2},
		// the storm's second kill comes after a sample of the first kill's restarted container (1Gi): that
		// sample is no base of the second kill's rise, though it is older than that kill
		"a storm's samples between its kills are no base": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0},
			{2, 4.8 * gi, true, 0}, {3, 1 * gi, false, 0}, {4, 4.8 * gi, true, 0}, {6, 5 * gi, false, 0}}, want: 0.2},
		// two pods' kills recorded out of order (the later first): the storm still ends 3 min after the later
		// one, so the restarted container's 1Gi at +3 min is no base
		"kills out of order": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0}, {3, 4.8 * gi, true, 0},
			{2, 4.8 * gi, true, 0}, {6, 1 * gi, false, 0}, {7, 4.8 * gi, false, 0}}, want: 0.2},
		// a kill recorded late, long before the storm (older than the last run: old news): the storm's span
		// stays, and the sample of 1Gi before it is still the base of the rise to 5Gi
		"a late kill of an earlier storm": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0}, {8, 4 * gi, false, 0},
			{9, 1 * gi, false, 0}, {10, 4.8 * gi, true, 0}, {2, 4.8 * gi, true, 0}, {12, 5 * gi, false, 0}}, want: 4},
		// the recommender run records its sample (the killed container restarted: 2Gi) and then the kill, which
		// came before the sample: the sample is no base of the kill's rise
		"a kill recorded after its run's sample": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0}, {3, 2 * gi, false, 0},
			{2, 4.8 * gi, true, 0}}, want: 0.2},
		// a second storm (its kill more than 3 min after the first's) does not end the first: the first's
		// restarted containers' 1Gi are still no base, of the second kill nor of what follows
		"a second storm keeps the first's samples out": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0},
			{2, 4.8 * gi, true, 0}, {3, 1 * gi, false, 0}, {4, 1 * gi, false, 0}, {5, 4 * gi, false, 0}, {6, 4.8 * gi, true, 0},
			{7, 4 * gi, false, 0}}, want: 0.2},
		// a kill from before the last run (more than 3 min before it: a new process reads the kills its pods
		// still report) is old news: no rise
		"an old kill is no rise": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0}, {2, 4 * gi, false, 0},
			{3, 4 * gi, false, 0}, {4, 4 * gi, false, 0}, {5, 4 * gi, false, 0}, {6, 4 * gi, false, 0}, {1, 8 * gi, true, 0}}, want: 0},
		// the kill restarts the containers: the next samples are small and the memory grows back; neither the
		// small samples nor the growth back is a rise of the workload's memory
		"the restarted containers' samples are no base": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0}, {2, 5 * gi, true, 0},
			{3, 0.5 * gi, false, 0}, {4, 3 * gi, false, 0}, {5, 4.5 * gi, false, 0}}, want: 0.25},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var r recentLoad
			last := t0
			for _, s := range tc.steps {
				last = at(s.minute)
				if s.oom {
					served := s.mem
					if s.served > 0 {
						served = s.served
					}
					r.oom(last, s.mem, served)
					continue
				}
				r.add(LoadSample{At: last, CPUMilli: 100, MemoryBytes: s.mem})
			}
			if got := r.riseAsOf(last); math.Abs(got-tc.want) > 1e-3 {
				t.Errorf("rise %.4f, want %.4f", got, tc.want)
			}
		})
	}
}

// TestOldOOMIsNoRecentLoad: a kill older than the recent load's last run (more than RiseWindow before the
// sample that preceded the newest, or with a single sample more than RiseWindow before it: a new process
// reads the kills its pods still report, however old) raises no sample; a kill since the last run, or one the
// run before could not see yet, raises the newest sample to what it needed (the run records its sample before
// the kills since the run before).
func TestOldOOMIsNoRecentLoad(t *testing.T) {
	const gi = float64(1 << 30)
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(m float64) time.Time { return t0.Add(time.Duration(m * float64(time.Minute))) }
	cases := map[string]struct {
		samples []float64 // minutes of the samples, 4Gi each
		kill    float64   // minute of the kill, which needed 8Gi
		want    float64   // the newest sample's memory after it
	}{
		"a kill since the last run":             {samples: []float64{0, 1, 2}, kill: 1.5, want: 8 * gi},
		"a kill the last run could not see yet": {samples: []float64{0, 1, 2}, kill: 0.5, want: 8 * gi},
		"a kill long before the last run":       {samples: []float64{0, 1, 2, 3, 4, 5, 6}, kill: 1, want: 4 * gi},
		"a kill of yesterday":                   {samples: []float64{0, 1, 2}, kill: -24 * 60, want: 4 * gi},
		"a new process: a kill of a minute ago": {samples: []float64{10}, kill: 9, want: 8 * gi},
		"a new process: a kill of an hour ago":  {samples: []float64{60}, kill: 0, want: 4 * gi},
		"a kill newer than every sample":        {samples: []float64{0, 1}, kill: 1.5, want: 8 * gi},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var r recentLoad
			for _, m := range tc.samples {
				r.add(LoadSample{At: at(m), CPUMilli: 100, MemoryBytes: 4 * gi})
			}
			r.oom(at(tc.kill), 8*gi, 8*gi)
			if got := r.samples[len(r.samples)-1].MemoryBytes; got != tc.want {
				t.Errorf("newest sample %.2f Gi, want %.2f Gi", got/gi, tc.want/gi)
			}
		})
	}
}
