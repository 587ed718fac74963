package closedloop

import (
	"fmt"
	"math"
	"slices"
	"time"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/hvpacycle"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

// hvpaCtl is the Hvpa of a workload: its embedded recommender (the run's model), its decision (scaling.Decide
// every Options.Interval) and its memory (the intent in force, the last scaling, the HPA record).
type hvpaCtl struct {
	hvpa      *hvpav1alpha1.Hvpa
	spec      *scaling.Spec
	model     *recommender.Model
	models    map[string]*recommender.Model // by container: the model with its policy's model fields
	owner     string
	intent    []scaling.Container // the per-pod requests and limits in force (status.desired)
	hpaRecord *scaling.HPARecord
	lastScale *time.Time
	desired   *hvpav1alpha1.DesiredState // the intent in force as the controller keeps it (status.desired; nil before the first)
	sizedFor  int32                      // the replicas the intent is sized for (scaling.Decision.SizedFor)
	recent    hvpacycle.Buffer           // what the decision at hand reads of the recommender, in its terms
}

// newHvpaCtl sets up the Hvpa h of workload w (and its HPA, when it deploys one).
func newHvpaCtl(w *workload, h *hvpav1alpha1.Hvpa, replicas int32) (*hvpaCtl, error) {
	spec, errs := scaling.FromHvpa(h)
	if len(errs) > 0 {
		return nil, fmt.Errorf("Hvpa %s for %s/%s: %w", h.Name, w.key.ns, w.key.name, errs.ToAggregate())
	}
	cfg, err := recommender.WithOverrides(w.run.sim.cfg, h.Annotations) // the Hvpa's recommender.hvpa.dev/ annotations
	if err != nil {
		return nil, fmt.Errorf("Hvpa %s: %w", h.Name, err)
	}
	m, err := recommender.NewModel(cfg)
	if err != nil {
		return nil, err
	}
	c := &hvpaCtl{hvpa: h, spec: spec, model: m, models: map[string]*recommender.Model{}, intent: slices.Clone(w.template),
		owner: "Hvpa/" + h.Name + "/" + w.key.name} // one Hvpa ("*") may scale several workloads
	for _, name := range w.names {
		// a container policy's model fields (oomBumpUpRatio, ...), as the cluster's recommender takes them
		c.models[name] = m
		if h.Spec.VPA == nil {
			continue
		}
		cc, has, err := recommender.ContainerConfig(cfg, h.Spec.VPA.Template.ResourcePolicy, name)
		if err != nil {
			return nil, fmt.Errorf("Hvpa %s: %w", h.Name, err)
		}
		if has {
			if c.models[name], err = recommender.NewModel(cc); err != nil {
				return nil, err
			}
		}
	}
	if h.Spec.HPA != nil && h.Spec.HPA.Deploy {
		w.hpa = newHPA(h.Spec.HPA.Template, w.run.sim.opts.HPA, replicas, 0) // the Hvpa's child HPA: no scale-down window unless set
	}
	return c, nil
}

// feed gives the embedded recommender the closed window's usage and the kills since.
func (c *hvpaCtl) feed(w *workload, at time.Time) {
	if w.run.spec.Model == ModelPerPod {
		w.feedPerPod(at, nil)
		return
	}
	st := w.run.state
	for ci, name := range w.names {
		load := hvpacycle.Load{Base: c.spec.Base}
		for _, p := range w.pods {
			if k := &p.ctr[ci].sample; k.has {
				load.Add(at, k.cpu, k.mem, reqOf(p.spec[ci], scaling.CPU), reqOf(p.spec[ci], scaling.Memory))
			}
		}
		total := st.Total(c.models[name], recommender.OwnerKey{Namespace: w.key.ns, Owner: c.owner, Container: name}, at)
		load.Record(total)
		for _, ev := range w.pendingOOMs {
			if ev.container != ci {
				continue
			}
			// as the cluster's recommender: the recent total rises to at least pods x (bump - base) of the
			// killed pod, its history to the pods then serving (ready) x that
			hvpacycle.RecordOOM(total, c.spec.Base, time.Unix(ev.at, 0).UTC(), len(w.pods), ev.serving, ev.request, ev.peak)
		}
	}
}

// recommendation is the embedded recommendation under the run's model, and its confidence.
func (c *hvpaCtl) recommendation(w *workload) ([]scaling.Recommendation, float64) {
	rp := c.hvpa.Spec.VPA
	if rp == nil || !rp.Deploy {
		return nil, math.Inf(1)
	}
	policy := func(name string) recommender.Policy { return recommender.PolicyFor(rp.Template.ResourcePolicy, name) }
	var out []scaling.Recommendation
	if w.run.spec.Model == ModelPerPod {
		recs, conf := c.model.RecommendPod(w.run.state.MergedGroup(c.model, w.key.ns, w.key.name, c.owner), policy)
		for _, r := range recs {
			out = append(out, scaling.Recommendation{Name: r.Container, Target: values(r.Target), UncappedTarget: values(r.UncappedTarget)})
		}
		return out, conf
	}
	loads, conf := w.run.state.WorkloadRecommendation(w.key.ns, c.owner, policy)
	return c.recent.Recommendations(loads), conf // valid until the next decision
}

func values(a recommender.Amounts) scaling.Values {
	return scaling.V(float64(a.CPUMilli), float64(a.MemoryBytes))
}

// hpaInput is what the decision reads of the Hvpa's HPA at now: its desired replicas, bounds and h_raw from
// the recommender's last read of the usage against the requests in force, current once the pods are warm
// (scaling.HPAInputOf).
func (c *hvpaCtl) hpaInput(w *workload, now time.Time) *scaling.HPAInput {
	in := &scaling.HPAInput{Desired: w.hpa.desired, Min: w.hpa.min, Max: w.hpa.max}
	var use scaling.Values
	for _, r := range scaling.Resources {
		if u, ok := w.usageOf(r); ok {
			use.Set(r, u)
		}
	}
	in.Raw = scaling.HPARawFromUsage(c.hvpa.Spec.HPA.Template.Metrics, use, scaling.ContainersRequests(c.intent))
	in.RawAtWork = in.Raw > 0 && w.readiness(now).Warm()
	in.RawCurrent = in.RawAtWork // the usage is of the pods in force
	if rec := c.hpaRecord; rec != nil {
		in.Basis = scaling.HPABasis(rec.Desired, rec.Basis, in.Desired, c.intent)
	}
	return in
}

// decide runs the Hvpa decision at now and applies it: the workload scales (new pods get the new intent at
// admission) and the pods that differ from the new intent are resized after the updater's period.
func (c *hvpaCtl) decide(w *workload, now time.Time) error {
	recs, conf := c.recommendation(w)
	st := scaling.State{Now: now, Replicas: w.desired, Containers: c.intent, Recommendation: recs, LastScaleTime: c.lastScale,
		OOMSinceLastScaling: w.oomSince, LowConfidence: len(recs) > 0 && conf < w.run.sim.opts.LowConfidenceDays,
		PodsResizing: slices.ContainsFunc(w.pods, func(p *pod) bool { return !sameSizing(p.spec, c.intent) }), IntentReplicas: c.sizedFor}
	if w.hpa != nil {
		st.HPA = c.hpaInput(w, now)
	}
	d, err := scaling.Decide(c.spec, st)
	if err != nil {
		return err
	}
	if d.HPA != nil {
		c.hpaRecord = d.HPA
	}
	c.sizedFor = d.SizedFor
	next := slices.Clone(c.intent)
	changedPods := false
	for _, cd := range d.Containers {
		for i := range next {
			if next[i].Name == cd.Name {
				changedPods = changedPods || next[i].Requests != cd.Requests
				next[i].Requests, next[i].Limits = cd.Requests, cd.Limits
			}
		}
	}
	t := now.Unix()
	c.intent = next
	w.scaleTo(t, d.Replicas)
	for _, p := range w.pods {
		if !sameSizing(p.spec, next) && (p.resizeAt == 0 || !sameSizing(p.resizeTo, next)) {
			w.resize(t, p, next)
		}
	}
	if changedPods {
		w.perPodChanges++
	}
	// as the controller: the first intent is no scaling; an unchanged one keeps c.desired, which holds the same
	// replicas and values (all IntentChange reads of it), unrendered
	switch hvpacycle.IntentChange(c.desired, d) {
	case hvpacycle.Scaling:
		c.lastScale = &now
		w.oomSince = false
		fallthrough
	case hvpacycle.Initial:
		c.desired = d.DesiredState()
	}
	return nil
}

// sameSizing reports whether two pods' containers have the same requests and limits.
func sameSizing(a, b []scaling.Container) bool {
	return slices.EqualFunc(a, b, func(x, y scaling.Container) bool { return x.Requests == y.Requests && x.Limits == y.Limits })
}
