package gardenerhvpa

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// minChange converts gardener's vpa minChange of one direction. Gardener compared it with the change of each
// pod's request; hvpa compares it with the change of the total across replicas: a percentage means the same
// while the replica count does not change, a value only when replicas are held at a known count (it is then
// multiplied by that count).
func (c *converter) minChange(path string, p ScaleParams) *hvpav1alpha1.ResourceChangeParams {
	out := &hvpav1alpha1.ResourceChangeParams{
		CPU:    c.minChangeOf(path+".cpu", "cpu", p.CPU),
		Memory: c.minChangeOf(path+".memory", "memory", p.Memory),
	}
	if p.Replicas.Value != nil || p.Replicas.Percentage != nil {
		c.lose(path+".replicas", Dropped, "hvpa's minChange has no replicas: replica changes are gated by "+
			"updateMode and stabilizationDuration only")
	}
	if out.CPU == nil && out.Memory == nil {
		return nil
	}
	return out
}

func (c *converter) minChangeOf(path, res string, p ChangeParams) *hvpav1alpha1.ChangeParams {
	unset := p.Value == nil && p.Percentage == nil
	if unset && !c.in.Spec.Vpa.Deploy {
		return nil
	}
	if unset { // gardener's controller had a default threshold
		p.Value = ptr(gardenerMinChange[res])
	}
	out := c.changeParams(path, p)
	if out == nil || out.Value == nil {
		return out
	}
	if c.held > 0 { // replicas never change: the threshold on the total is the per-pod one times the replicas
		out.Value = times(*out.Value, c.held)
		return out
	}
	at, what := path+".value", fmt.Sprintf("gardener compared %s with the change of each pod's request", *p.Value)
	if unset {
		at, what = path, fmt.Sprintf("unset: gardener's controller then ignored request changes below %s per pod; "+
			"carried over as value %s", *p.Value, *p.Value)
	}
	c.lose(at, Approximated, "%s; hvpa compares minChange.value with the change of the TOTAL across replicas (at N "+
		"replicas a change of %s/N per pod passes): multiply it by your usual replica count to keep gardener's threshold",
		what, *p.Value)
	return out
}

// times is q x n.
func times(q resource.Quantity, n int32) *resource.Quantity {
	if n == 1 {
		return &q
	}
	return resource.NewMilliQuantity(q.MilliValue()*int64(n), q.Format)
}

// limitsGap converts gardener's vpa.limitsRequestsGapScaleParams (limit = request + the larger of value and
// percentage% of the request, when the container has a limit that differs from its request).
func (c *converter) limitsGap() *hvpav1alpha1.ResourceChangeParams {
	const path = "spec.vpa.limitsRequestsGapScaleParams"
	g := c.in.Spec.Vpa.LimitsRequestsGapScaleParams
	out := &hvpav1alpha1.ResourceChangeParams{
		CPU:    c.changeParams(path+".cpu", g.CPU),
		Memory: c.changeParams(path+".memory", g.Memory),
	}
	if g.Replicas.Value != nil || g.Replicas.Percentage != nil {
		c.lose(path+".replicas", Dropped, "replicas have no limits; hvpa's limitsRequestsGapScaleParams has cpu and memory only")
	}
	if out.CPU == nil && out.Memory == nil {
		return nil
	}
	return out
}

// changeParams converts a value (a quantity as a string) and a percentage; what does not convert is a loss.
func (c *converter) changeParams(path string, p ChangeParams) *hvpav1alpha1.ChangeParams {
	out := &hvpav1alpha1.ChangeParams{}
	if p.Value != nil {
		q, err := resource.ParseQuantity(*p.Value)
		switch {
		case err != nil:
			c.lose(path+".value", Dropped, "%q is not a quantity such as 300m or 2G: not carried over; fix it (%v)", *p.Value, err)
		case q.Sign() < 0:
			c.lose(path+".value", Dropped, "%q is negative: not carried over", *p.Value)
		default:
			out.Value = &q
		}
	}
	if pc := p.Percentage; pc != nil {
		if *pc < 0 || *pc > 100 {
			c.lose(path+".percentage", Dropped, "%d is not a percentage from 0 to 100, which hvpa requires: not carried over", *pc)
		} else {
			out.Percentage = pc
		}
	}
	if out.Value == nil && out.Percentage == nil {
		return nil
	}
	return out
}
