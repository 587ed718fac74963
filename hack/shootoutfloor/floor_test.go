package main

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteForce prices every plan over grid (every level sequence that keeps the hold rule) and returns the least
// lagrangian and that plan.
func bruteForce(demand, grid []float64, hold int, lambda, mu float64) (float64, plan) {
	best, bestPlan := math.Inf(1), plan{}
	seq := make([]int, len(demand))
	var walk func(t, age int, p plan)
	walk = func(t, age int, p plan) {
		if t == len(demand) {
			if v := p.lagrangian(lambda, mu); v < best {
				best, bestPlan = v, p
			}
			return
		}
		for i := range grid {
			q, a := p, age+1 // age: the minutes the level has been in force, this one included
			if t > 0 && i != seq[t-1] {
				if i < seq[t-1] && age < hold {
					continue // a fall within the hold
				}
				q.changes++
				a = 1
			}
			seq[t] = i
			q.provided += grid[i]
			q.short += max(0, demand[t]-grid[i])
			walk(t+1, min(a, hold), q)
		}
	}
	walk(0, hold, plan{})
	return best, bestPlan
}

// TestSolveIsExact: on small random demands solve's plan has the least price of every plan that keeps the hold
// rule (brute force), at prices from cheap to dear, and reports what it provides, runs short and changes.
func TestSolveIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		demand := make([]float64, 3+r.IntN(5))
		for i := range demand {
			demand[i] = float64(1 + r.IntN(9))
		}
		grid := []float64{2, 5, 9}
		hold := 1 + r.IntN(3)
		lambda, mu := []float64{0.1, 1, 10}[r.IntN(3)], []float64{0, 1, 20}[r.IntN(3)]
		want, wantPlan := bruteForce(demand, grid, hold, lambda, mu)
		got := solve(demand, grid, hold, lambda, mu)
		if math.Abs(got.lagrangian(lambda, mu)-want) > 1e-9 {
			t.Fatalf("case %d (demand %v, hold %d, lambda %g, mu %g): solve %+v priced %g, the best plan %+v priced %g",
				n, demand, hold, lambda, mu, got, got.lagrangian(lambda, mu), wantPlan, want)
		}
	}
}

// TestHoldCostsAFall: a burst of one minute at 10 after ten minutes of 1 costs the hold: the total may fall
// back only hold minutes after the rise (no shortfall allowed: lambda dear), so it provides 10 for hold
// minutes.
func TestHoldCostsAFall(t *testing.T) {
	demand := make([]float64, 21)
	for i := range demand {
		demand[i] = 1
	}
	demand[10] = 10
	grid := []float64{1, 10}
	for hold, want := range map[int]float64{1: 10 + 10 + 10, 3: 10 + 3*10 + 8, 5: 10 + 5*10 + 6} {
		p := solve(demand, grid, hold, 1000, 0)
		if p.provided != want || p.short != 0 || p.changes != 2 {
			t.Errorf("hold %d: %+v, want provided %g, no shortfall, 2 changes", hold, p, want)
		}
	}
	// at a price of 80 a change, one rise and no fall (the burst level kept: 120 + 80) is cheaper than rise and
	// fall (48 + 160) and than the burst level from the start (210)
	if p := solve(demand, grid, 3, 1000, 80); p.changes != 1 || p.provided != 10+11*10 {
		t.Errorf("dear changes: %+v, want one rise to the burst level and no fall", p)
	}
}

// TestFindFloor: within a shortfall budget the clairvoyant runs the short burst short instead of holding its
// level, and the lower bound is at most the plan found.
func TestFindFloor(t *testing.T) {
	demand := make([]float64, 150)
	for i := range demand {
		demand[i] = 100
		if i%60 >= 40 && i%60 < 45 {
			demand[i] = 400 // two 5-minute bursts an hour apart, after 40 minutes at 100 (a plan's first level is free)
		}
	}
	noShort := findFloor(demand, 1.01, 30, 0, 4)
	if !noShort.found || noShort.feasible.short != 0 || noShort.feasible.changes > 4 {
		t.Fatalf("no shortfall: %+v", noShort)
	}
	// each burst held 30 minutes: 2 x 30 x 400 + 90 x 100, within the grid's 1%
	if p := noShort.feasible.provided; p < 33000 || p > 33000*1.01 {
		t.Errorf("no shortfall: provided %g, want 33000 (each burst's level held 30 min)", p)
	}
	allowed := findFloor(demand, 1.01, 30, 3000, 4) // 3000 millicore-minutes: all of both bursts' excess
	if !allowed.found || allowed.feasible.provided >= noShort.feasible.provided || allowed.feasible.short > 3000 {
		t.Errorf("with shortfall allowed: %+v, want less provided than %g", allowed, noShort.feasible.provided)
	}
	for _, f := range []floor{noShort, allowed} {
		if f.lower > f.feasible.provided || f.lower <= 0 {
			t.Errorf("lower bound %g, plan found %g: want 0 < bound <= plan", f.lower, f.feasible.provided)
		}
	}
}

// TestFloorBelowTheDemand: on a constant demand a plan may run the whole time below it, spending the shortfall
// budget (5%: a constant 950 for 1000 is the optimum, below the smallest demand): the lower bound is at or
// below that optimum, and the plan found keeps the budget and is at or above it (the prices find the optimum
// only up to the Lagrangian's gap: the table prints both).
func TestFloorBelowTheDemand(t *testing.T) {
	demand := make([]float64, 240)
	for i := range demand {
		demand[i] = 1000
	}
	total := 1000.0 * 240
	f := findFloor(demand, 1.02, 5, 0.05*total, 48)
	optimum := 950.0 * 240
	if !f.found || f.feasible.short > 0.05*total || f.feasible.provided < optimum || f.lower > optimum || f.lower < 0.9*optimum {
		t.Errorf("%+v: want a bound in [0.9 x %g, %g] and a plan within the budget at or above it", f, optimum, optimum)
	}
}

// TestFloorKeepsTheChangeBudget: with a hold of one minute, bursts of ten minutes every twenty invite a change
// every ten minutes; with 4 changes allowed the plan found makes at most 4 and the bound is below it.
func TestFloorKeepsTheChangeBudget(t *testing.T) {
	demand := make([]float64, 200)
	for i := range demand {
		demand[i] = 100
		if i%20 < 10 {
			demand[i] = 1000
		}
	}
	f := findFloor(demand, 1.02, 1, 0, 4)
	if !f.found || f.feasible.changes > 4 || f.feasible.short > 0 || f.lower > f.feasible.provided {
		t.Errorf("%+v: want a plan of at most 4 changes, no shortfall, and a bound below it", f)
	}
}
