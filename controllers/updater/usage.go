package updater

import (
	"context"

	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/hvpa-dev/hvpa/usage"
)

// MetricsUsage reads memory usage from the resource metrics API (metrics.k8s.io PodMetrics, one list per
// namespace), as the recommender reads usage.
type MetricsUsage struct {
	Client metricsclient.Interface
}

var _ UsageReader = MetricsUsage{}

// MemoryUsage lists the namespace's PodMetrics: pod name -> container -> memory working set (bytes).
func (m MetricsUsage) MemoryUsage(ctx context.Context, namespace string) (map[string]map[string]float64, error) {
	samples, err := usage.MetricsAPI{Client: m.Client, Namespace: namespace}.ContainerUsage(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]float64{}
	for _, s := range samples {
		if s.MemoryBytes < 0 {
			continue
		}
		if out[s.Pod] == nil {
			out[s.Pod] = map[string]float64{}
		}
		out[s.Pod][s.Container] = float64(s.MemoryBytes)
	}
	return out, nil
}
