package scaling

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLowConfidence(t *testing.T) {
	type out struct {
		Replicas, Desired int32
		CPU               float64
		Blocked           []string // part:direction:reason
	}
	withHPA := func(in HPAInput) func(*State) { return func(st *State) { st.HPA = &in } }
	cases := map[string]struct {
		spec  func(*Spec)
		c     int32
		req   Values
		total float64 // VPA cpu total; -1: no recommendation
		state func(*State)
		low   bool
		want  out
	}{
		// 4 x 1000m, VPA total 1 CPU: the total asks for 2 replicas (below interval 4's down boundary 4.2)
		"VPA-driven scale-down": {c: 4, req: V(1000, -1), total: 1000,
			want: out{2, 2, 500, nil}},
		"low confidence holds the VPA-driven scale-down, in replicas and in place": {c: 4, req: V(1000, -1), total: 1000, low: true,
			want: out{4, 4, 1000, []string{"replicas:Down:LowConfidence", "app/cpu:Down:LowConfidence"}}},
		"low confidence never holds a scale-up": {c: 1, req: V(500, -1), total: 1600, low: true,
			want: out{2, 2, 800, nil}},
		"low confidence, total inside the interval: nothing to hold": {c: 3, req: V(1000, -1), total: 3000, low: true,
			want: out{3, 3, 1000, nil}},
		// the HPA's total (2 x 500m) is larger than the VPA's (400m): the scale-down comes from the HPA source
		"low confidence does not hold an HPA-driven scale-down": {c: 4, req: V(1000, -1), total: 400, low: true,
			state: withHPA(HPAInput{Desired: 2, Min: 1, Max: 5, Basis: map[string]Values{"app": V(500, -1)}}),
			want:  out{2, 2, 500, nil}},
		"low confidence does not hold a scale-down to the HPA floor": {spec: func(s *Spec) { s.HPAUtilization = false },
			c: 5, req: V(1000, -1), total: -1, low: true, state: withHPA(HPAInput{Desired: 3, Min: 1, Max: 5}),
			want: out{3, 3, 1000, nil}}, // no total for cpu: the pods keep their values
		// cpu from the VPA asks for 2, memory from the VPA for 4: a scale-up wins anyway, nothing is held
		"another VPA total scales up: nothing held": {c: 3, req: V(1000, 4*gi), total: 1000, low: true,
			state: func(st *State) { st.Recommendation[0].UncappedTarget.Set(Memory, 30*gi/3) },
			want:  out{4, 4, 1000, nil}},
		"low confidence and a blocked per-pod decrease: both reported": {spec: func(s *Spec) { s.ScaleDown.Mode = UpdateModeOff },
			c: 4, req: V(1000, -1), total: 1000, low: true,
			want: out{4, 4, 1000, []string{"replicas:Down:LowConfidence", "app/cpu:Down:UpdatePolicy"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := epSpec()
			if tc.spec != nil {
				tc.spec(s)
			}
			st := vpaState(tc.c, tc.req, tc.total, -1)
			if tc.total < 0 {
				st.Recommendation = nil
			}
			st.LowConfidence = tc.low
			if tc.state != nil {
				tc.state(&st)
			}
			d := mustDecide(t, s, st)
			got := out{Replicas: d.Replicas, Desired: d.DesiredReplicas, CPU: -1}
			if len(d.Containers) > 0 { // a container without a total is not scaled
				got.CPU = request(t, d, "app", CPU)
			}
			for _, b := range d.Blocked {
				got.Blocked = append(got.Blocked, b.Part+":"+string(b.Direction)+":"+string(b.Reason))
				if b.Reason == "LowConfidence" && b.Part == "replicas" && !strings.Contains(b.Message, "replicas 4 -> 2") {
					t.Errorf("LowConfidence message %q does not say replicas 4 -> 2", b.Message)
				}
				if b.Reason == "LowConfidence" && b.Part != "replicas" && !strings.Contains(b.Message, "per pod 1 -> 250m") {
					t.Errorf("LowConfidence message %q does not say per pod 1 -> 250m", b.Message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLowConfidenceProperty: with VPA totals only, low confidence changes nothing when the decision scales
// nothing down; otherwise it keeps at least the current replicas and every per-pod value at least the one in
// force, and says so in LowConfidence parts (one per held part).
func TestLowConfidenceProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	s := epSpec()
	top := mustIntervals(t, s.Intervals, 1, s.Overlap)[4].Up
	for i := 0; i < 500; i++ {
		c := int32(1 + rng.Intn(5))
		st := vpaState(c, V(1000, 4*gi), rng.Float64()*1.2*top[CPU], rng.Float64()*1.2*top[Memory])
		free := mustDecide(t, s, st)
		st.LowConfidence = true
		held := mustDecide(t, s, st)
		down := free.DesiredReplicas < c
		for _, cd := range free.Containers {
			for _, r := range Resources {
				p, ok := cd.Requests.Get(r)
				cur, _ := cd.Current.Requests.Get(r)
				if ok && (p*float64(free.Replicas) < cur*float64(c) || (free.Replicas == c && p < cur)) {
					down = true
				}
			}
		}
		if !down {
			if diff := cmp.Diff(free, held, cmp.AllowUnexported(Values{})); diff != "" {
				t.Fatalf("c=%d: low confidence changed a decision that scales nothing down (-free +held):\n%s", c, diff)
			}
			continue
		}
		if held.Replicas < c {
			t.Fatalf("c=%d: held decision scales in to %d", c, held.Replicas)
		}
		for _, cd := range held.Containers {
			for _, r := range Resources {
				p, _ := cd.Requests.Get(r)
				cur, _ := cd.Current.Requests.Get(r)
				if p < cur {
					t.Fatalf("c=%d: held decision shrinks %s %s per pod %v -> %v", c, cd.Name, r, cur, p)
				}
			}
		}
		low := 0
		for _, b := range held.Blocked {
			if b.Reason == "LowConfidence" {
				if b.Direction != "Down" {
					t.Fatalf("c=%d: LowConfidence part %+v is not a scale-down", c, b)
				}
				low++
			}
		}
		if low == 0 {
			t.Fatalf("c=%d: free decision scales down (%+v), held one says no LowConfidence part: %+v", c, free, held.Blocked)
		}
	}
}

// TestStaleRecommendation: a stale recommendation (not refreshed within the bound) drives no scale-down, of
// replicas or per pod (reason StaleRecommendation, before LowConfidence), and still drives scale-ups; an
// HPA-driven scale-down is not held.
func TestStaleRecommendation(t *testing.T) {
	type out struct {
		Replicas int32
		CPU      float64
		Blocked  []string // part:direction:reason
	}
	cases := map[string]struct {
		c          int32
		req        Values
		total      float64
		low, stale bool
		hpa        *HPAInput
		want       out
	}{
		"fresh: the VPA-driven scale-down is applied": {c: 4, req: V(1000, -1), total: 1000, want: out{2, 500, nil}},
		"stale: held, in replicas and in place": {c: 4, req: V(1000, -1), total: 1000, stale: true,
			want: out{4, 1000, []string{"replicas:Down:StaleRecommendation", "app/cpu:Down:StaleRecommendation"}}},
		"stale and low confidence: stale is the reason": {c: 4, req: V(1000, -1), total: 1000, stale: true, low: true,
			want: out{4, 1000, []string{"replicas:Down:StaleRecommendation", "app/cpu:Down:StaleRecommendation"}}},
		"stale never holds a scale-up": {c: 1, req: V(500, -1), total: 1600, stale: true, want: out{2, 800, nil}},
		"stale does not hold an HPA-driven scale-down": {c: 4, req: V(1000, -1), total: 400, stale: true,
			hpa: &HPAInput{Desired: 2, Min: 1, Max: 5, Basis: map[string]Values{"app": V(500, -1)}}, want: out{2, 500, nil}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := vpaState(tc.c, tc.req, tc.total, -1)
			st.LowConfidence, st.StaleRecommendation, st.HPA = tc.low, tc.stale, tc.hpa
			d := mustDecide(t, epSpec(), st)
			got := out{Replicas: d.Replicas, CPU: request(t, d, "app", CPU)}
			for _, b := range d.Blocked {
				got.Blocked = append(got.Blocked, b.Part+":"+string(b.Direction)+":"+string(b.Reason))
				if !strings.Contains(b.Message, "the recommendation is stale") || !strings.Contains(b.Message, "wait for a fresh one") {
					t.Errorf("message %q does not say the recommendation is stale", b.Message)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}
