package scaling

import (
	"math"
	"testing"
)

// hpaModel plays the real HPA controller's replica arithmetic for one Resource CPU metric (the test's stand-in
// for kube-controller-manager): Utilization target with a 10% tolerance, or AverageValue, and a scale-down
// stabilization window of N syncs (the highest recommendation of the window wins).
type hpaModel struct {
	utilization  float64 // target utilization (0.8), or 0 for AverageValue
	averageValue float64 // target average value per pod in millicores (AverageValue)
	window       int     // scale-down stabilization window, in syncs
	min, max     int32
	history      []int32
	last         int32 // the desired replicas it wrote last (the scale's spec.replicas)
}

// desired returns the HPA's desired replicas and, for a Utilization target, h_raw = c x current / target as
// the Hvpa controller reads it from the HPA's status (0 for AverageValue).
func (h *hpaModel) desired(c int32, usage, perPodRequest float64) (int32, float64) {
	var raw int32
	var hRaw float64
	if h.utilization > 0 {
		ratio := usage / (float64(c) * perPodRequest) / h.utilization
		hRaw = ratio * float64(c)
		raw = c // within the tolerance the HPA keeps the replicas its target's scale asks for: its last desired
		if len(h.history) > 0 {
			raw = h.last
		}
		if math.Abs(ratio-1) > 0.1 {
			raw = int32(math.Ceil(hRaw))
		}
	} else {
		raw = int32(math.Ceil(usage / h.averageValue))
	}
	raw = min(max(raw, h.min), h.max)
	h.history = append(h.history, raw)
	if len(h.history) > h.window+1 {
		h.history = h.history[len(h.history)-h.window-1:]
	}
	out := raw
	for _, x := range h.history { // scale-down stabilization: the highest of the window
		out = max(out, x)
	}
	h.last = out
	return out, hRaw
}

type ratchetRun struct {
	totals     []float64 // provided cpu total after each decision
	replicas   int32
	perPod     float64
	fixedPoint bool
}

// runRatchet drives the decision with a constant CPU usage and the HPA model. naiveBasis multiplies HPA's
// desired replicas by the CURRENT per-pod value (the unstable rule docs/design/scaling.md section 2 warns about) instead
// of the basis recorded when the HPA's desired replicas last changed.
func runRatchet(t *testing.T, hpa *hpaModel, usage float64, utilization, naiveBasis bool) ratchetRun {
	t.Helper()
	return runHPALoop(t, hpa, usage, hpaLoop{utilization: utilization, naiveBasis: naiveBasis, vpa: true})
}

// hpaLoop says how runHPALoop plays the HPA and the Hvpa around it.
type hpaLoop struct {
	utilization, naiveBasis bool
	vpa                     bool    // an embedded recommendation of usage x 1.15 (else the HPA alone)
	firstSeen               float64 // the usage the HPA's first reading sees (0: all of it)
	spikeAt                 int     // one decision (from 1) at which the usage is spike instead (0: none)
	spike                   float64
}

// runHPALoop runs 80 decisions from 3 x 1000m at a constant CPU usage, the HPA model reading the pods in force
// before each one.
func runHPALoop(t *testing.T, hpa *hpaModel, usage float64, o hpaLoop) ratchetRun {
	t.Helper()
	s := epSpec()
	s.Intervals = []Interval{
		{MaxReplicas: 1, MaxResources: V(500, -1)}, {MaxReplicas: 2, MaxResources: V(1000, -1)}, {MaxReplicas: 3, MaxResources: V(2000, -1)},
		{MaxReplicas: 4, MaxResources: V(4000, -1)}, {MaxReplicas: 5, MaxResources: V(8000, -1)},
	}
	s.MaxReplicas = hpa.max
	s.HPAUtilization = o.utilization
	c, p := int32(3), 1000.0
	var recorded *HPARecord
	var run ratchetRun
	unchanged := 0
	for i := 0; i < 80; i++ {
		seen := usage
		if i == 0 && o.firstSeen > 0 {
			seen = o.firstSeen
		}
		if i+1 == o.spikeAt {
			seen = o.spike
		}
		h, raw := hpa.desired(c, seen, p)
		in := &HPAInput{Desired: h, Min: hpa.min, Max: hpa.max, Raw: raw, RawAtWork: true, RawCurrent: true} // the model reads the pods in force at work
		if recorded != nil && !o.naiveBasis {
			in.Basis = HPABasis(recorded.Desired, recorded.Basis, h, []Container{{Name: "app", Requests: V(p, -1)}})
		}
		st := vpaState(c, V(p, -1), usage*1.15, -1) // the VPA's uncapped target: usage x 1.15 in total
		if !o.vpa {
			st.Recommendation = nil
		}
		st.HPA = in
		d := mustDecide(t, s, st)
		recorded = d.HPA
		newP := request(t, d, "app", CPU)
		if d.Replicas == c && newP == p {
			unchanged++
		} else {
			unchanged = 0
		}
		c, p = d.Replicas, newP
		run.totals = append(run.totals, float64(c)*p)
	}
	run.replicas, run.perPod, run.fixedPoint = c, p, unchanged >= 20
	return run
}

func TestHPARatchet(t *testing.T) {
	const usage = 5000.0 // 5 CPU, constant
	bound := 1.5 * usage / 0.8
	for name, window := range map[string]int{"window 0": 0, "window 20 syncs": 20} {
		t.Run(name, func(t *testing.T) {
			run := runRatchet(t, &hpaModel{utilization: 0.8, window: window, min: 1, max: 10}, usage, true, false)
			for i, total := range run.totals {
				if total > bound {
					t.Fatalf("decision %d provides %vm in total, above 1.5 x usage/target = %vm (totals %v)", i+1, total, bound, run.totals)
				}
			}
			if !run.fixedPoint {
				t.Fatalf("no fixed point: totals %v", run.totals)
			}
			if run.replicas != 4 || run.perPod != 1750 {
				t.Errorf("settled at %d x %vm, want 4 x 1750m (docs/design/scaling.md reference)", run.replicas, run.perPod)
			}
		})
	}
	t.Run("pinned at maxReplicas 4 with a 20-sync window: h_raw x the current per-pod value", func(t *testing.T) {
		run := runRatchet(t, &hpaModel{utilization: 0.8, window: 20, min: 1, max: 4}, usage, true, false)
		for i, total := range run.totals {
			if total > bound {
				t.Fatalf("decision %d provides %vm in total, above %vm (totals %v)", i+1, total, bound, run.totals)
			}
		}
		if !run.fixedPoint || run.replicas != 4 || float64(run.replicas)*run.perPod < usage/0.8 {
			t.Errorf("settled (%v) at %d x %vm, want a fixed point at 4 replicas providing at least usage/target %vm (totals %v)",
				run.fixedPoint, run.replicas, run.perPod, usage/0.8, run.totals)
		}
	})
	t.Run("negative control: the current per-pod value as basis ratchets", func(t *testing.T) {
		run := runRatchet(t, &hpaModel{utilization: 0.8, window: 20, min: 1, max: 10}, usage, true, true)
		worst := 0.0
		for _, total := range run.totals {
			worst = max(worst, total)
		}
		if worst <= bound {
			t.Errorf("the naive basis stayed within %vm (max %vm): this test could not tell the two rules apart", bound, worst)
		}
	})
}

func TestHPAAverageValueIsAFloor(t *testing.T) {
	const usage = 5000.0
	run := runRatchet(t, &hpaModel{averageValue: 1000, window: 20, min: 1, max: 10}, usage, false, false)
	if !run.fixedPoint {
		t.Fatalf("no fixed point: totals %v", run.totals)
	}
	for i, total := range run.totals {
		if total > 1.5*usage*1.15 {
			t.Fatalf("decision %d provides %vm: the HPA floor grew the total (totals %v)", i+1, total, run.totals)
		}
	}
	if run.replicas != 5 {
		t.Errorf("settled at %d replicas, want the HPA floor 5", run.replicas)
	}
}

// TestHPAHeldBelowItsReading: the HPA's first reading of three new pods finds one not ready yet and counts it at
// no usage (as the HPA controller does on a scale-up), so it asks for 5 replicas of 1000m; the Hvpa provides
// those 5 CPU as 3 x 1667m. On those pods the HPA reads 100% against its 80% target and recommends 4, which its
// scale-down window holds at 5: h x basis stays 5 CPU, the usage, for as long as the window lasts (the
// all-components suite once sat there for 50 s). The HPA's own recommendation on the pods in force, ceil(h_raw)
// pods of the per-pod value in force, is part of its total: 4 x 1667m, then a fixed point at most 88% used.
func TestHPAHeldBelowItsReading(t *testing.T) {
	const usage = 5000.0
	for name, window := range map[string]int{"window 20 syncs": 20, "window 0": 0} {
		t.Run(name, func(t *testing.T) {
			// one of the three pods not ready at the first reading: no usage on a scale-up
			run := runHPALoop(t, &hpaModel{utilization: 0.8, window: window, min: 1, max: 10}, usage, hpaLoop{utilization: true, firstSeen: usage * 2 / 3})
			for i, total := range run.totals {
				if total > 1.5*usage/0.8 {
					t.Fatalf("decision %d provides %vm, above 1.5 x usage/target (totals %v)", i+1, total, run.totals)
				}
				// from the HPA's second reading (the first of the pods the Hvpa sized) on, the pods are used at
				// most 88%: where the HPA, reading them, leaves the replicas alone
				if used := usage / total; i >= 1 && used > 0.8*(1+HPATolerance) {
					t.Fatalf("decision %d leaves %vm, %.0f%% used: above the HPA's 80%% target and its tolerance (totals %v)", i+1, total, 100*used, run.totals)
				}
			}
			if !run.fixedPoint {
				t.Fatalf("no fixed point: totals %v", run.totals)
			}
		})
	}
}

// TestHPARaisedBasisIsNotPaidTwice: settled at 4 x 1750m under h = 7 (a 20-sync window), one reading of a 30%
// spike raises the basis to 5/7 of 1750m (4 x 2188m); when the window lets h fall to the 5 the spike asked for,
// that 5 was counted in the 1750m pods it was read on: the basis is the recorded total over 5, not the grown
// pods (which gave 5 x 2188m, 46% used, and then 4 x 2052m, 61%, for good).
func TestHPARaisedBasisIsNotPaidTwice(t *testing.T) {
	const usage = 5000.0
	run := runHPALoop(t, &hpaModel{utilization: 0.8, window: 20, min: 1, max: 10}, usage, hpaLoop{utilization: true, spikeAt: 5, spike: 6500})
	for i, total := range run.totals {
		if total > 1.5*usage/0.8 {
			t.Fatalf("decision %d provides %vm, above 1.5 x usage/target (totals %v)", i+1, total, run.totals)
		}
	}
	if !run.fixedPoint {
		t.Fatalf("no fixed point: totals %v", run.totals)
	}
	if used := usage / (float64(run.replicas) * run.perPod); used < 0.8*(1-HPATolerance) {
		t.Errorf("settled at %d x %vm, %.0f%% used: below the HPA's tolerance of its 80%% target (totals %v)", run.replicas, run.perPod, 100*used, run.totals)
	}
}
