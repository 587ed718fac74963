package recommender

import (
	"math"
	"testing"
	"time"
	"unsafe"
)

// TestRecurringBurst pins the recurring burst of a workload total: the load ahead is the peak of a burst that
// came at this time of each of the last RecurTimes periods (within RecurLead, RecurRise and RecurMinRise above
// the load before it, held over RecurHold), for the shortest period of RecurPeriods that has one at every
// time; nothing for a spike, a burst missing from one of those times, one further ahead than RecurLead, a
// small load's noise, a slow rise, or a history shorter than RecurTimes periods.
func TestRecurringBurst(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	// load is the CPU at minute m (from t0) of a workload that runs low with bursts
	type shape func(m int) float64
	every := func(period, at, length int, low, high float64) shape { // a burst at minute at of every period
		return func(m int) float64 {
			if x := (m%period - at + period) % period; x < length {
				return high
			}
			return low
		}
	}
	hourly := func(at, length int, low, high float64) shape { return every(60, at, length, low, high) }
	day := 24 * 60
	cases := map[string]struct {
		load      shape
		now       int // the minute of the last sample (the history runs from minute 0 to it, one sample a minute)
		want      float64
		wantEvery time.Duration
	}{
		"an hourly burst 3 min ahead": {load: hourly(0, 12, 400, 2800), now: 4*60 - 3, want: 2800, wantEvery: time.Hour},
		"an hourly burst 1 min ahead": {load: hourly(0, 12, 400, 2800), now: 4*60 - 1, want: 2800, wantEvery: time.Hour},
		"an hourly burst 6 min ahead": {load: hourly(0, 12, 400, 2800), now: 4*60 - 6},
		// in the burst, the load before it is the burst: the recent load has it
		"an hourly burst under way": {load: hourly(0, 12, 400, 2800), now: 4*60 + 2},
		"a burst of two hours of three": {load: func(m int) float64 {
			if m/60 == 2 {
				return 400
			}
			return hourly(0, 12, 400, 2800)(m)
		}, now: 4*60 - 2},
		"an hourly spike of 3 min":  {load: hourly(0, 3, 400, 2800), now: 4*60 - 2},
		"a history of two hours":    {load: hourly(0, 12, 400, 2800), now: 2*60 - 2},
		"a small load's doubling":   {load: hourly(0, 12, 20, 60), now: 4*60 - 2},
		"a burst 1.4x the load":     {load: hourly(0, 12, 1000, 1400), now: 4*60 - 2},
		"a burst 100m over a small": {load: hourly(0, 12, 50, 160), now: 4*60 - 2, want: 160, wantEvery: time.Hour},
		"a slow rise (1% a minute)": {load: func(m int) float64 { return 400 * (1 + 0.01*float64(m)) }, now: 4*60 - 2},
		// the level is the peak of the RecurSpan after the first time the burst was ahead of (RecurLead before
		// it: to its minute 9), the largest of the times'
		"a burst that grows, larger last hour": {load: func(m int) float64 {
			b := hourly(0, 12, 400, 2000)(m)
			if b > 400 {
				b += float64(m%60) * 50 // 2,450 at minute 9
				if m/60 == 3 {
					b += 300
				}
			}
			return b
		}, now: 4*60 - 2, want: 2000 + 9*50 + 300, wantEvery: time.Hour},
		"a burst every 2 hours":            {load: every(120, 0, 20, 400, 2800), now: 8*60 - 2, want: 2800, wantEvery: 2 * time.Hour},
		"a burst every 2 hours, 2 times":   {load: every(120, 0, 20, 400, 2800), now: 6*60 - 2},
		"a burst every 6 hours at 02:30":   {load: every(360, 150, 30, 400, 2800), now: 3*360 + 150 - 3, want: 2800, wantEvery: 6 * time.Hour},
		"a daily burst":                    {load: every(day, 120, 45, 300, 5000), now: 3*day + 120 - 2, want: 5000, wantEvery: 24 * time.Hour},
		"a daily burst, 2 days of history": {load: every(day, 120, 45, 300, 5000), now: 2*day + 120 - 2},
		"a daily burst 6 min ahead":        {load: every(day, 120, 45, 300, 5000), now: 3*day + 120 - 6},
		"a daily burst missing a day": {load: func(m int) float64 {
			if m/day == 1 {
				return 300
			}
			return every(day, 120, 45, 300, 5000)(m)
		}, now: 3*day + 120 - 2},
		// an hourly burst comes at this time of every day too: the hour is its period, its level the last 3
		// hours' (larger bursts at this time of earlier days are not a daily burst of their own)
		"an hourly burst, 3 days": {load: func(m int) float64 {
			b := hourly(0, 12, 400, 2000)(m)
			if b > 400 && m < 2*day {
				b = 6000 // larger on the first days
			}
			return b
		}, now: 3*day - 2, want: 2000, wantEvery: time.Hour},
		// a nightly job that starts with an hourly one: a burst of its own on top, read as daily (not as every
		// 8 or 12 hours, whose other times had the hourly burst alone)
		"an hourly burst and a nightly one at the same time": {load: func(m int) float64 {
			if x := m % day; x >= 120 && x < 160 {
				return 5000
			}
			return hourly(0, 12, 400, 1000)(m)
		}, now: 3*day + 120 - 2, want: 5000, wantEvery: 24 * time.Hour},
		"bursts every 30 min":   {load: every(30, 0, 10, 400, 2800), now: 4*60 - 2, want: 2800, wantEvery: time.Hour},
		"a burst every 90 min":  {load: every(90, 0, 20, 400, 2800), now: 5*90 - 2}, // no period of RecurPeriods
		"a burst every 4 hours": {load: every(240, 30, 20, 400, 2800), now: 3*240 + 30 - 2, want: 2800, wantEvery: 4 * time.Hour},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var l minuteLoad
			for m := 0; m <= tc.now; m++ {
				l.add(t0.Add(time.Duration(m)*time.Minute), tc.load(m))
			}
			if got, every := l.recurring(t0.Add(time.Duration(tc.now) * time.Minute)); got != tc.want || every != tc.wantEvery {
				t.Errorf("recurring %v every %v, want %v every %v", got, every, tc.want, tc.wantEvery)
			}
		})
	}
}

// TestRecurringBurstSamples pins minuteLoad's bookkeeping: the largest sample of a minute counts (samples
// more often than a minute), a minute's slot of hours ago is not read as this hour's, and a minute with no
// sample is none (samples less often than a minute).
func TestRecurringBurstSamples(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	var l minuteLoad
	l.add(t0, 100)
	l.add(t0.Add(20*time.Second), 300)
	l.add(t0.Add(40*time.Second), 200)
	if low, peak, ok := l.span(minuteOf(t0)-1, minuteOf(t0)); !ok || low != 300 || peak != 300 {
		t.Errorf("minute of three samples: %v %v %v, want 300 300 true", low, peak, ok)
	}
	// the same slot, recurRing minutes later: the old minute is gone, the new one alone
	later := t0.Add(time.Duration(recurRing) * time.Minute)
	l.add(later, 50)
	if _, _, ok := l.span(minuteOf(t0)-1, minuteOf(t0)); ok {
		t.Error("a minute recurRing ago is still read")
	}
	if _, peak, ok := l.span(minuteOf(later)-1, minuteOf(later)); !ok || peak != 50 {
		t.Errorf("the newer minute: %v %v, want 50 true", peak, ok)
	}
	if _, _, ok := l.span(minuteOf(later), minuteOf(later)+5); ok {
		t.Error("minutes with no sample read as samples")
	}
	// what every workload total keeps for it, three days of bursts (docs/design/scaling.md section 2a says 1.5 KiB)
	if size := unsafe.Sizeof(l); size > 1536 {
		t.Errorf("a workload total's minutes take %d bytes, more than 1.5 KiB", size)
	}
}

// TestWorkloadRecommendationRecurring checks that the workload total feeds its minutes from its CPU samples
// and gives the recurring burst in its recommendation, and that memory alone feeds none.
func TestWorkloadRecommendationRecurring(t *testing.T) {
	m, err := NewModel(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	s := NewState()
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	key := OwnerKey{Namespace: "ns", Owner: "hvpa", Container: "app"}
	total := s.Total(m, key, t0)
	load := func(i int) float64 {
		if i%60 < 12 {
			return 2.8
		}
		return 0.4
	}
	last := 4*60 - 2
	for i := 0; i <= last; i++ {
		total.AddLoad(t0.Add(time.Duration(i)*time.Minute), load(i), 1<<30)
		if i == 3*60+5 {
			// late samples (older than the last one) are none of the minutes either: these would take the
			// slots of the first minutes of the hour's burst, not judged yet, and it would be no burst
			for late := 3*60 - 16; late < 3*60-10; late++ {
				total.AddLoad(t0.Add(time.Duration(late)*time.Minute), 0.4, 1<<30)
			}
		}
	}
	// recommend is the recurring burst and the recent samples of the one container's recommendation
	recommend := func() (float64, int) {
		load, _ := s.WorkloadRecommendation("ns", "hvpa", func(string) Policy { return DefaultPolicy() })
		if len(load) != 1 {
			t.Fatalf("%d container recommendations, want 1", len(load))
		}
		if load[0].RecurringCPU > 0 && load[0].RecurringEvery != time.Hour {
			t.Fatalf("RecurringEvery %v, want an hour", load[0].RecurringEvery)
		}
		return load[0].RecurringCPU, len(load[0].Recent)
	}
	if burst, _ := recommend(); burst != 2800 {
		t.Fatalf("RecurringCPU %v, want 2800", burst)
	}
	// history restored again (a checkpoint read at a later run) keeps this process' samples
	s.LoadTotal(m, key, total.Aggregate)
	if burst, n := recommend(); burst != 2800 || n != 61 {
		t.Fatalf("after a restore: RecurringCPU %v and %d recent samples, want 2800 and the hour's 61", burst, n)
	}
	mem := s.Total(m, OwnerKey{Namespace: "ns", Owner: "other", Container: "app"}, t0)
	mem.AddLoad(t0, -1, 1<<30)
	if mem.byMinute != nil {
		t.Error("a memory sample alone made CPU minutes")
	}
}

// FuzzRecurringBurst feeds a workload total's minutes any samples (minutes apart, skipped, repeated, late)
// and checks that the recurring burst is none or the CPU of a sample of the last RecurTimes days, at least
// RecurMinRise (a burst is that far above the load before it, which is at least 0), and the same when a new
// process loads the checkpoint halfway and takes the rest of the samples.
func FuzzRecurringBurst(f *testing.F) {
	f.Add([]byte{1, 10, 1, 10, 1, 200, 1, 200, 60, 10, 1, 200}, uint16(500))
	f.Add([]byte{0, 255, 2, 0, 1, 3}, uint16(7))
	// an hourly burst for 4 hours, then 19 hours without a sample: the ring's slots hold old minutes, and the
	// bursts of 19 hours ago are none of any period's last times
	var hourly []byte
	for m := 0; m < 4*60-3; m++ {
		v := byte(20)
		if m%60 < 12 {
			v = 200
		}
		hourly = append(hourly, 1, v)
	}
	f.Add(hourly, uint16(100)) // a burst 3 minutes ahead
	f.Add(append(hourly, 219, 20), uint16(100))
	// a checkpoint as the fifth hour's burst comes (it was ahead the minutes before): the new process returns
	// from the burst the old one saw ahead (the later samples: 20 minutes, then the same minute again)
	var restart []byte
	for m := 0; m < 4*60+20; m++ {
		v := byte(20)
		if m%60 < 12 {
			v = 200
		}
		restart = append(restart, 1, v)
	}
	for len(restart) < 2*2*4*60 {
		restart = append(restart, 0, 20)
	}
	f.Add(restart, uint16(100))
	f.Fuzz(func(t *testing.T, steps []byte, scale uint16) {
		t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
		// whole: the same samples in whole millicores, as a checkpoint keeps them; back: a new process that
		// loads whole's checkpoint halfway (at the newest sample then) and takes the other half's samples
		var l, whole, back minuteLoad
		at, newest := t0, t0
		seen := map[float32]time.Time{}
		half := len(steps) / 4 * 2
		for i := 0; i+1 < len(steps); i += 2 {
			if i == half {
				if c, ok := whole.save(); ok {
					back.load(c, newest)
				}
			}
			// the step: 0 to 3 minutes, or hours; a step of 255 goes back (a late sample)
			switch d := steps[i]; {
			case d == 255:
				at = at.Add(-time.Minute)
			case d > 200:
				at = at.Add(time.Duration(d-200) * time.Hour)
			default:
				at = at.Add(time.Duration(d%4) * time.Minute)
			}
			cpu := float64(steps[i+1]) * float64(scale) / 10
			l.add(at, cpu)
			whole.add(at, math.Round(cpu))
			if i >= half {
				back.add(at, math.Round(cpu))
			}
			if at.After(newest) {
				newest = at
			}
			if prev, ok := seen[float32(cpu)]; !ok || at.After(prev) {
				seen[float32(cpu)] = at
			}
		}
		// the minutes through their checkpoint, and the samples after it, give the same burst
		a, ae := whole.recurring(at)
		if b, be := back.recurring(at); a != b || ae != be {
			t.Fatalf("a burst of %v every %v, %v every %v after a checkpoint of the minutes", a, ae, b, be)
		}
		// and the same burst ahead last: where it started and ended, and the usage before it
		from, end, before := whole.ended(at)
		if bf, be, bb := back.ended(at); !from.Equal(bf) || !end.Equal(be) || before != bb || !whole.earliestEnd().Equal(back.earliestEnd()) {
			t.Fatalf("a burst ahead from %v, ended %v (earliest %v), after %v; after a checkpoint from %v, ended %v (earliest %v), after %v",
				from, end, whole.earliestEnd(), before, bf, be, back.earliestEnd(), bb)
		}
		got, _ := l.recurring(at)
		if got == 0 {
			return
		}
		if got < RecurMinRise {
			t.Fatalf("a burst of %v, less than RecurMinRise", got)
		}
		when, ok := seen[float32(got)]
		if !ok || at.Sub(when) > recurKeep {
			t.Fatalf("a burst of %v, no sample of the last hours (last seen %v, now %v)", got, when, at)
		}
	})
}

// TestMinutesCheckpoint checks that a workload total's minutes and bursts survive a restart through their
// checkpoint: a new process that loads them anticipates the burst at its first sample (without them it does
// not for RecurTimes periods), and judges the times its predecessor had not judged yet from the minutes
// (a burst under way at the restart still counts); the checkpoint holds a minute without a sample as -1; a
// restore merges (a minute this process sampled keeps the larger load, a newer minute in the slot stays,
// bursts that meet become one run with the larger peak); a checkpoint's minutes after now, or older than the
// ring holds, are left out.
func TestMinutesCheckpoint(t *testing.T) {
	m, err := NewModel(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	key := OwnerKey{Namespace: "ns", Owner: "hvpa", Container: "app"}
	burst := func(min int) float64 {
		if min%60 < 12 {
			return 2.8
		}
		return 0.4
	}
	// recommend is the recurring burst of a state's one container recommendation
	recommend := func(s *State) (float64, time.Duration) {
		load, _ := s.WorkloadRecommendation("ns", "hvpa", func(string) Policy { return DefaultPolicy() })
		if len(load) != 1 {
			t.Fatalf("%d container recommendations, want 1", len(load))
		}
		return load[0].RecurringCPU, load[0].RecurringEvery
	}
	// run feeds a new process from minute from to minute to, after a restore of cp (none: nil)
	run := func(cp *MinutesCheckpoint, from, to int) *State {
		s := NewState()
		if cp != nil {
			s.LoadMinutes(m, key, *cp, at(from))
		}
		for i := from; i <= to; i++ {
			s.Total(m, key, at(from)).AddLoad(at(i), burst(i), 1<<30)
		}
		return s
	}

	before := NewState()
	total := before.Total(m, key, t0)
	if _, ok := total.Minutes(); ok {
		t.Fatal("a total without samples has minutes to save")
	}
	last := 4*60 - 6 // the process stops 6 minutes before the hour's burst
	for i := 0; i <= last; i++ {
		if i == last-3 {
			continue // a minute without a sample
		}
		total.AddLoad(at(i), burst(i), 1<<30)
	}
	cp, ok := total.Minutes()
	if !ok {
		t.Fatal("no minutes saved")
	}
	if n := len(cp.MilliCores); n != int(recurRing) || !cp.Start.Equal(at(last-int(recurRing)+1)) {
		t.Fatalf("saved %d minutes from %s, want %d from %s", n, cp.Start, recurRing, at(last-int(recurRing)+1))
	}
	if v := cp.MilliCores[len(cp.MilliCores)-4]; v != -1 {
		t.Errorf("the minute without a sample saved as %d, want -1", v)
	}
	if v := cp.MilliCores[len(cp.MilliCores)-1]; v != 400 {
		t.Errorf("the last minute saved as %d, want 400", v)
	}
	// the first hour's burst has no load before it: not one
	if len(cp.Bursts) != 3 || !cp.Bursts[0].Start.Equal(at(56)) || cp.Bursts[0].Minutes != 4 || cp.Bursts[2].PeakMilliCores != 2800 {
		t.Errorf("saved bursts %+v, want 3 of 4 minutes from 4 minutes before each later hour, of 2800", cp.Bursts)
	}

	// the new process starts 4 minutes later (3 before the burst) and samples once
	restart := last + 3
	if got, _ := recommend(run(nil, restart, restart)); got != 0 {
		t.Fatalf("a restart without the checkpoint anticipates %v", got)
	}
	if got, every := recommend(run(&cp, restart, restart)); got != 2800 || every != time.Hour {
		t.Fatalf("a restart with the checkpoint anticipates %v every %v, want 2800 every hour", got, every)
	}

	// a checkpoint taken 3 minutes into the hour's burst: its times are judged by the new process, from the
	// checkpoint's minutes and its own; the next hour's burst is anticipated
	mid := NewState()
	for i := 0; i <= 3*60+3; i++ {
		mid.Total(m, key, t0).AddLoad(at(i), burst(i), 1<<30)
	}
	cpMid, _ := mid.Total(m, key, t0).Minutes()
	after := run(&cpMid, 3*60+5, 4*60-2)
	if got, _ := recommend(after); got != 2800 {
		t.Errorf("after a restart in a burst, the next is anticipated at %v, want 2800", got)
	}
	// a checkpoint taken 12 minutes into the burst, which its process has judged: the new process does not
	// judge those times again (one run a burst)
	for i := 3*60 + 4; i <= 3*60+12; i++ {
		mid.Total(m, key, t0).AddLoad(at(i), burst(i), 1<<30)
	}
	cpLate, _ := mid.Total(m, key, t0).Minutes()
	if cp, _ := run(&cpLate, 3*60+14, 4*60-2).Total(m, key, t0).Minutes(); len(cp.Bursts) != 3 {
		t.Errorf("after a restart past a burst: %d runs of burst times, want 3 (%+v)", len(cp.Bursts), cp.Bursts)
	}
	cpMid.MilliCores = nil
	if got, _ := recommend(run(&cpMid, 3*60+5, 4*60-2)); got != 0 {
		t.Errorf("without the checkpoint's minutes, the burst under way at the restart counted: %v", got)
	}

	// a reader whose clock is behind the writer's samples (the writer's newest minutes are after its now, and
	// left out): the times up to the newest run are still judged, none twice
	if cp, _ := run(&cpLate, 3*60+9, 4*60-2).Total(m, key, t0).Minutes(); len(cp.Bursts) != 3 {
		t.Errorf("after a restart behind the writer's clock: %d runs of burst times, want 3 (%+v)", len(cp.Bursts), cp.Bursts)
	}
	var behind minuteLoad
	behind.load(cpLate, at(3*60+9))
	if want := minuteOf(at(3*60 - 1)); behind.judged != want {
		t.Errorf("judged to minute %d after the restore, want the newest run's last, %d", behind.judged, want)
	}
	// a time judged again in the newest run raises its peak, and starts no run
	var again minuteLoad
	again.mark(minuteOf(at(10)), 500)
	again.mark(minuteOf(at(11)), 500)
	again.mark(minuteOf(at(10)), 800)
	if got, _ := again.burstAt(minuteOf(at(11))); again.count != 1 || got != 800 {
		t.Errorf("a time marked again: %d runs, peak %v, want 1 run of 800", again.count, got)
	}

	// a merge: this process' larger sample of a minute stays, its smaller one takes the checkpoint's; a minute
	// after now is left out
	var l minuteLoad
	l.add(at(10), 900)
	l.add(at(11), 100)
	l.load(MinutesCheckpoint{Start: at(10), MilliCores: []int32{500, 500, 700}}, at(11))
	if _, peak, ok := l.span(minuteOf(at(9)), minuteOf(at(10))); !ok || peak != 900 {
		t.Errorf("minute 10: %v %v, want this process' 900", peak, ok)
	}
	if _, peak, ok := l.span(minuteOf(at(10)), minuteOf(at(11))); !ok || peak != 500 {
		t.Errorf("minute 11: %v %v, want the checkpoint's larger 500", peak, ok)
	}
	if _, _, ok := l.span(minuteOf(at(11)), minuteOf(at(12))); ok {
		t.Error("a checkpoint's minute after now was loaded")
	}
	// of a checkpoint longer than the ring only the newest minutes load, none older than the ring holds
	rs := int(recurRing)
	var n minuteLoad
	long := make([]int32, 2*rs)
	for i := range long {
		long[i] = int32(i)
	}
	n.load(MinutesCheckpoint{Start: at(5 - rs), MilliCores: long}, at(rs+5))
	if _, peak, ok := n.span(minuteOf(at(5)), minuteOf(at(6))); !ok || peak != float64(rs+1) {
		t.Errorf("minute 6: %v %v, want the checkpoint's %d", peak, ok, rs+1)
	}
	if _, _, ok := n.span(minuteOf(at(4)), minuteOf(at(5))); ok {
		t.Error("a minute older than the ring holds was loaded")
	}
	// a slot holding a newer minute (a sample dated after the restore's now) keeps it
	var k minuteLoad
	k.add(at(rs+10), 300)
	k.load(MinutesCheckpoint{Start: at(10), MilliCores: []int32{77}}, at(rs+5))
	if _, peak, ok := k.span(minuteOf(at(rs+9)), minuteOf(at(rs+10))); !ok || peak != 300 {
		t.Errorf("the newer minute: %v %v, want 300", peak, ok)
	}
	// bursts: the checkpoint's join this process' (a run that meets one becomes one, with the larger peak), in
	// order; one after now is left out
	var b minuteLoad
	b.mark(minuteOf(at(100)), 900)
	b.mark(minuteOf(at(101)), 900)
	b.mark(minuteOf(at(200)), 500)
	b.load(MinutesCheckpoint{Bursts: []BurstCheckpoint{{Start: at(50), Minutes: 2, PeakMilliCores: 300}, {Start: at(102), Minutes: 3, PeakMilliCores: 1200},
		{Start: at(400), Minutes: 1, PeakMilliCores: 700}}}, at(300))
	for q, want := range map[int]float64{50: 300, 51: 300, 52: 0, 100: 1200, 104: 1200, 105: 0, 200: 500, 400: 0} {
		if got, _ := b.burstAt(minuteOf(at(q))); got != want {
			t.Errorf("after the merge, a burst at minute %d of %v, want %v", q, got, want)
		}
	}
	// the newest recurRuns stay
	var full minuteLoad
	var many []BurstCheckpoint
	for i := range recurRuns + 10 {
		many = append(many, BurstCheckpoint{Start: at(10 * i), Minutes: 1, PeakMilliCores: int32(i + 1)})
	}
	full.load(MinutesCheckpoint{Bursts: many}, at(10*(recurRuns+10)))
	if got, _ := full.burstAt(minuteOf(at(90))); got != 0 {
		t.Errorf("the 10th oldest run kept: %v", got)
	}
	if got, _ := full.burstAt(minuteOf(at(100))); got != 11 {
		t.Errorf("the 11th oldest run: %v, want 11", got)
	}
	if got, _ := full.burstAt(minuteOf(at(10 * (recurRuns + 9)))); got != float64(recurRuns+10) {
		t.Errorf("the newest run: %v, want %d", got, recurRuns+10)
	}
}

// TestRecurringBurstEnd pins the end of a recurring burst seen ahead (docs/design/scaling.md section 2a):
// the first of RecurEnd minutes at most halfway from the usage before it to its level, all more than
// RecurLead after the last minute it was ahead; with the first minute it was ahead (also while it is under
// way) and the peak usage of the RecurBeforeWindow before that.
func TestRecurringBurstEnd(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	hourly := func(length int, low, high float64) func(m int) float64 { // a burst for the first minutes of every hour
		return func(m int) float64 {
			if m%60 < length {
				return high
			}
			return low
		}
	}
	burst := hourly(12, 400, 2800)
	// the fifth hour's burst is ahead from 03:56 (a burst started within RecurLead of 00:56 to 00:59, 01:56 to
	// 01:59 and 02:56 to 02:59; the first hour's has no load before it)
	const from = 4*60 - 4
	cases := map[string]struct {
		load   func(m int) float64
		now    int
		end    int // the minute of the end; -1: not ended
		before float64
		none   bool // no burst seen ahead
		every  int  // a sample every this many minutes (0: every minute)
	}{
		"three minutes low after the burst": {load: burst, now: 4*60 + 14, end: 4*60 + 12, before: 400},
		"later, the same end":               {load: burst, now: 4*60 + 40, end: 4*60 + 12, before: 400},
		// a recommender interval of 2 minutes: two samples of the three minutes end it (found in review: with
		// three samples asked for, no burst ever ended and scale-downs waited an hour after each)
		"a sample every 2 minutes":          {load: burst, now: 4*60 + 14, end: 4*60 + 12, before: 400, every: 2},
		"a sample every 2 minutes, one low": {load: burst, now: 4*60 + 12, end: -1, before: 400, every: 2},
		"two minutes low after the burst":   {load: burst, now: 4*60 + 13, end: -1, before: 400},
		"in the burst":                      {load: burst, now: 4*60 + 8, end: -1, before: 400},
		"ahead of the burst":                {load: burst, now: 4*60 - 2, end: -1, before: 400},
		"history too short to see it ahead": {load: burst, now: 3*60 + 14, none: true},
		// halfway from the usage before it: a burst of 1.6x its load ends when the usage is back below 1.3x
		"a burst of 1.6x its load": {load: hourly(12, 1000, 1600), now: 4*60 + 14, end: 4*60 + 12, before: 1000},
		"a burst that falls to 60% of it": {load: func(m int) float64 {
			if m >= 4*60 {
				return max(burst(m), 1680) // above halfway from 400 to 2800
			}
			return burst(m)
		}, now: 4*60 + 20, end: -1, before: 400},
		"a burst that did not come this time": {load: func(m int) float64 {
			if m >= 4*60 {
				return 400
			}
			return burst(m)
		}, now: 4*60 + 7, end: 4*60 + 4, before: 400}, // once it had its RecurLead to come
		// a dip and a rise within a burst, read as a burst ahead of its own at this time of the hours before,
		// is the same burst: it ends once
		"a burst with a dip at its 5th minute": {load: func(m int) float64 {
			if m%60 == 5 || m%60 == 6 {
				return 900
			}
			return hourly(25, 400, 2800)(m)
		}, now: 4*60 + 27, end: 4*60 + 25, before: 400},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var l minuteLoad
			for m := 0; m <= tc.now; m += max(tc.every, 1) {
				l.add(at(m), tc.load(m))
			}
			gotFrom, gotEnd, gotBefore := l.ended(at(tc.now))
			if tc.none {
				if !gotFrom.IsZero() || !gotEnd.IsZero() {
					t.Fatalf("ahead from %v, ended %v: want none", gotFrom, gotEnd)
				}
				return
			}
			wantEnd := time.Time{}
			if tc.end >= 0 {
				wantEnd = at(tc.end)
			}
			if !gotFrom.Equal(at(from)) || !gotEnd.Equal(wantEnd) || gotBefore != tc.before {
				t.Fatalf("ahead from %s, end %v, before %v; want ahead from %s, end %v, before %v",
					gotFrom.UTC().Format("15:04"), gotEnd, gotBefore, at(from).UTC().Format("15:04"), wantEnd, tc.before)
			}
		})
	}
	// more than one sample a minute: a later sample of one of the end's minutes above halfway takes it back
	var l minuteLoad
	for m := 0; m <= 4*60+14; m++ {
		l.add(at(m), burst(m))
	}
	if _, end, _ := l.ended(at(4*60 + 14)); !end.Equal(at(4*60 + 12)) {
		t.Fatalf("end %v, want 04:12", end)
	}
	l.add(at(4*60+14).Add(30*time.Second), 2800)
	if _, end, _ := l.ended(at(4*60 + 14)); !end.IsZero() {
		t.Errorf("a sample of the burst's level in the end's last minute: end %v, want none", end)
	}
	for m := 4*60 + 15; m <= 4*60+17; m++ {
		l.add(at(m), 400)
	}
	if _, end, _ := l.ended(at(4*60 + 17)); !end.Equal(at(4*60 + 15)) {
		t.Errorf("end %v, want 04:15 (the 3 minutes after the taken back one)", end)
	}
}

// TestRecurringBurstRestart checks that the recurring burst ahead last survives a restart through its
// checkpoint when the new process's first sample comes minutes after the checkpoint's last (the checkpoint is
// written every --checkpoint-period): a burst still ahead at the restart is the same one (its end is read after
// the minutes it was ahead, not after the checkpoint's); an end the writer's checkpoint did not see is the new
// process's first minutes as before, and the earliest it may have been is the first minute after the last one
// sampled (a scale made in the minutes nobody sampled may be the writer's fall back).
func TestRecurringBurstRestart(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	wantAt := func(m int) time.Time {
		if m < 0 {
			return time.Time{}
		}
		return at(m)
	}
	hourly := func(m int) float64 { // a burst for the first 12 minutes of every hour: ahead from 03:56 to 03:59
		if m%60 < 12 {
			return 2800
		}
		return 400
	}
	late := func(m int) float64 { // the fifth hour's burst comes at 04:04 (the last minute it can) for 12 minutes
		switch {
		case m >= 4*60 && m < 4*60+4:
			return 400
		case m >= 4*60+4 && m < 4*60+16:
			return 2800
		}
		return hourly(m)
	}
	const from = 4*60 - 4
	cases := map[string]struct {
		load                  func(m int) float64
		saved, restart, now   int // the checkpoint's last minute, the new process's first, and the minute read
		end, earliest         int // -1: not ended
		uninterruptedEnd      int
		uninterruptedEarliest int
	}{
		"ahead at the restart, the burst late": {load: late, saved: from, restart: from + 2, now: 4*60 + 10, end: -1, earliest: -1,
			uninterruptedEnd: -1, uninterruptedEarliest: -1},
		"ended in the minutes nobody sampled": {load: hourly, saved: 4*60 + 5, restart: 4*60 + 18, now: 4*60 + 20, end: 4*60 + 18, earliest: 4*60 + 6,
			uninterruptedEnd: 4*60 + 12, uninterruptedEarliest: 4*60 + 12},
		// found in review: the writer sampled the end's first minutes low, and could not note it before its
		// checkpoint; its fall back may come right after: the earliest end is the first low minute
		"ended as the checkpoint was written": {load: hourly, saved: 4*60 + 13, restart: 4*60 + 22, now: 4*60 + 24, end: 4*60 + 22, earliest: 4*60 + 12,
			uninterruptedEnd: 4*60 + 12, uninterruptedEarliest: 4*60 + 12},
		"ended before the checkpoint": {load: hourly, saved: 4*60 + 15, restart: 4*60 + 20, now: 4*60 + 22, end: 4*60 + 12, earliest: 4*60 + 12,
			uninterruptedEnd: 4*60 + 12, uninterruptedEarliest: 4*60 + 12},
		"in the burst at the restart": {load: hourly, saved: 4*60 + 3, restart: 4*60 + 6, now: 4*60 + 20, end: 4*60 + 12, earliest: 4*60 + 12,
			uninterruptedEnd: 4*60 + 12, uninterruptedEarliest: 4*60 + 12},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var whole, writer, back minuteLoad
			for m := 0; m <= tc.now; m++ {
				whole.add(at(m), tc.load(m))
				if m <= tc.saved {
					writer.add(at(m), tc.load(m))
				}
			}
			if f, end, _ := whole.ended(at(tc.now)); !f.Equal(at(from)) || !end.Equal(wantAt(tc.uninterruptedEnd)) ||
				!whole.earliestEnd().Equal(wantAt(tc.uninterruptedEarliest)) {
				t.Fatalf("without a restart: ahead from %v, ended %v (earliest %v); want from %v, ended %v (earliest %v)", f, end, whole.earliestEnd(),
					at(from), wantAt(tc.uninterruptedEnd), wantAt(tc.uninterruptedEarliest))
			}
			cp, ok := writer.save()
			if !ok || cp.Ahead == nil {
				t.Fatalf("the checkpoint holds no burst ahead: %+v", cp)
			}
			back.load(cp, at(tc.restart))
			for m := tc.restart; m <= tc.now; m++ {
				back.add(at(m), tc.load(m))
			}
			if f, end, before := back.ended(at(tc.now)); !f.Equal(at(from)) || !end.Equal(wantAt(tc.end)) || before != 400 ||
				!back.earliestEnd().Equal(wantAt(tc.earliest)) {
				t.Errorf("after the restart: ahead from %v, ended %v (earliest %v), after %v; want from %v, ended %v (earliest %v), after 400",
					f, end, back.earliestEnd(), before, at(from), wantAt(tc.end), wantAt(tc.earliest))
			}
		})
	}

	// a restore beside a burst this process noted itself: the later stays, unless they are one run of minutes
	// ahead (they meet, or no minute between them has a sample); a checkpoint's burst after now is none, its
	// end after now not yet
	type ahead struct {
		from, to, end, earliest int // minutes; end -1: not ended
		level, before           float32
	}
	noted := func(a ahead, sampled []int) minuteLoad {
		l := minuteLoad{burstAhead: burstAhead{aheadFrom: int32(minuteOf(at(a.from))), aheadTo: int32(minuteOf(at(a.to))), aheadLevel: a.level,
			aheadBefore: a.before}}
		if a.end >= 0 {
			l.endedAt, l.endedEarliest = int32(minuteOf(at(a.end))), int32(minuteOf(at(a.earliest)))
		}
		l.last = int64(l.aheadTo)
		for _, m := range sampled {
			l.stamp[slot(minuteOf(at(m)))], l.cpu[slot(minuteOf(at(m)))] = int32(minuteOf(at(m))+1), 400
			l.last = max(l.last, minuteOf(at(m)))
		}
		return l
	}
	saved := func(a ahead) AheadCheckpoint {
		c := AheadCheckpoint{From: at(a.from), To: at(a.to), Ended: wantAt(a.end), LevelMilliCores: int32(a.level), BeforeMilliCores: int32(a.before)}
		if a.end >= 0 {
			c.EndedEarliest = at(a.earliest)
		}
		return c
	}
	merges := map[string]struct {
		mine, theirs, want ahead
		sampled            []int // minutes this process sampled
	}{
		"none noted here":               {mine: ahead{}, theirs: ahead{236, 239, 252, 250, 2800, 400}, want: ahead{236, 239, 252, 250, 2800, 400}},
		"this process' later one stays": {mine: ahead{296, 299, -1, 0, 2800, 400}, theirs: ahead{236, 239, 252, 252, 2800, 400}, want: ahead{296, 299, -1, 0, 2800, 400}},
		"the checkpoint's later one":    {mine: ahead{116, 119, 132, 132, 2000, 300}, theirs: ahead{236, 239, 252, 252, 2800, 400}, want: ahead{236, 239, 252, 252, 2800, 400}},
		// found in review: a checkpoint loaded late (its list failed at the first run) is no part of the burst
		// this process noted since, when it sampled minutes between them
		"a stale checkpoint beside this process' next burst": {mine: ahead{250, 251, -1, 0, 2800, 400}, theirs: ahead{236, 238, -1, 0, 2800, 400},
			sampled: []int{244, 245, 246, 247, 248, 249}, want: ahead{250, 251, -1, 0, 2800, 400}},
		// found in review: loaded when the ring no longer holds the minutes between them
		"a stale checkpoint, the minutes between gone from the ring": {mine: ahead{250, 251, -1, 0, 2800, 400}, theirs: ahead{236, 238, -1, 0, 2800, 100},
			sampled: []int{260, 261, 262, 263, 264, 265, 266, 267, 268, 269, 270, 271, 272, 273, 274, 275}, want: ahead{250, 251, -1, 0, 2800, 400}},
		// found in review: the end this process noted stays when the checkpoint's run reaches later, not ended
		"one run, this process' end":         {mine: ahead{236, 239, 252, 252, 2800, 400}, theirs: ahead{237, 240, -1, 0, 2800, 400}, want: ahead{236, 240, 252, 252, 2800, 400}},
		"one run, no minute sampled between": {mine: ahead{241, 242, -1, 0, 3000, 2800}, theirs: ahead{236, 238, -1, 0, 2800, 400}, want: ahead{236, 242, -1, 0, 3000, 400}},
		"one run, ended after both":          {mine: ahead{240, 241, 252, 249, 3000, 2800}, theirs: ahead{236, 239, -1, 0, 2800, 400}, want: ahead{236, 241, 252, 249, 3000, 400}},
		"one run, this process first":        {mine: ahead{236, 237, -1, 0, 2800, 400}, theirs: ahead{238, 239, 252, 250, 2800, 2800}, want: ahead{236, 239, 252, 250, 2800, 400}},
		"a checkpoint's burst after now":     {mine: ahead{}, theirs: ahead{301, 303, -1, 0, 2800, 400}, want: ahead{}},
		"a checkpoint's end after now":       {mine: ahead{}, theirs: ahead{286, 289, 302, 302, 2800, 400}, want: ahead{286, 289, -1, 0, 2800, 400}},
	}
	for name, tc := range merges {
		t.Run(name, func(t *testing.T) {
			l := minuteLoad{}
			if tc.mine.to > 0 {
				l = noted(tc.mine, tc.sampled)
			}
			theirs := saved(tc.theirs)
			l.load(MinutesCheckpoint{Ahead: &theirs}, at(300))
			want := minuteLoad{}
			if tc.want.to > 0 {
				want = noted(tc.want, nil)
			}
			if l.aheadFrom != want.aheadFrom || l.aheadTo != want.aheadTo || l.endedAt != want.endedAt || l.endedEarliest != want.endedEarliest ||
				l.aheadLevel != want.aheadLevel || l.aheadBefore != want.aheadBefore {
				t.Errorf("ahead %d-%d ended %d (earliest %d) at %v after %v; want %d-%d ended %d (earliest %d) at %v after %v", l.aheadFrom, l.aheadTo,
					l.endedAt, l.endedEarliest, l.aheadLevel, l.aheadBefore, want.aheadFrom, want.aheadTo, want.endedAt, want.endedEarliest,
					want.aheadLevel, want.aheadBefore)
			}
		})
	}
}

// TestRecurringBurstNext pins RecurringNext: the first minute from now on, within RecurNextWithin, at which a
// recurring burst is ahead, of any burst (two an hour: the next one, not the one ahead last).
func TestRecurringBurstNext(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	twice := func(m int) float64 { // bursts at minutes 0 and 30 of every hour, 12 minutes each
		if m%30 < 12 {
			return 2800
		}
		return 400
	}
	cases := map[string]struct {
		now, want int // want -1: none
	}{
		"17 minutes before the burst at 05:00": {now: 4*60 + 39, want: -1},
		"15 minutes before it":                 {now: 4*60 + 41, want: 4*60 + 56},
		"ahead of it":                          {now: 4*60 + 57, want: 4*60 + 57},
		"in it: the next at 05:30":             {now: 5*60 + 5, want: -1},
		"before the burst at 05:30":            {now: 5*60 + 20, want: 5*60 + 26},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var l minuteLoad
			for m := 0; m <= tc.now; m++ {
				l.add(at(m), twice(m))
			}
			want := time.Time{}
			if tc.want >= 0 {
				want = at(tc.want)
			}
			if got := l.next(at(tc.now)); !got.Equal(want) {
				t.Errorf("next %v, want %v", got, want)
			}
		})
	}
}

// TestRecurringBurstOfUsage checks that the minutes the recurring bursts are read from take the pods' whole
// usage (AddLoadUsage), not the load above their base: a workload whose usage stays at 1600m while its pods
// are resized every hour between large ones (a base of 1400m) and small ones (200m) reads a load that jumps
// from 200m to 1400m at the same minute of every hour, which the load's minutes took for a recurring burst.
func TestRecurringBurstOfUsage(t *testing.T) {
	m, err := NewModel(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	load := func(i int) float64 { // cores above the base
		if i%60 < 15 {
			return 0.2
		}
		return 1.4
	}
	for _, usage := range []bool{true, false} {
		s := NewState()
		total := s.Total(m, OwnerKey{Namespace: "ns", Owner: "hvpa", Container: "app"}, t0)
		last := 4*60 + 13
		for i := 0; i <= last; i++ {
			if usage {
				total.AddLoadUsage(t0.Add(time.Duration(i)*time.Minute), load(i), 1<<30, 1.6)
			} else {
				total.AddLoad(t0.Add(time.Duration(i)*time.Minute), load(i), 1<<30)
			}
		}
		recs, _ := s.WorkloadRecommendation("ns", "hvpa", func(string) Policy { return DefaultPolicy() })
		if len(recs) != 1 {
			t.Fatalf("%d container recommendations, want 1", len(recs))
		}
		got := recs[0].RecurringCPU
		if usage && got != 0 {
			t.Errorf("a steady usage of pods resized every hour: a recurring burst of %vm ahead, want none", got)
		}
		if !usage && got != 1400 {
			t.Errorf("the load above the base alone: %vm ahead, want the 1400m jump read as a burst (the reason for AddLoadUsage)", got)
		}
	}
}

// TestRecurSampleEvery pins what RecurSampleEvery says (the recommender logs it for a longer interval): with a
// sample every 1 or 2 minutes an hourly burst is seen ahead and ends. With a longer interval it may be seen
// ahead or not (the times and the minutes before them must be sampled), and one seen ahead ends (found in
// session 29: with a sample every 3 or 4 minutes a burst was seen ahead and never ended, so every
// scale-down waited RecurUnderWay after each burst).
func TestRecurSampleEvery(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	burst := func(m int) float64 {
		if m%60 < 12 {
			return 2800
		}
		return 400
	}
	for every := 1; every <= 10; every++ {
		for offset := 0; offset < every; offset++ {
			var l minuteLoad
			aheadRuns, ends := 0, 0
			wasAhead, wasEnded := false, false
			for m := offset; m <= 10*60+30; m += every { // the last hour's burst has ended by 10:30
				at := t0.Add(time.Duration(m) * time.Minute)
				l.add(at, burst(m))
				from, end, _ := l.ended(at)
				ahead := !from.IsZero() && end.IsZero()
				if ahead && !wasAhead {
					aheadRuns++
				}
				if !end.IsZero() && !wasEnded {
					ends++
					// noted at the second low sample after the burst; the earliest it may have been is the minute
					// after the last sample in the burst
					if got, lag := l.earliestEnd().Minute(), int(at.Sub(l.earliestEnd())/time.Minute); got <= 12-every || got > 12 || lag > max(2*every-1, 2) {
						t.Errorf("a sample every %d min from minute %d: the burst ended at minute %d of the hour at the earliest, noted %d min later (end %s)",
							every, offset, got, lag, end.UTC().Format("15:04"))
					}
				}
				wasAhead, wasEnded = ahead, !end.IsZero()
			}
			if aheadRuns != ends {
				t.Errorf("a sample every %d min from minute %d: seen ahead %d times, ended %d times", every, offset, aheadRuns, ends)
			}
			if time.Duration(every)*time.Minute <= RecurSampleEvery && aheadRuns < 6 {
				t.Errorf("a sample every %d min from minute %d: seen ahead %d times, want one an hour from the fourth on", every, offset, aheadRuns)
			}
		}
	}
}
