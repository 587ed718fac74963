package scaling

import (
	"cmp"
	"slices"
)

// ApplyPodLimitRange fits the scaled containers cs of a pod to the LimitRange's pod bounds (type Pod: min,
// max, maxLimitRequestRatio) as the API server's LimitRanger checks them after admission webhooks ran, per
// resource on the pod's request and, where any container has one, on its limit, each summed as the
// LimitRanger (and the scheduler) does:
//
//	pod amount = max(app containers + sidecars, max over init containers of (its own + the sidecars before it))
//
// fixed is the rest of the pod: app containers not scaled, then the init containers and sidecars (Kind) in
// spec order. They, and the limits of RequestsOnly containers, count as they are. In order, per resource:
//
//   - pod min: the scaled containers rise by one factor (request and limit together, keeping their ratio; the
//     request alone where the limit is unchanged or absent), the request sum first, then the limit sum; none
//     rises above its container max or (a request) above its limit;
//   - pod max (it wins over min): the scaled containers are lowered by one factor, the limit sum first, then
//     the request sum; a request sum it took below the pod min rises again, alone, under the limits;
//   - pod maxLimitRequestRatio: the scaled requests rise (limits unchanged, each request at most its limit)
//     until the pod's limit/request is within the ratio.
//
// Sums round toward the bound (roundSum); a request never ends above its limit, a lowered value never at 0,
// and a container moved here keeps the container maxLimitRequestRatio the rounding could break. Where the
// scaled containers cannot make the pod fit (the others alone break the bound, caps), a note says so.
func ApplyPodLimitRange(cs []ContainerDecision, fixed []Container, lr LimitRange) []Note {
	var notes []Note
	for _, r := range Resources {
		f := &podFit{cs: cs, fixed: fixed, lr: lr, r: r, moved: make([]bool, len(cs))}
		if m, ok := lr.PodMin.Get(r); ok {
			f.raiseToMin(m)
		}
		if m, ok := lr.PodMax.Get(r); ok {
			f.lowerToMax(m)
		}
		if m, ok := lr.PodMin.Get(r); ok {
			f.raiseRequestsToMin(m)
		}
		if x, ok := lr.PodMaxLimitRequestRatio.Get(r); ok && x > 0 {
			f.fitRatio(x)
		}
		f.keepContainerRatios()
		notes = append(notes, f.notes...)
	}
	return notes
}

// podAmount is one resource's pod request (or limit) as the LimitRanger sums it: max(base + scaled,
// initPeak). scaled is what the fitted containers hold that can move, base the other app containers and the
// sidecars, initPeak the largest init container plus the sidecars started before it. has: some container
// holds the resource (else the LimitRanger has no pod amount to compare).
type podAmount struct {
	base, scaled, initPeak float64
	has                    bool
}

func (a podAmount) total() float64 { return max(a.base+a.scaled, a.initPeak) }

// podMove says which values of the scaled containers a fitting step moves.
type podMove int

const (
	// moveLimits: the containers whose limit follows their request (RequestsAndLimits with a limit), request
	// and limit together.
	moveLimits podMove = iota
	// moveAll: those, and the request of every other scaled container.
	moveAll
	// moveRequests: every scaled request, the limits unchanged.
	moveRequests
)

// podFit fits one resource of a pod's scaled containers to the LimitRange's pod bounds.
type podFit struct {
	cs    []ContainerDecision
	fixed []Container
	lr    LimitRange
	r     Resource
	moved []bool // the containers a step changed
	notes []Note
}

// amounts sums the pod's requests and limits of the resource. The limits of RequestsOnly containers count
// as fixed; every scaled request can move.
func (f *podFit) amounts() (req, lim podAmount) {
	for _, c := range f.cs {
		if q, ok := c.Requests.Get(f.r); ok {
			req.scaled, req.has = req.scaled+q, true
		}
		if l, ok := c.Limits.Get(f.r); ok {
			lim.has = true
			if c.RequestsOnly {
				lim.base += l
			} else {
				lim.scaled += l
			}
		}
	}
	var sidecarReq, sidecarLim float64
	for _, k := range f.fixed {
		q, hasQ := k.Requests.Get(f.r)
		l, hasL := k.Limits.Get(f.r)
		req.has, lim.has = req.has || hasQ, lim.has || hasL
		if k.Kind == InitContainer {
			req.initPeak, lim.initPeak = max(req.initPeak, q+sidecarReq), max(lim.initPeak, l+sidecarLim)
			continue
		}
		req.base, lim.base = req.base+q, lim.base+l
		if k.Kind == SidecarContainer {
			sidecarReq, sidecarLim = sidecarReq+q, sidecarLim+l
		}
	}
	return req, lim
}

// side is the request amount, or the limit amount when limits is set.
func (f *podFit) side(limits bool) podAmount {
	req, lim := f.amounts()
	if limits {
		return lim
	}
	return req
}

// raiseToMin raises the pod's request sum, then its limit sum, to at least m: request and limit together.
func (f *podFit) raiseToMin(m float64) {
	for _, limits := range []bool{false, true} {
		mode := moveAll
		if limits {
			mode = moveLimits
		}
		if a := f.side(limits); a.has && a.total() < m {
			if x, ok := f.reach(a, m, mode); ok {
				f.notes = append(f.notes, shaped(f.r, "%s%s of the scaled containers raised by %.3f to the LimitRange pod min %s", f.r, sideName(limits), x, Format(f.r, m)))
			}
		}
	}
}

// raiseRequestsToMin raises the pod's request sum to at least m with the limits unchanged (after the pod
// max lowered request and limit together below it), and says when the pod stays below m.
func (f *podFit) raiseRequestsToMin(m float64) {
	if a := f.side(false); a.has && a.total() < m {
		if x, ok := f.reach(a, m, moveRequests); ok {
			f.notes = append(f.notes, shaped(f.r, "%s requests of the scaled containers raised by %.3f to the LimitRange pod min %s under their limits", f.r, x, Format(f.r, m)))
		}
	}
	if req, lim := f.amounts(); (req.has && req.total() < m) || (lim.has && lim.total() < m) {
		f.notes = append(f.notes, shaped(f.r, "%s: the pod stays below the LimitRange pod min %s: the scaled containers cannot rise further (container max, unchanged limits, pod max)", f.r, Format(f.r, m)))
	}
}

// lowerToMax lowers the pod's limit sum, then its request sum, to at most m: request and limit together.
func (f *podFit) lowerToMax(m float64) {
	for _, limits := range []bool{true, false} {
		a := f.side(limits)
		if !a.has || a.total() <= m {
			continue
		}
		if a.scaled <= 0 || a.base >= m || a.initPeak > m {
			f.notes = append(f.notes, shaped(f.r, "%s: the containers not scaled (init containers and sidecars included) already use the LimitRange pod max %s; the scaled containers are left unfitted", f.r, Format(f.r, m)))
			return
		}
		mode := moveAll
		if limits {
			mode = moveLimits
		}
		if x, ok := f.reach(a, m, mode); ok {
			f.notes = append(f.notes, shaped(f.r, "%s%s of the scaled containers lowered by %.3f to fit the LimitRange pod max %s", f.r, sideName(limits), x, Format(f.r, m)))
		}
		if f.side(limits).total() > m { // whole units of at least 1 each cannot fit
			f.notes = append(f.notes, shaped(f.r, "%s: the scaled containers cannot fit the LimitRange pod max %s in whole units; they are left unfitted", f.r, Format(f.r, m)))
			return
		}
	}
}

// fitRatio raises the scaled requests, limits unchanged, until the pod's limit sum is at most ratio x its
// request sum.
func (f *podFit) fitRatio(ratio float64) {
	req, lim := f.amounts()
	if !req.has || !lim.has || req.total() <= 0 || !exceedsRatio(lim.total(), req.total(), ratio) {
		return // without a request or a limit the LimitRanger refuses the pod whatever the sizes
	}
	_, changed := f.reach(req, ratioRequest(lim.total(), ratio), moveRequests)
	switch req, _ = f.amounts(); {
	case exceedsRatio(lim.total(), req.total(), ratio):
		f.notes = append(f.notes, shaped(f.r, "%s: the pod's limit/request stays above the LimitRange pod maxLimitRequestRatio %g: the scaled requests cannot rise further (up to their limits)", f.r, ratio))
	case changed:
		f.notes = append(f.notes, shaped(f.r, "%s requests of the scaled containers raised to keep the pod's limit/request within the LimitRange pod maxLimitRequestRatio %g", f.r, ratio))
	}
}

// reach scales the values mode names by the factor that takes a's scaled part to bound - base, and returns
// it and whether a value changed (the scaled containers may hold nothing to scale, or be capped already).
func (f *podFit) reach(a podAmount, bound float64, mode podMove) (float64, bool) {
	if a.scaled <= 0 {
		return 0, false
	}
	x := (bound - a.base) / a.scaled
	return x, f.scale(x, mode)
}

func sideName(limits bool) string {
	if limits {
		return ""
	}
	return " requests"
}

// scale multiplies the values mode names of the scaled containers by x and rounds them toward the bound:
// lowered ones so that their sum is the exact sum rounded down (none to 0), raised ones so that it is the
// exact sum rounded up (roundSum: rounding each value up could carry the sum past a pod max). A
// raised value stays within the container max (request and limit lowered together, keeping their ratio); a
// request never ends above its limit. It reports whether a value changed.
func (f *podFit) scale(x float64, mode podMove) bool {
	n := len(f.cs)
	reqs, lims := make([]float64, n), make([]float64, n)
	moveQ, moveL := make([]bool, n), make([]bool, n)
	for i, c := range f.cs {
		l, hasL := c.Limits.Get(f.r)
		pair := hasL && !c.RequestsOnly
		if mode == moveLimits && !pair {
			continue
		}
		q, hasQ := c.Requests.Get(f.r)
		reqs[i], lims[i] = q*x, l*x
		moveQ[i], moveL[i] = hasQ, pair && mode != moveRequests
	}
	roundSum(reqs, moveQ, x > 1)
	roundSum(lims, moveL, x > 1)
	changed := false
	for i := range f.cs {
		changed = f.set(i, reqs[i], lims[i], moveQ[i], moveL[i], x > 1) || changed
	}
	return changed
}

// set gives container i its scaled request q (when moveQ) and limit l (when moveL), a raised pair within
// the container max, a request at most its limit, and reports whether a value changed.
func (f *podFit) set(i int, q, l float64, moveQ, moveL, raised bool) bool {
	if !moveQ && !moveL {
		return false
	}
	c := &f.cs[i]
	q0, _ := c.Requests.Get(f.r)
	l0, hasL := c.Limits.Get(f.r)
	if !moveQ {
		q = q0
	}
	if !moveL {
		l = l0
	}
	if raised {
		q, l = f.capAtContainerMax(q, l, hasL, moveL)
	}
	if hasL {
		q = min(q, l)
	}
	changed := false
	if hasL && l != l0 {
		c.Limits.Set(f.r, l)
		changed = true
	}
	if moveQ && q != q0 {
		c.Requests.Set(f.r, q)
		changed = true
	}
	f.moved[i] = f.moved[i] || changed
	return changed
}

// roundSum rounds the values of xs that take part to whole units whose sum is their exact sum rounded
// toward the bound (up when up, else down), so that rounding each value never carries a pod sum across a
// bound: each value down, then, up, one unit more on those with the largest remainders until the sum reaches
// the exact sum rounded up; down, each value at least 1 unit (none rounds to nothing) and one unit less on
// the largest ones while the sum is above the exact sum rounded down.
func roundSum(xs []float64, part []bool, up bool) {
	type value struct {
		i     int
		exact float64
	}
	var vs []value
	var exact, sum float64
	for i, x := range xs {
		if !part[i] {
			continue
		}
		vs = append(vs, value{i, x})
		d := RoundDown(x)
		if !up && x > 0 {
			d = max(d, 1)
		}
		xs[i], exact, sum = d, exact+x, sum+d
	}
	if up {
		slices.SortStableFunc(vs, func(a, b value) int { return cmp.Compare(b.exact-xs[b.i], a.exact-xs[a.i]) })
		for k := 0; k < len(vs) && sum < RoundUp(exact); k++ {
			xs[vs[k].i]++
			sum++
		}
		return
	}
	slices.SortStableFunc(vs, func(a, b value) int { return cmp.Compare(xs[b.i], xs[a.i]) })
	for target, cut := RoundDown(exact), true; sum > target && cut; {
		cut = false
		for _, v := range vs {
			if sum > target && xs[v.i] > 1 {
				xs[v.i]--
				sum--
				cut = true
			}
		}
	}
}

// capAtContainerMax keeps a raised request and limit within the LimitRange container max: a limit that moves
// lands on it with its request lowered by the same factor; otherwise the request is capped.
func (f *podFit) capAtContainerMax(q, l float64, hasL, limitMoves bool) (float64, float64) {
	hi, ok := f.lr.ContainerMax.Get(f.r)
	switch {
	case !ok:
	case limitMoves && l > hi:
		q, l = RoundDown(q*hi/l), hi
	case !hasL || !limitMoves:
		q = min(q, hi)
	}
	return q, l
}

// keepContainerRatios raises the request of every container a step moved where rounding took its
// limit/request above the LimitRange container maxLimitRequestRatio.
func (f *podFit) keepContainerRatios() {
	lr := f.lr
	for i := range f.cs {
		if !f.moved[i] {
			continue
		}
		c := &f.cs[i]
		if q, ok := c.Requests.Get(f.r); ok {
			q, f.notes = fitRatio(f.r, q, c.Limits, &lr, f.notes)
			c.Requests.Set(f.r, q)
		}
	}
}
