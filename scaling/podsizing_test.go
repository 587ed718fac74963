package scaling

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSizePod(t *testing.T) {
	const mi = float64(1 << 20)
	ratio := func(r Resource, x Ratio) [NumResources]*Ratio {
		var out [NumResources]*Ratio
		out[r] = &x
		return out
	}
	type sized struct {
		Name             string
		Requests, Limits Values
	}
	app := func(req, lim Values) []Container { return []Container{{Name: "app", Requests: req, Limits: lim}} }
	cases := map[string]struct {
		containers []Container
		targets    map[string]Values
		policies   []ContainerPolicy
		gap        [NumResources]*ChangeParams
		lr         *LimitRange
		want       []sized
		wantNotes  []string
	}{
		"target requests, proportional limits": {containers: app(V(100, 100*mi), V(200, 300*mi)),
			targets: map[string]Values{"app": V(250, 200*mi)},
			want:    []sized{{"app", V(250, 200*mi), V(500, 600*mi)}}},
		"RequestsOnly keeps limits": {containers: app(V(100, 100*mi), V(1000, 300*mi)),
			targets:  map[string]Values{"app": V(250, 200*mi)},
			policies: []ContainerPolicy{{Name: "app", Controlled: [NumResources]bool{true, true}, ControlledValues: RequestsOnly}},
			want:     []sized{{"app", V(250, 200*mi), V(1000, 300*mi)}}},
		"requestToLimitRatio Factor 2": {containers: app(V(100, -1), V(1000, -1)),
			targets:  map[string]Values{"app": V(250, -1)},
			policies: []ContainerPolicy{{Name: "app", Controlled: [NumResources]bool{true, true}, ControlledValues: RequestsAndLimits, Ratio: ratio(CPU, Ratio{Type: RatioFactor, Factor: 2})}},
			want:     []sized{{"app", V(250, -1), V(500, -1)}}, wantNotes: []string{"cpu limit = request x 2 (requestToLimitRatio)"}},
		"requestToLimitRatio Quantity 200Mi": {containers: app(V(-1, 100*mi), V(-1, 100*mi)),
			targets:  map[string]Values{"app": V(-1, 300*mi)},
			policies: []ContainerPolicy{{Name: "*", Controlled: [NumResources]bool{true, true}, ControlledValues: RequestsAndLimits, Ratio: ratio(Memory, Ratio{Type: RatioQuantity, Quantity: 200 * mi})}},
			want:     []sized{{"app", V(-1, 300*mi), V(-1, 500*mi)}}, wantNotes: []string{"memory limit = request + 200Mi (requestToLimitRatio)"}},
		"LimitRange max 600m, ratio 1:4, target 200m (AEP-8515)": {containers: app(V(100, -1), V(400, -1)),
			targets: map[string]Values{"app": V(200, -1)}, lr: &LimitRange{ContainerMax: V(600, -1)},
			want:      []sized{{"app", V(150, -1), V(600, -1)}},
			wantNotes: []string{"cpu request and limit lowered together to fit the LimitRange container max 600m"}},
		"a LimitRange maxLimitRequestRatio raises the request under an unchanged limit": {containers: app(V(500, -1), V(1000, -1)),
			targets:   map[string]Values{"app": V(100, -1)},
			policies:  []ContainerPolicy{{Name: "app", Controlled: [NumResources]bool{true, true}, ControlledValues: RequestsOnly}},
			lr:        &LimitRange{MaxLimitRequestRatio: V(4, -1)},
			want:      []sized{{"app", V(250, -1), V(1000, -1)}},
			wantNotes: []string{"cpu request raised to 250m to keep limit/request within the LimitRange maxLimitRequestRatio 4"}},
		"maxAllowed caps the target": {containers: app(V(100, -1), Values{}),
			targets:  map[string]Values{"app": V(900, -1)},
			policies: []ContainerPolicy{{Name: "app", Controlled: [NumResources]bool{true, true}, ControlledValues: RequestsAndLimits, MaxAllowed: V(500, -1)}},
			want:     []sized{{"app", V(500, -1), Values{}}}, wantNotes: []string{"cpu capped to maxAllowed 500m"}},
		"mode Off and containers without a target are left alone": {
			containers: []Container{{Name: "app", Requests: V(100, -1)}, {Name: "sidecar", Requests: V(50, -1)}, {Name: "log", Requests: V(10, -1)}},
			targets:    map[string]Values{"app": V(200, -1), "sidecar": V(300, -1)},
			policies:   []ContainerPolicy{{Name: "sidecar", Off: true}},
			want:       []sized{{"app", V(200, -1), Values{}}}},
		"uncontrolled resource keeps its request": {containers: app(V(100, 100*mi), Values{}),
			targets:  map[string]Values{"app": V(200, 300*mi)},
			policies: []ContainerPolicy{{Name: "app", Controlled: [NumResources]bool{true, false}, ControlledValues: RequestsAndLimits}},
			want:     []sized{{"app", V(200, 100*mi), Values{}}}},
		"LimitRange pod max lowers the sized containers together": {
			containers: []Container{{Name: "a", Requests: V(100, -1), Limits: V(200, -1)}, {Name: "b", Requests: V(100, -1), Limits: V(200, -1)}, {Name: "fixed", Requests: V(200, -1), Limits: V(200, -1)}},
			targets:    map[string]Values{"a": V(400, -1), "b": V(400, -1)}, lr: &LimitRange{PodMax: V(1000, -1)},
			want:      []sized{{"a", V(200, -1), V(400, -1)}, {"b", V(200, -1), V(400, -1)}},
			wantNotes: []string{"cpu of the scaled containers lowered by 0.500 to fit the LimitRange pod max 1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out := SizePod(tc.containers, tc.targets, tc.policies, tc.gap, tc.lr)
			var got []sized
			var notes []string
			for _, c := range out {
				got = append(got, sized{c.Name, c.Requests, c.Limits})
				notes = append(notes, NoteTexts(c.Notes)...)
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(Values{})); d != "" {
				t.Errorf("sizes (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantNotes, notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
		})
	}
}

// FuzzSizePodFixedPoint: sizing a pod that was already sized for the same targets changes nothing. This is
// what keeps the updater from resizing (or evicting) a pod the webhook just sized: the upstream eviction-loop
// bug class, where admission and updater disagreed by rounding.
func FuzzSizePodFixedPoint(f *testing.F) {
	f.Add(100.0, 333.0, 217.0, 500.0, 0.0, uint8(0), 0.0)
	f.Add(100.0, 400.0, 200.0, 600.0, 0.0, uint8(1), 4.0)
	f.Add(250.0, 0.0, 1234.0, 0.0, 3000.0, uint8(2), 0.0)
	f.Add(7.0, 13.0, 999.0, 650.0, 1000.0, uint8(0), 0.0)
	f.Fuzz(func(t *testing.T, req, lim, target, ctrMax, podMax float64, mode uint8, factor float64) {
		for _, x := range []float64{req, lim, target, ctrMax, podMax, factor} {
			if !(x >= 0 && x < 1e7) {
				t.Skip()
			}
		}
		req, lim, target = RoundUp(req)+1, RoundUp(lim), RoundUp(target)+1
		pol := ContainerPolicy{Name: "*", Controlled: [NumResources]bool{true, true}, ControlledValues: RequestsAndLimits}
		switch mode % 3 {
		case 1:
			pol.ControlledValues = RequestsOnly
		case 2:
			if factor >= 1 {
				pol.Ratio[CPU] = &Ratio{Type: RatioFactor, Factor: factor}
			}
		}
		cur := Container{Name: "app", Requests: V(req, -1)}
		if lim >= req {
			cur.Limits = V(lim, -1)
		}
		lr := &LimitRange{}
		if ctrMax > 0 {
			lr.ContainerMax = V(RoundUp(ctrMax), -1)
		}
		if podMax > 0 {
			lr.PodMax = V(RoundUp(podMax), -1)
		}
		sidecar := Container{Name: "sidecar", Requests: V(50, -1), Limits: V(50, -1)}
		targets := map[string]Values{"app": V(target, -1)}
		policies := []ContainerPolicy{pol}
		first := SizePod([]Container{cur, sidecar}, targets, policies, [NumResources]*ChangeParams{}, lr)
		if len(first) != 1 {
			t.Fatalf("sized %d containers, want 1", len(first))
		}
		sized := Container{Name: "app", Requests: first[0].Requests, Limits: first[0].Limits}
		q, _ := sized.Requests.Get(CPU)
		if l, ok := sized.Limits.Get(CPU); ok && q > l {
			t.Fatalf("request %v above limit %v", q, l)
		}
		second := SizePod([]Container{sized, sidecar}, targets, policies, [NumResources]*ChangeParams{}, lr)
		if _, podBound := lr.PodMax.Get(CPU); !podBound {
			if d := cmp.Diff(first[0].Requests, second[0].Requests, cmp.AllowUnexported(Values{})); d != "" {
				t.Errorf("requests moved on a second sizing (-first +second):\n%s", d)
			}
			if d := cmp.Diff(first[0].Limits, second[0].Limits, cmp.AllowUnexported(Values{})); d != "" {
				t.Errorf("limits moved on a second sizing (-first +second):\n%s", d)
			}
			return
		}
		// A pod max scales containers by a common factor and rounds each value down, so the ratio read back
		// from a sized pod carries that rounding: the second sizing may differ by a few base units, never by
		// a change the updater acts on (it ignores changes under --pod-update-threshold).
		for _, v := range [][2]Values{{first[0].Requests, second[0].Requests}, {first[0].Limits, second[0].Limits}} {
			a, _ := v[0].Get(CPU)
			b, _ := v[1].Get(CPU)
			if math.Abs(a-b) > max(3, 0.02*a) {
				t.Errorf("a second sizing moved cpu %v -> %v", a, b)
			}
		}
	})
}
