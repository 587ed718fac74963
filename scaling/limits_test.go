package scaling

import (
	"math"
	"testing"
)

func TestLimits(t *testing.T) {
	const mi = float64(1 << 20)
	ratio := func(r Resource, x Ratio) [NumResources]*Ratio {
		var out [NumResources]*Ratio
		out[r] = &x
		return out
	}
	cases := map[string]struct {
		pol                ContainerPolicy
		gap                [NumResources]*ChangeParams
		cur                Container
		req                Values
		lr                 *LimitRange
		wantReq, wantLimit Values
	}{
		"RequestsOnly leaves limits": {pol: ContainerPolicy{ControlledValues: RequestsOnly},
			cur: Container{Requests: V(100, -1), Limits: V(500, -1)}, req: V(200, -1), wantReq: V(200, -1), wantLimit: V(500, -1)},
		"RequestsOnly caps a request at the unchanged limit": {pol: ContainerPolicy{ControlledValues: RequestsOnly},
			cur: Container{Requests: V(100, -1), Limits: V(500, -1)}, req: V(700, -1), wantReq: V(500, -1), wantLimit: V(500, -1)},
		"RequestsAndLimits keeps the original ratio": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits},
			cur: Container{Requests: V(100, 100*mi), Limits: V(300, 150*mi)}, req: V(200, 200*mi), wantReq: V(200, 200*mi), wantLimit: V(600, 300*mi)},
		"no limit stays no limit": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits},
			cur: Container{Requests: V(100, -1)}, req: V(200, -1), wantReq: V(200, -1), wantLimit: Values{}},
		"requestToLimitRatio Factor 2": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits, Ratio: ratio(CPU, Ratio{Type: RatioFactor, Factor: 2})},
			cur: Container{Requests: V(100, -1), Limits: V(1000, -1)}, req: V(250, -1), wantReq: V(250, -1), wantLimit: V(500, -1)},
		"requestToLimitRatio Quantity 200Mi": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits, Ratio: ratio(Memory, Ratio{Type: RatioQuantity, Quantity: 200 * mi})},
			cur: Container{Requests: V(-1, 100*mi)}, req: V(-1, 300*mi), wantReq: V(-1, 300*mi), wantLimit: V(-1, 500*mi)},
		"gap raises a limit": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits}, gap: [NumResources]*ChangeParams{valPct(100, 50), nil},
			cur: Container{Requests: V(100, -1), Limits: V(110, -1)}, req: V(400, -1), wantReq: V(400, -1), wantLimit: V(600, -1)},
		"LimitRange max with ratio 1:4 (AEP-8515 example)": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits, Ratio: ratio(CPU, Ratio{Type: RatioFactor, Factor: 4})},
			cur: Container{Requests: V(100, -1), Limits: V(400, -1)}, req: V(200, -1), lr: &LimitRange{ContainerMax: V(600, -1)},
			wantReq: V(150, -1), wantLimit: V(600, -1)},
		"LimitRange max without a limit caps the request": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits},
			cur: Container{Requests: V(100, -1)}, req: V(900, -1), lr: &LimitRange{ContainerMax: V(600, -1)}, wantReq: V(600, -1), wantLimit: Values{}},
		"RequestsOnly: a LimitRange moves the request alone": {pol: ContainerPolicy{ControlledValues: RequestsOnly},
			cur: Container{Requests: V(100, -1), Limits: V(1000, -1)}, req: V(50, -1), lr: &LimitRange{ContainerMin: V(100, -1)}, wantReq: V(100, -1), wantLimit: V(1000, -1)},
		"a limit without a request counts as request = limit": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits},
			cur: Container{Limits: V(500, -1)}, req: V(800, -1), wantReq: V(800, -1), wantLimit: V(800, -1)},
		"a pod resized with a ratio goes back to its template's ratio (AEP-8515, ratio gone)": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits},
			cur: Container{Requests: V(300, -1), Limits: V(900, -1), Origin: &Container{Requests: V(100, -1), Limits: V(200, -1)}}, req: V(400, -1),
			wantReq: V(400, -1), wantLimit: V(800, -1)},
		"a template limit without a request is a ratio of 1": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits},
			cur: Container{Requests: V(300, -1), Limits: V(900, -1), Origin: &Container{Limits: V(500, -1)}}, req: V(400, -1),
			wantReq: V(400, -1), wantLimit: V(400, -1)},
		"a template without a limit: the container keeps its own ratio": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits},
			cur: Container{Requests: V(300, -1), Limits: V(900, -1), Origin: &Container{Requests: V(100, -1)}}, req: V(400, -1),
			wantReq: V(400, -1), wantLimit: V(1200, -1)},
		"a requestToLimitRatio rules over the template's ratio": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits, Ratio: ratio(CPU, Ratio{Type: RatioFactor, Factor: 3})},
			cur: Container{Requests: V(300, -1), Limits: V(900, -1), Origin: &Container{Requests: V(100, -1), Limits: V(200, -1)}}, req: V(400, -1),
			wantReq: V(400, -1), wantLimit: V(1200, -1)},
		"LimitRange min raises request and limit together": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits},
			cur: Container{Requests: V(100, -1), Limits: V(200, -1)}, req: V(50, -1), lr: &LimitRange{ContainerMin: V(100, -1)}, wantReq: V(100, -1), wantLimit: V(200, -1)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, lim, notes := Limits(tc.pol, tc.gap, tc.cur, tc.req, [NumResources]bool{true, true}, tc.lr)
			if req != tc.wantReq || lim != tc.wantLimit {
				t.Errorf("requests %+v limits %+v, want %+v %+v (notes %v)", req, lim, tc.wantReq, tc.wantLimit, notes)
			}
		})
	}
}

func TestLimitsOnlyForChangedResources(t *testing.T) {
	pol := ContainerPolicy{ControlledValues: RequestsAndLimits, Ratio: [NumResources]*Ratio{{Type: RatioFactor, Factor: 2}, {Type: RatioFactor, Factor: 2}}}
	cur := Container{Requests: V(400, gi), Limits: V(400, gi)}
	req, lim, _ := Limits(pol, [NumResources]*ChangeParams{}, cur, V(400, gi), [NumResources]bool{}, nil)
	if req != cur.Requests || lim != cur.Limits {
		t.Errorf("nothing changed, yet limits became %+v (requests %+v)", lim, req)
	}
}

func TestPodLimitRangeKeepsRequestsWithinLimits(t *testing.T) {
	cs := []ContainerDecision{{Name: "a", Requests: V(1000, -1), Limits: V(1000, -1)}, {Name: "b", Requests: V(1000, -1), Limits: V(1000, -1)},
		{Name: "c", Requests: V(1000, -1), Limits: V(1000, -1)}}
	ApplyPodLimitRange(cs, nil, LimitRange{PodMax: V(2000, -1)})
	sum := 0.0
	for _, c := range cs {
		q, _ := c.Requests.Get(CPU)
		l, _ := c.Limits.Get(CPU)
		sum += l
		if q > l {
			t.Errorf("%s: request %v above limit %v", c.Name, q, l)
		}
	}
	if sum > 2000 {
		t.Errorf("limits sum %v above the pod max", sum)
	}
	// an unscaled sidecar counts toward the pod's sum
	cs = []ContainerDecision{{Name: "app", Requests: V(1500, -1), Limits: V(1500, -1)}}
	ApplyPodLimitRange(cs, []Container{{Name: "sidecar", Requests: V(1000, -1), Limits: V(1000, -1)}}, LimitRange{PodMax: V(2000, -1)})
	if l, _ := cs[0].Limits.Get(CPU); l != 1000 {
		t.Errorf("app limit %v, want 1000 (2000 pod max - 1000 sidecar)", l)
	}
	// RequestsOnly limits never move
	cs = []ContainerDecision{{Name: "a", RequestsOnly: true, Requests: V(500, -1), Limits: V(1500, -1)}, {Name: "b", Requests: V(500, -1), Limits: V(1000, -1)}}
	ApplyPodLimitRange(cs, nil, LimitRange{PodMax: V(2000, -1)})
	if l, _ := cs[0].Limits.Get(CPU); l != 1500 {
		t.Errorf("a RequestsOnly limit moved to %v", l)
	}
	if l, _ := cs[1].Limits.Get(CPU); l != 500 {
		t.Errorf("b limit %v, want 500", l)
	}
}

func TestPodLimitRange(t *testing.T) {
	cs := []ContainerDecision{
		{Name: "a", Requests: V(300, -1), Limits: V(600, -1)},
		{Name: "b", Requests: V(200, -1), Limits: V(400, -1)},
	}
	notes := ApplyPodLimitRange(cs, nil, LimitRange{PodMax: V(500, -1)})
	sum := 0.0
	for _, c := range cs {
		l, _ := c.Limits.Get(CPU)
		sum += l
	}
	if sum > 500 || len(notes) != 1 {
		t.Errorf("pod limits sum %v, want at most 500 with a note: %+v %v", sum, cs, notes)
	}
	if r, _ := cs[0].Requests.Get(CPU); r != 150 {
		t.Errorf("container a request %v, want 150 (ratio kept)", r)
	}
}

// Notes carry what they report as data: a value held below what was wanted is Capped (ScalingLimited), a
// note on where a limit comes from names its resource (the webhook's "original ratio" note is added only
// without one); texts are not read for either.
func TestNoteKinds(t *testing.T) {
	pol := ContainerPolicy{Name: "app", ControlledValues: RequestsOnly, Controlled: [NumResources]bool{true, true}}
	_, _, notes := Limits(pol, [NumResources]*ChangeParams{}, Container{Requests: V(100, -1), Limits: V(200, -1)}, V(300, -1), [NumResources]bool{true, true}, nil)
	if len(notes) != 1 || notes[0].Kind != Capped || notes[0].Resource != CPU || notes[0].Limit {
		t.Errorf("RequestsOnly request above its limit: notes %+v, want one Capped cpu note", notes)
	}

	pol = ContainerPolicy{Name: "app", ControlledValues: RequestsAndLimits, Controlled: [NumResources]bool{true, true},
		Ratio: [NumResources]*Ratio{Memory: {Type: RatioFactor, Factor: 2}}}
	_, _, notes = Limits(pol, [NumResources]*ChangeParams{}, Container{Requests: V(100, gi), Limits: V(200, gi)}, V(300, gi), [NumResources]bool{true, true}, nil)
	if !HasLimitNote(notes, Memory) || HasLimitNote(notes, CPU) {
		t.Errorf("requestToLimitRatio on memory: notes %+v, want a limit note for memory only", notes)
	}

	pol = ContainerPolicy{Name: "app", ControlledValues: RequestsAndLimits, Controlled: [NumResources]bool{true, true},
		MinAllowed: V(500, -1), MaxAllowed: V(-1, gi)}
	out := SizePod([]Container{{Name: "app", Requests: V(100, gi/2)}}, map[string]Values{"app": V(100, 2*gi)}, []ContainerPolicy{pol}, [NumResources]*ChangeParams{}, nil)
	var kinds []NoteKind
	for _, n := range out[0].Notes {
		kinds = append(kinds, n.Kind)
	}
	if len(kinds) != 2 || kinds[0] != Shaped || kinds[1] != Capped {
		t.Errorf("minAllowed cpu and maxAllowed memory: notes %+v, want Shaped then Capped", out[0].Notes)
	}
}

// TestLimitsMaxLimitRequestRatio pins the LimitRange container maxLimitRequestRatio exactly, for cpu and
// memory, RequestsOnly and RequestsAndLimits: a limit/request at the ratio stays, just above it the request
// rises to the smallest whole value within it, just below it stays; twice the ratio is far above it. The
// comparison is the API server's (limit / request x 1000 in float64 against the ratio's milli value), which
// refuses some exact ratios: 2007m over 1000m under a ratio of 2.007.
func TestLimitsMaxLimitRequestRatio(t *testing.T) {
	const mi = float64(1 << 20)
	ratio := func(r Resource, x Ratio) [NumResources]*Ratio {
		var out [NumResources]*Ratio
		out[r] = &x
		return out
	}
	cpuOnly := ContainerPolicy{ControlledValues: RequestsOnly}
	factor := func(r Resource, f float64) ContainerPolicy {
		return ContainerPolicy{ControlledValues: RequestsAndLimits, Ratio: ratio(r, Ratio{Type: RatioFactor, Factor: f})}
	}
	plus := func(r Resource, q float64) ContainerPolicy {
		return ContainerPolicy{ControlledValues: RequestsAndLimits, Ratio: ratio(r, Ratio{Type: RatioQuantity, Quantity: q})}
	}
	cpuLR := func(x float64) *LimitRange { return &LimitRange{MaxLimitRequestRatio: V(x, -1)} }
	memLR := func(x float64) *LimitRange { return &LimitRange{MaxLimitRequestRatio: V(-1, x)} }
	cases := map[string]struct {
		pol                ContainerPolicy
		cur                Container
		req                Values
		lr                 *LimitRange
		wantReq, wantLimit Values
	}{
		"cpu RequestsOnly at the ratio (1000m/250m = 4)": {pol: cpuOnly, cur: Container{Requests: V(500, -1), Limits: V(1000, -1)}, req: V(250, -1),
			lr: cpuLR(4), wantReq: V(250, -1), wantLimit: V(1000, -1)},
		"cpu RequestsOnly just above the ratio (1000m/249m)": {pol: cpuOnly, cur: Container{Requests: V(500, -1), Limits: V(1000, -1)}, req: V(249, -1),
			lr: cpuLR(4), wantReq: V(250, -1), wantLimit: V(1000, -1)},
		"cpu RequestsOnly just below the ratio (1000m/251m)": {pol: cpuOnly, cur: Container{Requests: V(500, -1), Limits: V(1000, -1)}, req: V(251, -1),
			lr: cpuLR(4), wantReq: V(251, -1), wantLimit: V(1000, -1)},
		"cpu RequestsOnly at twice the ratio (1000m/125m = 8)": {pol: cpuOnly, cur: Container{Requests: V(500, -1), Limits: V(1000, -1)}, req: V(125, -1),
			lr: cpuLR(4), wantReq: V(250, -1), wantLimit: V(1000, -1)},
		"cpu RequestsOnly, ratio 1.5, just above (1500m/999m)": {pol: cpuOnly, cur: Container{Requests: V(1000, -1), Limits: V(1500, -1)}, req: V(999, -1),
			lr: cpuLR(1.5), wantReq: V(1000, -1), wantLimit: V(1500, -1)},
		"cpu RequestsAndLimits at the ratio (factor 4)": {pol: factor(CPU, 4), cur: Container{Requests: V(100, -1), Limits: V(400, -1)}, req: V(200, -1),
			lr: cpuLR(4), wantReq: V(200, -1), wantLimit: V(800, -1)},
		"cpu RequestsAndLimits just above the ratio (request + 601m)": {pol: plus(CPU, 601), cur: Container{Requests: V(100, -1), Limits: V(400, -1)}, req: V(200, -1),
			lr: cpuLR(4), wantReq: V(201, -1), wantLimit: V(801, -1)},
		"cpu RequestsAndLimits just below the ratio (request + 599m)": {pol: plus(CPU, 599), cur: Container{Requests: V(100, -1), Limits: V(400, -1)}, req: V(200, -1),
			lr: cpuLR(4), wantReq: V(200, -1), wantLimit: V(799, -1)},
		"cpu RequestsAndLimits at twice the ratio (factor 8)": {pol: factor(CPU, 8), cur: Container{Requests: V(100, -1), Limits: V(400, -1)}, req: V(200, -1),
			lr: cpuLR(4), wantReq: V(400, -1), wantLimit: V(1600, -1)},
		"cpu RequestsAndLimits: an exact 2.007 the API server refuses (2007m/1000m)": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits},
			cur: Container{Requests: V(2000, -1), Limits: V(4014, -1)}, req: V(1000, -1),
			lr: cpuLR(2.007), wantReq: V(1001, -1), wantLimit: V(2007, -1)},
		"memory RequestsOnly at the ratio (1Gi/512Mi = 2)": {pol: cpuOnly, cur: Container{Requests: V(-1, 100*mi), Limits: V(-1, 1024*mi)}, req: V(-1, 512*mi),
			lr: memLR(2), wantReq: V(-1, 512*mi), wantLimit: V(-1, 1024*mi)},
		"memory RequestsOnly just above the ratio (1Gi/(512Mi-1))": {pol: cpuOnly, cur: Container{Requests: V(-1, 100*mi), Limits: V(-1, 1024*mi)}, req: V(-1, 512*mi-1),
			lr: memLR(2), wantReq: V(-1, 512*mi), wantLimit: V(-1, 1024*mi)},
		"memory RequestsOnly just below the ratio (1Gi/(512Mi+1))": {pol: cpuOnly, cur: Container{Requests: V(-1, 100*mi), Limits: V(-1, 1024*mi)}, req: V(-1, 512*mi+1),
			lr: memLR(2), wantReq: V(-1, 512*mi+1), wantLimit: V(-1, 1024*mi)},
		"memory RequestsOnly at twice the ratio (1Gi/256Mi = 4)": {pol: cpuOnly, cur: Container{Requests: V(-1, 100*mi), Limits: V(-1, 1024*mi)}, req: V(-1, 256*mi),
			lr: memLR(2), wantReq: V(-1, 512*mi), wantLimit: V(-1, 1024*mi)},
		"memory RequestsAndLimits at the ratio (request + 200Mi)": {pol: plus(Memory, 200*mi), cur: Container{Requests: V(-1, 100*mi), Limits: V(-1, 300*mi)}, req: V(-1, 200*mi),
			lr: memLR(2), wantReq: V(-1, 200*mi), wantLimit: V(-1, 400*mi)},
		"memory RequestsAndLimits just above the ratio (request + 200Mi + 1)": {pol: plus(Memory, 200*mi+1), cur: Container{Requests: V(-1, 100*mi), Limits: V(-1, 300*mi)}, req: V(-1, 200*mi),
			lr: memLR(2), wantReq: V(-1, 200*mi+1), wantLimit: V(-1, 400*mi+1)},
		"memory RequestsAndLimits just below the ratio (request + 200Mi - 1)": {pol: plus(Memory, 200*mi-1), cur: Container{Requests: V(-1, 100*mi), Limits: V(-1, 300*mi)}, req: V(-1, 200*mi),
			lr: memLR(2), wantReq: V(-1, 200*mi), wantLimit: V(-1, 400*mi-1)},
		"memory RequestsAndLimits at 1.5 times the ratio (the original 3x)": {pol: ContainerPolicy{ControlledValues: RequestsAndLimits}, cur: Container{Requests: V(-1, 100*mi), Limits: V(-1, 300*mi)}, req: V(-1, 200*mi),
			lr: memLR(2), wantReq: V(-1, 300*mi), wantLimit: V(-1, 600*mi)},
		"memory RequestsAndLimits at twice the ratio (factor 4)": {pol: factor(Memory, 4), cur: Container{Requests: V(-1, 100*mi), Limits: V(-1, 300*mi)}, req: V(-1, 200*mi),
			lr: memLR(2), wantReq: V(-1, 400*mi), wantLimit: V(-1, 800*mi)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, lim, notes := Limits(tc.pol, [NumResources]*ChangeParams{}, tc.cur, tc.req, [NumResources]bool{true, true}, tc.lr)
			if req != tc.wantReq || lim != tc.wantLimit {
				t.Errorf("requests %+v limits %+v, want %+v %+v (notes %v)", req, lim, tc.wantReq, tc.wantLimit, NoteTexts(notes))
			}
			for _, r := range Resources {
				x, ok := tc.lr.MaxLimitRequestRatio.Get(r)
				q, _ := req.Get(r)
				if l, hasL := lim.Get(r); ok && hasL && l/q*1000 > math.Round(x*1000) {
					t.Errorf("%s: limit %v / request %v above the ratio %v: the API server refuses the pod", r, l, q, x)
				}
			}
		})
	}
}
