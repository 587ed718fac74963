package scaling

import (
	"math"
	"math/rand"
	"sort"
	"testing"
)

// monotonePath returns n totals strictly between from and to (in order), then to.
func monotonePath(rng *rand.Rand, from, to float64, n int) []float64 {
	cuts := make([]float64, n)
	for i := range cuts {
		cuts[i] = rng.Float64()
	}
	sort.Float64s(cuts)
	out := make([]float64, 0, n+1)
	for _, f := range cuts {
		out = append(out, from+(to-from)*f)
	}
	return append(out, to)
}

// restState puts c replicas at rest: the cpu total and memory total sit inside interval c's band.
func restTotals(iv []EffectiveInterval, c int32, fc, fm float64) (float64, float64) {
	e := iv[c-1]
	return e.Down[CPU] + (e.Up[CPU]-e.Down[CPU])*fc, e.Down[Memory] + (e.Up[Memory]-e.Down[Memory])*fm
}

func frac(x float64) float64 {
	x = math.Abs(x)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0.5
	}
	return x - math.Floor(x)
}

// walk feeds totals to Decide one after another, applying each decision, and returns the final replicas.
func walk(t *testing.T, s *Spec, c int32, cpu, mem []float64) int32 {
	st := vpaState(c, V(1000, gi), 0, 0)
	for i := range cpu {
		next := vpaState(st.Replicas, st.Containers[0].Requests, cpu[i], mem[i])
		next.IntentReplicas = st.IntentReplicas
		st = applied(next, mustDecide(t, s, next))
	}
	if st.IntentReplicas > 0 { // a scale-in waiting for its pods: they run its values now
		st = applied(st, mustDecide(t, s, st))
	}
	return st.Replicas
}

// FuzzPathIndependence: from a state at rest, along totals moving monotonically away from it (cpu and memory
// together, same direction), the replicas reached depend only on the start and the last totals.
func FuzzPathIndependence(f *testing.F) {
	f.Add(uint8(1), 0.5, 0.5, 3.0, 2.0, uint8(4), int64(1), true)
	f.Add(uint8(4), 0.1, 0.9, 0.2, 0.7, uint8(9), int64(2), false)
	f.Add(uint8(5), 0.0, 0.0, 0.01, 0.5, uint8(20), int64(3), false)
	f.Add(uint8(2), 0.99, 0.01, 7.0, 1.0, uint8(1), int64(4), true)
	f.Add(uint8(3), 0.5, 0.5, 0.0, 0.0, uint8(6), int64(5), false)
	f.Fuzz(func(t *testing.T, c0 uint8, fc, fm, gc, gm float64, steps uint8, seed int64, up bool) {
		s := epSpec()
		iv := mustIntervals(t, s.Intervals, s.MinReplicas, s.Overlap)
		c := int32(c0%5) + 1
		t0c, t0m := restTotals(iv, c, frac(fc), frac(fm))
		// the end point: up to 1.5x the top of the intervals, or down to 0
		var t1c, t1m float64
		if up {
			t1c = t0c + frac(gc)*1.5*iv[4].Up[CPU]
			t1m = t0m + frac(gm)*1.5*iv[4].Up[Memory]
		} else {
			t1c, t1m = t0c*frac(gc), t0m*frac(gm)
		}
		rng := rand.New(rand.NewSource(seed))
		n := int(steps%24) + 1
		pathC, pathM := monotonePath(rng, t0c, t1c, n), monotonePath(rng, t0m, t1m, n)
		// both must be monotone in the same direction: sort each path the right way
		stepwise := walk(t, s, c, pathC, pathM)
		jump := walk(t, s, c, []float64{t1c}, []float64{t1m})
		if stepwise != jump {
			t.Errorf("path dependence: from %d replicas at (%v, %v) to (%v, %v): %d steps reach %d, one jump %d",
				c, t0c, t0m, t1c, t1m, n, stepwise, jump)
		}
	})
}

// FuzzFixedPoint: with constant usage (the VPA's total stays constant whatever the replicas), decisions reach a
// fixed point in at most two decisions and never change after; replicas stay in [min, max] and per-pod values
// within the policy and the interval bounds.
func FuzzFixedPoint(f *testing.F) {
	f.Add(uint8(1), 500.0, 2.0, 5000.0, 3.0, int32(1), 100.0, 3000.0, 0.0)
	f.Add(uint8(5), 8000.0, 30.0, 300.0, 1.0, int32(2), 0.0, 0.0, 30.0)
	f.Add(uint8(3), 1000.0, 4.0, 45000.0, 200.0, int32(1), 250.0, 0.0, 10.0)
	f.Add(uint8(7), 100.0, 1.0, 1999.0, 8.0, int32(3), 0.0, 1500.0, 50.0)
	f.Fuzz(func(t *testing.T, c0 uint8, reqCPU, reqMemGi, usageCPU, usageMemGi float64, minR int32, minAllowed, maxAllowed, basePct float64) {
		clean := func(x, hi float64) float64 { return math.Mod(math.Abs(x), hi) }
		if math.IsNaN(reqCPU + reqMemGi + usageCPU + usageMemGi + minAllowed + maxAllowed + basePct) {
			return
		}
		s := epSpec()
		s.MinReplicas = 1 + int32(uint32(minR)%3)
		s.Base[CPU] = valPct(50, clean(basePct, 100))
		pol := ContainerPolicy{Name: "app", Controlled: [NumResources]bool{true, true}, ControlledValues: RequestsAndLimits}
		lo, hi := clean(minAllowed, 2000), clean(maxAllowed, 10000)
		if lo > 0 {
			pol.MinAllowed.Set(CPU, RoundUp(lo))
		}
		if hi > lo && hi > 0 {
			pol.MaxAllowed.Set(CPU, RoundUp(hi))
		}
		s.Policies = []ContainerPolicy{pol}
		c := int32(c0 % 8)
		if c == 0 {
			c = 1
		}
		req := V(RoundUp(clean(reqCPU, 9000)), RoundUp(clean(reqMemGi, 40)*gi))
		uCPU, uMem := clean(usageCPU, 60000)*1.15, clean(usageMemGi, 200)*gi*1.15
		var history []Decision
		var sizedFor int32
		for i := 0; i < 8; i++ {
			st := vpaState(c, req, uCPU, uMem)
			st.IntentReplicas = sizedFor
			d := mustDecide(t, s, st)
			history = append(history, d)
			// a scale-in from outside the bounds may first resize the pods that stay (ResizeFirst), twice when a
			// base is budgeted (the horizontal step's values, then the pure vertical value at the new count:
			// seed 8c96e6a440fe3c9e, 7 replicas to 3): the pods are sized for replicas within the bounds at once,
			// and the replicas land there within three decisions
			if i >= 4 && d.Changed {
				t.Fatalf("decision %d still changes something (%d -> %d replicas, %+v -> %+v); history %+v", i+1,
					c, d.Replicas, req, d.Containers[0].Requests, history)
			}
			if d.SizedFor < s.MinReplicas || d.SizedFor > s.MaxReplicas || (i >= 2 && (d.Replicas < s.MinReplicas || d.Replicas > s.MaxReplicas)) {
				t.Fatalf("decision %d: replicas %d, sized for %d, outside [%d, %d]", i+1, d.Replicas, d.SizedFor, s.MinReplicas, s.MaxReplicas)
			}
			sizedFor = 0
			if d.SizedFor < d.Replicas {
				sizedFor = d.SizedFor
			}
			in := intervalFor(d.Intervals, d.SizedFor)
			for _, r := range Resources {
				p, ok := d.Containers[0].Requests.Get(r)
				if !ok {
					t.Fatalf("no %s request", r)
				}
				if p > RoundUp(in.PerPodMax(r)) {
					t.Fatalf("%s per pod %v above the %d-replica interval max %v", r, p, in.Replicas, in.PerPodMax(r))
				}
				if hi, ok := pol.MaxAllowed.Get(r); ok && p > hi {
					t.Fatalf("%s per pod %v above maxAllowed %v", r, p, hi)
				}
				if lo, ok := pol.MinAllowed.Get(r); ok && p < lo && lo <= in.PerPodMax(r) {
					t.Fatalf("%s per pod %v below minAllowed %v", r, p, lo)
				}
			}
			c, req = d.Replicas, d.Containers[0].Requests
		}
	})
}

// FuzzMoreTotalNeverFewerReplicas: for the same current state, a larger total never asks for fewer replicas.
func FuzzMoreTotalNeverFewerReplicas(f *testing.F) {
	f.Add(uint8(1), 100.0, 200.0)
	f.Add(uint8(4), 4100.0, 4300.0)
	f.Add(uint8(3), 1.0, 60000.0)
	f.Fuzz(func(t *testing.T, c0 uint8, a, b float64) {
		if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
			return
		}
		a, b = math.Abs(a), math.Abs(b)
		if a > b {
			a, b = b, a
		}
		s := epSpec()
		c := int32(c0%5) + 1
		da := mustDecide(t, s, vpaState(c, V(1000, -1), a, -1))
		db := mustDecide(t, s, vpaState(c, V(1000, -1), b, -1))
		if db.DesiredReplicas < da.DesiredReplicas {
			t.Errorf("at %d replicas, total %v asks for %d but the larger %v for %d", c, a, da.DesiredReplicas, b, db.DesiredReplicas)
		}
	})
}

// TestSlowDescentLandsLikeOneJump is docs/design/scaling.md's worked claim: because down(j+1) <= up(j), a slow descent
// lands on the same interval as one jump.
func TestSlowDescentLandsLikeOneJump(t *testing.T) {
	s := epSpec()
	for target := 0.0; target <= 40000; target += 250 {
		var path []float64
		for x := 40000.0; x > target; x -= 100 {
			path = append(path, x)
		}
		path = append(path, target)
		mem := make([]float64, len(path))
		for i := range mem {
			mem[i] = -1
		}
		slow := walk(t, s, 5, path, mem)
		jump := walk(t, s, 5, []float64{target}, []float64{-1})
		if slow != jump {
			t.Fatalf("descent to cpu total %vm: slow %d replicas, one jump %d", target, slow, jump)
		}
	}
}
