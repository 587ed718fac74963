package scaling

import (
	"fmt"
	"math"
)

// Limits implements SCALING.md section 6 for one container: given the new per-pod requests, it returns the
// requests and limits to apply, and notes saying what shaped them. It is the one function the decision, the
// admission webhook and the updater size limits with, so they never disagree by rounding.
//
//   - RequestsOnly: limits stay as they are; a request above its unchanged limit is capped to the limit (a
//     pod whose request exceeds its limit is invalid).
//   - RequestsAndLimits: limit = request x factor or request + quantity when the policy has a
//     requestToLimitRatio for the resource; else the original limit/request ratio; no limit stays no limit.
//     gap (limitsRequestsGapScaleParams), when set, raises a limit to at least request + base(request).
//   - LimitRange container min/max: request and limit move together, keeping their ratio.
func Limits(pol ContainerPolicy, gap [NumResources]*ChangeParams, cur Container, requests Values, lr *LimitRange) (Values, Values, []string) {
	limits := cur.Limits
	var notes []string
	for _, r := range Resources {
		req, ok := requests.Get(r)
		if !ok {
			continue
		}
		curReq, hasCurReq := cur.Requests.Get(r)
		curLim, hasCurLim := cur.Limits.Get(r)
		if pol.ControlledValues == RequestsOnly {
			if hasCurLim && req > curLim {
				req = curLim
				notes = append(notes, fmt.Sprintf("%s request capped to its unchanged limit %s (controlledValues RequestsOnly)", r, Format(r, curLim)))
			}
		} else {
			switch ratio := pol.Ratio[r]; {
			case ratio != nil && ratio.Type == RatioFactor:
				limits.Set(r, RoundUp(req*ratio.Factor))
				notes = append(notes, fmt.Sprintf("%s limit = request x %g (requestToLimitRatio)", r, ratio.Factor))
			case ratio != nil && ratio.Type == RatioQuantity:
				limits.Set(r, RoundUp(req+ratio.Quantity))
				notes = append(notes, fmt.Sprintf("%s limit = request + %s (requestToLimitRatio)", r, Format(r, ratio.Quantity)))
			case hasCurLim && hasCurReq && curReq > 0:
				limits.Set(r, RoundUp(req*curLim/curReq))
			}
			if lim, ok := limits.Get(r); ok && gap[r] != nil {
				if floor := RoundUp(req + gap[r].Base(req)); lim < floor {
					limits.Set(r, floor)
					notes = append(notes, fmt.Sprintf("%s limit raised to request + gap %s (limitsRequestsGapScaleParams)", r, Format(r, floor-req)))
				}
			}
		}
		if lr != nil {
			var note string
			req, note = boundPair(r, req, &limits, lr.ContainerMin, lr.ContainerMax, "container")
			if note != "" {
				notes = append(notes, note)
			}
		}
		requests.Set(r, req)
	}
	return requests, limits, notes
}

// boundPair moves request and limit of r together (keeping their ratio) so that the limit (or the request,
// without a limit) is at most max and the request at least min. Max wins over min.
func boundPair(r Resource, req float64, limits *Values, lo, hi Values, scope string) (float64, string) {
	note := ""
	lim, hasLim := limits.Get(r)
	if m, ok := lo.Get(r); ok && req < m && req > 0 {
		f := m / req
		req = m
		if hasLim {
			lim = RoundUp(lim * f)
		}
		note = fmt.Sprintf("%s request raised to the LimitRange %s min %s, limit with it", r, scope, Format(r, m))
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
			}
			note = fmt.Sprintf("%s request and limit lowered together to fit the LimitRange %s max %s", r, scope, Format(r, m))
		}
	}
	if hasLim {
		limits.Set(r, lim)
	}
	return req, note
}

// ApplyPodLimitRange scales the scaled containers of a pod together so that the pod's sum of limits (or
// requests, for containers without a limit) fits the LimitRange pod max, keeping every ratio. Containers the
// decision does not scale keep their values and count toward the sum as they are.
func ApplyPodLimitRange(cs []ContainerDecision, lr LimitRange) []string {
	var notes []string
	for _, r := range Resources {
		m, ok := lr.PodMax.Get(r)
		if !ok {
			continue
		}
		sum := 0.0
		for _, c := range cs {
			if l, ok := c.Limits.Get(r); ok {
				sum += l
			} else if q, ok := c.Requests.Get(r); ok {
				sum += q
			}
		}
		if sum <= m || sum == 0 {
			continue
		}
		f := m / sum
		for i := range cs {
			if q, ok := cs[i].Requests.Get(r); ok {
				cs[i].Requests.Set(r, RoundUp(q*f))
			}
			if l, ok := cs[i].Limits.Get(r); ok {
				cs[i].Limits.Set(r, math.Floor(l*f+1e-9)) // limits round down so that the sum fits the max
			}
		}
		notes = append(notes, fmt.Sprintf("%s of every scaled container lowered by %.3f to fit the LimitRange pod max %s", r, f, Format(r, m)))
	}
	return notes
}
