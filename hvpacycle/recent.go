// Package hvpacycle holds the steps of an Hvpa's cycle that the cluster's Hvpa controller and the closed-loop
// simulator (closedloop) share, so that the simulator runs the controller's rules, not a copy of them.
package hvpacycle

import (
	corev1 "k8s.io/api/core/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Recent is the recommender's recent load of a workload total in the decision's terms (docs/design/scaling.md
// section 2: the load-following total); a resource a sample lacks (-1) is left out of it.
func Recent(in []recommender.LoadSample) []scaling.LoadSample {
	out := make([]scaling.LoadSample, 0, len(in))
	for _, s := range in {
		var v scaling.Values
		if s.CPUMilli >= 0 {
			v.Set(scaling.CPU, s.CPUMilli)
		}
		if s.MemoryBytes >= 0 {
			v.Set(scaling.Memory, s.MemoryBytes)
		}
		out = append(out, scaling.LoadSample{At: s.At, Load: v})
	}
	return out
}

// WithRecent gives each recommendation of recs the recent load and the memory rise of its container's
// workload total in load (the embedded recommender's, in this process); a container load does not name is
// left as it is (its total then comes from the long history alone).
func WithRecent(recs []scaling.Recommendation, load []recommender.ContainerLoad) []scaling.Recommendation {
	for i := range recs {
		for _, l := range load {
			if l.Container == recs[i].Name {
				recs[i].Recent, recs[i].MemoryRise = Recent(l.Recent), l.MemoryRise
			}
		}
	}
	return recs
}

// Status is the status form of the embedded recommender's load recommendation (nil: none): what the Hvpa
// controller keeps in status.workloadRecommendation and decides from (scaling.LoadRecommendations).
func Status(load []recommender.ContainerLoad) *hvpav1alpha1.WorkloadRecommendation {
	if len(load) == 0 {
		return nil
	}
	list := func(a recommender.Amounts) corev1.ResourceList {
		return scaling.ToResourceList(scaling.V(float64(a.CPUMilli), float64(a.MemoryBytes)))
	}
	out := &hvpav1alpha1.WorkloadRecommendation{}
	for _, l := range load {
		out.Containers = append(out.Containers, hvpav1alpha1.ContainerLoad{Name: l.Container, Load: list(l.Target), LowerBound: list(l.LowerBound), UpperBound: list(l.UpperBound)})
	}
	return out
}

// Recommendations is what the decision reads of the embedded recommender's load recommendation, as the Hvpa
// controller reads it: the load through its status form, and the recent load beside it.
func Recommendations(load []recommender.ContainerLoad) []scaling.Recommendation {
	return WithRecent(scaling.LoadRecommendations(Status(load)), load)
}
