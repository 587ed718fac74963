package scaling

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// MaxStatusIntervals is how many effective intervals an Hvpa's status lists at most: all of them when there
// are no more (every Hvpa without an extrapolation makes at most 20), else the ones around the current
// replicas (IntervalStatusAround). Status is read, and deep-copied, on every admission, pod event and updater
// loop: 1,000 intervals made it about 1.3 MiB in memory. `hvpa intervals` prints them all.
const MaxStatusIntervals = 21

// IntervalStatusAround renders at most MaxStatusIntervals effective intervals for status: the one that holds
// replicas (intervalFor) in the middle, the others on both sides, shifted at either end so that as many are
// listed as there are (up to MaxStatusIntervals).
func IntervalStatusAround(iv []EffectiveInterval, replicas int32) []hvpav1alpha1.EffectiveScalingInterval {
	if len(iv) <= MaxStatusIntervals {
		return IntervalStatus(iv)
	}
	j := len(iv) - 1
	for k, e := range iv {
		if e.Replicas >= replicas {
			j = k
			break
		}
	}
	lo := min(max(j-MaxStatusIntervals/2, 0), len(iv)-MaxStatusIntervals)
	return IntervalStatus(iv[lo : lo+MaxStatusIntervals])
}

// IntervalStatus renders effective intervals in the Hvpa status shape (unbounded totals are left out).
func IntervalStatus(iv []EffectiveInterval) []hvpav1alpha1.EffectiveScalingInterval {
	out := make([]hvpav1alpha1.EffectiveScalingInterval, 0, len(iv))
	for _, e := range iv {
		s := hvpav1alpha1.EffectiveScalingInterval{Replicas: e.Replicas, Up: corev1.ResourceList{}, Down: corev1.ResourceList{}}
		for _, r := range Resources {
			if finite(e.Up[r]) {
				s.Up[r.ResourceName()] = Quantity(r, e.Up[r])
			}
			s.Down[r.ResourceName()] = Quantity(r, e.Down[r])
		}
		out = append(out, s)
	}
	return out
}

// DesiredState renders the sizing intent of a decision (replicas to apply, per-container requests and
// limits, and the totals that made it).
func (d Decision) DesiredState() *hvpav1alpha1.DesiredState {
	ds := &hvpav1alpha1.DesiredState{Replicas: d.Replicas}
	if d.SizedFor > 0 && d.SizedFor < d.Replicas {
		ds.SizedForReplicas = d.SizedFor
	}
	for _, c := range d.Containers {
		ds.Containers = append(ds.Containers, hvpav1alpha1.ContainerResources{Name: c.Name, Requests: ToResourceList(c.Requests), Limits: ToResourceList(c.Limits)})
	}
	for _, t := range d.Totals {
		ds.Totals = append(ds.Totals, hvpav1alpha1.ResourceTotal{Container: t.Container, Resource: t.Resource.ResourceName(),
			Total: Quantity(t.Resource, t.Total), Source: string(t.Source), Replicas: t.Replicas})
	}
	return ds
}

// HPAStatus renders the HPA record of a decision (nil without HPA input).
func (d Decision) HPAStatus(changed *metav1.Time) *hvpav1alpha1.HpaStatus {
	if d.HPA == nil {
		return nil
	}
	s := &hvpav1alpha1.HpaStatus{DesiredReplicas: &d.HPA.Desired, LastChangeTime: changed}
	for _, c := range d.Containers {
		if b, ok := d.HPA.Basis[c.Name]; ok {
			s.Basis = append(s.Basis, hvpav1alpha1.ContainerResources{Name: c.Name, Requests: ToResourceList(b)})
		}
	}
	return s
}

// BlockedParts renders the blocked parts of a decision.
func (d Decision) BlockedParts() []hvpav1alpha1.BlockedPart {
	var out []hvpav1alpha1.BlockedPart
	for _, b := range d.Blocked {
		out = append(out, hvpav1alpha1.BlockedPart{Part: b.Part, Direction: b.Direction, Reason: b.Reason, Message: b.Message})
	}
	return out
}

// LoadRecommendations turns a workload recommendation (status.workloadRecommendation) into the decision's
// input: the load of each container (Recommendation.Load).
func LoadRecommendations(wr *hvpav1alpha1.WorkloadRecommendation) []Recommendation {
	if wr == nil {
		return nil
	}
	out := make([]Recommendation, 0, len(wr.Containers))
	for _, c := range wr.Containers {
		load, _ := FromResourceList(c.Load, nil)
		out = append(out, Recommendation{Name: c.Name, Load: load})
	}
	return out
}

// WorkloadView completes a workload recommendation for c replicas and the current per-pod requests: each
// container's total (load + c x base, docs/design/scaling.md section 2), and the per-pod view status.recommendation shows
// (total / c; target and bounds within the container policy's minAllowed and maxAllowed, uncappedTarget as
// it is; whole millicores and bytes, rounded up).
func (s *Spec) WorkloadView(wr *hvpav1alpha1.WorkloadRecommendation, c int32, current []Container) (*hvpav1alpha1.WorkloadRecommendation, *vpav1.RecommendedPodResources) {
	if wr == nil || len(wr.Containers) == 0 {
		return wr, nil
	}
	out := wr.DeepCopy()
	out.Replicas = c
	n := float64(max(c, 1))
	rec := &vpav1.RecommendedPodResources{}
	for i := range out.Containers {
		lc := &out.Containers[i]
		var cur Values
		for _, k := range current {
			if k.Name == lc.Name {
				cur = k.Requests
			}
		}
		pol := s.PolicyFor(lc.Name)
		load, _ := FromResourceList(lc.Load, nil)
		lower, _ := FromResourceList(lc.LowerBound, nil)
		upper, _ := FromResourceList(lc.UpperBound, nil)
		var total, target, lo, hi, uncapped Values
		for _, r := range Resources {
			l, ok := load.Get(r)
			if !ok {
				continue
			}
			p, _ := cur.Get(r)
			perPod := func(x float64) float64 { return RoundUp(s.VPATotal(r, x, max(c, 1), p) / n) }
			capped := func(x float64) float64 {
				if v, ok := pol.MinAllowed.Get(r); ok && x < v {
					x = v
				}
				if v, ok := pol.MaxAllowed.Get(r); ok && x > v {
					x = v
				}
				return x
			}
			total.Set(r, RoundUp(s.VPATotal(r, l, max(c, 1), p)))
			uncapped.Set(r, perPod(l))
			target.Set(r, capped(perPod(l)))
			if x, ok := lower.Get(r); ok {
				lo.Set(r, capped(perPod(x)))
			}
			if x, ok := upper.Get(r); ok {
				hi.Set(r, capped(perPod(x)))
			}
		}
		lc.Total = ToResourceList(total)
		rec.ContainerRecommendations = append(rec.ContainerRecommendations, vpav1.RecommendedContainerResources{ContainerName: lc.Name,
			Target: ToResourceList(target), LowerBound: ToResourceList(lo), UpperBound: ToResourceList(hi), UncappedTarget: ToResourceList(uncapped)})
	}
	return out, rec
}
