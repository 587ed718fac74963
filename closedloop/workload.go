package closedloop

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// workload is one simulated workload under one run: its pods, the controllers of the run's policy and the
// outcome so far.
type workload struct {
	run      *run
	key      wkey
	hvpa     *hvpav1alpha1.Hvpa
	names    []string            // container names, in the trace's order
	template []scaling.Container // the trace's first requests (limits = requests): the pod template
	desired  int32               // the workload's spec.replicas
	pods     []*pod
	podSeq   int
	demand   map[string]*usage // the demand in force

	// the policy's controllers
	hv    *hvpaCtl            // hvpa
	hpa   *hpaModel           // hpa, hpa+vpa, and the Hvpa's HPA
	vpa   *vpaCtl             // vpa, hpa+vpa
	fixed []scaling.Container // hpa: the fixed per-pod sizing

	// the trace row's window (the recommenders' sample) and the metrics window (what the autoscalers read)
	winStart    int64
	winOpen     bool
	metricStart int64 // the start of the open metrics window
	prevMetric  int64 // the start of the last closed one
	hpaBuf      []hpaPod
	pendingOOMs []oomEvent
	oomSince    bool // a kill since the Hvpa's last scaling
	oomTick     bool // a kill since the last series point

	// the outcome
	start, last                           int64
	ticks                                 int
	maxReplicas                           int32
	cpuTally, memTally                    tally
	ooms, restarts, evictions, podResizes int
	replicaChanges, perPodChanges         int
	series                                *Series
}

// newWorkload sets up workload k under the run's policy (nil: no Hvpa names it).
func (r *run) newWorkload(k wkey) (*workload, error) {
	h := r.sim.opts.HvpaFor(k.ns, k.name)
	if h == nil {
		return nil, nil
	}
	f := r.sim.first[k]
	w := &workload{run: r, key: k, hvpa: h, start: f.ts, winStart: f.ts, metricStart: f.ts}
	for _, name := range f.order {
		req := f.requests[name]
		w.names = append(w.names, name)
		w.template = append(w.template, scaling.Container{Name: name, Requests: req, Limits: req}) // limit = request (TRACE-FORMAT)
	}
	replicas := r.sim.firstPods(k)
	var err error
	switch r.spec.Policy {
	case PolicyHvpa:
		w.hv, err = newHvpaCtl(w, h, replicas)
	case PolicyHPA:
		w.fixed = fixedSizing(w.template, r.spec.Requests)
		w.hpa = newBaselineHPA(baselineHPA(h, r.sim.opts.HPA, false), r.sim.opts.HPA, replicas)
	case PolicyVPA:
		if n := r.sim.opts.VPA.Replicas; n > 0 {
			replicas = n
		}
		w.vpa = newVPA(w, false)
	case PolicyHPAVPA:
		w.fixed = fixedSizing(w.template, r.spec.Requests)
		w.hpa = newBaselineHPA(baselineHPA(h, r.sim.opts.HPA, true), r.sim.opts.HPA, replicas)
		w.vpa = newVPA(w, true)
	}
	if err != nil {
		return nil, err
	}
	if r.sim.opts.SeriesStep > 0 {
		w.series = &Series{Namespace: k.ns, Workload: k.name, Policy: r.spec.Label(), Model: w.model()}
	}
	for int32(len(w.pods)) < replicas {
		w.newPod(f.ts, w.admit())
	}
	w.pods0() // the first pods run from the start
	w.desired = replicas
	return w, nil
}

// pods0 makes the pods of the trace's first timestamp serve from the start.
func (w *workload) pods0() {
	for _, p := range w.pods {
		p.readyAt = p.created
		for i := range p.ctr {
			p.ctr[i].startedAt = p.created
		}
	}
}

// model is the recommender model of the run's Hvpa, "per-pod" for the VPA's, "" for none.
func (w *workload) model() Model {
	switch {
	case w.hv != nil:
		return w.run.spec.Model
	case w.vpa != nil:
		return ModelPerPod
	}
	return ""
}

// fixedSizing is the pod template with fixed per-pod requests, or the template itself without any. A per-pod
// value is split over the containers in proportion to the template's requests of that resource (evenly when
// the template has none); limits = requests.
func fixedSizing(template []scaling.Container, req *PodRequests) []scaling.Container {
	out := make([]scaling.Container, len(template))
	copy(out, template)
	if req == nil {
		return out
	}
	for _, r := range scaling.Resources {
		x, ok := req.Values.Get(r)
		if !ok {
			continue
		}
		sum := 0.0
		for _, k := range template {
			sum += reqOrZero(k.Requests, r)
		}
		for i, k := range template {
			share := 1 / float64(len(out))
			if sum > 0 {
				if !k.Requests.Has(r) {
					continue // a container without a request keeps none
				}
				share = reqOrZero(k.Requests, r) / sum
			}
			out[i].Requests.Set(r, x*share)
			out[i].Limits.Set(r, x*share)
		}
	}
	return out
}

// baselineHPA is the HPA of the hpa policies: the Resource metrics of the Hvpa's HPA template (80% CPU
// utilization without any; only the CPU ones when cpuOnly), `behavior: {}` (the API's default rules) or,
// with cfg.NoBehavior, no behavior at all (as kubectl autoscale makes it), the configured bounds.
func baselineHPA(h *hvpav1alpha1.Hvpa, cfg HPAConfig, cpuOnly bool) hvpav1alpha1.HpaTemplate {
	var metrics []autoscalingv2.MetricSpec
	if h.Spec.HPA != nil {
		for _, m := range h.Spec.HPA.Template.Metrics {
			if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && (!cpuOnly || m.Resource.Name == corev1.ResourceCPU) {
				metrics = append(metrics, m)
			}
		}
	}
	if len(metrics) == 0 {
		metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}}}}
	}
	t := hvpav1alpha1.HpaTemplate{MinReplicas: ptr.To(cfg.MinReplicas), MaxReplicas: cfg.MaxReplicas, Metrics: metrics}
	if !cfg.NoBehavior {
		t.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
	}
	return t
}

// newBaselineHPA is the hpa policies' HPA of template t: the controller's older path when t has no behavior.
func newBaselineHPA(t hvpav1alpha1.HpaTemplate, cfg HPAConfig, current int32) *hpaModel {
	h := newHPA(t, cfg, current, cfg.DownscaleStabilization)
	h.legacy = t.Behavior == nil
	return h
}

// admit is the sizing a new pod gets: the policy's admission.
func (w *workload) admit() []scaling.Container {
	switch {
	case w.hv != nil:
		return w.hv.intent
	case w.vpa != nil:
		base := w.template
		if w.fixed != nil {
			base = w.fixed
		}
		return w.vpa.admit(base)
	case w.fixed != nil:
		return w.fixed
	}
	return w.template
}

// begin opens the window of timestamp ts with its demand: the previous row's window closes and the
// recommenders get its usage.
func (w *workload) begin(ts int64, demand map[string]*usage) {
	if w.winOpen {
		w.closeRow()
		w.feed(time.Unix(w.winStart, 0).UTC())
	}
	w.winStart, w.winOpen, w.demand = ts, true, demand
}

// feed gives the recommenders of the policy the closed window's usage (at the window's start, as a trace row)
// and the OOM kills since.
func (w *workload) feed(at time.Time) {
	switch {
	case w.hv != nil:
		w.hv.feed(w, at)
	case w.vpa != nil:
		w.feedPerPod(at, w.run.rec)
	}
	w.pendingOOMs = w.pendingOOMs[:0]
}

// tick runs one step: due resizes apply, a metrics window that is over closes, the loops that are due run,
// then the pods serve the step's demand.
func (w *workload) tick(t int64, d due) error {
	w.actuate(t)
	if t-w.metricStart >= w.run.metrics {
		w.closeMetrics()
		w.prevMetric, w.metricStart = w.metricStart, t
	}
	now := time.Unix(t, 0).UTC()
	if w.hpa != nil {
		w.syncHPA(now)
	}
	if d.loop && w.vpa != nil {
		w.vpa.recommend(w)
		w.vpa.update(w, t)
	}
	if d.tick {
		w.ticks++
		if w.hv != nil {
			if err := w.hv.decide(w, now); err != nil {
				return err
			}
		}
	}
	w.serve(t)
	w.point(t)
	return nil
}

// syncHPA runs one HPA sync: the standalone HPA scales the workload, the Hvpa's writes the Hvpa's replicas.
func (w *workload) syncHPA(now time.Time) {
	current := w.desired
	if w.hv != nil {
		current = w.hpa.desired
	}
	desired := w.hpa.sync(now.Unix(), current, w.hpaPods(now.Unix()))
	if w.hv == nil && desired != w.desired {
		w.scaleTo(now.Unix(), desired)
	}
}

// hpaPods is what the HPA reads of the pods: phase, readiness, requests and the last window's usage.
func (w *workload) hpaPods(t int64) []hpaPod {
	out := w.hpaBuf[:0]
	initPeriod := int64(w.run.sim.opts.HPA.CPUInitializationPeriod / time.Second)
	for _, p := range w.pods {
		// within the CPU initialization period a pod counts once a whole window after its last readiness (its
		// Ready condition's transition: a container restarted since its start, upstream's rule) is measured,
		// and not while it is not ready (a restarting container)
		young := t < p.created+initPeriod
		out = append(out, hpaPod{pending: p.starting(t), cpuUnready: young && (!p.serving(t) || w.prevMetric < p.readySince(t)),
			hasMetric: p.hasMetric, requests: p.requests, usage: p.usage})
	}
	w.hpaBuf = out
	return out
}

// String names the workload and run, for errors.
func (w *workload) String() string {
	return fmt.Sprintf("%s/%s (%s)", w.key.ns, w.key.name, w.run.spec.Label())
}
