package scaling

import (
	"math"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// TestLoadFollowingTotalUnderPolicyBounds: a container policy's minAllowed and maxAllowed hold per pod, and
// the replicas follow the total (docs/design/scaling.md section 2a). A load-following total that the bounds
// clamp for the pods running moves when, unclamped, it selects other replicas (found in review: a total held
// at c x maxAllowed never left an interval whose per-pod maximum is maxAllowed, which is the default of an
// interval without maxResources; one held at c x minAllowed never fell below section 1's minAllowed down
// boundary). A load the bounds hold within the interval's replicas moves nothing, however long it stays.
func TestLoadFollowingTotalUnderPolicyBounds(t *testing.T) {
	const gi = float64(1 << 30)
	both := [NumResources]bool{true, false} // CPU: memory moves by its own rules
	t.Run("maxAllowed is the intervals' per-pod maximum", func(t *testing.T) {
		s := &Spec{MinReplicas: 1, MaxReplicas: 4, Tracking: DefaultTracking,
			Intervals: []Interval{{MaxReplicas: 2, MaxResources: V(1000, 2*gi)}, {MaxReplicas: 4, MaxResources: V(1000, 2*gi)}},
			Policies:  []ContainerPolicy{{Name: "*", Controlled: both, ControlledValues: RequestsAndLimits, MaxAllowed: V(1000, 2*gi)}},
			ScaleUp:   Policy{Mode: UpdateModeAuto}, ScaleDown: Policy{Mode: UpdateModeAuto}}
		st := loadState(2, V(1000, gi), V(3000, gi), steady(30, V(3000, gi)))
		d := mustDecide(t, s, st)
		if d.Replicas != 4 || request(t, d, "app", CPU) > 1000 {
			t.Fatalf("2 pods at maxAllowed 1000m with 3 CPU of load: %d replicas of %.0fm, want 4 of at most 1000m", d.Replicas, request(t, d, "app", CPU))
		}
		// the pods then take the total's share (3120m / 4), and the load changes nothing more, cycle after cycle
		st = applied(st, d)
		st = applied(st, decideSettled(t, s, st))
		if p := st.Containers[0].Requests; p.v[CPU] > 1000 || p.v[CPU] < 3000/4 {
			t.Fatalf("4 pods for 3 CPU of load: %.0fm each", p.v[CPU])
		}
		for i := range 5 {
			if d = decideSettled(t, s, st); d.Changed || d.Replicas != 4 {
				t.Fatalf("cycle %d at 4 pods of 1000m: changed %v to %d replicas of %.0fm: %+v", i, d.Changed, d.Replicas, request(t, d, "app", CPU), d.Totals)
			}
			st = applied(st, d)
		}
	})
	t.Run("minAllowed in the down boundaries", func(t *testing.T) {
		s := trackingSpec()
		s.Policies = []ContainerPolicy{{Name: "*", Controlled: both, ControlledValues: RequestsAndLimits, MinAllowed: V(1000, -1)}}
		st := loadState(3, V(1000, gi), V(1800, gi), steady(60, V(1800, gi)))
		d := decideSettled(t, s, st)
		if d.Replicas != 2 || request(t, d, "app", CPU) < 1000 {
			t.Fatalf("3 pods at minAllowed 1 CPU with 1.8 CPU of load: %d replicas of %.0fm, want 2 of at least 1000m (section 1's example)", d.Replicas, request(t, d, "app", CPU))
		}
		st = applied(st, d)
		for i := range 5 {
			if d = decideSettled(t, s, st); d.Changed || d.Replicas != 2 {
				t.Fatalf("cycle %d at 2 pods of 1000m: changed %v to %d replicas", i, d.Changed, d.Replicas)
			}
			st = applied(st, d)
		}
	})
	t.Run("minAllowed in the down boundaries, with a scale-up minChange", func(t *testing.T) {
		// a total that stays is not held by the scale-up minChange (examples/hvpa-kube-apiserver.yaml has one)
		s := trackingSpec()
		s.Policies = []ContainerPolicy{{Name: "*", Controlled: both, ControlledValues: RequestsAndLimits, MinAllowed: V(1000, -1)}}
		s.ScaleUp.MinChange[CPU] = valPct(100, 10)
		st := loadState(3, V(1000, gi), V(1800, gi), steady(60, V(1800, gi)))
		if d := decideSettled(t, s, st); d.Replicas != 2 {
			t.Fatalf("3 pods at minAllowed 1 CPU with 1.8 CPU of load and a scale-up minChange: %d replicas, want 2", d.Replicas)
		}
	})
	t.Run("pods of a fixed size scale in to the first interval", func(t *testing.T) {
		// minAllowed = maxAllowed = every interval's per-pod maximum: only the replicas change
		var ivs []Interval
		for n := int32(1); n <= 6; n++ {
			ivs = append(ivs, Interval{MaxReplicas: n, MaxResources: V(1000, 4*gi)})
		}
		s := trackingSpec()
		s.Intervals, s.MaxReplicas = ivs, 6
		s.Policies = []ContainerPolicy{{Name: "*", Controlled: both, ControlledValues: RequestsAndLimits, MinAllowed: V(1000, -1), MaxAllowed: V(1000, -1)}}
		for _, load := range []float64{500, 800} {
			st := loadState(3, V(1000, gi), V(load, gi), steady(60, V(load, gi)))
			for range 4 {
				st = applied(st, decideSettled(t, s, st))
			}
			if st.Replicas != 1 {
				t.Errorf("%.0fm of load on pods of 1 CPU: %d replicas, want 1", load, st.Replicas)
			}
		}
	})
	t.Run("an HPA floor that holds the replicas leaves the fall undone", func(t *testing.T) {
		// an HPA on a Pods metric asks for the 3 replicas running: the CPU total's fall to 2 replicas would
		// move the memory total within its band (0.40Gi -> 0.38Gi a pod) for no replica change
		s := trackingSpec()
		s.Policies = []ContainerPolicy{{Name: "*", Controlled: [NumResources]bool{true, true}, ControlledValues: RequestsAndLimits, MinAllowed: V(1000, -1)}}
		s.HPAUtilization = false
		st := loadState(3, V(1000, 0.4*gi), V(1800, gi), steady(60, V(1800, gi)))
		st.HPA = &HPAInput{Desired: 3, Min: 1, Max: 10}
		if d := decideSettled(t, s, st); d.Replicas != 3 || math.Abs(request(t, d, "app", Memory)-0.4*gi) > 1 || request(t, d, "app", CPU) != 1000 {
			t.Fatalf("changed to %d replicas of %.0fm, memory %.3fGi a pod: %+v", d.Replicas, request(t, d, "app", CPU), request(t, d, "app", Memory)/gi, d.Totals)
		}
		st.HPA.Desired = 2 // the floor no longer holds them: the fall is made
		if d := decideSettled(t, s, st); d.Replicas != 2 {
			t.Fatalf("HPA floor 2: %d replicas, want 2", d.Replicas)
		}
	})
	t.Run("a sidecar at its minAllowed moves nothing", func(t *testing.T) {
		// the sidecar's total, clamped at 3 x 100m, would ask for 1 replica unclamped; the app's asks for 3
		s := trackingSpec()
		s.Policies = []ContainerPolicy{{Name: "*", Controlled: both, ControlledValues: RequestsAndLimits, MinAllowed: V(100, -1)}}
		st := loadState(3, V(1100, gi), V(3000, gi), steady(60, V(3000, gi)))
		st = applied(st, decideSettled(t, s, st))
		st.Containers = append(st.Containers, Container{Name: "proxy", Requests: V(100, gi)})
		rec := st.Recommendation[0]
		rec.Name, rec.Load = "proxy", V(10, gi)
		rec.Recent = append([]LoadSample(nil), rec.Recent...)
		for i := range rec.Recent {
			rec.Recent[i].Load = V(10, gi)
		}
		st.Recommendation = append(st.Recommendation, rec)
		for i := range 5 {
			d := decideSettled(t, s, st)
			if d.Changed {
				t.Fatalf("cycle %d: changed to %d replicas, app %.0fm, proxy %.0fm: %+v", i, d.Replicas, request(t, d, "app", CPU), request(t, d, "proxy", CPU), d.Totals)
			}
			st = applied(st, d)
		}
	})
	t.Run("a load the bounds hold within the interval moves nothing", func(t *testing.T) {
		s := trackingSpec()
		s.Policies = []ContainerPolicy{{Name: "*", Controlled: both, ControlledValues: RequestsAndLimits, MinAllowed: V(1000, -1)}}
		// 3 pods at minAllowed; 2.2 CPU of load stays above the 3-replica down boundary (2 CPU), below 3 CPU
		st := loadState(3, V(1000, gi), V(2200, gi), steady(60, V(2200, gi)))
		for i := range 5 {
			d := decideSettled(t, s, st)
			if d.Changed || d.Replicas != 3 {
				t.Fatalf("cycle %d: changed %v to %d replicas of %.0fm, want 3 pods of 1000m kept", i, d.Changed, d.Replicas, request(t, d, "app", CPU))
			}
			st = applied(st, d)
		}
	})
}

// TestHPAOnAResourceNoTotalScales: an HPA on the utilization of a resource the Hvpa does not scale (a
// memory-only Hvpa beside an HPA on CPU, the pairing upstream calls safe) sets a replica floor: no total
// carries its signal (found in review: the Hvpa scaled in from 2 to 1 while the HPA asked for 4).
func TestHPAOnAResourceNoTotalScales(t *testing.T) {
	const gi = float64(1 << 30)
	for name, tc := range map[string]struct {
		controlled, measured [NumResources]bool
	}{
		"memory only":                        {controlled: [NumResources]bool{false, true}, measured: [NumResources]bool{true, false}},
		"memory only, HPA on cpu and memory": {controlled: [NumResources]bool{false, true}, measured: [NumResources]bool{true, true}},
		"cpu and memory":                     {controlled: [NumResources]bool{true, true}, measured: [NumResources]bool{true, false}},
	} {
		controlled := tc.controlled
		s := trackingSpec()
		s.MaxReplicas = 5
		for _, r := range Resources {
			if tc.measured[r] {
				s.HPATargets[r], s.HPAMeasures[r] = 0.8, true
			}
		}
		s.Policies = []ContainerPolicy{{Name: "*", Controlled: controlled, ControlledValues: RequestsAndLimits}}
		// the HPA on CPU utilization asks for 4 (2 pods of 500m use 2 CPU: 200%)
		st := loadState(2, V(500, gi), V(2000, gi), steady(60, V(2000, 0.8*gi)))
		st.HPA = &HPAInput{Desired: 4, Min: 1, Max: 10, Raw: 5, RawAtWork: true, RawCurrent: true}
		d := mustDecide(t, s, st)
		if !controlled[CPU] && d.Replicas < 4 { // with CPU scaled, the CPU total carries the HPA's signal (section 2)
			t.Errorf("%s: %d replicas while the HPA on CPU asks for 4", name, d.Replicas)
		}
		if wantFloor := !controlled[CPU]; (d.HPAFloor == 4) != wantFloor {
			t.Errorf("%s: HPA floor %d, want the HPA's 4 as a floor: %v", name, d.HPAFloor, wantFloor)
		}
	}
}

// TestLoadBeyondTheTopIsLimited: a load-following total that maxAllowed holds at the top interval's pods
// (whose per-pod maximum is maxAllowed, the default) says what the load asks beyond it in ScalingLimited and
// a Saturated block, as a recommendation total above the top interval does (found in review: the total sat
// at the top's boundary, "within every bound", with 6 CPU of load on 4 pods of at most 1 CPU).
func TestLoadBeyondTheTopIsLimited(t *testing.T) {
	const gi = float64(1 << 30)
	both := [NumResources]bool{true, false}
	s := &Spec{MinReplicas: 1, MaxReplicas: 4, Tracking: DefaultTracking,
		Intervals: []Interval{{MaxReplicas: 2, MaxResources: V(1000, 2*gi)}, {MaxReplicas: 4, MaxResources: V(1000, 2*gi)}},
		Policies:  []ContainerPolicy{{Name: "*", Controlled: both, ControlledValues: RequestsAndLimits, MaxAllowed: V(1000, 2*gi)}},
		ScaleUp:   Policy{Mode: UpdateModeAuto}, ScaleDown: Policy{Mode: UpdateModeAuto}}
	limited := func(d Decision) (bool, string) {
		for _, c := range d.Conditions {
			if c.Type == hvpav1alpha1.ConditionScalingLimited {
				return c.Status == metav1.ConditionTrue, c.Message
			}
		}
		return false, ""
	}
	for _, tc := range []struct {
		pods         int32
		load         float64
		want         bool
		wantReplicas int32
	}{
		{pods: 2, load: 6000, want: true, wantReplicas: 4},  // scales out to the top, and says the rest
		{pods: 4, load: 6000, want: true, wantReplicas: 4},  // at the top
		{pods: 4, load: 3000, want: false, wantReplicas: 4}, // within the top: nothing to say
		{pods: 2, load: 1500, want: false, wantReplicas: 2},
	} {
		st := loadState(tc.pods, V(1000, gi), V(tc.load, gi), steady(30, V(tc.load, gi)))
		d := mustDecide(t, s, st)
		got, msg := limited(d)
		saturated := slices.ContainsFunc(d.Blocked, func(b BlockedPart) bool { return b.Reason == hvpav1alpha1.BlockReasonSaturated })
		if got != tc.want || saturated != tc.want || d.Replicas != tc.wantReplicas {
			t.Errorf("%d pods at most 1 CPU each, %.0fm of load: ScalingLimited %v (%q), Saturated block %v, %d replicas; want %v, %d replicas",
				tc.pods, tc.load, got, msg, saturated, d.Replicas, tc.want, tc.wantReplicas)
		}
		if tc.want && !strings.Contains(msg, "6240m") {
			t.Errorf("%d pods, %.0fm of load: %q, want the load's total (6240m, with headroom) named", tc.pods, tc.load, msg)
		}
	}
}
