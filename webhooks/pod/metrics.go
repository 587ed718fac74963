package pod

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of a pod admission (the outcome label).
const (
	OutcomeSized         = "sized"           // the pod's resources were set
	OutcomeUnchanged     = "unchanged"       // a controlling object matched and the pod already had its values
	OutcomeUntargeted    = "untargeted"      // no VPA or Hvpa controls the pod
	OutcomeOff           = "off"             // the controlling VPA's updateMode is Off
	OutcomeNoRecommend   = "no_intent"       // the controlling object has no recommendation / intent yet
	OutcomeInvalidPolicy = "invalid_policy"  // the controlling object's policy cannot be read
	OutcomeError         = "error"           // reading the cluster failed; the pod is admitted as it is
	OutcomeNotApplicable = "not_applicable"  // not a pod CREATE
	OutcomePodResources  = "pod_resources"   // the pod sets pod-level resources (spec.resources): left as it is
	OutcomeAllowed       = "allowed"         // object validation: allowed
	OutcomeWarned        = "allowed_warning" // object validation: allowed with warnings
	OutcomeRejected      = "rejected"        // object validation: rejected
	resourcePods         = "pods"
)

// Metrics are the webhook's metrics (namespace hvpa, subsystem webhook).
type Metrics struct {
	Duration   *prometheus.HistogramVec
	Admissions *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "hvpa", Subsystem: "webhook", Name: "admission_duration_seconds",
			Help:    "Time to answer an admission request, by resource and outcome (inside the webhook server; the API server adds the network).",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}},
			[]string{"resource", "outcome"}),
		Admissions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "hvpa", Subsystem: "webhook", Name: "admissions_total",
			Help: "Admission requests answered, by resource and outcome."}, []string{"resource", "outcome"}),
	}
	if reg != nil {
		reg.MustRegister(m.Duration, m.Admissions)
	}
	return m
}

// Observe records one admission.
func (m *Metrics) Observe(resource, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.Duration.WithLabelValues(resource, outcome).Observe(d.Seconds())
	m.Admissions.WithLabelValues(resource, outcome).Inc()
}
