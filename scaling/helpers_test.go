package scaling

import (
	"math"
	"slices"
	"testing"
	"time"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

const gi = float64(1 << 30)

// epIntervals are the HVPA-EP-0001 kube-apiserver intervals: per pod 0.5/1/2/4/8 CPU and 2/4/8/16/32 Gi.
func epIntervals() []Interval {
	return []Interval{
		{MaxReplicas: 1, MaxResources: V(500, 2*gi)},
		{MaxReplicas: 2, MaxResources: V(1000, 4*gi)},
		{MaxReplicas: 3, MaxResources: V(2000, 8*gi)},
		{MaxReplicas: 4, MaxResources: V(4000, 16*gi)},
		{MaxReplicas: 5, MaxResources: V(8000, 32*gi)},
	}
}

func pct(p float64) *ChangeParams { return &ChangeParams{Percentage: p, HasPercentage: true} }

func valPct(v, p float64) *ChangeParams {
	return &ChangeParams{Value: v, HasValue: true, Percentage: p, HasPercentage: true}
}

// epSpec is an Hvpa on the EP-0001 intervals with 30% overlap, everything applied at once (Auto, no
// stabilization, no minChange) and one container "app" with the default policy.
func epSpec() *Spec {
	return &Spec{
		MinReplicas: 1, MaxReplicas: 5,
		Intervals:      epIntervals(),
		Overlap:        [NumResources]*ChangeParams{pct(30), pct(30)},
		ScaleUp:        Policy{Mode: UpdateModeAuto},
		ScaleDown:      Policy{Mode: UpdateModeAuto},
		HPAUtilization: true,
	}
}

// vpaState is one container "app" at c replicas with per-pod requests req and a VPA uncapped target such
// that the VPA total is total (both in base units; a negative argument leaves that resource out).
func vpaState(c int32, req Values, totalCPU, totalMem float64) State {
	var u Values
	if totalCPU >= 0 {
		u.Set(CPU, totalCPU/float64(c))
	}
	if totalMem >= 0 {
		u.Set(Memory, totalMem/float64(c))
	}
	return State{
		Now:            time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC),
		Replicas:       c,
		Containers:     []Container{{Name: "app", Requests: req}},
		Recommendation: []Recommendation{{Name: "app", Target: u, UncappedTarget: u}},
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(1, math.Abs(b)) }

func mustDecide(t *testing.T, s *Spec, st State) Decision {
	t.Helper()
	d, err := Decide(s, st)
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	return d
}

func request(t *testing.T, d Decision, name string, r Resource) float64 {
	t.Helper()
	for _, c := range d.Containers {
		if c.Name == name {
			v, ok := c.Requests.Get(r)
			if !ok {
				t.Fatalf("container %s has no %s request in the decision", name, r)
			}
			return v
		}
	}
	t.Fatalf("container %s is not in the decision", name)
	return 0
}

// mustIntervals is EffectiveIntervals for intervals a test knows to be within the bounds.
func mustIntervals(t testing.TB, intervals []Interval, minReplicas int32, overlap [NumResources]*ChangeParams) []EffectiveInterval {
	t.Helper()
	iv, err := EffectiveIntervals(intervals, minReplicas, overlap)
	if err != nil {
		t.Fatal(err)
	}
	return iv
}

// applied is st after d is applied: its replicas and per-pod values, and the replicas those are sized for
// while a scale-in waits for its pods to be resized first (ResizeFirst); the pods run the new values.
func applied(st State, d Decision) State {
	st.Replicas = d.Replicas
	st.Containers = slices.Clone(st.Containers)
	for i := range st.Containers {
		for _, cd := range d.Containers {
			if cd.Name == st.Containers[i].Name {
				st.Containers[i].Requests, st.Containers[i].Limits = cd.Requests, cd.Limits
			}
		}
	}
	st.IntentReplicas, st.PodsResizing = 0, false
	if d.SizedFor < d.Replicas {
		st.IntentReplicas = d.SizedFor
	}
	return st
}

// decideSettled decides, and when a scale-in first resizes the pods that stay (ResizeFirst), decides again
// once they run those values: the decision the scale-in lands on.
func decideSettled(t *testing.T, s *Spec, st State) Decision {
	t.Helper()
	d := mustDecide(t, s, st)
	if d.SizedFor >= d.Replicas {
		return d
	}
	if !slices.ContainsFunc(d.Blocked, func(b BlockedPart) bool { return b.Reason == hvpav1alpha1.BlockReasonResizeFirst }) {
		t.Fatalf("sized for %d replicas, below the %d applied, without a ResizeFirst block: %+v", d.SizedFor, d.Replicas, d.Blocked)
	}
	return mustDecide(t, s, applied(st, d))
}
