package hvpa

import (
	"github.com/prometheus/client_golang/prometheus"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Metrics are the Hvpa controller's metrics (namespace hvpa, subsystem controller). Every series is per
// Hvpa (labels namespace and hvpa); with PerObject false the gauges are not set and the counters add up
// over all Hvpas (empty namespace and hvpa), so that a large cluster keeps a bounded number of series.
type Metrics struct {
	Replicas *prometheus.GaugeVec // by state: current, desired, applied, hpa
	// PerPodCPU and PerPodMemory are the per-pod request intent (status.desired).
	PerPodCPU, PerPodMemory *prometheus.GaugeVec
	// WorkloadCPU and WorkloadMemory are the totals across replicas the decision used, by source.
	WorkloadCPU, WorkloadMemory *prometheus.GaugeVec
	Blocked                     *prometheus.CounterVec
	Scalings                    *prometheus.CounterVec
	Decisions                   *prometheus.CounterVec
	Unsupported                 *prometheus.GaugeVec
	Interval                    *prometheus.GaugeVec // index of the spec scaling interval that holds the applied replicas

	// PerObject: series per Hvpa (the default; --metrics-per-object).
	PerObject bool
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "hvpa", Subsystem: "controller", Name: name, Help: help},
			append([]string{"namespace", "hvpa"}, labels...))
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "hvpa", Subsystem: "controller", Name: name, Help: help},
			append([]string{"namespace", "hvpa"}, labels...))
	}
	m := &Metrics{
		PerObject: true,
		Replicas: gauge("replicas", "Replicas of an Hvpa's target by state: current, desired (what the totals ask for), applied (after gating), hpa (the HPA's desired).",
			"state"),
		PerPodCPU:      gauge("per_pod_request_cpu_cores", "Per-pod cpu request intent (status.desired) of a container, in cores.", "container"),
		PerPodMemory:   gauge("per_pod_request_memory_bytes", "Per-pod memory request intent (status.desired) of a container, in bytes.", "container"),
		WorkloadCPU:    gauge("workload_cpu_cores", "Cpu of a container across all replicas that the decision used, in cores, by source.", "container", "source"),
		WorkloadMemory: gauge("workload_memory_bytes", "Memory of a container across all replicas that the decision used, in bytes, by source.", "container", "source"),
		Blocked:        counter("blocked_scalings_total", "Parts of decisions that were not applied, by reason.", "reason"),
		Scalings:       counter("scalings_total", "Decisions that changed replicas or per-pod intent."),
		Decisions:      counter("decisions_total", "Decisions made."),
		Unsupported:    gauge("config_unsupported", "1 when an Hvpa does not act because its configuration is unsupported."),
		Interval:       gauge("scaling_interval", "Index (from 0) of the spec.scalingIntervals entry whose effective interval holds the applied replicas."),
	}
	if reg != nil {
		reg.MustRegister(m.Replicas, m.PerPodCPU, m.PerPodMemory, m.WorkloadCPU, m.WorkloadMemory, m.Blocked, m.Scalings, m.Decisions,
			m.Unsupported, m.Interval)
	}
	return m
}

// object is the label values naming h: its namespace and name, or both empty without per-object series.
func (m *Metrics) object(h *hvpav1alpha1.Hvpa) (string, string) {
	if !m.PerObject {
		return "", ""
	}
	return h.Namespace, h.Name
}

func (m *Metrics) scaled(h *hvpav1alpha1.Hvpa) {
	ns, name := m.object(h)
	m.Scalings.WithLabelValues(ns, name).Inc()
}

func (m *Metrics) blocked(h *hvpav1alpha1.Hvpa, reason hvpav1alpha1.BlockReason) {
	ns, name := m.object(h)
	m.Blocked.WithLabelValues(ns, name, string(reason)).Inc()
}

func (m *Metrics) setUnsupported(h *hvpav1alpha1.Hvpa, unsupported bool) {
	if !m.PerObject {
		return
	}
	v := 0.0
	if unsupported {
		v = 1
	}
	m.Unsupported.WithLabelValues(h.Namespace, h.Name).Set(v)
}

func (m *Metrics) observe(h *hvpav1alpha1.Hvpa, d scaling.Decision, st scaling.State) {
	ns, name := m.object(h)
	m.Decisions.WithLabelValues(ns, name).Inc()
	if !m.PerObject {
		return
	}
	m.Replicas.WithLabelValues(ns, name, "current").Set(float64(d.CurrentReplicas))
	m.Replicas.WithLabelValues(ns, name, "desired").Set(float64(d.DesiredReplicas))
	m.Replicas.WithLabelValues(ns, name, "applied").Set(float64(d.Replicas))
	if st.HPA != nil {
		m.Replicas.WithLabelValues(ns, name, "hpa").Set(float64(st.HPA.Desired))
	}
	if i, ok := specInterval(d.Intervals, d.Replicas); ok {
		m.Interval.WithLabelValues(ns, name).Set(float64(i))
	}
	for _, c := range d.Containers {
		if v, ok := c.Requests.Get(scaling.CPU); ok {
			m.PerPodCPU.WithLabelValues(ns, name, c.Name).Set(v / 1000)
		}
		if v, ok := c.Requests.Get(scaling.Memory); ok {
			m.PerPodMemory.WithLabelValues(ns, name, c.Name).Set(v)
		}
	}
	l := prometheus.Labels{"namespace": ns, "hvpa": name}
	m.WorkloadCPU.DeletePartialMatch(l) // sources and containers change
	m.WorkloadMemory.DeletePartialMatch(l)
	for _, t := range d.Totals {
		if t.Resource == scaling.CPU {
			m.WorkloadCPU.WithLabelValues(ns, name, t.Container, string(t.Source)).Set(t.Total / 1000)
		} else {
			m.WorkloadMemory.WithLabelValues(ns, name, t.Container, string(t.Source)).Set(t.Total)
		}
	}
}

// forget deletes every series of one Hvpa (it was deleted).
func (m *Metrics) forget(ns, name string) {
	l := prometheus.Labels{"namespace": ns, "hvpa": name}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{m.Replicas, m.PerPodCPU, m.PerPodMemory,
		m.WorkloadCPU, m.WorkloadMemory, m.Blocked, m.Scalings, m.Decisions, m.Unsupported, m.Interval} {
		v.DeletePartialMatch(l)
	}
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
