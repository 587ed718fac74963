package closedloop

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// hpaTolerance is the HPA controller's default tolerance: a usage ratio within 10% of 1 keeps the replicas.
const hpaTolerance = 0.1

// hpaModel plays the HPA an Hvpa deploys: it reads the workload's Resource metrics (Utilization or
// AverageValue targets; other metric types cannot be played from a usage trace and are left out) and writes
// its desired replicas into the Hvpa's scale subresource, as the HPA controller does: ceil(ready pods x
// usage ratio) outside the tolerance, clamped to [minReplicas, maxReplicas], then stabilized by the
// behavior's windows (scale-down 0 s unless the template sets one, as the Hvpa's child HPA gets).
type hpaModel struct {
	min, max             int32
	metrics              []autoscalingv2.MetricSpec
	upWindow, downWindow time.Duration
	desired              int32 // the Hvpa's spec.replicas: what the HPA last wrote (0: not yet)
	history              []hpaRecommendation
}

type hpaRecommendation struct {
	at       time.Time
	replicas int32
}

func newHPA(t hvpav1alpha1.HpaTemplate) *hpaModel {
	h := &hpaModel{min: 1, max: t.MaxReplicas, metrics: t.Metrics}
	if t.MinReplicas != nil {
		h.min = *t.MinReplicas
	}
	if b := t.Behavior; b != nil {
		if b.ScaleUp != nil && b.ScaleUp.StabilizationWindowSeconds != nil {
			h.upWindow = time.Duration(*b.ScaleUp.StabilizationWindowSeconds) * time.Second
		}
		if b.ScaleDown != nil && b.ScaleDown.StabilizationWindowSeconds != nil {
			h.downWindow = time.Duration(*b.ScaleDown.StabilizationWindowSeconds) * time.Second
		}
	}
	return h
}

// observe runs one HPA sync on the workload's demand and returns the HPA input of the decision.
func (h *hpaModel) observe(t time.Time, c int32, containers []scaling.Container, demand map[string]*usage) *scaling.HPAInput {
	if h.desired == 0 {
		h.desired = c
	}
	rec, raw := h.desired, 0.0
	if c > 0 {
		rec = 0
		for _, m := range h.metrics {
			ratio, utilization, ok := h.ratio(m, c, containers, demand)
			if !ok {
				continue
			}
			if utilization {
				raw = max(raw, float64(c)*ratio)
			}
			want := c
			if math.Abs(ratio-1) > hpaTolerance {
				want = int32(math.Ceil(ratio * float64(c)))
			}
			rec = max(rec, want)
		}
		if rec == 0 { // no metric could be read: the HPA keeps the replicas
			rec = h.desired
		}
	}
	rec = min(max(rec, h.min), h.max)
	h.desired = h.stabilize(t, rec)
	return &scaling.HPAInput{Desired: h.desired, Min: h.min, Max: h.max, Raw: raw}
}

// ratio is one metric's usage / target and whether it is a Utilization target.
func (h *hpaModel) ratio(m autoscalingv2.MetricSpec, c int32, containers []scaling.Container, demand map[string]*usage) (float64, bool, bool) {
	if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil {
		return 0, false, false
	}
	var r scaling.Resource
	switch m.Resource.Name {
	case corev1.ResourceCPU:
		r = scaling.CPU
	case corev1.ResourceMemory:
		r = scaling.Memory
	default:
		return 0, false, false
	}
	used, requested, seen := usedAndRequested(r, containers, demand)
	if !seen {
		return 0, false, false
	}
	perPod := used / float64(c)
	switch tg := m.Resource.Target; {
	case tg.Type == autoscalingv2.UtilizationMetricType && tg.AverageUtilization != nil && *tg.AverageUtilization > 0 && requested > 0:
		return perPod / requested * 100 / float64(*tg.AverageUtilization), true, true
	case tg.Type == autoscalingv2.AverageValueMetricType && tg.AverageValue != nil:
		v := tg.AverageValue.AsApproximateFloat64()
		if r == scaling.CPU {
			v *= 1000
		}
		if v > 0 {
			return perPod / v, false, true
		}
	}
	return 0, false, false
}

// usedAndRequested sums resource r's demand and the pods' requests over the containers, and whether any
// demand was seen.
func usedAndRequested(r scaling.Resource, containers []scaling.Container, demand map[string]*usage) (used, requested float64, seen bool) {
	for _, k := range containers {
		if req, ok := k.Requests.Get(r); ok {
			requested += req
		}
		u := demand[k.Name]
		switch {
		case u == nil:
		case r == scaling.CPU && u.hasCPU:
			used, seen = used+u.cpu, true
		case r == scaling.Memory && u.hasMem:
			used, seen = used+u.mem, true
		}
	}
	return used, requested, seen
}

// stabilize applies the behavior's windows as the HPA controller does: the result stays at the previous
// desired replicas unless every recommendation of the scale-up window is above it (then their minimum) or
// every one of the scale-down window is below it (then their maximum).
func (h *hpaModel) stabilize(t time.Time, rec int32) int32 {
	h.history = append(h.history, hpaRecommendation{t, rec})
	keep := max(h.upWindow, h.downWindow)
	i := 0
	for i < len(h.history) && t.Sub(h.history[i].at) > keep {
		i++
	}
	h.history = h.history[i:]
	up, down := rec, rec
	for _, x := range h.history {
		if t.Sub(x.at) <= h.upWindow {
			up = min(up, x.replicas)
		}
		if t.Sub(x.at) <= h.downWindow {
			down = max(down, x.replicas)
		}
	}
	out := h.desired
	if out < up {
		out = up
	}
	if out > down {
		out = down
	}
	return out
}
