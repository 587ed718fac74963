package recommender

import (
	"math"
	"testing"
	"time"
	"unsafe"
)

// TestRecurringBurst pins the recurring burst of a workload total: the load ahead is the peak of a burst that
// came at this time of each of the last RecurHours hours (within RecurLead, RecurRise and RecurMinRise above
// the load before it, held over RecurHold), and nothing for a spike, a burst missing from one of those hours,
// one further ahead than RecurLead, a small load's noise, a slow rise, or a history shorter than RecurHours.
func TestRecurringBurst(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	// load is the CPU at minute m (of the day) of a workload that runs low with bursts
	type shape func(m int) float64
	hourly := func(at, length int, low, high float64) shape { // a burst at minute at of every hour
		return func(m int) float64 {
			if x := (m%60 - at + 60) % 60; x < length {
				return high
			}
			return low
		}
	}
	cases := map[string]struct {
		load shape
		now  int // the minute of the last sample (the history runs from minute 0 to it, one sample a minute)
		want float64
	}{
		"an hourly burst 3 min ahead": {load: hourly(0, 12, 400, 2800), now: 4*60 - 3, want: 2800},
		"an hourly burst 1 min ahead": {load: hourly(0, 12, 400, 2800), now: 4*60 - 1, want: 2800},
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
		"a burst 100m over a small": {load: hourly(0, 12, 50, 160), now: 4*60 - 2, want: 160},
		"a slow rise (1% a minute)": {load: func(m int) float64 { return 400 * (1 + 0.01*float64(m)) }, now: 4*60 - 2},
		// the level is the peak of the RecurSpan after this time of the hour (2 min before the burst: to its
		// minute 8), the largest of the hours'
		"a burst that grows, larger last hour": {load: func(m int) float64 {
			b := hourly(0, 12, 400, 2000)(m)
			if b > 400 {
				b += float64(m%60) * 50 // 2,400 at minute 8
				if m/60 == 3 {
					b += 300
				}
			}
			return b
		}, now: 4*60 - 2, want: 2000 + 8*50 + 300},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var l minuteLoad
			for m := 0; m <= tc.now; m++ {
				l.add(t0.Add(time.Duration(m)*time.Minute), tc.load(m))
			}
			if got := l.recurring(t0.Add(time.Duration(tc.now) * time.Minute)); got != tc.want {
				t.Errorf("recurring %v, want %v", got, tc.want)
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
	// the same slot, recurSlots minutes later: the old minute is gone, the new one alone
	later := t0.Add(time.Duration(recurSlots) * time.Minute)
	l.add(later, 50)
	if _, _, ok := l.span(minuteOf(t0)-1, minuteOf(t0)); ok {
		t.Error("a minute recurSlots ago is still read")
	}
	if _, peak, ok := l.span(minuteOf(later)-1, minuteOf(later)); !ok || peak != 50 {
		t.Errorf("the newer minute: %v %v, want 50 true", peak, ok)
	}
	if _, _, ok := l.span(minuteOf(later), minuteOf(later)+5); ok {
		t.Error("minutes with no sample read as samples")
	}
	// what every workload total keeps for it (docs/design/scaling.md section 2a says 1.5 KiB)
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
	last := 4*60 - 2
	for i := 0; i <= last; i++ {
		cpu := 0.4
		if i%60 < 12 {
			cpu = 2.8
		}
		total.AddLoad(t0.Add(time.Duration(i)*time.Minute), cpu, 1<<30)
	}
	// recommend is the recurring burst and the recent samples of the one container's recommendation
	recommend := func() (float64, int) {
		load, _ := s.WorkloadRecommendation("ns", "hvpa", func(string) Policy { return DefaultPolicy() })
		if len(load) != 1 {
			t.Fatalf("%d container recommendations, want 1", len(load))
		}
		return load[0].RecurringCPU, len(load[0].Recent)
	}
	if burst, _ := recommend(); burst != 2800 {
		t.Fatalf("RecurringCPU %v, want 2800", burst)
	}
	// late samples (older than the last one) are none of the minutes either: two of more than recurSlots
	// minutes ago would take the slots of the 2 minutes before last hour's burst
	for _, m := range []int{last - 60 - 1 - int(recurSlots), last - 60 - int(recurSlots)} {
		total.AddLoad(t0.Add(time.Duration(m)*time.Minute), 0.4, 1<<30)
	}
	if burst, _ := recommend(); burst != 2800 {
		t.Fatalf("after late samples: RecurringCPU %v, want 2800", burst)
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
// and checks that the recurring burst is none or the CPU of a sample of the last RecurHours hours and
// RecurSpan, at least RecurMinRise (a burst is that far above the load before it, which is at least 0).
func FuzzRecurringBurst(f *testing.F) {
	f.Add([]byte{1, 10, 1, 10, 1, 200, 1, 200, 60, 10, 1, 200}, uint16(500))
	f.Add([]byte{0, 255, 2, 0, 1, 3}, uint16(7))
	// an hourly burst for 4 hours, then 19 hours (6 x recurSlots minutes) without a sample: the ring's slots
	// hold the old minutes at the same places, which are no burst of the last hours
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
	f.Fuzz(func(t *testing.T, steps []byte, scale uint16) {
		t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
		var l, whole minuteLoad // whole: the same samples in whole millicores, as a checkpoint keeps them
		at := t0
		seen := map[float32]time.Time{}
		for i := 0; i+1 < len(steps); i += 2 {
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
			if prev, ok := seen[float32(cpu)]; !ok || at.After(prev) {
				seen[float32(cpu)] = at
			}
		}
		// the minutes through their checkpoint, into a new process at now, give the same burst
		var back minuteLoad
		if c, ok := whole.save(); ok {
			back.load(c, at)
		}
		if a, b := whole.recurring(at), back.recurring(at); a != b {
			t.Fatalf("a burst of %v, %v after a checkpoint of the minutes", a, b)
		}
		got := l.recurring(at)
		if got == 0 {
			return
		}
		if got < RecurMinRise {
			t.Fatalf("a burst of %v, less than RecurMinRise", got)
		}
		when, ok := seen[float32(got)]
		if !ok || at.Sub(when) > RecurHours*time.Hour+RecurBefore {
			t.Fatalf("a burst of %v, no sample of the last hours (last seen %v, now %v)", got, when, at)
		}
	})
}

// TestMinutesCheckpoint checks that a workload total's minutes survive a restart through their checkpoint:
// a new process that loads them anticipates the burst at its first sample (without them it does not for
// RecurHours); the checkpoint holds the minutes without a sample as -1; a restore merges (a minute this
// process sampled keeps the larger load, a newer minute in the slot stays); and a checkpoint's minutes after
// now, or more than the slots hold, are left out.
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
	before := NewState()
	total := before.Total(m, key, t0)
	if _, ok := total.Minutes(); ok {
		t.Fatal("a total without samples has minutes to save")
	}
	last := 4*60 - 6 // the process stops 6 minutes before the hour's burst
	for i := 0; i <= last; i++ {
		if i == last-30 {
			continue // a minute without a sample
		}
		total.AddLoad(at(i), burst(i), 1<<30)
	}
	cp, ok := total.Minutes()
	if !ok {
		t.Fatal("no minutes saved")
	}
	if n := len(cp.MilliCores); n != int(recurSlots) || !cp.Start.Equal(at(last-int(recurSlots)+1)) {
		t.Fatalf("saved %d minutes from %s, want %d from %s", n, cp.Start, recurSlots, at(last-int(recurSlots)+1))
	}
	if v := cp.MilliCores[len(cp.MilliCores)-31]; v != -1 {
		t.Errorf("the minute without a sample saved as %d, want -1", v)
	}
	if v := cp.MilliCores[len(cp.MilliCores)-1]; v != 400 {
		t.Errorf("the last minute saved as %d, want 400", v)
	}

	// recommend is the recurring burst of a state's one container recommendation
	recommend := func(s *State) float64 {
		load, _ := s.WorkloadRecommendation("ns", "hvpa", func(string) Policy { return DefaultPolicy() })
		if len(load) != 1 {
			t.Fatalf("%d container recommendations, want 1", len(load))
		}
		return load[0].RecurringCPU
	}
	// the new process starts 4 minutes later (3 before the burst) and samples once
	restart := last + 3
	fresh := NewState()
	fresh.Total(m, key, at(restart)).AddLoad(at(restart), burst(restart), 1<<30)
	if got := recommend(fresh); got != 0 {
		t.Fatalf("a restart without the checkpoint anticipates %v", got)
	}
	restored := NewState()
	restored.LoadTotal(m, key, total.Aggregate)
	restored.LoadMinutes(m, key, cp, at(restart))
	restored.Total(m, key, at(restart)).AddLoad(at(restart), burst(restart), 1<<30)
	if got := recommend(restored); got != 2800 {
		t.Fatalf("a restart with the checkpoint anticipates %v, want 2800", got)
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
	// of a checkpoint longer than the slots only the newest minutes load, none older than the slots hold
	rs := int(recurSlots)
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
		t.Error("a minute older than the slots hold was loaded")
	}
	// a slot holding a newer minute (a sample dated after the restore's now) keeps it
	var k minuteLoad
	k.add(at(rs+10), 300)
	k.load(MinutesCheckpoint{Start: at(10), MilliCores: []int32{77}}, at(rs+5))
	if _, peak, ok := k.span(minuteOf(at(rs+9)), minuteOf(at(rs+10))); !ok || peak != 300 {
		t.Errorf("the newer minute: %v %v, want 300", peak, ok)
	}
}
