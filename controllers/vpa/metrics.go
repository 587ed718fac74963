package vpa

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/recommender/metrics"
)

// Metrics are the recommender's Prometheus metrics (namespace hvpa, subsystem recommender).
type Metrics struct {
	Objects               *prometheus.GaugeVec
	StepDuration          *prometheus.HistogramVec
	Aggregates            prometheus.Gauge
	MetricsAPIErrors      prometheus.Counter
	RecommendationLatency prometheus.Histogram
	Quality               *prometheus.HistogramVec
	OOMs                  prometheus.Counter
	CheckpointsWritten    prometheus.Counter
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Objects: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "hvpa", Subsystem: "recommender", Name: "objects",
			Help: "VerticalPodAutoscalers served by this recommender, by update mode and whether their configuration is supported."}, []string{"mode", "supported"}),
		StepDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "hvpa", Subsystem: "recommender", Name: "loop_step_duration_seconds",
			Help: "Duration of the steps of one recommender run.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}, []string{"step"}),
		Aggregates: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "hvpa", Subsystem: "recommender", Name: "aggregates",
			Help: "Container aggregates (namespace, container name, pod labels) the model tracks."}),
		MetricsAPIErrors: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "hvpa", Subsystem: "recommender", Name: "metrics_api_errors_total",
			Help: "Failed reads of the resource metrics API (metrics.k8s.io)."}),
		RecommendationLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: "hvpa", Subsystem: "recommender", Name: "recommendation_latency_seconds",
			Help: "Time from an object's creation to its first recommendation.", Buckets: prometheus.ExponentialBuckets(1, 2, 14)}),
		Quality: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "hvpa", Subsystem: "recommender", Name: "usage_to_target_ratio",
			Help:    "Usage divided by the recommended target in force, per usage sample (above 1: usage exceeded the target).",
			Buckets: []float64{0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.1, 1.25, 1.5, 2, 4}}, []string{"resource"}),
		OOMs: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "hvpa", Subsystem: "recommender", Name: "oom_events_total",
			Help: "OOM kills and memory-pressure evictions recorded into the model."}),
		CheckpointsWritten: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "hvpa", Subsystem: "recommender", Name: "checkpoints_written_total",
			Help: "VerticalPodAutoscalerCheckpoint objects written."}),
	}
	if reg != nil {
		reg.MustRegister(m.Objects, m.StepDuration, m.Aggregates, m.MetricsAPIErrors, m.RecommendationLatency, m.Quality, m.OOMs, m.CheckpointsWritten)
	}
	return m
}

func (m *Metrics) observeStep(step string, d time.Duration) {
	m.StepDuration.WithLabelValues(step).Observe(d.Seconds())
}

func (m *Metrics) setObjects(list []*served) {
	m.Objects.Reset()
	for _, s := range list {
		mode := string(vpav1.UpdateModeAuto)
		if p := s.vpa.Spec.UpdatePolicy; p != nil && p.UpdateMode != nil {
			mode = string(*p.UpdateMode)
		}
		supported := "true"
		if s.err != nil {
			supported = "false"
		}
		m.Objects.WithLabelValues(mode, supported).Inc()
	}
}

// observeQuality compares a usage sample with the target in force for its container, when one is known.
func (m *Metrics) observeQuality(r *Recommender, cs *containerState, u metrics.ContainerUsage) {
	t, ok := r.lastTarget[cs.agg]
	if !ok {
		return
	}
	if u.CPUMilli >= 0 && t.CPUMilli > 0 {
		m.Quality.WithLabelValues("cpu").Observe(float64(u.CPUMilli) / float64(t.CPUMilli))
	}
	if u.MemoryBytes >= 0 && t.MemoryBytes > 0 {
		m.Quality.WithLabelValues("memory").Observe(float64(u.MemoryBytes) / float64(t.MemoryBytes))
	}
}
