package version

import "github.com/prometheus/client_golang/prometheus"

// Metrics is the build's metric: hvpa_build_info, always 1, labelled with the build.
type Metrics struct {
	Info prometheus.Gauge
}

// NewMetrics creates hvpa_build_info for the running build and registers it with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	i := Get()
	m := &Metrics{Info: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "hvpa", Subsystem: "build", Name: "info",
		Help:        "Always 1; the labels say which build runs: version, revision (git commit), go_version and platform.",
		ConstLabels: prometheus.Labels{"version": i.Version, "revision": i.Commit, "go_version": i.GoVersion, "platform": i.Platform}})}
	m.Info.Set(1)
	if reg != nil {
		reg.MustRegister(m.Info)
	}
	return m
}
