package closedloop

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// hpaModel plays the HPA v2 controller (kube-controller-manager's podautoscaler) on a workload's pods, one
// model for the HPA of the hpa policies and the HPA an Hvpa deploys. Every sync (the simulation step, 15s):
//
//   - each Resource metric (Utilization against the pods' requests, or AverageValue; other metric types
//     cannot be played from a usage trace and are left out) proposes replicas as upstream's replica
//     calculator does: the usage ratio over the ready pods with a metric, kept within the tolerance
//     (0.1), else ceil(ratio x ready pods); pods still starting (Pending) and, for CPU, pods in their
//     initialization period that are not ready or were not ready for a whole metrics window are unready:
//     left out, and counted as using nothing when the ratio is above 1 (a scale-up); pods without a metric
//     count as using nothing on a scale-up and max(100%, the target) of their request on a scale-down; if
//     that turns the direction around or lands within the tolerance (1 - 0.1 <= ratio <= 1 + 0.1), the
//     replicas stay; no metric computed, or one not computed and the others proposing a scale-down: no
//     scaling;
//   - the largest proposal is stabilized (upstream's behavior: the lowest of the scale-up window's
//     recommendations, the highest of the scale-down window's, clamped around the current replicas; the
//     replicas the HPA first sees are its window's first recommendation),
//     then limited by the scaling policies' rates (selectPolicy Max: the largest change any policy allows
//     over its period, counted from the scale events of that period) and by minReplicas and maxReplicas.
//
// Defaults as upstream's API: scale-up window 0 with policies {Pods 4 per 15s, Percent 100 per 15s}; scale-down
// policy Percent 100 per 15s with the controller's 300s window, except for an Hvpa's HPA, whose scale-down
// window is 0 unless its template sets one (docs/design/scaling.md section 2).
type hpaModel struct {
	min, max  int32
	metrics   []autoscalingv2.MetricSpec
	tolerance float64
	up, down  hpaRules
	// legacy: an HPA without behavior, scaled on the controller's older path (normalizeDesiredReplicas):
	// the highest recommendation of the downscale window, the new one included, then at most
	// max(2 x current, 4) replicas (legacyNormalize); the Hvpa's HPA always has a behavior
	legacy    bool
	desired   int32 // what the HPA last wrote to the scale subresource (its current replicas)
	recs      []timedReplicas
	upEvents  []timedReplicas
	downEvent []timedReplicas
	// buffers of one sync
	ready            []podMetric
	unready, missing []int64 // requests, in milli-units
}

// hpaRules are one direction's behavior: stabilization window, policies and how to select among them (times
// in seconds).
type hpaRules struct {
	window   int64
	policies []hpaPolicy
	sel      autoscalingv2.ScalingPolicySelect
}

type hpaPolicy struct {
	pods   bool // Pods, else Percent
	value  int32
	period int64
}

type timedReplicas struct {
	at int64 // unix seconds
	n  int32
}

// hpaPod is a pod as the HPA reads it.
type hpaPod struct {
	pending    bool // not started yet (phase Pending): unready for every metric
	cpuUnready bool // within the CPU initialization period and not ready (long enough)
	hasMetric  bool // the metrics API has its usage
	requests   scaling.Values
	usage      scaling.Values // the last window's usage: CPU millicores, memory bytes
}

// defaultUtilization is the target of the API's default metric.
var defaultUtilization int32 = 80

// defaultUpRules and defaultDownRules are upstream's defaults of an HPA's behavior (the scale-down window is
// the controller's --horizontal-pod-autoscaler-downscale-stabilization, set in newHPA).
func defaultUpRules() hpaRules {
	return hpaRules{sel: autoscalingv2.MaxChangePolicySelect, policies: []hpaPolicy{{pods: true, value: 4, period: 15}, {value: 100, period: 15}}}
}

func defaultDownRules(window time.Duration) hpaRules {
	return hpaRules{window: int64(window / time.Second), sel: autoscalingv2.MaxChangePolicySelect, policies: []hpaPolicy{{value: 100, period: 15}}}
}

// rulesOf fills what r sets over the defaults d, as upstream's defaulting does per field.
func rulesOf(r *autoscalingv2.HPAScalingRules, d hpaRules) hpaRules {
	if r == nil {
		return d
	}
	if r.StabilizationWindowSeconds != nil {
		d.window = int64(*r.StabilizationWindowSeconds)
	}
	if r.SelectPolicy != nil {
		d.sel = *r.SelectPolicy
	}
	if len(r.Policies) > 0 {
		d.policies = nil
		for _, p := range r.Policies {
			d.policies = append(d.policies, hpaPolicy{pods: p.Type == autoscalingv2.PodsScalingPolicy, value: p.Value, period: int64(p.PeriodSeconds)})
		}
	}
	return d
}

// newHPA returns the HPA of template t on a workload of current replicas; downWindow is the scale-down window
// when the template sets none.
func newHPA(t hvpav1alpha1.HpaTemplate, cfg HPAConfig, current int32, downWindow time.Duration) *hpaModel {
	h := &hpaModel{min: 1, max: t.MaxReplicas, metrics: t.Metrics, tolerance: cfg.Tolerance, desired: current,
		up: defaultUpRules(), down: defaultDownRules(downWindow)}
	if len(h.metrics) == 0 { // the API's default: 80% CPU utilization
		h.metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &defaultUtilization}}}}
	}
	if t.MinReplicas != nil {
		h.min = *t.MinReplicas
	}
	if b := t.Behavior; b != nil {
		h.up, h.down = rulesOf(b.ScaleUp, h.up), rulesOf(b.ScaleDown, h.down)
	}
	return h
}

// sync runs one HPA sync at now (unix seconds) with the workload's current replicas (the scale subresource's
// spec) and returns the desired replicas it writes.
func (h *hpaModel) sync(now int64, current int32, pods []hpaPod) int32 {
	if h.recs == nil {
		// upstream's recordInitialRecommendation: the replicas the HPA first sees are a recommendation of its
		// window, so it scales down no lower than them for its first stabilization window
		h.recs = []timedReplicas{{now, current}}
	}
	desired := current
	switch {
	case current == 0: // scaling is disabled
	case current > h.max:
		desired = h.max
	case current < h.min:
		desired = h.min
	default:
		proposal, ok := h.proposal(current, pods)
		if !ok { // no metric could be computed: upstream does not scale
			h.desired = current
			return current
		}
		if h.legacy {
			desired = h.legacyNormalize(now, current, proposal)
		} else {
			desired = h.normalize(now, current, proposal)
		}
	}
	if desired != current {
		h.storeEvent(now, current, desired)
	}
	h.desired = desired
	return desired
}

// proposal is the largest replica count the metrics propose, and whether the HPA scales on it: as upstream's
// computeReplicasForMetrics, not when no metric could be computed, nor when one could not and the others
// propose a scale-down. The metrics the simulator cannot play (other types, other resources) are left out.
func (h *hpaModel) proposal(current int32, pods []hpaPod) (int32, bool) {
	best, ok, invalid := int32(0), false, 0
	for _, m := range h.metrics {
		n, valid, played := h.metricReplicas(m, current, pods)
		switch {
		case !played:
		case valid:
			best, ok = max(best, n), true
		default:
			invalid++
		}
	}
	if invalid > 0 && best < current {
		return 0, false
	}
	return best, ok
}

// metricReplicas is the replica count one Resource metric proposes (upstream's replica calculator), whether
// it could be computed, and whether the simulator plays the metric at all (a Resource metric of CPU or
// memory).
func (h *hpaModel) metricReplicas(m autoscalingv2.MetricSpec, current int32, pods []hpaPod) (n int32, valid, played bool) {
	if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil {
		return 0, false, false
	}
	r, ok := resourceOf(m.Resource.Name)
	if !ok {
		return 0, false, false
	}
	var k metricKind
	switch tg := m.Resource.Target; {
	case tg.Type == autoscalingv2.UtilizationMetricType && tg.AverageUtilization != nil && *tg.AverageUtilization > 0:
		k = metricKind{utilization: true, target: int64(*tg.AverageUtilization)}
	case tg.Type == autoscalingv2.AverageValueMetricType && tg.AverageValue != nil && tg.AverageValue.MilliValue() > 0:
		k = metricKind{target: tg.AverageValue.MilliValue()}
	default:
		return 0, false, true
	}
	n, valid = h.replicas(r, current, pods, k)
	return n, valid, true
}

// metricKind is a Resource metric's target: a utilization in percent of the requests, or an average value in
// milli-units.
type metricKind struct {
	utilization bool
	target      int64
}

// ratio is the usage ratio of pod metrics against the target.
func (k metricKind) ratio(ms []podMetric) float64 {
	if k.utilization {
		return utilizationRatio(ms, k.target)
	}
	return averageRatio(ms, k.target)
}

// onScaleDown is what a pod without a metric counts as on a scale-down: its whole request or the target
// utilization, whichever is more (utilization: upstream's fallback of max(100, target)%), or the target
// (average value).
func (k metricKind) onScaleDown(request int64) int64 {
	if k.utilization {
		return request * max(100, k.target) / 100
	}
	return k.target
}

// within reports whether a usage ratio is within the tolerance, as upstream's Tolerances.isWithin compares
// it: 1 - tolerance <= ratio <= 1 + tolerance (a whole-percent utilization of exactly 88% against 80% is
// within, which |1 - ratio| <= tolerance in floats would not say).
func (h *hpaModel) within(ratio float64) bool {
	return 1-h.tolerance <= ratio && ratio <= 1+h.tolerance
}

// podMetric is one pod's metric value and request, in milli-units as upstream's metrics client reads them.
type podMetric struct{ value, request int64 }

// replicas is upstream's GetResourceReplicas / calcPlainMetricReplicas over the pods.
func (h *hpaModel) replicas(r scaling.Resource, current int32, pods []hpaPod, k metricKind) (int32, bool) {
	h.group(r, pods)
	if len(h.ready) == 0 {
		return 0, false
	}
	usageRatio := k.ratio(h.ready)
	if math.IsNaN(usageRatio) {
		return 0, false
	}
	rebalance := len(h.unready) > 0 && usageRatio > 1
	if !rebalance && len(h.missing) == 0 {
		if h.within(usageRatio) {
			return current, true
		}
		return int32(math.Ceil(usageRatio * float64(len(h.ready)))), true
	}
	return h.rebalanced(current, usageRatio, rebalance, k), true
}

// group sorts the pods as upstream's groupPods does for resource r: ready ones with their metric and
// request, unready ones (pending; for CPU, young and not ready long enough) and ones without a metric, with
// their requests.
func (h *hpaModel) group(r scaling.Resource, pods []hpaPod) {
	h.ready, h.unready, h.missing = h.ready[:0], h.unready[:0], h.missing[:0]
	for _, p := range pods {
		req := milli(r, reqOrZero(p.requests, r))
		switch {
		case p.pending:
			h.unready = append(h.unready, req)
		case !p.hasMetric:
			h.missing = append(h.missing, req)
		case r == scaling.CPU && p.cpuUnready:
			h.unready = append(h.unready, req)
		default:
			h.ready = append(h.ready, podMetric{milli(r, reqOrZero(p.usage, r)), req})
		}
	}
}

// rebalanced is the proposal with the pods without a metric (0 going up, their request going down) and, on a
// scale-up, the unready pods at 0; the replicas stay when that lands within the tolerance or turns the
// direction around.
func (h *hpaModel) rebalanced(current int32, usageRatio float64, rebalance bool, k metricKind) int32 {
	ms := h.ready
	for _, req := range h.missing {
		switch {
		case usageRatio < 1:
			ms = append(ms, podMetric{k.onScaleDown(req), req})
		case usageRatio > 1:
			ms = append(ms, podMetric{0, req})
		}
	}
	if rebalance {
		for _, req := range h.unready {
			ms = append(ms, podMetric{0, req})
		}
	}
	h.ready = ms
	newRatio := k.ratio(ms)
	if h.within(newRatio) || (usageRatio < 1 && newRatio > 1) || (usageRatio > 1 && newRatio < 1) {
		return current
	}
	n := int32(math.Ceil(newRatio * float64(len(ms))))
	if (newRatio < 1 && n > current) || (newRatio > 1 && n < current) {
		return current
	}
	return n
}

// utilizationRatio is upstream's GetResourceUtilizationRatio: the whole-percent utilization of the summed
// usage against the summed requests, over the target.
func utilizationRatio(ms []podMetric, target int64) float64 {
	var used, requested int64
	for _, m := range ms {
		used += m.value
		requested += m.request
	}
	if requested == 0 {
		return math.NaN()
	}
	return float64(used*100/requested) / float64(target)
}

// averageRatio is upstream's GetMetricUtilizationRatio: the mean value over the target.
func averageRatio(ms []podMetric, target int64) float64 {
	var used int64
	for _, m := range ms {
		used += m.value
	}
	return float64(used/int64(len(ms))) / float64(target)
}

// milli is an amount in the milli-units upstream's metrics use (millicores; memory in thousandths of bytes).
func milli(r scaling.Resource, x float64) int64 {
	if r == scaling.CPU {
		return int64(math.Ceil(x))
	}
	return int64(math.Ceil(x)) * 1000
}

func reqOrZero(v scaling.Values, r scaling.Resource) float64 {
	x, _ := v.Get(r)
	return x
}

func resourceOf(name corev1.ResourceName) (scaling.Resource, bool) {
	for _, r := range scaling.Resources {
		if r.ResourceName() == name {
			return r, true
		}
	}
	return 0, false
}

// normalize stabilizes the proposal and applies the rate limits and bounds (upstream's
// normalizeDesiredReplicasWithBehaviors), recording the proposal for the windows.
func (h *hpaModel) normalize(now int64, current, proposal int32) int32 {
	up, down := proposal, proposal
	upCut, downCut, oldest := now-h.up.window, now-h.down.window, now-max(h.up.window, h.down.window)
	keep := 0
	for _, rec := range h.recs {
		if rec.at > upCut {
			up = min(up, rec.n)
		}
		if rec.at > downCut {
			down = max(down, rec.n)
		}
		if rec.at >= oldest {
			h.recs[keep] = rec
			keep++
		}
	}
	h.recs = append(h.recs[:keep], timedReplicas{now, proposal})
	desired := min(max(current, up), down)
	switch {
	case desired > current:
		limit := max(h.limit(now, current, h.up, true), current)
		desired = min(desired, h.max, limit)
	case desired < current:
		limit := min(h.limit(now, current, h.down, false), current)
		desired = max(desired, h.min, limit)
	}
	return desired
}

// legacyNormalize is upstream's normalizeDesiredReplicas, the path of an HPA without behavior:
// stabilizeRecommendation (the highest recommendation of the downscale window, a sample exactly at its edge
// included, and the new one) and convertDesiredReplicasWithRules (within minReplicas and the lower of
// maxReplicas and max(2 x current, 4)). Unlike the behavior path it also scales up to a recommendation of the
// window above the current replicas.
func (h *hpaModel) legacyNormalize(now int64, current, proposal int32) int32 {
	best, cut, keep := proposal, now-h.down.window, 0
	for _, rec := range h.recs {
		if rec.at >= cut {
			best = max(best, rec.n)
			h.recs[keep] = rec
			keep++
		}
	}
	h.recs = append(h.recs[:keep], timedReplicas{now, proposal})
	upLimit := max(2*current, 4)
	return min(max(best, h.min), min(h.max, upLimit))
}

// limit is the most replicas (scale-up) or the fewest (scale-down) the rules' policies allow now, each over
// its period counted from the replicas at the period's start.
func (h *hpaModel) limit(now int64, current int32, rules hpaRules, up bool) int32 {
	if rules.sel == autoscalingv2.DisabledPolicySelect {
		return current
	}
	// selectPolicy Max wants the most change: the largest scale-up limit, the smallest scale-down limit;
	// Min the reverse
	larger := (rules.sel != autoscalingv2.MinChangePolicySelect) == up
	result, first := int32(0), true
	for _, p := range rules.policies {
		start := current - changeIn(h.upEvents, now, p.period) + changeIn(h.downEvent, now, p.period)
		var proposed int32
		switch {
		case up && p.pods:
			proposed = start + p.value
		case up:
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.value)/100)))
		case p.pods:
			proposed = start - p.value
		default:
			proposed = int32(float64(start) * (1 - float64(p.value)/100))
		}
		if first || (larger && proposed > result) || (!larger && proposed < result) {
			result, first = proposed, false
		}
	}
	if first {
		return current
	}
	return result
}

// changeIn is the replicas added (or removed) by the events of the last period.
func changeIn(events []timedReplicas, now, period int64) int32 {
	var n int32
	for _, e := range events {
		if e.at > now-period {
			n += e.n
		}
	}
	return n
}

// storeEvent records a scale event, forgetting those older than the longest policy period.
func (h *hpaModel) storeEvent(now int64, from, to int32) {
	prune := func(events []timedReplicas, rules hpaRules) []timedReplicas {
		var longest int64
		for _, p := range rules.policies {
			longest = max(longest, p.period)
		}
		keep := events[:0]
		for _, e := range events {
			if e.at > now-longest {
				keep = append(keep, e)
			}
		}
		return keep
	}
	if to > from {
		h.upEvents = append(prune(h.upEvents, h.up), timedReplicas{now, to - from})
	} else {
		h.downEvent = append(prune(h.downEvent, h.down), timedReplicas{now, from - to})
	}
}
