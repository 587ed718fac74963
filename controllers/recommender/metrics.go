package recommender

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/usage"
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
	// HistorySource is 1 for where the usage history at start came from.
	HistorySource *prometheus.GaugeVec
	// AdaptiveWinner is 1 for the candidate an adaptive VPA's container publishes, per resource.
	AdaptiveWinner *prometheus.GaugeVec
	// TargetCPU, TargetMemory, UsageCPU and UsageMemory are per object (VerticalPodAutoscaler or Hvpa) and
	// container: the target recommended per pod, and the mean usage per pod of the object's running pods from
	// the latest read.
	TargetCPU, TargetMemory, UsageCPU, UsageMemory *prometheus.GaugeVec

	// PerObject: the per-object series above are set (the default; --metrics-per-object).
	PerObject bool

	targetSeries, usageSeries map[objectSeries]bool // set by the last run: the ones a run no longer sets go
	// qualityCPU and qualityMemory are Quality's two series, looked up at the first sample of each (it is
	// observed per usage sample, by the run alone)
	qualityCPU, qualityMemory prometheus.Observer
}

// perObject is a per-object gauge of the recommender: labels namespace, kind, object, container.
func perObject(name, help string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "hvpa", Subsystem: "recommender", Name: name, Help: help},
		[]string{"namespace", "kind", "object", "container"})
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		PerObject: true,
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
		HistorySource: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "hvpa", Subsystem: "recommender", Name: "history_source_info",
			Help: "1 for where the usage history at start came from: checkpoint, prometheus, checkpoint-fallback (--storage=prometheus, but Prometheus could not be read: the log says why) or none."},
			[]string{"source"}),
		AdaptiveWinner: newWinnerMetric(),
		TargetCPU: perObject("target_cpu_cores",
			"Recommended per-pod cpu target of a container of a VerticalPodAutoscaler or an Hvpa (kind), in cores; for an Hvpa, the target of its workload's load divided by its running pods."),
		TargetMemory: perObject("target_memory_bytes",
			"Recommended per-pod memory target of a container of a VerticalPodAutoscaler or an Hvpa (kind), in bytes; for an Hvpa, the target of its workload's load divided by its running pods."),
		UsageCPU: perObject("usage_cpu_cores",
			"Mean cpu usage per pod of a container over the running pods a VerticalPodAutoscaler or an Hvpa (kind) selects, from the latest metrics API read, in cores."),
		UsageMemory: perObject("usage_memory_bytes",
			"Mean memory usage per pod of a container over the running pods a VerticalPodAutoscaler or an Hvpa (kind) selects, from the latest metrics API read, in bytes."),
	}
	if reg != nil {
		reg.MustRegister(m.Objects, m.StepDuration, m.Aggregates, m.MetricsAPIErrors, m.RecommendationLatency, m.Quality, m.OOMs, m.CheckpointsWritten,
			m.HistorySource, m.AdaptiveWinner, m.TargetCPU, m.TargetMemory, m.UsageCPU, m.UsageMemory)
	}
	return m
}

func (m *Metrics) setHistorySource(source string) {
	m.HistorySource.Reset()
	m.HistorySource.WithLabelValues(source).Set(1)
}

func (m *Metrics) observeStep(step string, d time.Duration) {
	m.StepDuration.WithLabelValues(step).Observe(d.Seconds())
}

func (m *Metrics) setObjects(list []*served) {
	m.Objects.Reset()
	for _, s := range list {
		mode := string(s.vpa.EffectiveUpdateMode())
		supported := "true"
		if s.err != nil {
			supported = "false"
		}
		m.Objects.WithLabelValues(mode, supported).Inc()
	}
}

// observeQuality compares a usage sample with the target in force for its container, when one is known.
func (m *Metrics) observeQuality(r *Recommender, cs *recommender.PodContainer, u usage.ContainerUsage) {
	t, ok := r.lastTarget[cs.Aggregate]
	if !ok {
		return
	}
	if u.CPUMilli >= 0 && t.CPUMilli > 0 {
		if m.qualityCPU == nil {
			m.qualityCPU = m.Quality.WithLabelValues("cpu")
		}
		m.qualityCPU.Observe(float64(u.CPUMilli) / float64(t.CPUMilli))
	}
	if u.MemoryBytes >= 0 && t.MemoryBytes > 0 {
		if m.qualityMemory == nil {
			m.qualityMemory = m.Quality.WithLabelValues("memory")
		}
		m.qualityMemory.Observe(float64(u.MemoryBytes) / float64(t.MemoryBytes))
	}
}

// objectRef names a VerticalPodAutoscaler or an Hvpa in the namespace at hand.
type objectRef struct{ kind, name string }

// objectSeries is one series of the target or usage gauges: resource picks the cpu or the memory one.
type objectSeries struct{ namespace, kind, object, container, resource string }

// publish sets cpu and memory to values and deletes the series of prev (the previous call's) that values
// lacks. Without per-object series it sets none.
func (m *Metrics) publish(cpu, memory *prometheus.GaugeVec, prev map[objectSeries]bool, values map[objectSeries]float64) map[objectSeries]bool {
	if !m.PerObject {
		values = nil
	}
	gauge := func(s objectSeries) *prometheus.GaugeVec {
		if s.resource == "cpu" {
			return cpu
		}
		return memory
	}
	for s := range prev {
		if _, ok := values[s]; !ok {
			gauge(s).DeleteLabelValues(s.namespace, s.kind, s.object, s.container)
		}
	}
	next := make(map[objectSeries]bool, len(values))
	for s, v := range values {
		gauge(s).WithLabelValues(s.namespace, s.kind, s.object, s.container).Set(v)
		next[s] = true
	}
	return next
}

// setTargets publishes the targets of this run's recommendations: the VPAs' and the Hvpas' embedded ones.
func (m *Metrics) setTargets(list []*served, hvpas map[types.NamespacedName]recommender.HvpaRecommendation) {
	values := map[objectSeries]float64{}
	add := func(ns string, o objectRef, rec *vpav1.RecommendedPodResources) {
		if rec == nil {
			return
		}
		for _, c := range rec.ContainerRecommendations {
			if q, ok := c.Target[corev1.ResourceCPU]; ok {
				values[objectSeries{ns, o.kind, o.name, c.ContainerName, "cpu"}] = float64(q.MilliValue()) / 1000
			}
			if q, ok := c.Target[corev1.ResourceMemory]; ok {
				values[objectSeries{ns, o.kind, o.name, c.ContainerName, "memory"}] = float64(q.Value())
			}
		}
	}
	for _, s := range list {
		add(s.vpa.Namespace, objectRef{vpav1.KindVerticalPodAutoscaler, s.vpa.Name}, s.rec)
	}
	for k, r := range hvpas { // an Hvpa's target per pod: its workload load's target shared by the running pods
		n := float64(max(r.Pods, 1))
		for _, l := range r.Load {
			if l.Target.CPUMilli >= 0 {
				values[objectSeries{k.Namespace, hvpav1alpha1.KindHvpa, k.Name, l.Container, "cpu"}] = float64(l.Target.CPUMilli) / 1000 / n
			}
			if l.Target.MemoryBytes >= 0 {
				values[objectSeries{k.Namespace, hvpav1alpha1.KindHvpa, k.Name, l.Container, "memory"}] = float64(l.Target.MemoryBytes) / n
			}
		}
	}
	m.targetSeries = m.publish(m.TargetCPU, m.TargetMemory, m.targetSeries, values)
}

// usageSums adds up one read of container usage per object and container (an objectSeries without its
// resource: one map entry holds both).
type usageSums map[objectSeries]*usageSum

// usageSum is one object's container usage of one read: the sums and the counts of the cpu and memory samples.
type usageSum struct{ cpu, cpuSamples, memory, memorySamples float64 }

// add counts a usage sample of a pod towards the objects that select the pod (owners, in namespace ns).
func (u usageSums) add(ns string, owners []objectRef, s usage.ContainerUsage) {
	for _, o := range owners {
		k := objectSeries{ns, o.kind, o.name, s.Container, ""}
		a := u[k]
		if a == nil {
			a = &usageSum{}
			u[k] = a
		}
		if s.CPUMilli >= 0 {
			a.cpu += float64(s.CPUMilli) / 1000
			a.cpuSamples++
		}
		if s.MemoryBytes >= 0 {
			a.memory += float64(s.MemoryBytes)
			a.memorySamples++
		}
	}
}

// setUsage publishes the mean per pod of one read (a failed read publishes nothing: the series go).
func (m *Metrics) setUsage(u usageSums) {
	values := make(map[objectSeries]float64, 2*len(u))
	for k, a := range u {
		if a.cpuSamples > 0 {
			k.resource = "cpu"
			values[k] = a.cpu / a.cpuSamples
		}
		if a.memorySamples > 0 {
			k.resource = "memory"
			values[k] = a.memory / a.memorySamples
		}
	}
	m.usageSeries = m.publish(m.UsageCPU, m.UsageMemory, m.usageSeries, values)
}
