package scaling

import (
	"slices"
	"strings"
	"testing"
	"time"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// TestReturnFromRecurringBurst pins the return from a recurring burst (docs/design/scaling.md sections 2a and
// 5): once the burst the total rose for has ended, the CPU total falls back at once, without waiting for the
// scale-down stabilization, to the pods' whole usage since the end (at least the usage before the burst) plus
// headroom, spread over the replicas as it is; the burst is no part of the CPU estimate after its end; and a
// scale-down waits while the burst is due again within RecurQuiet.
func TestReturnFromRecurringBurst(t *testing.T) {
	const mi = float64(1 << 20)
	// four pods of 1774m, the size of the burst, whose base (5% of the requests) is 355m in all; an hour of
	// samples: 42 minutes before the burst, its 15 minutes (6,000m above the base) and 3 minutes since its
	// end, 800m of usage (445m above the base)
	base := 4 * 1774 * 0.05
	samples := append(append(steady(42, V(600, 10000*mi)), steady(15, V(6000, 10000*mi))...), steady(3, V(800-base, 10000*mi))...)
	state := func() State {
		st := loadState(4, V(1774, 2875*mi), V(3000, 10000*mi), samples)
		rec := &st.Recommendation[0]
		rec.RecurringFrom = st.Now.Add(-19 * time.Minute) // ahead from 4 minutes before the burst
		rec.RecurringEnded = st.Now.Add(-2 * time.Minute) // the first of the 3 minutes since
		rec.RecurringBefore = 900                         // the usage before it
		rec.RecurringNext = rec.RecurringFrom.Add(time.Hour)
		rise := st.Now.Add(-18 * time.Minute) // the rise ahead of it
		st.LastScaleTime = &rise
		return st
	}
	spec := func() *Spec {
		s := trackingSpec()
		s.Base[CPU] = pct(5)
		s.ScaleDown.Stabilization = 30 * time.Minute
		return s
	}
	h := 1 + DefaultTracking.Headroom
	cases := map[string]struct {
		edit func(*State)
		// wantTotal is the CPU total after the decision; whole: spread as it is; held: the reason a fall waits
		wantTotal float64
		whole     bool
		held      string
	}{
		"the burst ended: back to the usage before it, now": {wantTotal: 900 * h, whole: true},
		"the usage since the end above the one before": {edit: func(st *State) {
			st.Recommendation[0].RecurringBefore = 700
		}, wantTotal: 800 * h, whole: true},
		"no usage before it known": {edit: func(st *State) {
			st.Recommendation[0].RecurringBefore = -1
		}, wantTotal: 800 * h, whole: true},
		// a rise in the end's first minute read the burst's last sample: it rose for the burst still
		"the last rise in the first minute of the end": {edit: func(st *State) {
			at := st.Recommendation[0].RecurringEnded.Add(30 * time.Second)
			st.LastScaleTime = &at
		}, wantTotal: 900 * h, whole: true},
		// the last scaling is not the burst's rise: the stabilization holds the fall
		"the last scaling before the burst was ahead": {edit: func(st *State) {
			at := st.Recommendation[0].RecurringFrom.Add(-5 * time.Minute)
			st.LastScaleTime = &at
		}, wantTotal: 4 * 1774, held: "stabilization is 30m0s"},
		"the fall back made already": {edit: func(st *State) {
			at := st.Recommendation[0].RecurringEnded.Add(2 * time.Minute)
			st.LastScaleTime = &at
		}, wantTotal: 4 * 1774, held: "stabilization is 30m0s"},
		// after a restart of the recommender: its end noted at the new process's first minutes, the minutes
		// since the last one sampled before (8 minutes ago) nobody sampled; the last scaling, 5 minutes ago, in
		// them may have been the fall back the old process made already: the stabilization holds the fall
		"the last scaling in minutes nobody sampled before the end": {edit: func(st *State) {
			st.Recommendation[0].RecurringEndedEarliest = st.Now.Add(-8 * time.Minute)
			at := st.Now.Add(-5 * time.Minute)
			st.LastScaleTime = &at
		}, wantTotal: 4 * 1774, held: "stabilization is 30m0s"},
		"the rise for it before the minutes nobody sampled": {edit: func(st *State) {
			st.Recommendation[0].RecurringEndedEarliest = st.Now.Add(-8 * time.Minute)
		}, wantTotal: 900 * h, whole: true},
		// a burst in two parts: the second is ahead now, and the total holds for it
		"the burst ended, another ahead now": {edit: func(st *State) {
			st.Recommendation[0].RecurringCPU = 5000
		}, wantTotal: 4 * 1774, held: "stabilization is 30m0s"},
		// a fall back that did not come within RecurReturnWithin of the end is a fall like any
		"the burst ended 10 minutes ago": {edit: func(st *State) {
			st.Recommendation[0].RecurringEnded = st.Now.Add(-RecurReturnWithin)
		}, wantTotal: 4 * 1774, held: "stabilization is 30m0s"},
		"no burst ended": {edit: func(st *State) {
			st.Recommendation[0].RecurringFrom, st.Recommendation[0].RecurringEnded = time.Time{}, time.Time{}
		}, wantTotal: 4 * 1774, held: "stabilization is 30m0s"},
		// a burst under way (ahead, not ended): scale-downs wait for its end, whatever the stabilization
		"stabilization over, the burst under way": {edit: func(st *State) {
			at := st.Now.Add(-2 * time.Hour)
			st.LastScaleTime = &at
			st.Recommendation[0].RecurringEnded = time.Time{}
		}, wantTotal: 4 * 1774, held: "a recurring burst is under way since 11:41: scaleDown waits for its end"},
		// with the stabilization over, a burst that ended is no part of the CPU estimate: the load since its
		// end, above the base of the pods in force, sets the level
		"stabilization over: the estimate reads the minutes since the end": {edit: func(st *State) {
			at := st.Now.Add(-2 * time.Hour)
			st.LastScaleTime = &at
			st.Recommendation[0].RecurringNext = time.Time{}
		}, wantTotal: (800-base)*h + base},
		"stabilization over, the burst due again in 10 minutes: the fall waits for it": {edit: func(st *State) {
			at := st.Now.Add(-2 * time.Hour)
			st.LastScaleTime = &at
			st.Recommendation[0].RecurringNext = st.Now.Add(10 * time.Minute)
		}, wantTotal: 4 * 1774, held: "a recurring burst is ahead at 12:10, within 15m0s"},
		"stabilization over, the burst ahead since a minute: the fall waits": {edit: func(st *State) {
			at := st.Now.Add(-2 * time.Hour)
			st.LastScaleTime = &at
			st.Recommendation[0].RecurringNext = st.Now.Add(-time.Minute)
		}, wantTotal: 4 * 1774, held: "a recurring burst is ahead at 11:59"},
		"stabilization over, the burst due in 20 minutes: no wait": {edit: func(st *State) {
			at := st.Now.Add(-2 * time.Hour)
			st.LastScaleTime = &at
			st.Recommendation[0].RecurringNext = st.Now.Add(20 * time.Minute)
		}, wantTotal: (800-base)*h + base},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := state()
			if tc.edit != nil {
				tc.edit(&st)
			}
			d, err := Decide(spec(), st)
			if err != nil {
				t.Fatal(err)
			}
			var cpu *Total
			for i := range d.Totals {
				if d.Totals[i].Resource == CPU {
					cpu = &d.Totals[i]
				}
			}
			if cpu == nil || !near(cpu.Total, tc.wantTotal) || cpu.Whole != tc.whole {
				t.Fatalf("cpu total %+v, want %v (whole %v)", cpu, tc.wantTotal, tc.whole)
			}
			got, _ := d.Containers[0].Requests.Get(CPU)
			if tc.held != "" {
				// a total that follows the load and is held moves nothing (no part to block): the reason is
				// the gate's
				reason, msg, blocked := gate(spec(), stateFor(st), hvpav1alpha1.DirectionDown, nil, 0, 0)
				if got != 1774 || !blocked || reason != hvpav1alpha1.BlockReasonStabilizationWindow || !strings.Contains(msg, tc.held) {
					t.Fatalf("cpu %vm per pod, scale-down gate %v %q %q: want 1774m held (%q)", got, blocked, reason, msg, tc.held)
				}
				return
			}
			// the pods are sized for fewer replicas (the memory's, resized first); a whole usage is spread as
			// it is, a load's total budgets the pods' base (section 4)
			want := RoundUp(tc.wantTotal / float64(d.SizedFor))
			if !tc.whole {
				want = RoundUp((tc.wantTotal - base + 0.05*tc.wantTotal) / float64(d.SizedFor))
			}
			if d.SizedFor >= 4 || got != want {
				t.Fatalf("sized for %d replicas, %vm a pod; want fewer than 4, %vm a pod", d.SizedFor, got, want)
			}
		})
	}
}

// stateFor is st as Decide reads it (what it derives from the recommendations).
func stateFor(st State) State {
	st.returning, st.burstSoon, st.burstSince = returningFrom(st), burstSoon(st), burstUnderWay(st)
	return st
}

// TestRecurringBurstHold pins when a scale-down waits for a recurring burst (docs/design/scaling.md section 5):
// while one is under way (ahead, not ended, for less than RecurUnderWay) and within RecurQuiet before it is
// ahead again (up to RecurLead after); never the fall back from one that has ended, never a scale-up.
func TestRecurringBurstHold(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	spec := epSpec()
	cases := map[string]struct {
		from, ended, next time.Duration // from now; 0: none
		up, returning     bool
		want              string // the message of the hold; "": none
	}{
		"no burst":                          {},
		"under way for 20 minutes":          {from: -20 * time.Minute, want: "under way since 11:40"},
		"under way for 59 minutes":          {from: -59 * time.Minute, want: "under way since 11:01"},
		"ahead an hour ago and not ended":   {from: -time.Hour},
		"ended":                             {from: -20 * time.Minute, ended: -5 * time.Minute},
		"ahead again in 15 minutes":         {from: -45 * time.Minute, ended: -30 * time.Minute, next: 15 * time.Minute, want: "ahead at 12:15, within 15m0s"},
		"ahead again in 16 minutes":         {from: -44 * time.Minute, ended: -30 * time.Minute, next: 16 * time.Minute},
		"ahead again since 3 minutes":       {from: -63 * time.Minute, ended: -48 * time.Minute, next: -3 * time.Minute, want: "ahead at 11:57"},
		"ahead again since 4 minutes":       {from: -64 * time.Minute, ended: -48 * time.Minute, next: -4 * time.Minute},
		"a scale-up, under way":             {from: -20 * time.Minute, up: true},
		"the fall back from one that ended": {from: -20 * time.Minute, ended: -5 * time.Minute, returning: true},
		// a burst due within RecurQuiet holds the fall back too: it would take it back
		"the fall back, another burst due in 10 minutes": {from: -20 * time.Minute, ended: -5 * time.Minute, next: 10 * time.Minute, returning: true, want: "ahead at 12:10"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rec := Recommendation{Name: "app"}
			at := func(d time.Duration) time.Time {
				if d == 0 {
					return time.Time{}
				}
				return now.Add(d)
			}
			rec.RecurringFrom, rec.RecurringEnded, rec.RecurringNext = at(tc.from), at(tc.ended), at(tc.next)
			st := stateFor(State{Now: now, Recommendation: []Recommendation{rec}})
			st.returning = tc.returning
			dir := hvpav1alpha1.DirectionDown
			if tc.up {
				dir = hvpav1alpha1.DirectionUp
			}
			_, msg, blocked := gate(spec, st, dir, nil, 0, 0)
			if blocked != (tc.want != "") || !strings.Contains(msg, tc.want) {
				t.Fatalf("blocked %v %q, want %q", blocked, msg, tc.want)
			}
		})
	}
}

// TestWithoutBurst pins which samples the CPU estimate reads once a recurring burst has ended: all but those
// from the first minute it was ahead to its end.
func TestWithoutBurst(t *testing.T) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	recent := make([]LoadSample, 6)
	for i := range recent {
		recent[i] = LoadSample{At: t0.Add(time.Duration(i) * time.Minute), Load: V(float64(i), -1)}
	}
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	cases := map[string]struct {
		from, end time.Time
		want      []float64 // the CPU of the samples kept
	}{
		"in the middle":         {from: at(2), end: at(4), want: []float64{0, 1, 4, 5}},
		"from before the first": {from: at(-5), end: at(3), want: []float64{3, 4, 5}},
		"between two samples":   {from: at(1).Add(30 * time.Second), end: at(2).Add(30 * time.Second), want: []float64{0, 1, 3, 4, 5}},
		"all before the window": {from: at(-9), end: at(-3), want: []float64{0, 1, 2, 3, 4, 5}},
	}
	for name, tc := range cases {
		var buf [recentBuf]LoadSample
		var got []float64
		for _, s := range withoutBurst(recent, tc.from, tc.end, buf[:0]) {
			v, _ := s.Load.Get(CPU)
			got = append(got, v)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	if recent[2].At != at(2) {
		t.Error("recent was changed")
	}
}
