package recommender

import (
	"math"
	"testing"
	"time"
)

// TestMemoryRise pins the memory rise of a workload total's recent load: the largest factor by which memory
// rose within RiseWindow, an OOM kill's needed memory counting as a sample, and the samples of restarted
// containers (within RiseWindow after a kill, their memory starts low again) no base of a rise.
func TestMemoryRise(t *testing.T) {
	const gi = float64(1 << 30)
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	type step struct {
		minute int
		mem    float64
		oom    bool // an OOM kill that needed mem
	}
	cases := map[string]struct {
		steps []step
		want  float64
	}{
		"steady: no rise":          {steps: []step{{0, 4 * gi, false}, {1, 4 * gi, false}, {2, 4 * gi, false}}, want: 0},
		"a rise within the window": {steps: []step{{0, 4 * gi, false}, {1, 5 * gi, false}, {2, 6 * gi, false}}, want: 0.5},
		"a rise slower than the window is no rise": {steps: []step{{0, 4 * gi, false}, {4, 5 * gi, false}, {8, 6 * gi, false}},
			want: 0},
		"an OOM kill counts what it needed": {steps: []step{{0, 4 * gi, false}, {1, 4 * gi, false}, {2, 8 * gi, true}}, want: 1},
		// the kill restarts the containers: the next samples are small and the memory grows back; neither the
		// small samples nor the growth back is a rise of the workload's memory
		"the restarted containers' samples are no base": {steps: []step{{0, 4 * gi, false}, {1, 4 * gi, false}, {2, 5 * gi, true},
			{3, 0.5 * gi, false}, {4, 3 * gi, false}, {5, 4.5 * gi, false}}, want: 0.25},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var r recentLoad
			last := t0
			for _, s := range tc.steps {
				last = at(s.minute)
				if s.oom {
					r.oom(last, s.mem)
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
