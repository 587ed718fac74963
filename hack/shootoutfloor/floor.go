package main

import (
	"math"
	"slices"
)

// The clairvoyant of the shoot-out: it knows a workload's whole CPU demand (one total per minute) in advance
// and provides one total per minute, piecewise constant. Its rules are the ones the goals of issue 33 and the
// Hvpa's configuration impose on any autoscaler, and nothing else (no intervals, no start-up or resize
// delay, no replicas):
//   - a change of the total is one in-place change of every pod (a per-pod change);
//   - a fall comes at least Hold minutes after the last change (rise or fall): the scale-down
//     stabilization since the last scaling (docs/design/scaling.md section 5); a rise may come at any time;
//   - the minutes where the demand is above the total are its shortfall.
// For given prices of shortfall (lambda per millicore-minute short) and of a change (mu), solve finds the
// plan of least provided + lambda x short + mu x changes by dynamic programming over (level, minutes the
// level has been in force, capped at Hold). Levels are a geometric grid with ratio Grid.

// plan is what a plan provides, runs short and changes, summed over the demand.
type plan struct {
	provided, short float64
	changes         int
}

// lagrangian is a plan's price at (lambda, mu).
func (p plan) lagrangian(lambda, mu float64) float64 {
	return p.provided + lambda*p.short + mu*float64(p.changes)
}

// levels is the geometric grid from lo up to the first level at or above hi (a plan never needs more than the
// largest demand).
func levels(lo, hi, ratio float64) []float64 {
	var out []float64
	for l := lo; ; l *= ratio {
		out = append(out, l)
		if l >= hi {
			return out
		}
	}
}

// state is the best plan reaching one (level, age) with its price.
type state struct {
	price float64
	plan  plan
}

// solve returns the plan of least lagrangian(lambda, mu) over the grid for demand (one total a minute), with
// falls at least hold minutes after the last change (hold >= 1). The first minute's level is free (no change).
func solve(demand, grid []float64, hold int, lambda, mu float64) plan {
	d := newDP(demand, grid, hold, lambda, mu)
	for t := 1; t < len(demand); t++ {
		d.step(t)
	}
	best := inf
	for _, s := range d.cur {
		if s.price < best.price {
			best = s
		}
	}
	return best.plan
}

var inf = state{price: math.Inf(1)}

// dp is solve's table: cur[i*hold+a] is the best plan ending with level i in force a+1 minutes (this one
// included, capped at hold).
type dp struct {
	demand, grid       []float64
	hold               int
	lambda, mu         float64
	cur, next          []state
	riseFrom, fallFrom []state // per level: the cheapest state below it (any age), above it (in force hold minutes)
}

func newDP(demand, grid []float64, hold int, lambda, mu float64) *dp {
	k := len(grid)
	d := &dp{demand: demand, grid: grid, hold: hold, lambda: lambda, mu: mu, cur: make([]state, k*hold), next: make([]state, k*hold),
		riseFrom: make([]state, k), fallFrom: make([]state, k)}
	for i := range d.cur {
		d.cur[i] = inf
	}
	for i := range k {
		d.cur[i*hold+hold-1] = d.add(state{}, 0, i, false) // at the start: as if in force for long
	}
	return d
}

// add extends s by minute t at level i (a change into it when changed).
func (d *dp) add(s state, t, i int, changed bool) state {
	if s.price == math.Inf(1) {
		return s
	}
	provided, short := d.grid[i], max(0, d.demand[t]-d.grid[i])
	s.plan.provided += provided
	s.plan.short += short
	s.price += provided + d.lambda*short
	if changed {
		s.plan.changes++
		s.price += d.mu
	}
	return s
}

// step fills the table for minute t from minute t-1's.
func (d *dp) step(t int) {
	k, h := len(d.grid), d.hold
	best := inf
	for i := range k {
		d.riseFrom[i] = best
		for _, s := range d.cur[i*h : (i+1)*h] {
			best = cheaper(best, s)
		}
	}
	best = inf
	for i := k - 1; i >= 0; i-- {
		d.fallFrom[i] = best
		best = cheaper(best, d.cur[i*h+h-1])
	}
	for i := range k {
		changed := d.add(cheaper(d.riseFrom[i], d.fallFrom[i]), t, i, true)
		for a := range h {
			keep := inf
			if a > 0 {
				keep = d.cur[i*h+a-1]
			}
			if a == h-1 {
				keep = cheaper(keep, d.cur[i*h+a])
			}
			s := d.add(keep, t, i, false)
			if a == 0 {
				s = cheaper(s, changed)
			}
			d.next[i*h+a] = s
		}
	}
	d.cur, d.next = d.next, d.cur
}

// cheaper is the state of the lower price (a on a tie).
func cheaper(a, b state) state {
	if b.price < a.price {
		return b
	}
	return a
}

// floor is the clairvoyant's answer for one workload within a shortfall budget (millicore-minutes) and a
// change budget: the cheapest plan found that keeps both (feasible: a plan that exists; its provided total
// is at or above the optimum), and a lower bound on what any plan keeping both provides (the Lagrangian dual
// at the prices tried: solve's price minus the budgets' prices). Both on the grid; the lower bound divided
// by the grid's ratio holds for plans at any level: a plan rounded up to the grid provides at most ratio
// times as much, runs no more short, changes no more often and keeps the hold rule; the grid starts at the
// lowest level a plan within the shortfall budget can use for a minute (the smallest demand less the
// budget, at least 1 millicore; below 1, rounding up adds at most 1 a minute, taken off the bound).
type floor struct {
	feasible plan
	found    bool
	lower    float64
}

// findFloor searches the prices: for each lambda (bisected on a log scale) the change price mu is bisected
// (log scale) until the plan keeps the change budget; lambda then moves until the shortfall budget is kept.
func findFloor(demand []float64, ratio float64, hold int, shortBudget float64, changeBudget int) floor {
	lowest := slices.Min(demand) - shortBudget
	grid := levels(max(1, lowest), slices.Max(demand), ratio)
	slack := 0.0
	if lowest < 1 {
		slack = float64(len(demand))
	}
	var f floor
	consider := func(lambda, mu float64) plan {
		p := solve(demand, grid, hold, lambda, mu)
		f.lower = max(f.lower, (p.lagrangian(lambda, mu)-lambda*shortBudget-mu*float64(changeBudget)-slack)/ratio)
		if p.short <= shortBudget && p.changes <= changeBudget && (!f.found || p.provided < f.feasible.provided) {
			f.feasible, f.found = p, true
		}
		return p
	}
	// withChanges: the plan at lambda whose mu is the smallest found that keeps the change budget; at the top
	// price a change costs more than any plan's provided and shortfall together, so that plan makes none
	withChanges := func(lambda float64) plan {
		if p := consider(lambda, 0); p.changes <= changeBudget {
			return p
		}
		lo, hi := math.Log(1e-3), math.Log((1+lambda)*slices.Max(demand)*float64(len(demand))+1)
		best := consider(lambda, math.Exp(hi))
		for range 16 {
			mid := (lo + hi) / 2
			if q := consider(lambda, math.Exp(mid)); q.changes <= changeBudget {
				hi, best = mid, q
			} else {
				lo = mid
			}
		}
		return best
	}
	loL, hiL := math.Log(1e-3), math.Log(1e3) // lambda: a millicore-minute short costs 0.001 to 1000 provided
	if p := withChanges(math.Exp(loL)); p.short <= shortBudget {
		return f
	}
	withChanges(math.Exp(hiL))
	for range 12 {
		mid := (loL + hiL) / 2
		if p := withChanges(math.Exp(mid)); p.short <= shortBudget {
			hiL = mid
		} else {
			loL = mid
		}
	}
	return f
}
