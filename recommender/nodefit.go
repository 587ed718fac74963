package recommender

import (
	"fmt"
	"math"
)

// WithGlobalMax fills a policy's maxAllowed from the recommender's global maximum where the policy sets none
// for that resource, as upstream VPA's --container-recommendation-max-allowed-cpu and -memory do (the VPA's
// own maxAllowed takes precedence). cpuCores and memoryBytes <= 0: no global maximum.
func WithGlobalMax(p Policy, cpuCores, memoryBytes float64) Policy {
	if p.MaxCPU < 0 && cpuCores > 0 {
		p.MaxCPU = cpuCores
	}
	if p.MaxMemory < 0 && memoryBytes > 0 {
		p.MaxMemory = memoryBytes
	}
	return p
}

// NodeCap is a container target FitNode lowered, for CappedToNode.
type NodeCap struct {
	Container string
	CPU       bool // false: memory
	From, To  int64
}

func (c NodeCap) String() string {
	if c.CPU {
		return fmt.Sprintf("%s cpu %dm -> %dm", c.Container, c.From, c.To)
	}
	return fmt.Sprintf("%s memory %d -> %d bytes", c.Container, c.From, c.To)
}

// FitNode lowers a pod's recommendations so that the pod fits the room of the largest schedulable node (per
// resource; < 0: unknown, no cap): where the recommended containers' targets and the requests of the pod's
// other containers (fixed: containers without a recommendation, sidecars not recommended, in force) add up to
// more than room, each recommended target is lowered in proportion to its share, rounded down to a whole unit,
// and its bounds are capped at it (as maxAllowed caps target and bounds; uncappedTarget stays). Where the
// other containers alone leave no room, nothing is lowered (the pod cannot fit whatever this recommends).
// It returns the recommendations and what was lowered.
func FitNode(recs []ContainerRecommendation, fixed, room Amounts) ([]ContainerRecommendation, []NodeCap) {
	out := make([]ContainerRecommendation, len(recs))
	copy(out, recs)
	var caps []NodeCap
	for _, cpu := range []bool{true, false} {
		get := func(a *Amounts) *int64 {
			if cpu {
				return &a.CPUMilli
			}
			return &a.MemoryBytes
		}
		r, f := *get(&room), max(*get(&fixed), 0)
		if r < 0 {
			continue
		}
		sum := int64(0)
		for i := range out {
			if t := *get(&out[i].Target); t > 0 {
				sum += t
			}
		}
		left := r - f
		if sum <= left || left <= 0 {
			continue
		}
		ratio := float64(left) / float64(sum)
		for i := range out {
			t := get(&out[i].Target)
			if *t <= 0 {
				continue
			}
			to := int64(math.Floor(float64(*t) * ratio))
			caps = append(caps, NodeCap{Container: out[i].Container, CPU: cpu, From: *t, To: to})
			*t = to
			for _, b := range []*int64{get(&out[i].LowerBound), get(&out[i].UpperBound)} {
				*b = min(*b, to)
			}
		}
	}
	return out, caps
}
