package gardenerhvpa

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// segment is a replica range with one gardener vpaWeight: a part of a weight-based interval (the first
// interval that matches a replica count gives its weight, as in gardener) or a range no interval covers
// (index -1, vpaWeight 0 in gardener).
type segment struct {
	first, last int32
	weight      int32
	index       int
}

// intervals derives the scaling intervals. Without an HPA (gardener's controller then never changed
// replicas) it is one interval at a fixed replica count. With one, every replica range of the weight-based
// intervals becomes an interval ending at its last replica count, with the largest maxAllowed of the container
// policies as its per-pod maximum and linear extrapolation across the range: pods may grow up to that maximum
// at every replica count. gardener's weights have no equivalent; each range with a weight below 100 is
// reported with what to set instead.
func (c *converter) intervals() []hvpav1alpha1.ScalingInterval {
	perPod := c.perPodMax()
	if !c.hpaRuns {
		return c.fixedReplicas(perPod)
	}
	if c.maxReplicas > c.minReplicas {
		c.unbounded(perPod)
	}
	segs := c.segments()
	extrapolate := c.maxReplicas <= maxExtrapolatedReplicas
	if !extrapolate {
		c.lose("spec.hpa.template.spec.maxReplicas", Approximated, "%d is above %d, the most hvpa extrapolates "+
			"intervals for: each derived interval is one replica count (its last), counts in between are skipped; "+
			"add intervals for the counts you need", c.maxReplicas, maxExtrapolatedReplicas)
	}
	out := make([]hvpav1alpha1.ScalingInterval, 0, len(segs))
	reported := map[int]bool{}
	for j, s := range segs {
		iv := hvpav1alpha1.ScalingInterval{MaxReplicas: ptr(s.last), MaxResources: perPod.DeepCopy()}
		if s.first < s.last && extrapolate {
			iv.EffectiveIntervalExtrapolation = ptr(hvpav1alpha1.ExtrapolationLinear)
		}
		out = append(out, iv)
		if s.index < 0 || !reported[s.index] {
			reported[s.index] = true
			c.weightLoss(s, j, perPod)
		}
	}
	return out
}

// fixedReplicas is the one interval of an Hvpa whose gardener original ran no HPA: replicas stay at
// spec.replicas (minReplicas without it).
func (c *converter) fixedReplicas(perPod *hvpav1alpha1.ScaledResources) []hvpav1alpha1.ScalingInterval {
	r := c.minReplicas
	if rep := c.in.Spec.Replicas; rep != nil && *rep >= c.minReplicas && *rep <= c.maxReplicas {
		r = *rep
	} else if c.minReplicas < c.maxReplicas {
		c.lose("spec.replicas", Approximated, "unset or outside %d..%d: gardener's controller ran no HPA and kept the "+
			"replicas the workload had, which the object does not tell; the scaling interval holds %d replica(s): set "+
			"spec.scalingIntervals[0].maxReplicas to the replica count the workload runs with", c.minReplicas,
			c.maxReplicas, r)
	}
	c.held = r
	if len(c.in.Spec.WeightBasedScalingIntervals) > 0 {
		c.lose("spec.weightBasedScalingIntervals", Dropped, "not used: gardener's controller ran no HPA (spec.hpa.deploy "+
			"false, or an hpa updateMode other than Auto), so replicas never changed; converted to one scaling interval "+
			"holding %d replica(s) (vertical scaling only)", r)
	}
	return []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr(r), MaxResources: perPod}}
}

// perPodMax is, per resource, the largest maxAllowed over the container policies (hvpa's default for a
// scaling interval's maxResources), or nil without any.
func (c *converter) perPodMax() *hvpav1alpha1.ScaledResources {
	out := &hvpav1alpha1.ScaledResources{}
	if rp := c.in.Spec.Vpa.Template.Spec.ResourcePolicy; rp != nil {
		for _, p := range rp.ContainerPolicies {
			out.CPU = larger(out.CPU, p.MaxAllowed, corev1.ResourceCPU)
			out.Memory = larger(out.Memory, p.MaxAllowed, corev1.ResourceMemory)
		}
	}
	if out.CPU == nil && out.Memory == nil {
		return nil
	}
	return out
}

func larger(cur *resource.Quantity, list corev1.ResourceList, name corev1.ResourceName) *resource.Quantity {
	q, ok := list[name]
	if !ok || (cur != nil && q.Cmp(*cur) <= 0) {
		return cur
	}
	return &q
}

// unbounded reports a resource without a per-pod maximum: its usage then never adds replicas.
func (c *converter) unbounded(perPod *hvpav1alpha1.ScaledResources) {
	for _, r := range []struct {
		name string
		q    *resource.Quantity
	}{{"cpu", perPodQuantity(perPod, true)}, {"memory", perPodQuantity(perPod, false)}} {
		if r.q == nil {
			c.lose("spec.vpa.template.spec.resourcePolicy.containerPolicies", Approximated, "no container policy sets "+
				"maxAllowed.%s, so the derived scaling intervals have no per-pod %s maximum and %s usage never adds "+
				"replicas (the HPA still does): set spec.scalingIntervals[*].maxResources.%s", r.name, r.name, r.name, r.name)
		}
	}
}

func perPodQuantity(p *hvpav1alpha1.ScaledResources, cpu bool) *resource.Quantity {
	switch {
	case p == nil:
		return nil
	case cpu:
		return p.CPU
	}
	return p.Memory
}

// segments cuts minReplicas..maxReplicas at the boundaries of the weight-based intervals; each piece takes
// the weight of the first interval that covers it (gardener's rule for overlaps), or 0 when none does.
func (c *converter) segments() []segment {
	type span struct{ start, last, weight int32 }
	spans := make([]span, 0, len(c.in.Spec.WeightBasedScalingIntervals))
	points := []int32{c.minReplicas, c.maxReplicas + 1}
	for i, w := range c.in.Spec.WeightBasedScalingIntervals {
		s, l, ok := c.replicaRange(i, w)
		if !ok {
			spans = append(spans, span{start: 1, last: 0}) // keeps the index, covers nothing
			continue
		}
		spans = append(spans, span{s, l, min(max(w.VpaWeight, 0), 100)})
		points = append(points, s, l+1)
	}
	slices.Sort(points)
	points = slices.Compact(points)
	var segs []segment
	for k := 0; k+1 < len(points); k++ {
		seg := segment{first: points[k], last: points[k+1] - 1, index: -1}
		for i, sp := range spans {
			if sp.start <= seg.first && seg.first <= sp.last {
				seg.weight, seg.index = sp.weight, i
				break
			}
		}
		segs = append(segs, seg)
	}
	return segs
}

// replicaRange is interval i's replica range within minReplicas..maxReplicas (0 means those bounds, as in
// gardener); ok is false when nothing of it is inside.
func (c *converter) replicaRange(i int, w WeightBasedScalingInterval) (first, last int32, ok bool) {
	p := fmt.Sprintf("spec.weightBasedScalingIntervals[%d]", i)
	s, l := w.StartReplicaCount, w.LastReplicaCount
	if s == 0 {
		s = c.minReplicas
	}
	if l == 0 {
		l = c.maxReplicas
	}
	if w.VpaWeight < 0 || w.VpaWeight > 100 {
		c.lose(p+".vpaWeight", Approximated, "%d is outside 0..100 (a percentage): read as %d", w.VpaWeight,
			min(max(w.VpaWeight, 0), 100))
	}
	if s > l || l < c.minReplicas || s > c.maxReplicas {
		c.lose(p, Dropped, "replicas %d to %d are outside hpa minReplicas..maxReplicas (%d..%d), or start after "+
			"they end: gardener's controller never used this interval", s, l, c.minReplicas, c.maxReplicas)
		return 0, 0, false
	}
	if s < c.minReplicas {
		c.lose(p+".startReplicaCount", Approximated, "%d is below hpa minReplicas: clipped to %d", s, c.minReplicas)
	}
	if l > c.maxReplicas {
		c.lose(p+".lastReplicaCount", Approximated, "%d is above hpa maxReplicas: clipped to %d", l, c.maxReplicas)
	}
	return max(s, c.minReplicas), min(l, c.maxReplicas), true
}

// weightLoss reports how a replica range's gardener weight is approximated by scaling interval j.
func (c *converter) weightLoss(s segment, j int, perPod *hvpav1alpha1.ScaledResources) {
	iv := fmt.Sprintf("spec.scalingIntervals[%d]", j)
	grow := fmt.Sprintf("%s lets pods grow at each replica count of %d..%d before a replica is added (linearly up "+
		"to the per-pod maximum %s, the largest maxAllowed)", iv, s.first, s.last, describe(perPod))
	keep := fmt.Sprintf("to scale out first with pods kept at their size, set effectiveIntervalExtrapolation: "+
		"horizontalOnly and maxResources to the pods' requests on %s", iv)
	switch {
	case s.index < 0:
		c.lose("spec.weightBasedScalingIntervals", Approximated, "replicas %d..%d are in no interval, where "+
			"gardener's controller used vpaWeight 0 (only replicas changed, pods kept their requests); %s; %s",
			s.first, s.last, grow, keep)
	case s.weight == 0:
		c.lose(fmt.Sprintf("spec.weightBasedScalingIntervals[%d].vpaWeight", s.index), Approximated, "0: gardener's "+
			"controller changed only replicas in %d..%d, pods kept their requests; %s; %s", s.first, s.last, grow, keep)
	case s.weight < 100:
		c.lose(fmt.Sprintf("spec.weightBasedScalingIntervals[%d].vpaWeight", s.index), Approximated, "%d: gardener's "+
			"controller moved requests %d%% and replicas %d%% of the way to the VPA's and HPA's recommendations; hvpa "+
			"has no weights: %s; lower its maxResources to add replicas earlier", s.weight, s.weight, 100-s.weight, grow)
	case s.first < s.last:
		c.lose(fmt.Sprintf("spec.weightBasedScalingIntervals[%d].vpaWeight", s.index), Approximated, "100 over "+
			"replicas %d..%d: gardener's controller changed no replicas inside the range; %s", s.first, s.last, grow)
	}
}

// describe prints a per-pod maximum for a loss.
func describe(p *hvpav1alpha1.ScaledResources) string {
	text := func(q *resource.Quantity) string {
		if q == nil {
			return "none"
		}
		return q.String()
	}
	return fmt.Sprintf("cpu %s, memory %s", text(perPodQuantity(p, true)), text(perPodQuantity(p, false)))
}

func ptr[T any](v T) *T { return &v }
