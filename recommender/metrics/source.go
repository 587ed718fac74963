// Package metrics holds the recommender's usage sources behind small interfaces: current usage from the
// resource metrics API (metrics.k8s.io) and usage history from Prometheus.
package metrics

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
)

// ContainerUsage is one usage sample of one container of one pod.
type ContainerUsage struct {
	Namespace, Pod, Container string
	// Time is the start of the sample window; Window its length.
	Time   time.Time
	Window time.Duration
	// CPUMilli is the CPU usage averaged over the window (millicores); MemoryBytes the working set; -1 none.
	CPUMilli, MemoryBytes int64
}

// UsageSource lists the current usage of every container (one call for all namespaces).
type UsageSource interface {
	ContainerUsage(ctx context.Context) ([]ContainerUsage, error)
}

// MetricsAPI reads usage from the resource metrics API (metrics.k8s.io/v1beta1 PodMetrics).
type MetricsAPI struct {
	Client metricsclient.Interface
	// Namespace limits the list to one namespace; empty lists all.
	Namespace string
}

var _ UsageSource = MetricsAPI{}

// ContainerUsage lists PodMetrics with one call and flattens them to container samples.
func (m MetricsAPI) ContainerUsage(ctx context.Context) ([]ContainerUsage, error) {
	list, err := m.Client.MetricsV1beta1().PodMetricses(m.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing metrics.k8s.io PodMetrics: %w", err)
	}
	out := make([]ContainerUsage, 0, len(list.Items)*2)
	for _, pm := range list.Items {
		for _, c := range pm.Containers {
			u := ContainerUsage{Namespace: pm.Namespace, Pod: pm.Name, Container: c.Name, Time: pm.Timestamp.Time,
				Window: pm.Window.Duration, CPUMilli: -1, MemoryBytes: -1}
			if q, ok := c.Usage["cpu"]; ok {
				u.CPUMilli = q.MilliValue()
			}
			if q, ok := c.Usage["memory"]; ok {
				u.MemoryBytes = q.Value()
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// HistorySample is one point of a history series: CPU in cores, memory in bytes.
type HistorySample struct {
	Time  time.Time
	Value float64
}

// ContainerHistory is the usage history of one container of one pod.
type ContainerHistory struct {
	Namespace, Pod, Container string
	// Labels of the pod (for aggregation), when the history provider knows them.
	Labels      map[string]string
	CPU, Memory []HistorySample
}

// HistoryProvider returns the usage history to bootstrap the model with.
type HistoryProvider interface {
	History(ctx context.Context) ([]ContainerHistory, error)
}
