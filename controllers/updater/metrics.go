package updater

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the updater's metrics (namespace hvpa, subsystem updater).
type Metrics struct {
	Candidates  *prometheus.GaugeVec
	Resizes     *prometheus.CounterVec
	Evictions   *prometheus.CounterVec
	Skips       *prometheus.CounterVec
	Convergence *prometheus.HistogramVec
	Loop        prometheus.Histogram
	// LoopRecordsDropped counts loop-detection records dropped because the ConfigMap could not hold them.
	LoopRecordsDropped prometheus.Counter
}

// NewMetrics creates the metrics and registers them with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	ns, sub := "hvpa", "updater"
	m := &Metrics{
		Candidates: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "candidates",
			Help: "Pods that need an update, by the kind of the object that sizes them, in the last loop."}, []string{"kind"}),
		Resizes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "resizes_total",
			Help: "In-place resizes by outcome: requested (the API accepted the resize), refused (the API refused it), loop (not attempted: loop detection), rate_limited (not attempted this loop: --eviction-rate-limit)."}, []string{"outcome"}),
		Evictions: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "evictions_total",
			Help: "Evictions by outcome: evicted, fallback (evicted after a failed resize), blocked_by_pdb, error, rate_limited, no_admission (the webhook Lease is stale), loop, replacement_refused (a dry run of the replacement was refused), replacement_unchecked (the updater may not send that dry run: no create pods), replacement_unsized (that dry run was admitted without a sizing webhook matching the replacement)."}, []string{"outcome"}),
		Skips: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "skipped_updates_total",
			Help: "Updates not made, by reason."}, []string{"reason"}),
		Convergence: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "convergence_seconds",
			Help:    "Time from a change of an object's targets until every live pod matched them.",
			Buckets: prometheus.ExponentialBuckets(1, 2.5, 12)}, []string{"kind"}),
		Loop: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "loop_duration_seconds",
			Help: "Duration of one update loop.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
		LoopRecordsDropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "loop_records_dropped_total",
			Help: "Loop-detection records dropped, the oldest first, because the loop-records ConfigMap (--update-loop-records) could not hold them within 512 KiB; loop detection forgets them."}),
	}
	if reg != nil {
		reg.MustRegister(m.Candidates, m.Resizes, m.Evictions, m.Skips, m.Convergence, m.Loop, m.LoopRecordsDropped)
	}
	return m
}
