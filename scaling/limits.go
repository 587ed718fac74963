package scaling

import "math"

// Limits implements docs/design/scaling.md section 6 for one container: given the new per-pod requests, it returns the
// requests and limits to apply, and notes saying what shaped them. It is the one function the decision, the
// admission webhook and the updater size limits with, so they never disagree by rounding. Only the
// resources marked in changed (controlled resources whose new request is applied) are touched.
//
//   - RequestsOnly: limits never change; a request above its unchanged limit is capped to the limit (a pod
//     whose request exceeds its limit is invalid), and a LimitRange bounds the request alone.
//   - RequestsAndLimits: limit = request x factor or request + quantity when the policy has a
//     requestToLimitRatio for the resource; else the original limit/request ratio: the workload's pod
//     template's (cur.Origin) when known, else the container's own (a limit without a request counts as
//     request = limit, as Kubernetes defaults it); no limit stays no limit.
//     gap (limitsRequestsGapScaleParams), when set, raises a limit to at least request + base(request).
//     A LimitRange container min/max moves request and limit together, keeping their ratio.
func Limits(pol ContainerPolicy, gap [NumResources]*ChangeParams, cur Container, requests Values, changed [NumResources]bool, lr *LimitRange) (Values, Values, []Note) {
	limits := cur.Limits
	var notes []Note
	for _, r := range Resources {
		req, ok := requests.Get(r)
		if !ok || !changed[r] {
			continue
		}
		if pol.ControlledValues == RequestsOnly {
			req, notes = requestOnly(r, req, cur, limits, lr, notes)
		} else {
			req, notes = requestAndLimit(pol, gap, r, req, cur, &limits, lr, notes)
		}
		requests.Set(r, req)
	}
	return requests, limits, notes
}

// currentRequest is the container's request for r, its limit when it has no request (Kubernetes defaults the
// request to the limit), and whether either is set.
func currentRequest(r Resource, cur Container) (float64, bool) {
	req, has := cur.Requests.Get(r)
	if lim, hasLim := cur.Limits.Get(r); hasLim && (!has || req == 0) {
		return lim, true
	}
	return req, has
}

// requestOnly sizes request req of r under controlledValues RequestsOnly: the LimitRange moves the request
// alone, and the unchanged limit caps it.
func requestOnly(r Resource, req float64, cur Container, limits Values, lr *LimitRange, notes []Note) (float64, []Note) {
	if lr != nil {
		var noLimit Values
		var note *Note
		if req, note = boundPair(r, req, &noLimit, lr.ContainerMin, lr.ContainerMax, "container"); note != nil {
			notes = append(notes, *note)
		}
	}
	if curLim, hasCurLim := cur.Limits.Get(r); hasCurLim && req > curLim {
		req = curLim
		notes = append(notes, cappedNote(r, "%s request capped to its unchanged limit %s (controlledValues RequestsOnly)", r, Format(r, curLim)))
	}
	return fitRatio(r, req, limits, lr, notes)
}

// requestAndLimit sizes request req of r and its limit under controlledValues RequestsAndLimits: the limit
// from requestToLimitRatio, else the original limit/request ratio; raised to the gap's floor
// (limitsRequestsGapScaleParams); both within the LimitRange.
func requestAndLimit(pol ContainerPolicy, gap [NumResources]*ChangeParams, r Resource, req float64, cur Container, limits *Values, lr *LimitRange, notes []Note) (float64, []Note) {
	curReq, hasCurReq := currentRequest(r, cur)
	curLim, hasCurLim := cur.Limits.Get(r)
	switch ratio := pol.Ratio[r]; {
	case ratio != nil && ratio.Type == RatioFactor:
		limits.Set(r, RoundUp(req*ratio.Factor))
		notes = append(notes, limitFrom(r, "%s limit = request x %g (requestToLimitRatio)", r, ratio.Factor))
	case ratio != nil && ratio.Type == RatioQuantity:
		limits.Set(r, RoundUp(req+ratio.Quantity))
		notes = append(notes, limitFrom(r, "%s limit = request + %s (requestToLimitRatio)", r, Format(r, ratio.Quantity)))
	case hasCurLim && hasCurReq && curReq > 0:
		limits.Set(r, RoundUp(req*originalRatio(r, cur, curLim/curReq)))
	}
	if lim, ok := limits.Get(r); ok && gap[r] != nil {
		if floor := RoundUp(req + gap[r].Base(req)); lim < floor {
			limits.Set(r, floor)
			notes = append(notes, limitFrom(r, "%s limit raised to request + gap %s (limitsRequestsGapScaleParams)", r, Format(r, floor-req)))
		}
	}
	if lr != nil {
		var note *Note
		if req, note = boundPair(r, req, limits, lr.ContainerMin, lr.ContainerMax, "container"); note != nil {
			notes = append(notes, *note)
		}
	}
	return fitRatio(r, req, *limits, lr, notes)
}

// originalRatio is the limit/request ratio of resource r in the container's origin (its workload's pod
// template) when the origin has a limit for r, else current (the ratio of the container's own values).
func originalRatio(r Resource, cur Container, current float64) float64 {
	if cur.Origin == nil {
		return current
	}
	lim, ok := cur.Origin.Limits.Get(r)
	if !ok || lim <= 0 {
		return current // no limit in the template: the container's own limit keeps its own ratio
	}
	req, ok := cur.Origin.Requests.Get(r)
	if !ok || req <= 0 {
		req = lim // a limit without a request: Kubernetes defaults the request to the limit
	}
	return lim / req
}

// fitRatio raises a request so that limit/request stays within the LimitRange's maxLimitRequestRatio (the
// API server's LimitRanger refuses the pod otherwise, after the webhook: failurePolicy Ignore cannot help).
func fitRatio(r Resource, req float64, limits Values, lr *LimitRange, notes []Note) (float64, []Note) {
	if lr == nil {
		return req, notes
	}
	ratio, ok := lr.MaxLimitRequestRatio.Get(r)
	lim, hasLim := limits.Get(r)
	if !ok || !hasLim || ratio <= 0 || req <= 0 || !exceedsRatio(lim, req, ratio) {
		return req, notes
	}
	req = min(ratioRequest(lim, ratio), lim)
	return req, append(notes, shaped(r, "%s request raised to %s to keep limit/request within the LimitRange maxLimitRequestRatio %g", r, Format(r, req), ratio))
}

// exceedsRatio is the API server's LimitRanger test of a maxLimitRequestRatio (limitRequestRatioConstraint):
// limit / request x 1000 in float64 against the ratio's milli value. The float division can put an exact
// ratio just above it (2007m / 1000m x 1000 = 2007.0000000000002 > 2007): such a pod is refused.
func exceedsRatio(lim, req, ratio float64) bool {
	return req <= 0 || lim/req*1000 > math.Round(ratio*1000)
}

// ratioRequest is the smallest whole request the LimitRanger accepts under limit lim and maxLimitRequestRatio
// ratio (at most lim).
func ratioRequest(lim, ratio float64) float64 {
	q := RoundUp(lim / ratio)
	for exceedsRatio(lim, q, ratio) && q < lim {
		q++
	}
	return q
}

// boundPair moves request and limit of r together (keeping their ratio) so that the limit (or the request,
// without a limit) is at most max and the request at least min. Max wins over min. The limit lands exactly
// on max and the request never above the limit.
func boundPair(r Resource, req float64, limits *Values, lo, hi Values, scope string) (float64, *Note) {
	var note *Note
	lim, hasLim := limits.Get(r)
	if m, ok := lo.Get(r); ok && req < m && req > 0 {
		f := m / req
		req = m
		if hasLim {
			lim = RoundUp(lim * f)
		}
		n := shaped(r, "%s request raised to the LimitRange %s min %s, limit with it", r, scope, Format(r, m))
		note = &n
	}
	if m, ok := hi.Get(r); ok {
		top := req
		if hasLim {
			top = lim
		}
		if top > m {
			f := m / top
			req = RoundUp(req * f)
			if hasLim {
				lim = m
				req = min(req, lim)
			} else {
				req = min(req, m)
			}
			n := limitFrom(r, "%s request and limit lowered together to fit the LimitRange %s max %s", r, scope, Format(r, m))
			note = &n
		}
	}
	if hasLim {
		limits.Set(r, lim)
	}
	return req, note
}
