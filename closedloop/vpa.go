package closedloop

import (
	"math"
	"slices"
	"time"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

// vpaCtl plays upstream's VPA on a workload: the recommender (the per-pod model of package recommender with
// the run's configuration, upstream's defaults unless set: one aggregate per container name of the workload,
// fed by every pod) every updater period, the admission controller (a new pod gets the target, limits
// keeping the template's ratio: controlledValues RequestsAndLimits), and the updater (Options.VPA):
//
//   - a pod is a candidate when a request is outside [lowerBound, upperBound], or its last termination was an
//     OOM kill within EvictAfterOOM of its start, less than EvictAfterOOM ago (and something would change), or it has lived
//     PodLifetimeThreshold and its requests differ from the target by at least UpdateThreshold (the sum over
//     resources of |request - target| / request, upstream's priority);
//   - candidates go scale-ups first, then by that difference; each is resized in place (InPlaceOrRecreate;
//     resizes always succeed in the simulator) or evicted (Recreate) while the workload stays disruptable:
//     more running pods than replicas - floor(replicas x EvictionTolerance) after this loop's updates, or
//     one pod when the tolerance rounds to 0 and every pod runs; a workload with fewer pods than MinReplicas
//     is left alone (in-place updates count against the budget: upstream's --in-place-skip-disruption-budget
//     is false).
type vpaCtl struct {
	cfg      VPAConfig
	policy   recommender.Policy
	policies []scaling.ContainerPolicy
	aggs     map[string]*recommender.Aggregate
	targets  map[string]scaling.Values
	lower    map[string]scaling.Values
	upper    map[string]scaling.Values
	cands    []vpaCandidate
}

type vpaCandidate struct {
	pod  *pod
	up   bool
	diff float64
}

// newVPA returns the VPA of workload w; memoryOnly: controlledResources [memory] (the hpa+vpa policy).
func newVPA(w *workload, memoryOnly bool) *vpaCtl {
	v := &vpaCtl{cfg: w.run.sim.opts.VPA, policy: recommender.DefaultPolicy(), aggs: map[string]*recommender.Aggregate{},
		targets: map[string]scaling.Values{}, lower: map[string]scaling.Values{}, upper: map[string]scaling.Values{}}
	v.policy.ControlCPU = !memoryOnly
	v.policies = []scaling.ContainerPolicy{{Name: vpav1.DefaultContainerResourcePolicy, Controlled: [scaling.NumResources]bool{!memoryOnly, true},
		ControlledValues: scaling.RequestsAndLimits}}
	return v
}

// recommend runs the recommender: the recommendation of every container with samples.
func (v *vpaCtl) recommend(w *workload) {
	for _, name := range w.names {
		if e, ok := w.run.state.Aggregate(recommender.AggregateKey{Namespace: w.key.ns, Container: name, Group: w.key.name}); ok {
			v.aggs[name] = e.Aggregate
		}
	}
	recs, _ := w.run.rec.RecommendPod(v.aggs, func(string) recommender.Policy { return v.policy })
	for _, r := range recs {
		v.targets[r.Container], v.lower[r.Container], v.upper[r.Container] = values(r.Target), values(r.LowerBound), values(r.UpperBound)
	}
}

// admit is what the admission controller makes of a pod's containers: the targets, limits keeping the
// containers' ratio (the containers as they are without a recommendation).
func (v *vpaCtl) admit(containers []scaling.Container) []scaling.Container {
	if len(v.targets) == 0 {
		return containers
	}
	out := slices.Clone(containers)
	for _, d := range scaling.SizePod(containers, v.targets, v.policies, [scaling.NumResources]*scaling.ChangeParams{}, nil) {
		for i := range out {
			if out[i].Name == d.Name {
				out[i].Requests, out[i].Limits = d.Requests, d.Limits
			}
		}
	}
	return out
}

// update runs one updater loop at t.
func (v *vpaCtl) update(w *workload, t int64) {
	if len(v.targets) == 0 || int32(len(w.pods)) < v.cfg.MinReplicas {
		return
	}
	configured := int(w.desired)
	tolerance := int(float64(configured) * v.cfg.EvictionTolerance)
	running := 0
	v.cands = v.cands[:0]
	for _, p := range w.pods {
		if p.starting(t) {
			continue
		}
		running++
		if p.resizeAt > 0 { // a resize under way: upstream waits for it
			continue
		}
		if up, diff, ok := v.priority(w, p, t); ok {
			v.cands = append(v.cands, vpaCandidate{pod: p, up: up, diff: diff})
		}
	}
	slices.SortStableFunc(v.cands, func(a, b vpaCandidate) int {
		switch {
		case a.up != b.up && a.up:
			return -1
		case a.up != b.up:
			return 1
		}
		return cmpFloat(b.diff, a.diff)
	})
	disrupted := 0
	disruptable := func() bool {
		return running-disrupted > configured-tolerance || (configured == running && tolerance == 0 && disrupted == 0)
	}
	for _, c := range v.cands {
		if !disruptable() {
			continue
		}
		disrupted++
		if v.cfg.UpdateMode == vpav1.UpdateModeRecreate {
			w.evict(t, slices.Index(w.pods, c.pod))
			continue
		}
		w.resize(t, c.pod, v.admit(c.pod.spec))
	}
	if disrupted > 0 {
		w.perPodChanges++
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// quickOOM reports whether a container of p was killed within EvictAfterOOM of its start, less than
// EvictAfterOOM before t: upstream's updater reads the last termination state so (v1.8.1), which then lets the
// pod be updated at any age and difference.
func (v *vpaCtl) quickOOM(p *pod, t int64) bool {
	window := int64(v.cfg.EvictAfterOOM / time.Second)
	for i := range p.ctr {
		if c := &p.ctr[i]; c.killedAt > 0 && c.ranFor < window && t-c.killedAt < window {
			return true
		}
	}
	return false
}

// priority is upstream's update priority of a pod: whether a request grows, the summed relative difference
// of its requests to the targets, and whether the pod is accepted for an update now.
func (v *vpaCtl) priority(w *workload, p *pod, t int64) (up bool, diff float64, ok bool) {
	var requested, recommended [scaling.NumResources]float64
	var seen [scaling.NumResources]bool
	outside, quickOOM := false, v.quickOOM(p, t)
	for ci, name := range w.names {
		target, has := v.targets[name]
		if !has {
			continue
		}
		for _, r := range scaling.Resources {
			rec, ok := target.Get(r)
			if !ok {
				continue
			}
			seen[r] = true
			recommended[r] += rec
			req, hasReq := p.spec[ci].Requests.Get(r)
			if !hasReq {
				up, outside = true, true
				continue
			}
			requested[r] += req
			up = up || rec > req
			lo, hasLo := v.lower[name].Get(r)
			hi, hasHi := v.upper[name].Get(r)
			outside = outside || (hasLo && req < lo) || (hasHi && req > hi)
		}
	}
	for _, r := range scaling.Resources {
		if seen[r] {
			req := max(requested[r], 1)
			diff += math.Abs(req-recommended[r]) / req
		}
	}
	if !outside && !quickOOM {
		if t < p.created+int64(v.cfg.PodLifetimeThreshold/time.Second) || diff < v.cfg.UpdateThreshold {
			return up, diff, false
		}
	}
	if quickOOM && diff == 0 {
		return up, diff, false
	}
	return up, diff, true
}

// feedPerPod gives the per-pod model the closed window's usage of every pod container and the kills since
// (m: the model of every container; nil: the Hvpa's model of each container).
func (w *workload) feedPerPod(at time.Time, m *recommender.Model) {
	st := w.run.state
	modelOf := func(ci int) *recommender.Model {
		if m != nil {
			return m
		}
		return w.hv.models[w.names[ci]]
	}
	for _, p := range w.pods {
		for ci := range p.ctr {
			c := &p.ctr[ci].sample
			if !c.has {
				continue
			}
			mc := modelOf(ci)
			pc := st.Container(mc, p.key(w, ci), w.key.name, nil, at)
			mc.AddCPU(pc.State, at, c.cpu/1000)
			mc.AddMemory(pc.State, at, c.mem)
		}
	}
	for _, ev := range w.pendingOOMs {
		mc := modelOf(ev.container)
		pc := st.Container(mc, ev.pod.key(w, ev.container), w.key.name, nil, at)
		_ = mc.RecordOOM(pc.State, time.Unix(ev.at, 0).UTC(), ev.request) // never older than the window's samples
	}
}

// key is the recommender's key of the pod's container ci.
func (p *pod) key(w *workload, ci int) recommender.ContainerKey {
	if p.keys == nil {
		p.keys = make([]recommender.ContainerKey, len(w.names))
		for i, name := range w.names {
			p.keys[i] = recommender.ContainerKey{Namespace: w.key.ns, Pod: p.name, Container: name}
		}
	}
	return p.keys[ci]
}
