package closedloop

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender/trace"
)

// profileCPU is the workloads' demand per minute of a profile (total CPU in millicores, by workload).
func profileCPU(t *testing.T, d ProfileDemand) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	last := map[string]int64{}
	err := d.Each(func(r *trace.Row) error {
		wl := string(r.Workload)
		if last[wl] != r.Time || len(out[wl]) == 0 {
			out[wl] = append(out[wl], 0)
			last[wl] = r.Time
		}
		out[wl][len(out[wl])-1] += float64(r.CPU)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestProfiles: every shoot-out profile, the extra ones too, is deterministic per seed, has per-minute noise
// of 8 to 20% (the deviation from the centered 15-minute median, away from the shape's own jumps), stays
// between about 0.3 and 30 CPU in total, and lasts its days (8 for weekly, 7 for office, 4 for the others).
func TestProfiles(t *testing.T) {
	for _, p := range slices.Concat(Profiles, ExtraProfiles) {
		t.Run(string(p), func(t *testing.T) {
			var a, b, c bytes.Buffer
			for seed, buf := range map[int64]*bytes.Buffer{1: &a, 2: &c} {
				if err := WriteProfile(buf, ProfileDemand{Profile: p, Seed: seed, Days: 1}); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteProfile(&b, ProfileDemand{Profile: p, Seed: 1, Days: 1}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) || bytes.Equal(a.Bytes(), c.Bytes()) {
				t.Errorf("the same seed must give the same trace and another seed another one")
			}
			cpu := profileCPU(t, ProfileDemand{Profile: p, Seed: 1})
			if len(cpu) != 3 {
				t.Fatalf("%d workloads, want 3", len(cpu))
			}
			wantDays := map[Profile]float64{ProfileWeekly: 8, ProfileOffice: 7}[p]
			if wantDays == 0 {
				wantDays = 4
			}
			lo, hi := math.Inf(1), 0.0
			for wl, xs := range cpu {
				if got := float64(len(xs)) / 1440; got != wantDays {
					t.Errorf("%s: %g days, want %g", wl, got, wantDays)
				}
				for _, x := range xs {
					lo, hi = min(lo, x), max(hi, x)
				}
				if p == ProfileSpiky || p == ProfileBatch {
					continue // their jumps are the shape, not noise
				}
				if sd := noiseOf(xs); sd < 0.06 || sd > 0.2 {
					t.Errorf("%s: per-minute noise %.3f, want 8 to 20%% (about %.2f)", wl, sd, profileShapes[p].noise)
				}
			}
			t.Logf("%s: %.0fm to %.0fm", p, lo, hi)
			if lo < 50 || hi > 35000 || hi < 3000 {
				t.Errorf("demand from %.0fm to %.0fm: want the EP-0001 intervals' range (about 0.3 to 30 CPU)", lo, hi)
			}
		})
	}
}

// TestExtraProfiles: each extra profile has its shape: the nightly job from 02:00 to 02:45 (4 against a
// night level of about 0.5), the burst of the first 30 minutes of every sixth hour (x3 against 0.5), office hours
// on weekdays only (1.6 against 0.3), growth by x8 over the 4 days, and the step up at 36 hours (x4).
func TestExtraProfiles(t *testing.T) {
	// mean is the mean CPU of workload 1 over the minutes [from, to) of the trace
	mean := func(xs []float64, from, to int) float64 {
		sum := 0.0
		for _, x := range xs[from:to] {
			sum += x
		}
		return sum / float64(to-from)
	}
	ratio := func(p Profile, hi, lo [2]int) float64 {
		xs := profileCPU(t, ProfileDemand{Profile: p, Seed: 1})[string(p)+"-1"]
		return mean(xs, hi[0], hi[1]) / mean(xs, lo[0], lo[1])
	}
	const day = 1440
	for _, c := range []struct {
		name     string
		p        Profile
		hi, lo   [2]int
		min, max float64
	}{
		{"the nightly job against the hour before", ProfileNightly, [2]int{day + 120, day + 165}, [2]int{day + 60, day + 120}, 7, 9.5},
		{"the nightly job is over at 02:45", ProfileNightly, [2]int{day + 166, day + 226}, [2]int{day + 60, day + 120}, 0.8, 1.25},
		{"a six-hourly burst against the hours between", ProfileSixHourly, [2]int{2*day + 360, 2*day + 390}, [2]int{2*day + 400, 2*day + 700}, 5, 7},
		{"Tuesday's office hours against its night", ProfileOffice, [2]int{day + 600, day + 1050}, [2]int{day, day + 480}, 4.5, 6},
		{"Saturday's day against Friday's night", ProfileOffice, [2]int{5*day + 600, 5*day + 1050}, [2]int{4*day + 1110, 5 * day}, 0.8, 1.25},
		{"growth over the trace", ProfileGrowth, [2]int{4*day - 60, 4 * day}, [2]int{0, 60}, 7, 9},
		{"the step up", ProfileStepUp, [2]int{36*60 + 60, 48 * 60}, [2]int{0, 36*60 - 60}, 3.6, 4.4},
	} {
		if got := ratio(c.p, c.hi, c.lo); got < c.min || got > c.max {
			t.Errorf("%s: %s x%.2f, want x%g to x%g", c.p, c.name, got, c.min, c.max)
		}
	}
}

// noiseOf is the standard deviation of x / the median of the 15 minutes around it, minus 1, over the minutes
// whose window has no jump of the shape (the median's neighbours within 30%).
func noiseOf(xs []float64) float64 {
	var sum, sq float64
	n := 0
	for i := 7; i+7 < len(xs); i++ {
		w := append([]float64(nil), xs[i-7:i+8]...)
		med := median(w)
		if math.Abs(median(xs[i-7:i])-med) > 0.3*med || math.Abs(median(xs[i+1:i+8])-med) > 0.3*med {
			continue
		}
		d := xs[i]/med - 1
		sum, sq, n = sum+d, sq+d*d, n+1
	}
	mean := sum / float64(n)
	return math.Sqrt(sq/float64(n) - mean*mean)
}

// TestPoliciesOnTheSameDemand: the four policies run on the same flash-crowd demand: every run of a workload
// sees the same demand; the vpa policy keeps the trace's replicas and resizes pods, the hpa policy keeps its
// fixed requests and only scales, the hpa+vpa policy keeps its CPU request while its VPA resizes memory; the
// flash crowd (5x for two hours) leaves the fixed-replica VPA short of CPU where the HPA adds pods.
func TestPoliciesOnTheSameDemand(t *testing.T) {
	h := exampleHvpa(t, "../examples/hvpa-shootout.yaml")
	r500, err := ParsePodRequests("cpu=500m,memory=2Gi")
	if err != nil {
		t.Fatal(err)
	}
	sim := profileRun(t, Options{Runs: Runs(Policies, []Model{ModelTotal}, []PodRequests{r500}), SeriesStep: 10 * time.Minute,
		HvpaFor: func(string, string) *hvpav1alpha1.Hvpa { return h }}, ProfileDemand{Profile: ProfileFlash, Seed: 1, Days: 3})
	labels := []string{"hvpa", "hpa[cpu=500m,memory=2Gi]", "vpa", "hpa+vpa[cpu=500m,memory=2Gi]"}
	sums, series := sim.Summaries(), sim.Series()
	if len(sums) != 3*len(labels) || len(series) != len(sums) {
		t.Fatalf("%d summaries and %d series, want %d", len(sums), len(series), 3*len(labels))
	}
	for i, s := range sums {
		if s.Policy != labels[i%len(labels)] {
			t.Fatalf("summary %d is %s, want %s", i, s.Policy, labels[i%len(labels)])
		}
		ws := sim.simulated()
		if first := ws[i-i%len(labels)]; ws[i].cpuTally.demand != first.cpuTally.demand || ws[i].memTally.demand != first.memTally.demand {
			t.Errorf("%s %s: demand %g/%g, the hvpa run's %g/%g", s.Workload, s.Policy, ws[i].cpuTally.demand, ws[i].memTally.demand, first.cpuTally.demand, first.memTally.demand)
		}
		checkPolicy(t, s, series[i], ws[i])
	}
	for i := 0; i < len(sums); i += len(labels) {
		hpa, vpa := sums[i+1], sums[i+2]
		t.Logf("%s: cpu shortfall hpa %.2f%%, vpa %.2f%%", hpa.Workload, 100*hpa.CPUShortfall, 100*vpa.CPUShortfall)
		if vpa.CPUShortfall < 0.02 || hpa.CPUShortfall > vpa.CPUShortfall/4 {
			t.Errorf("%s: cpu shortfall hpa %.4f, vpa %.4f: want the flash crowd to leave the fixed-replica VPA short", hpa.Workload, hpa.CPUShortfall, vpa.CPUShortfall)
		}
	}
}

// profileRun runs a simulator of opts on a profile's demand, fed row by row, to its end.
func profileRun(t testing.TB, opts Options, d ProfileDemand) *Simulator {
	t.Helper()
	sim, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Each(func(r *trace.Row) error { return sim.Add(r) }); err != nil {
		t.Fatal(err)
	}
	if err := sim.Finish(); err != nil {
		t.Fatal(err)
	}
	return sim
}

// checkPolicy checks what a policy may change of a workload.
func checkPolicy(t *testing.T, s Summary, se *Series, w *workload) {
	t.Helper()
	cpuPerPod, memPerPod := map[float64]bool{}, map[float64]bool{}
	for _, p := range se.Points {
		cpuPerPod[math.Round(p.CPUPerPod)], memPerPod[math.Round(p.MemoryPerPod)] = true, true
	}
	switch {
	case strings.HasPrefix(s.Policy, "hpa+vpa"):
		if len(cpuPerPod) != 1 || !cpuPerPod[500] || len(memPerPod) < 2 || s.ReplicaChangesPerDay == 0 || s.PodResizes == 0 {
			t.Errorf("%s %s: cpu per pod %v (want 500m only), %d memory sizes, %+v", s.Workload, s.Policy, cpuPerPod, len(memPerPod), s)
		}
	case strings.HasPrefix(s.Policy, "hpa"):
		if len(cpuPerPod) != 1 || !cpuPerPod[500] || len(memPerPod) != 1 || s.PodResizes != 0 || s.PerPodChangesPerDay != 0 || s.MaxReplicas <= w.run.sim.firstPods(w.key) {
			t.Errorf("%s %s: cpu per pod %v, memory %v, %+v", s.Workload, s.Policy, cpuPerPod, memPerPod, s)
		}
	case s.Policy == "vpa":
		if s.ReplicaChangesPerDay != 0 || s.FinalReplicas != w.run.sim.firstPods(w.key) || s.PodResizes == 0 || s.Evictions != 0 {
			t.Errorf("%s vpa: %+v", s.Workload, s)
		}
	}
}

// TestRecurringBurstServed runs the hourly batch shape (a burst to 7x its load for the first 12 minutes of
// every hour) under the shoot-out Hvpa, through the controllers' own recommender and decision: once the
// recommender holds 3 hours of it (docs/design/scaling.md section 2a), the CPU provided rises before each
// burst, not into it, little of the bursts' demand is short, and the CPU provided falls back minutes after
// each burst has ended, not a stabilization after the rise (35 of every 60 minutes at the burst's size); the
// memory, young for the whole day, is no longer held where the first burst's jump took it once the burst recurs.
func TestRecurringBurstServed(t *testing.T) {
	h := exampleHvpa(t, "../examples/hvpa-shootout.yaml")
	sim := profileRun(t, Options{Runs: Runs([]Policy{PolicyHvpa}, []Model{ModelTotal}, nil), SeriesStep: time.Minute,
		HvpaFor: func(string, string) *hvpav1alpha1.Hvpa { return h }}, ProfileDemand{Profile: ProfileBatch, Seed: 1, Days: 1})
	sums, series := sim.Summaries(), sim.Series()
	if len(sums) != 3 {
		t.Fatalf("%d workloads, want the profile's 3", len(sums))
	}
	for i, s := range sums {
		// per hour from the fifth: the CPU provided in the minute before the burst against the half hour before,
		// and 8 minutes after the burst (its 12th minute is the last) against its 6th minute
		byHour := map[int64][4]float64{}
		first := series[i].Points[0].Time / 3600
		var demand, short float64     // of the hours from the fifth, in CPU-minutes
		var memPeak, memAfter float64 // the day's peak memory demand; the most memory provided from the sixth hour
		for _, p := range series[i].Points {
			hour, minute := p.Time/3600, p.Time%3600/60
			memPeak = max(memPeak, p.MemoryDemand)
			if hour >= first+4 {
				demand += p.CPUDemand
				short += max(0, p.CPUDemand-p.CPUServing)
			}
			if hour >= first+5 {
				memAfter = max(memAfter, p.MemoryProvided)
			}
			v := byHour[hour]
			switch minute {
			case 59:
				v[1] = p.CPUProvided
			case 45:
				v[0] = p.CPUProvided
			case 5:
				v[2] = p.CPUProvided
			case 20:
				v[3] = p.CPUProvided
			}
			byHour[hour] = v
		}
		ahead, back, hours := 0, 0, 0
		for hour, v := range byHour {
			if hour < first+4 || v[0] == 0 || v[1] == 0 || v[2] == 0 || v[3] == 0 {
				continue
			}
			hours++
			if v[1] > 2*v[0] {
				ahead++
			}
			if v[3] < v[2]/2 {
				back++
			}
		}
		t.Logf("%s: risen before the burst in %d of %d hours, back after it in %d; cpu shortfall %.2f%% from the fifth hour (%.2f%% over the day), provided/demand %.3f, %.1f per-pod changes a day; memory provided from the sixth hour at most %.2fx the day's peak demand",
			s.Workload, ahead, hours, back, 100*short/demand, 100*s.CPUShortfall, s.CPUProvidedOverDemand, s.PerPodChangesPerDay, memAfter/memPeak)
		if hours < 18 || ahead < hours-1 {
			t.Errorf("%s: the CPU provided rose before the burst in %d of %d hours, want all but one", s.Workload, ahead, hours)
		}
		if back < hours-1 {
			t.Errorf("%s: the CPU provided fell back 8 minutes after the burst in %d of %d hours, want all but one", s.Workload, back, hours)
		}
		if short > 0.02*demand {
			t.Errorf("%s: cpu shortfall %.2f%% from the fifth hour, want at most 2%% with the bursts anticipated", s.Workload, 100*short/demand)
		}
		// the burst's memory jumps are known once it recurs: young memory falls to the long history's target
		// (the peak plus its 15% margin), not held where the first burst's trend took it
		if memAfter > 1.3*memPeak {
			t.Errorf("%s: memory provided from the sixth hour up to %.2fx the day's peak demand, want at most 1.3x once the burst recurs", s.Workload, memAfter/memPeak)
		}
	}
}

// TestDailyBurstServed runs a nightly job through the controllers' own recommender and decision (the Hvpa of
// examples/hvpa-shootout.yaml): a workload at 400m that bursts to 3 CPUs at 02:00 for 40 minutes every day.
// From the fourth night on (three nights of history) its total rises before the burst, and the burst is
// served; in the first three nights it rises only after the burst has come.
func TestDailyBurstServed(t *testing.T) {
	h := exampleHvpa(t, "../examples/hvpa-shootout.yaml")
	sim, err := New(Options{Runs: Runs([]Policy{PolicyHvpa}, []Model{ModelTotal}, nil), SeriesStep: time.Minute,
		HvpaFor: func(string, string) *hvpav1alpha1.Hvpa { return h }})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC).Unix()
	const days, burstAt, burstFor = 4, 120, 40                  // minutes of the day
	noise := []float64{1.02, 0.97, 1.05, 0.95, 1.0, 1.03, 0.98} // a fixed wobble, so that nothing is random
	row := trace.Row{Namespace: []byte("batch"), Workload: []byte("nightly"), Container: []byte("app"), HasCPU: true, HasMemory: true,
		HasCPUReq: true, HasMemReq: true, CPURequest: 200, MemoryRequest: 1 << 30}
	for m := 0; m < days*1440; m++ {
		cpu := 400.0
		if x := m % 1440; x >= burstAt && x < burstAt+burstFor {
			cpu = 3000
		}
		cpu *= noise[m%len(noise)]
		row.Time = start + int64(m)*60
		for p := range 2 {
			row.Pod = fmt.Appendf(nil, "nightly-p%d", p)
			row.CPU, row.Memory = int64(cpu/2), 600<<20
			if err := sim.Add(&row); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := sim.Finish(); err != nil {
		t.Fatal(err)
	}
	series := sim.Series()
	if len(series) != 1 {
		t.Fatalf("%d series, want 1", len(series))
	}
	// per night: the CPU provided at 01:45 and at 01:59, and the burst's demand and shortfall
	type night struct{ before, ahead, demand, short float64 }
	nights := make([]night, days)
	for _, p := range series[0].Points {
		d, x := int((p.Time-start)/86400), int((p.Time-start)%86400/60)
		switch {
		case x == burstAt-15:
			nights[d].before = p.CPUProvided
		case x == burstAt-1:
			nights[d].ahead = p.CPUProvided
		case x >= burstAt && x < burstAt+burstFor:
			nights[d].demand += p.CPUDemand
			nights[d].short += max(0, p.CPUDemand-p.CPUServing)
		}
	}
	for d, n := range nights {
		rose := n.ahead > 2*n.before
		t.Logf("night %d: cpu provided %.0fm at 01:45, %.0fm at 01:59; %.2f%% of the burst short", d+1, n.before, n.ahead, 100*n.short/n.demand)
		switch {
		case d < 3 && rose:
			t.Errorf("night %d: risen before the burst without three nights of history", d+1)
		case d < 3 && n.short < 0.02*n.demand:
			t.Errorf("night %d: %.2f%% of the burst short, want the reaction time's (more than 2%%)", d+1, 100*n.short/n.demand)
		case d >= 3 && !rose:
			t.Errorf("night %d: the CPU provided did not rise before the burst (%.0fm at 01:45, %.0fm at 01:59)", d+1, n.before, n.ahead)
		case d >= 3 && n.short > 0.005*n.demand:
			t.Errorf("night %d: %.2f%% of the burst short, want at most 0.5%% with the burst anticipated", d+1, 100*n.short/n.demand)
		}
	}
}

// TestNightlyJobKilledOnlyOnItsFirstNight: the Hvpa of examples/hvpa-shootout.yaml on the nightly job (x4 for
// 45 minutes from 02:00, its memory x6 at once) is OOM-killed in the job's first minutes on the first night
// only: the storm of kills that night hid how fast the memory rose, and the memory rise counts it
// (docs/design/scaling.md section 2a, session 20), so the memory holds through the following evenings. The
// first day of a trace is the same whatever its length, so four days must have the first day's kills.
func TestNightlyJobKilledOnlyOnItsFirstNight(t *testing.T) {
	h := exampleHvpa(t, "../examples/hvpa-shootout.yaml")
	kills := func(days float64) map[string]int {
		sim := profileRun(t, Options{Runs: Runs([]Policy{PolicyHvpa}, []Model{ModelTotal}, nil),
			HvpaFor: func(string, string) *hvpav1alpha1.Hvpa { return h }}, ProfileDemand{Profile: ProfileNightly, Seed: 1, Days: days})
		out := map[string]int{}
		for _, s := range sim.Summaries() {
			out[s.Workload] = s.OOMEvents
		}
		return out
	}
	first, all := kills(1), kills(4)
	if len(all) != 3 {
		t.Fatalf("%d workloads, want 3", len(all))
	}
	for wl, n := range all {
		t.Logf("%s: %d OOM kills in 4 days, %d on the first", wl, n, first[wl])
		if first[wl] == 0 {
			t.Errorf("%s: no OOM kill on the first night: the job's first contact is not tested", wl)
		}
		if n != first[wl] {
			t.Errorf("%s: %d OOM kills in 4 days, %d of them after the first day: the memory did not hold for the next nights", wl, n, n-first[wl])
		}
	}
}
