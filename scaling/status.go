package scaling

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

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
