package scaling

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestVPATotal(t *testing.T) {
	const mi = float64(1 << 20)
	cases := map[string]struct {
		base []*ChangeParams // per resource (cpu, memory); nil: no base
		r    Resource
		load float64
		c    int32
		pCur float64
		want float64
	}{
		"no base, 1 replica: T = L":                       {r: CPU, load: 1550, c: 1, pCur: 500, want: 1550},
		"no base, 4 replicas: T = L (replica-aware)":      {r: CPU, load: 1550, c: 4, pCur: 500, want: 1550},
		"base value, 1 replica":                           {base: []*ChangeParams{{Value: 50, HasValue: true}}, r: CPU, load: 1550, c: 1, pCur: 500, want: 1600},
		"base value, 3 replicas":                          {base: []*ChangeParams{{Value: 50, HasValue: true}}, r: CPU, load: 1550, c: 3, pCur: 500, want: 1700},
		"base percentage of the current request":          {base: []*ChangeParams{pct(5)}, r: CPU, load: 1550, c: 1, pCur: 2000, want: 1650},
		"base percentage, 4 replicas":                     {base: []*ChangeParams{pct(5)}, r: CPU, load: 1550, c: 4, pCur: 2000, want: 1950},
		"value and percentage: the value wins":            {base: []*ChangeParams{valPct(50, 5)}, r: CPU, load: 1550, c: 1, pCur: 500, want: 1600},
		"value and percentage: the percentage wins":       {base: []*ChangeParams{valPct(50, 5)}, r: CPU, load: 1550, c: 2, pCur: 2000, want: 1750},
		"no current request: base(0) is the value":        {base: []*ChangeParams{valPct(50, 5)}, r: CPU, load: 1000, c: 2, pCur: 0, want: 1100},
		"memory base, 2 replicas":                         {base: []*ChangeParams{nil, valPct(100*mi, 10)}, r: Memory, load: 3 * gi, c: 2, pCur: 2 * gi, want: 3*gi + 2*0.2*gi},
		"the other resource's base does not count":        {base: []*ChangeParams{{Value: 50, HasValue: true}}, r: Memory, load: gi, c: 3, pCur: gi, want: gi},
		"zero load: the bases alone (c x base(pCurrent))": {base: []*ChangeParams{{Value: 50, HasValue: true}}, r: CPU, load: 0, c: 5, pCur: 100, want: 250},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := epSpec()
			copy(s.Base[:], tc.base)
			if got := s.VPATotal(tc.r, tc.load, tc.c, tc.pCur); !near(got, tc.want) {
				t.Errorf("VPATotal = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDecideFromLoad: Decide takes the VPA total from Recommendation.Load when it has the resource (T = L + c x
// base(pCurrent)), and from c x UncappedTarget (else c x Target) otherwise.
func TestDecideFromLoad(t *testing.T) {
	type total struct {
		Total    float64
		Source   Source
		Replicas int32
	}
	type out struct {
		Replicas int32
		Requests Values
		Totals   map[string]total
	}
	cases := map[string]struct {
		base *ChangeParams // cpu base
		c    int32
		req  Values
		rec  Recommendation
		want out
	}{
		// docs/design/scaling.md section 4's worked vector through the load: L = 1.6 - base(0.5) = 1.55
		"worked vector: 1 x 0.5 cpu, L 1.55, base 50m/5% -> 2 x 0.825": {base: valPct(50, 5), c: 1, req: V(500, -1),
			rec:  Recommendation{Load: V(1550, -1)},
			want: out{2, V(825, -1), map[string]total{"cpu": {1600, SourceVPA, 2}}}},
		"load wins over a replica-blind per-pod target": {c: 3, req: V(1000, -1),
			// c x uncapped would be 3 x 1300 = 3900 (3 replicas); the workload's load is 1300 (1 replica... at most 2)
			rec:  Recommendation{Load: V(1300, -1), UncappedTarget: V(1300, -1), Target: V(1300, -1)},
			want: out{2, V(650, -1), map[string]total{"cpu": {1300, SourceVPA, 2}}}},
		"load with base at c > 1: T = L + c x base": {base: &ChangeParams{Value: 100, HasValue: true}, c: 3, req: V(1000, -1),
			rec:  Recommendation{Load: V(2700, -1)},
			want: out{3, V(1000, -1), map[string]total{"cpu": {3000, SourceVPA, 3}}}},
		"no load for memory: c x uncappedTarget": {c: 2, req: V(1000, 2*gi),
			rec:  Recommendation{Load: V(1800, -1), UncappedTarget: V(900, 3*gi)},
			want: out{2, V(900, 3*gi), map[string]total{"cpu": {1800, SourceVPA, 2}, "memory": {6 * gi, SourceVPA, 2}}}},
		"no load, no uncappedTarget: c x target": {c: 2, req: V(1000, -1),
			rec:  Recommendation{Target: V(800, -1)},
			want: out{2, V(800, -1), map[string]total{"cpu": {1600, SourceVPA, 2}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := epSpec()
			s.Base[CPU] = tc.base
			st := vpaState(tc.c, tc.req, -1, -1)
			tc.rec.Name = "app"
			st.Recommendation = []Recommendation{tc.rec}
			d := mustDecide(t, s, st)
			got := out{Replicas: d.Replicas, Requests: d.Containers[0].Requests, Totals: map[string]total{}}
			for _, x := range d.Totals {
				got.Totals[x.Resource.String()] = total{x.Total, x.Source, x.Replicas}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(Values{})); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
		})
	}
}
