package hvpa

import (
	"github.com/prometheus/client_golang/prometheus"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Metrics are the Hvpa controller's metrics (namespace hvpa, subsystem controller).
type Metrics struct {
	Replicas    *prometheus.GaugeVec // current, desired, applied, hpa
	PerPod      *prometheus.GaugeVec // per-pod request intent
	Totals      *prometheus.GaugeVec
	Blocked     *prometheus.CounterVec
	Scalings    *prometheus.CounterVec
	Decisions   *prometheus.CounterVec
	Unsupported *prometheus.GaugeVec
	Interval    *prometheus.GaugeVec // index of the spec scaling interval that holds the applied replicas
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	ns, sub := "hvpa", "controller"
	m := &Metrics{
		Replicas: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "replicas",
			Help: "Replicas of an Hvpa's target: current, desired (what the totals ask for), applied (after gating), hpa (the HPA's desired)."}, []string{"namespace", "hvpa", "kind"}),
		PerPod: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "per_pod_request",
			Help: "Per-pod request intent (status.desired) per container and resource, in cores or bytes."}, []string{"namespace", "hvpa", "container", "resource"}),
		Totals: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "total",
			Help: "Total of a container and resource across replicas that the decision used, in cores or bytes."}, []string{"namespace", "hvpa", "container", "resource", "source"}),
		Blocked: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "blocked_scalings_total",
			Help: "Parts of decisions that were not applied, by reason."}, []string{"namespace", "hvpa", "reason"}),
		Scalings: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "scalings_total",
			Help: "Decisions that changed replicas or per-pod intent."}, []string{"namespace", "hvpa"}),
		Decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "decisions_total",
			Help: "Decisions made."}, []string{"namespace", "hvpa"}),
		Unsupported: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "config_unsupported",
			Help: "1 when an Hvpa does not act because its configuration is unsupported."}, []string{"namespace", "hvpa"}),
		Interval: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "scaling_interval",
			Help: "Index (from 0) of the spec.scalingIntervals entry whose effective interval holds the applied replicas."}, []string{"namespace", "hvpa"}),
	}
	if reg != nil {
		reg.MustRegister(m.Replicas, m.PerPod, m.Totals, m.Blocked, m.Scalings, m.Decisions, m.Unsupported, m.Interval)
	}
	return m
}

func (m *Metrics) observe(h *hvpav1alpha1.Hvpa, d scaling.Decision, st scaling.State) {
	m.Decisions.WithLabelValues(h.Namespace, h.Name).Inc()
	m.Replicas.WithLabelValues(h.Namespace, h.Name, "current").Set(float64(d.CurrentReplicas))
	m.Replicas.WithLabelValues(h.Namespace, h.Name, "desired").Set(float64(d.DesiredReplicas))
	m.Replicas.WithLabelValues(h.Namespace, h.Name, "applied").Set(float64(d.Replicas))
	if st.HPA != nil {
		m.Replicas.WithLabelValues(h.Namespace, h.Name, "hpa").Set(float64(st.HPA.Desired))
	}
	if i, ok := specInterval(d.Intervals, d.Replicas); ok {
		m.Interval.WithLabelValues(h.Namespace, h.Name).Set(float64(i))
	}
	unit := func(r scaling.Resource, x float64) float64 {
		if r == scaling.CPU {
			return x / 1000
		}
		return x
	}
	for _, c := range d.Containers {
		for _, r := range scaling.Resources {
			if v, ok := c.Requests.Get(r); ok {
				m.PerPod.WithLabelValues(h.Namespace, h.Name, c.Name, r.String()).Set(unit(r, v))
			}
		}
	}
	m.Totals.DeletePartialMatch(prometheus.Labels{"namespace": h.Namespace, "hvpa": h.Name}) // sources and containers change
	for _, t := range d.Totals {
		m.Totals.WithLabelValues(h.Namespace, h.Name, t.Container, t.Resource.String(), string(t.Source)).Set(unit(t.Resource, t.Total))
	}
}

// forget deletes every series of one Hvpa (it was deleted).
func (m *Metrics) forget(ns, name string) {
	l := prometheus.Labels{"namespace": ns, "hvpa": name}
	m.Replicas.DeletePartialMatch(l)
	m.PerPod.DeletePartialMatch(l)
	m.Totals.DeletePartialMatch(l)
	m.Blocked.DeletePartialMatch(l)
	m.Scalings.DeletePartialMatch(l)
	m.Decisions.DeletePartialMatch(l)
	m.Unsupported.DeletePartialMatch(l)
	m.Interval.DeletePartialMatch(l)
}

// specInterval is the index of the spec interval whose effective interval holds n replicas: the one with n
// replicas, else the first with more, else the last (as the decision sizes pods).
func specInterval(iv []scaling.EffectiveInterval, n int32) (int, bool) {
	if len(iv) == 0 {
		return 0, false
	}
	for _, e := range iv {
		if e.Replicas >= n {
			return e.Source, true
		}
	}
	return iv[len(iv)-1].Source, true
}
