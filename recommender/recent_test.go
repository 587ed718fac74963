package recommender

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// TestMemoryRise pins the memory rise of a workload total's recent load: the largest factor by which memory
// rose within RiseWindow, an OOM kill's served memory counting as a rise (its needed memory as the sample),
// and the samples of killed and restarted containers (from a storm's first kill to RiseWindow after its last,
// their memory stopped at the limit or starts low again) no base of a rise; the samples up to RiseWindow past
// them rose from the memory before the storm.
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
			{2, 4.8 * gi, true, 0}, {3, 1 * gi, false, 0}, {4, 4.8 * gi, true, 0}, {6, 4.8 * gi, false, 0}}, want: 0.2},
		// past the storm, its restarted containers' samples are still no base, but the memory before it is
		"a sample past a storm rises from the memory before it": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0},
			{2, 4.8 * gi, true, 0}, {3, 1 * gi, false, 0}, {4, 4.8 * gi, true, 0}, {6, 5 * gi, false, 0}}, want: 0.25},
		// a kill recorded late becomes the storm's first: the restarted container's 1Gi after it (at 3) is no
		// base of the samples past the storm, which rise from the 4Gi before the late kill
		"a late kill moves the storm's start": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0}, {3, 1 * gi, false, 0},
			{4, 4.8 * gi, true, 1.2 * gi}, {2, 4.8 * gi, true, 0}, {8, 5 * gi, false, 0}}, want: 0.25},
		// storms one after another, each 10% above the last: each rises from the memory before its own storm or
		// the one just before, never from a base the storms carried along (which would read +33% by the third)
		"storms in a row carry no base along": {steps: []step{{0, 4 * gi, false, 0}, {1, 4 * gi, false, 0}, {2, 4.4 * gi, true, 0},
			{3, 1 * gi, false, 0}, {4, 4.4 * gi, false, 0}, {5, 4.4 * gi, false, 0}, {7, 4.84 * gi, true, 0}, {8, 1 * gi, false, 0},
			{9, 4.84 * gi, false, 0}, {10, 4.84 * gi, false, 0}, {12, 5.324 * gi, true, 0}, {13, 1 * gi, false, 0},
			{14, 5.324 * gi, false, 0}}, want: 0.21},
		// a jump the kills hid (a nightly job's memory, x6 at once): each kill saw its limit (bumped x1.2), the
		// restarted containers little; the first samples after the storm rose from the memory before it
		"a rise hidden by a storm": {steps: []step{{0, 2.5 * gi, false, 0}, {1, 2.5 * gi, false, 0}, {2, 3 * gi, true, 0},
			{3, 0.5 * gi, false, 0}, {4, 3.6 * gi, true, 0}, {5, 1 * gi, false, 0}, {8, 15 * gi, false, 0}}, want: 5},
		// up to RiseWindow past the storm's samples (2 x RiseWindow after its last kill)
		"a storm's base lasts RiseWindow past its samples": {steps: []step{{0, 2.5 * gi, false, 0}, {1, 2.5 * gi, false, 0},
			{2, 3 * gi, true, 0}, {3, 0.5 * gi, false, 0}, {8, 15 * gi, false, 0}}, want: 5},
		// but only just after it: a sample more than RiseWindow past the storm's samples has no base from before it
		"a storm's base ends with it": {steps: []step{{0, 2.5 * gi, false, 0}, {1, 2.5 * gi, false, 0}, {2, 3 * gi, true, 0},
			{3, 0.5 * gi, false, 0}, {9, 15 * gi, false, 0}}, want: 0.2},
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

// TestRecentSnapshotsStayAsTaken pins that a snapshot of the recent load (what a published recommendation
// holds, read by the Hvpa controller while the recommender goes on) shares the window's array but never sees
// a later change: samples appended past it, the window moving on over hours (its array moved), an OOM kill
// raising the newest sample's memory. The window itself holds the last RecentWindow of samples throughout.
func TestRecentSnapshotsStayAsTaken(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	sample := func(m int) LoadSample {
		return LoadSample{At: at(m), CPUMilli: float64(m), MemoryBytes: float64(1000 + m)}
	}
	type taken struct {
		snap, want []LoadSample
	}
	var r recentLoad
	var snaps []taken
	for m := 0; m < 4*60; m++ {
		r.add(sample(m))
		if m%5 == 0 {
			s := r.snapshot()
			snaps = append(snaps, taken{snap: s, want: append([]LoadSample(nil), s...)})
		}
		if m%7 == 0 { // the kill's memory goes into the newest sample (it is not newer than it), a snapshot's at times
			r.oom(at(m), float64(5000+m), float64(5000+m))
		}
		// the window: every sample of the last hour, oldest first
		if first := r.samples[0].At; at(m).Sub(first) > RecentWindow || (m >= 60 && at(m).Sub(first) < RecentWindow) {
			t.Fatalf("minute %d: the window starts at %v", m, first)
		}
		for i := 1; i < len(r.samples); i++ {
			if !r.samples[i].At.After(r.samples[i-1].At) {
				t.Fatalf("minute %d: samples out of order at %d", m, i)
			}
		}
	}
	for i, s := range snaps {
		for j := range s.want {
			if s.snap[j] != s.want[j] {
				t.Fatalf("snapshot %d changed at %d: %+v, taken as %+v", i, j, s.snap[j], s.want[j])
			}
		}
	}
	// a reader appending to a snapshot taken before the newest sample writes into an array of its own
	s := r.snapshot()
	r.add(sample(4 * 60))
	_ = append(s, sample(10_000))
	if got := r.samples[len(r.samples)-1]; got != sample(4*60) {
		t.Errorf("newest sample %+v after a reader appended to a snapshot, want %+v", got, sample(4*60))
	}
}

// TestRecentSnapshotsReadWhileAdding reads snapshots in another goroutine while the recent load goes on (as
// the Hvpa controller reads a published recommendation while the recommender runs): under the race detector
// (make test-unit) a write into an element a snapshot holds fails it; without it, every snapshot must read as
// it was taken: in time order, each sample's CPU its minute and its memory its minute's or the kill's.
func TestRecentSnapshotsReadWhileAdding(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	snaps := make(chan []LoadSample, 1)
	bad := make(chan string, 1)
	go func() {
		defer close(bad)
		for s := range snaps {
			for i, x := range s {
				m := x.At.Sub(t0) / time.Minute
				if x.CPUMilli != float64(m) || (x.MemoryBytes != float64(1000+m) && x.MemoryBytes != float64(5000+m)) ||
					(i > 0 && !x.At.After(s[i-1].At)) {
					bad <- fmt.Sprintf("sample %d of a snapshot reads %+v", i, x)
					return
				}
			}
		}
	}()
	var r recentLoad
	for m := range 300 {
		at := t0.Add(time.Duration(m) * time.Minute)
		r.add(LoadSample{At: at, CPUMilli: float64(m), MemoryBytes: float64(1000 + m)})
		select {
		case snaps <- r.snapshot():
		default:
		}
		if m%3 == 0 {
			r.oom(at, float64(5000+m), float64(5000+m))
		}
	}
	close(snaps)
	if msg, ok := <-bad; ok {
		t.Fatal(msg)
	}
}
