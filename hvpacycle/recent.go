// Package hvpacycle holds the steps of an Hvpa's cycle that the cluster's Hvpa controller and the closed-loop
// simulator (closedloop) share, so that the simulator runs the controller's rules, not a copy of them.
package hvpacycle

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

// appendRecent appends the recommender's recent load of a workload total to out in the decision's terms
// (docs/design/scaling.md section 2: the load-following total); a resource a sample lacks (-1) is left out of
// it.
func appendRecent(out []scaling.LoadSample, in []recommender.LoadSample) []scaling.LoadSample {
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

// WithRecent gives each recommendation of recs the recent load, the memory rise, the recurring CPU burst and
// the pod minimum of its container's workload total in load (the embedded recommender's, in this process); a container load
// does not name is left as it is (its total then comes from the long history alone).
func WithRecent(recs []scaling.Recommendation, load []recommender.ContainerLoad) []scaling.Recommendation {
	var b Buffer
	return b.WithRecent(recs, load)
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

// Buffer holds what one caller's decisions read of the embedded recommender, reused from one decision to the
// next: the closed-loop simulator's workload decides once a minute on an hour of recent samples and a load
// recommendation that changes when a percentile moves to another bucket (converting both anew each time
// allocated two fifths of its bytes). What its methods return is valid until their next call, and is what
// the Hvpa controller reads for the same load (Status, scaling.LoadRecommendations, WithRecent). The recent
// loads it reads are the recommender's snapshots, whose samples are never written again: a slice passed in is
// not to be changed after (recentCache.convert). The zero value is ready to use.
type Buffer struct {
	// recent: each container load's recent samples (by its index in the load), as last converted
	recent []recentCache
	// the containers and targets of the last load recommendation, and their load recommendations
	names   []string
	targets []recommender.Amounts
	recs    []scaling.Recommendation
}

// WithRecent is the package's WithRecent, its recent loads in b.
func (b *Buffer) WithRecent(recs []scaling.Recommendation, load []recommender.ContainerLoad) []scaling.Recommendation {
	for len(b.recent) < len(load) {
		b.recent = append(b.recent, recentCache{})
	}
	for i := range recs {
		for j, l := range load {
			if l.Container == recs[i].Name {
				recs[i].Recent, recs[i].MemoryRise = b.recent[j].convert(l.Recent), l.MemoryRise
				recs[i].RecurringCPU, recs[i].RecurringEvery = l.RecurringCPU, l.RecurringEvery
				recs[i].RecurringFrom, recs[i].RecurringEnded, recs[i].RecurringBefore = l.RecurringFrom, l.RecurringEnded, l.RecurringBefore
				recs[i].RecurringEndedEarliest = l.RecurringEndedEarliest
				recs[i].RecurringNext = l.RecurringNext
				recs[i].PodMin = scaling.V(float64(l.PodMin.CPUMilli), float64(l.PodMin.MemoryBytes)) // 0: no floor
			}
		}
	}
	return recs
}

// recentCache is one container's recent load as last converted: the recommender's samples and the decision's.
type recentCache struct {
	in  []recommender.LoadSample
	out []scaling.LoadSample // a window of buf, the array it moves along (to its start when it reaches its end)
	buf []scaling.LoadSample
}

// convert is in in the decision's terms (appendRecent). A recent load is a snapshot of the recommender's
// window, whose elements are never written again once in it (a change goes to a copy): the part of in that is
// the same memory as the snapshot converted last converts as it did, so only the samples appended since are
// converted (a decision a minute on an hour of samples converted each sample 60 times). A recent load in
// other memory (a new array, another caller's slice) is converted whole. The result has no room to append
// into, and is valid until the next call.
func (c *recentCache) convert(in []recommender.LoadSample) []scaling.LoadSample {
	kept := 0 // samples of in that c.out holds, from its k-th on
	k := 0
	if len(in) > 0 && len(c.in) > 0 {
		i, found := slices.BinarySearchFunc(c.in, in[0].At, func(s recommender.LoadSample, t time.Time) int { return s.At.Compare(t) })
		if found && &c.in[i] == &in[0] {
			k, kept = i, min(len(c.in)-i, len(in))
		}
	}
	out := c.out[k : k+kept]
	if cap(out) < len(in) { // no room after it: to the start of buf, twice the size it needs when too small
		if cap(c.buf) < len(in) {
			c.buf = make([]scaling.LoadSample, 0, 2*len(in))
		}
		out = c.buf[:copy(c.buf[:kept], out)]
	}
	c.out = appendRecent(out, in[kept:])
	c.in = in
	return c.out[:len(c.out):len(c.out)]
}

// Recommendations is what the decision reads of the embedded recommender's load recommendation, as the Hvpa
// controller reads it: the load through its status form, and the recent load beside it (in b). The status
// form is read again only when a container or its target changed (it depends on nothing else).
func (b *Buffer) Recommendations(load []recommender.ContainerLoad) []scaling.Recommendation {
	same := len(load) == len(b.names) && b.recs != nil
	for i := 0; same && i < len(load); i++ {
		same = load[i].Container == b.names[i] && load[i].Target == b.targets[i]
	}
	if !same {
		b.names, b.targets = b.names[:0], b.targets[:0]
		for _, l := range load {
			b.names, b.targets = append(b.names, l.Container), append(b.targets, l.Target)
		}
		b.recs = scaling.LoadRecommendations(Status(load))
	}
	return b.WithRecent(b.recs, load)
}
