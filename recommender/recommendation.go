package recommender

import (
	"math"

	corev1 "k8s.io/api/core/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// MaxResourceAmount is the largest amount a recommendation holds (1e14, also "no upper bound yet").
const MaxResourceAmount = 1e14

// Amounts are CPU millicores and memory bytes; a negative value means "none".
type Amounts struct {
	CPUMilli, MemoryBytes int64
}

// Recommendation is what a VPA status shows for one container.
type Recommendation struct {
	Target, LowerBound, UpperBound, UncappedTarget Amounts
}

// Policy is the part of a container policy the recommender applies.
type Policy struct {
	Off                    bool
	MinCPU, MaxCPU         float64 // cores; <0: unset
	MinMemory, MaxMemory   float64 // bytes; <0: unset
	ControlCPU, ControlMem bool
}

// DefaultPolicy controls cpu and memory without bounds.
func DefaultPolicy() Policy {
	return Policy{MinCPU: -1, MaxCPU: -1, MinMemory: -1, MaxMemory: -1, ControlCPU: true, ControlMem: true}
}

// PolicyFor returns the policy of container name from a VPA's resource policy: its own, else "*", else the
// default.
func PolicyFor(rp *vpav1.PodResourcePolicy, name string) Policy {
	p := DefaultPolicy()
	if rp == nil {
		return p
	}
	var chosen *vpav1.ContainerResourcePolicy
	for i := range rp.ContainerPolicies {
		cp := &rp.ContainerPolicies[i]
		if cp.ContainerName == name {
			chosen = cp
			break
		}
		if cp.ContainerName == "*" && chosen == nil {
			chosen = cp
		}
	}
	if chosen == nil {
		return p
	}
	p.Off = chosen.Mode != nil && *chosen.Mode == vpav1.ContainerScalingModeOff
	if q, ok := chosen.MinAllowed[corev1.ResourceCPU]; ok {
		p.MinCPU = q.AsApproximateFloat64()
	}
	if q, ok := chosen.MaxAllowed[corev1.ResourceCPU]; ok {
		p.MaxCPU = q.AsApproximateFloat64()
	}
	if q, ok := chosen.MinAllowed[corev1.ResourceMemory]; ok {
		p.MinMemory = q.AsApproximateFloat64()
	}
	if q, ok := chosen.MaxAllowed[corev1.ResourceMemory]; ok {
		p.MaxMemory = q.AsApproximateFloat64()
	}
	if chosen.ControlledResources != nil {
		p.ControlCPU, p.ControlMem = false, false
		for _, r := range *chosen.ControlledResources {
			p.ControlCPU = p.ControlCPU || r == corev1.ResourceCPU
			p.ControlMem = p.ControlMem || r == corev1.ResourceMemory
		}
	}
	return p
}

// Recommend turns an aggregate into a recommendation under a policy: estimates (with the pod minimum split
// across numContainers), uncappedTarget = the target before the policy, then minAllowed/maxAllowed capping of
// target and bounds, uncontrolled resources left out (-1), all rounded up to whole millicores and bytes. It
// returns false for mode Off and for an aggregate without samples.
func (m *Model) Recommend(a *Aggregate, numContainers int, p Policy) (Recommendation, bool) {
	if p.Off || a.IsEmpty() {
		return Recommendation{}, false
	}
	e := m.Estimate(a, numContainers)
	capCPU := func(v float64) float64 {
		if p.MinCPU >= 0 {
			v = max(v, p.MinCPU)
		}
		if p.MaxCPU >= 0 {
			v = min(v, p.MaxCPU)
		}
		return v
	}
	capMem := func(v float64) float64 {
		if p.MinMemory >= 0 {
			v = max(v, p.MinMemory)
		}
		if p.MaxMemory >= 0 {
			v = min(v, p.MaxMemory)
		}
		return v
	}
	amounts := func(cpu, mem float64) Amounts {
		out := Amounts{CPUMilli: -1, MemoryBytes: -1}
		if p.ControlCPU {
			out.CPUMilli = roundUp(cpu * 1000)
		}
		if p.ControlMem {
			out.MemoryBytes = roundUp(mem)
		}
		return out
	}
	return Recommendation{
		Target:         amounts(capCPU(e.Target.CPU), capMem(e.Target.Memory)),
		LowerBound:     amounts(capCPU(e.LowerBound.CPU), capMem(e.LowerBound.Memory)),
		UpperBound:     amounts(capCPU(e.UpperBound.CPU), capMem(e.UpperBound.Memory)),
		UncappedTarget: amounts(e.Target.CPU, e.Target.Memory),
	}, true
}

// roundUp rounds up to a whole unit (forgiving float noise) and caps at MaxResourceAmount.
func roundUp(x float64) int64 {
	if math.IsNaN(x) || x >= MaxResourceAmount || math.IsInf(x, 1) {
		return MaxResourceAmount
	}
	if x <= 0 {
		return 0
	}
	return int64(math.Ceil(x - math.Max(1e-9, x*1e-12)))
}
