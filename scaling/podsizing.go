package scaling

// SizePod is the one function that sizes a pod's containers from per-container target requests (a VPA's
// recommendation target, or an Hvpa's status.desired requests). The admission webhook calls it with the
// pod as created and the updater with the pod as it runs, so the two can never disagree by rounding.
//
// For every container with a target whose policy is not Off, each controlled resource's request becomes
// the target, kept within the policy's minAllowed/maxAllowed; limits then follow section 6 (Limits: ratio,
// requestToLimitRatio, gap, LimitRange container bounds), and the pod's LimitRange max is applied over all
// containers (ApplyPodLimitRange). Sidecars (restartable init containers) are sized like app containers,
// under their own container policies. Containers without a target, with mode Off, or of which nothing is
// controlled are left as they are and not returned; so are init containers that run to completion (Kind),
// which count toward the pod's LimitRange bounds only: pass them (FromPodContainers) wherever the pod has them.
// Notes say what capped or shaped each value.
func SizePod(containers []Container, targets map[string]Values, policies []ContainerPolicy, gap [NumResources]*ChangeParams, lr *LimitRange) []ContainerDecision {
	var out []ContainerDecision
	var fixed []Container
	for _, k := range containers {
		pol := PolicyFor(policies, k.Name)
		target, ok := targets[k.Name]
		if !ok || pol.Off || k.Kind == InitContainer {
			fixed = append(fixed, k)
			continue
		}
		cd := ContainerDecision{Name: k.Name, Current: k, Requests: k.Requests, RequestsOnly: pol.ControlledValues == RequestsOnly}
		var changed [NumResources]bool
		for _, r := range Resources {
			x, ok := target.Get(r)
			if !ok || !pol.Controlled[r] {
				continue
			}
			if lo, ok := pol.MinAllowed.Get(r); ok && x < lo {
				x = lo
				cd.Notes = append(cd.Notes, shaped(r, "%s raised to minAllowed %s", r, Format(r, lo)))
			}
			if hi, ok := pol.MaxAllowed.Get(r); ok && x > hi {
				x = hi
				cd.Notes = append(cd.Notes, cappedNote(r, "%s capped to maxAllowed %s", r, Format(r, hi)))
			}
			cd.Wanted.Set(r, x)
			cd.Requests.Set(r, x)
			changed[r] = true
		}
		if !changed[CPU] && !changed[Memory] {
			fixed = append(fixed, k)
			continue
		}
		var notes []Note
		cd.Requests, cd.Limits, notes = Limits(pol, gap, k, cd.Requests, changed, lr)
		cd.Notes = append(cd.Notes, notes...)
		out = append(out, cd)
	}
	if lr != nil && len(out) > 0 {
		out[0].Notes = append(out[0].Notes, ApplyPodLimitRange(out, fixed, *lr)...)
	}
	return out
}

// WithoutRatios returns policies with every requestToLimitRatio removed: how pods are sized while the
// RequestToLimitRatio feature gate is off (objects that already carry the field keep it, unused).
func WithoutRatios(policies []ContainerPolicy) []ContainerPolicy {
	out := make([]ContainerPolicy, len(policies))
	for i, p := range policies {
		p.Ratio = [NumResources]*Ratio{}
		out[i] = p
	}
	return out
}
