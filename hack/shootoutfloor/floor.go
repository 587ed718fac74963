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

// levels is the geometric grid from the smallest demand (at least 1) up to the first level at or above the
// largest: a plan never needs more than the largest demand.
func levels(demand []float64, ratio float64) []float64 {
	lo, hi := max(1, slices.Min(demand)), slices.Max(demand)
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
	k := len(grid)
	ages := hold // index a: the level has been in force a+1 minutes, this one included (capped at hold)
	cur := make([]state, k*ages)
	next := make([]state, k*ages)
	inf := state{price: math.Inf(1)}
	minute := func(t, i int) plan {
		return plan{provided: grid[i], short: max(0, demand[t]-grid[i])}
	}
	add := func(s state, p plan, changed bool) state {
		s.plan.provided += p.provided
		s.plan.short += p.short
		if changed {
			s.plan.changes++
			s.price += mu
		}
		s.price += p.provided + lambda*p.short
		return s
	}
	for i := range cur {
		cur[i] = inf
	}
	for i := range k {
		cur[i*ages+hold-1] = add(state{}, minute(0, i), false) // at the start: as if in force for long
	}
	riseFrom := make([]state, k) // riseFrom[i]: the cheapest state of a level below i (any age)
	fallFrom := make([]state, k) // fallFrom[i]: the cheapest state of a level above i, in force hold minutes
	for t := 1; t < len(demand); t++ {
		best := inf
		for i := range k {
			riseFrom[i] = best
			for a := range ages {
				if s := cur[i*ages+a]; s.price < best.price {
					best = s
				}
			}
		}
		best = inf
		for i := k - 1; i >= 0; i-- {
			fallFrom[i] = best
			if s := cur[i*ages+hold-1]; s.price < best.price {
				best = s
			}
		}
		for i := range k {
			m := minute(t, i)
			from := riseFrom[i]
			if fallFrom[i].price < from.price {
				from = fallFrom[i]
			}
			changed := inf
			if from.price < math.Inf(1) {
				changed = add(from, m, true)
			}
			for a := range ages {
				s := inf
				if a > 0 {
					s = cur[i*ages+a-1]
				}
				if a == hold-1 && cur[i*ages+a].price < s.price {
					s = cur[i*ages+a]
				}
				if s.price < math.Inf(1) {
					s = add(s, m, false)
				}
				if a == 0 && changed.price < s.price {
					s = changed
				}
				next[i*ages+a] = s
			}
		}
		cur, next = next, cur
	}
	best := inf
	for _, s := range cur {
		if s.price < best.price {
			best = s
		}
	}
	return best.plan
}

// floor is the clairvoyant's answer for one workload within a shortfall budget (millicore-minutes) and a
// change budget: the cheapest plan found that keeps both (feasible: a plan that exists; its provided total
// is at or above the optimum), and a lower bound on what any plan keeping both provides (the Lagrangian dual
// at the prices tried: solve's price minus the budgets' prices). Both on the grid; the lower bound divided
// by the grid's ratio holds for plans at any level (a plan rounded up to the grid provides at most ratio
// times as much, no more short, no more changes).
type floor struct {
	feasible plan
	found    bool
	lower    float64
}

// findFloor searches the prices: for each lambda (bisected on a log scale) the change price mu is bisected
// until the plan keeps the change budget; lambda then moves until the shortfall budget is kept.
func findFloor(demand []float64, ratio float64, hold int, shortBudget float64, changeBudget int) floor {
	grid := levels(demand, ratio)
	var f floor
	consider := func(lambda, mu float64) plan {
		p := solve(demand, grid, hold, lambda, mu)
		f.lower = max(f.lower, (p.lagrangian(lambda, mu)-lambda*shortBudget-mu*float64(changeBudget))/ratio)
		if p.short <= shortBudget && p.changes <= changeBudget && (!f.found || p.provided < f.feasible.provided) {
			f.feasible, f.found = p, true
		}
		return p
	}
	// withChanges: the plan at lambda whose mu is the smallest found that keeps the change budget
	withChanges := func(lambda float64) plan {
		lo, hi := 0.0, slices.Max(demand)*float64(hold)*4 // at hi a change costs more than holding the top level for 4 x hold minutes
		p := consider(lambda, lo)
		if p.changes <= changeBudget {
			return p
		}
		best := consider(lambda, hi)
		for range 14 {
			mid := (lo + hi) / 2
			if q := consider(lambda, mid); q.changes <= changeBudget {
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
	for range 12 {
		mid := (loL + hiL) / 2
		if p := withChanges(math.Exp(mid)); p.short <= shortBudget {
			hiL = mid
		} else {
			loL = mid
		}
	}
	withChanges(math.Exp(hiL))
	return f
}
