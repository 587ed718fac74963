package recommender

import (
	"math"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

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
	// IntegerCPU rounds the CPU amounts up to whole cores before the capping (upstream's integer-CPU post
	// processor, vpav1.IntegerCPU): a maxAllowed that is no whole number of cores still caps them.
	IntegerCPU bool
}

// DefaultPolicy controls cpu and memory without bounds.
func DefaultPolicy() Policy {
	return Policy{MinCPU: -1, MaxCPU: -1, MinMemory: -1, MaxMemory: -1, ControlCPU: true, ControlMem: true}
}

// PolicyFor returns the policy of container name from a VPA's resource policy (vpav1.PolicyIndex: its own,
// else "*"), else the default.
func PolicyFor(rp *vpav1.PodResourcePolicy, name string) Policy {
	p := DefaultPolicy()
	chosen := rp.PolicyFor(name)
	if chosen == nil {
		return p
	}
	p.Off = chosen.Mode != nil && *chosen.Mode == vpav1.ContainerScalingModeOff
	// a zero bound is none, as upstream's capping skips it (a maxAllowed of 0 would recommend nothing); a
	// maxAllowed set to 0 is no maximum at all, the recommender's global one included (WithGlobalMax fills
	// only a resource the policy does not name, as upstream's)
	if q, ok := chosen.MinAllowed[corev1.ResourceCPU]; ok && !q.IsZero() {
		p.MinCPU = q.AsApproximateFloat64()
	}
	if q, ok := chosen.MaxAllowed[corev1.ResourceCPU]; ok {
		p.MaxCPU = maxBound(q)
	}
	if q, ok := chosen.MinAllowed[corev1.ResourceMemory]; ok && !q.IsZero() {
		p.MinMemory = q.AsApproximateFloat64()
	}
	if q, ok := chosen.MaxAllowed[corev1.ResourceMemory]; ok {
		p.MaxMemory = maxBound(q)
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

// maxBound is a maxAllowed quantity as a Policy bound: +Inf for zero (named, and no maximum).
func maxBound(q resource.Quantity) float64 {
	if q.IsZero() {
		return math.Inf(1)
	}
	return q.AsApproximateFloat64()
}

// Recommend turns an aggregate into a recommendation under a policy: estimates (with the pod minimum split
// across numContainers), every amount rounded UP to a multiple of Config.RoundCPUMillicores /
// RoundMemoryBytes (1 by default: the whole amounts as they are), uncappedTarget = the target before the
// policy, then minAllowed/maxAllowed capping of target and bounds (after the rounding, as upstream's capping
// post-processor runs after it: a recommendation stays within maxAllowed), uncontrolled resources left out (-1). An
// aggregate without a CPU sample (an OOM kill before the first one) recommends memory only: CPU is left out
// (-1), as for an uncontrolled resource. It returns false for mode Off, for an aggregate without history, and
// for one without a CPU sample whose policy does not control memory.
func (m *Model) Recommend(a *Aggregate, numContainers int, p Policy) (Recommendation, bool) {
	if p.Off || a.IsEmpty() {
		return Recommendation{}, false
	}
	if !a.HasCPU() {
		if p.ControlCPU = false; !p.ControlMem {
			return Recommendation{}, false
		}
	}
	e := m.Estimate(a, numContainers)
	amounts := func(x Estimate, capped bool) Amounts { return p.Amounts(m.Config, x.CPUMilli, x.MemoryBytes, capped) }
	return Recommendation{
		Target:         amounts(e.Target, true),
		LowerBound:     amounts(e.LowerBound, true),
		UpperBound:     amounts(e.UpperBound, true),
		UncappedTarget: amounts(e.Target, false),
	}, true
}

// Amounts is what the policy makes of estimated amounts (millicores, bytes): rounded UP to a multiple of
// cfg.RoundCPUMillicores / RoundMemoryBytes, the CPU to whole cores with IntegerCPU, then, when capped, within
// minAllowed/maxAllowed (after the rounding, as upstream's capping post-processor runs after it); a resource
// the policy does not control is left out (-1). The upstream model and the adaptive one shape their amounts
// with it.
func (p Policy) Amounts(cfg Config, cpuMilli, memoryBytes int64, capped bool) Amounts {
	bound := func(v int64, lo, hi float64, scale float64) int64 {
		if lo >= 0 {
			v = max(v, amount(lo*scale))
		}
		if hi >= 0 {
			v = min(v, amount(hi*scale))
		}
		return v
	}
	out := Amounts{CPUMilli: -1, MemoryBytes: -1}
	cpu, mem := roundUpTo(cpuMilli, cfg.RoundCPUMillicores), roundUpTo(memoryBytes, cfg.RoundMemoryBytes)
	if p.IntegerCPU {
		cpu = roundUpTo(cpu, 1000)
	}
	if capped {
		cpu, mem = bound(cpu, p.MinCPU, p.MaxCPU, 1000), bound(mem, p.MinMemory, p.MaxMemory, 1)
	}
	if p.ControlCPU {
		out.CPUMilli = cpu
	}
	if p.ControlMem {
		out.MemoryBytes = mem
	}
	return out
}

// roundUpTo rounds a whole amount up to a multiple of step (step <= 1: unchanged), at most MaxResourceAmount.
func roundUpTo(v, step int64) int64 {
	if step <= 1 || v >= MaxResourceAmount {
		return v
	}
	if r := v % step; r != 0 {
		v += step - r
	}
	return min(v, MaxResourceAmount)
}

// ContainerRecommendation is the recommendation of one container of a pod.
type ContainerRecommendation struct {
	Container string
	Recommendation
}

// RecommendPod recommends for every container of merged aggregates (one per container name, e.g. a VPA's) under
// policy: the pod minimum is split across the containers that are scaled (not Off, with history: samples or
// an OOM kill), names in order, Off and empty containers left out. It also returns the lowest confidence (days of history) among the
// recommended containers (-1: none).
func (m *Model) RecommendPod(merged map[string]*Aggregate, policy func(container string) Policy) ([]ContainerRecommendation, float64) {
	names := make([]string, 0, len(merged))
	scaled := 0
	for name, a := range merged {
		names = append(names, name)
		if !policy(name).Off && !a.IsEmpty() {
			scaled++
		}
	}
	sort.Strings(names)
	var out []ContainerRecommendation
	confidence := -1.0
	for _, name := range names {
		rec, ok := m.Recommend(merged[name], scaled, policy(name))
		if !ok {
			continue
		}
		if c := merged[name].Confidence(); confidence < 0 || c < confidence {
			confidence = c
		}
		out = append(out, ContainerRecommendation{Container: name, Recommendation: rec})
	}
	return out, confidence
}

// HvpaRecommendation is the embedded recommendation of one Hvpa (spec.vpa.deploy), computed by the
// recommender from the same model and usage as standalone VPAs.
type HvpaRecommendation struct {
	// Load is the replica-aware recommendation (docs/design/scaling.md section 2): per container, the load of the whole
	// workload that its workload total recommends; the Hvpa's total for c replicas is load + c x base.
	Load []ContainerLoad
	// Confidence is the days of history behind the load (the lowest over the containers).
	Confidence float64
	// Pods is the number of running pods of the target in the run that made it.
	Pods int
	// Usage is the workload's usage in that run, summed over its pods and containers (cpu millicores, memory
	// bytes; -1: none): what an HPA's Resource metrics measure, read at one time (docs/design/scaling.md section 2, h_raw).
	Usage Amounts
	// UsageAt is the time of the oldest sample summed into Usage (zero: none): a reading of pods at work only
	// if no pod became ready within a minute before it (scaling.HPAPods.UsageAt).
	UsageAt time.Time
	// At is when the run that made it ran (zero: unknown): the recommendation is as old as that run, however
	// often it is read since (runs that fail before publishing leave it as it was).
	At time.Time
}
