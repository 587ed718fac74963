// Package usage holds the usage sources, the first room of the pipeline, behind small interfaces: current
// usage from the resource metrics API (metrics.k8s.io) and usage history from Prometheus.
package usage

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
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

// Source lists the current usage of every container (one call for all namespaces).
type Source interface {
	ContainerUsage(ctx context.Context) ([]ContainerUsage, error)
}

// MetricsAPI reads usage from the resource metrics API (metrics.k8s.io/v1beta1 PodMetrics).
type MetricsAPI struct {
	Client metricsclient.Interface
	// Namespace limits the list to one namespace; empty lists all.
	Namespace string
}

var _ Source = MetricsAPI{}

// ContainerUsage lists PodMetrics with one call and flattens them to container samples. A list in protobuf
// (as metrics-server serves it) is decoded one PodMetrics at a time, so that ten thousand pods never sit in
// memory as one decoded list; JSON, from servers that do not speak protobuf, is decoded whole.
func (m MetricsAPI) ContainerUsage(ctx context.Context) ([]ContainerUsage, error) {
	rc, ok := m.Client.MetricsV1beta1().RESTClient().(*rest.RESTClient)
	if !ok || rc == nil { // a fake clientset: the typed list
		list, err := m.Client.MetricsV1beta1().PodMetricses(m.Namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing metrics.k8s.io PodMetrics: %w", err)
		}
		var out []ContainerUsage
		for i := range list.Items {
			out = appendUsage(out, &list.Items[i])
		}
		return out, nil
	}
	body, err := rc.Get().Namespace(m.Namespace).Resource("pods").Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("listing metrics.k8s.io PodMetrics: %w", err)
	}
	out, err := decodePodMetricsList(body)
	if err != nil {
		return nil, fmt.Errorf("decoding the metrics.k8s.io PodMetrics list: %w", err)
	}
	return out, nil
}

// protobufMagic starts every object Kubernetes encodes in protobuf (a runtime.Unknown envelope follows).
var protobufMagic = []byte("k8s\x00")

// decodePodMetricsList flattens a PodMetricsList in protobuf (item by item) or JSON to container samples.
func decodePodMetricsList(body []byte) ([]ContainerUsage, error) {
	envelope, ok := bytes.CutPrefix(body, protobufMagic)
	if !ok {
		var list metricsv1beta1.PodMetricsList
		if err := json.Unmarshal(body, &list); err != nil {
			return nil, err
		}
		var out []ContainerUsage
		for i := range list.Items {
			out = appendUsage(out, &list.Items[i])
		}
		return out, nil
	}
	var out []ContainerUsage
	// runtime.Unknown field 2 (raw) holds the PodMetricsList; its field 2 is each item
	err := eachBytesField(envelope, 2, func(list []byte) error {
		return eachBytesField(list, 2, func(item []byte) error {
			var pm metricsv1beta1.PodMetrics
			if err := pm.Unmarshal(item); err != nil {
				return err
			}
			out = appendUsage(out, &pm)
			return nil
		})
	})
	return out, err
}

// eachBytesField calls each with the value of every length-delimited field numbered num of a protobuf
// message, in order, and skips the other fields.
func eachBytesField(msg []byte, num protowire.Number, each func([]byte) error) error {
	for len(msg) > 0 {
		n, typ, l := protowire.ConsumeTag(msg)
		if l < 0 {
			return protowire.ParseError(l)
		}
		msg = msg[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(msg)
			if l < 0 {
				return protowire.ParseError(l)
			}
			if err := each(v); err != nil {
				return err
			}
			msg = msg[l:]
			continue
		}
		l = protowire.ConsumeFieldValue(n, typ, msg)
		if l < 0 {
			return protowire.ParseError(l)
		}
		msg = msg[l:]
	}
	return nil
}

// appendUsage appends one sample per container of a PodMetrics.
func appendUsage(out []ContainerUsage, pm *metricsv1beta1.PodMetrics) []ContainerUsage {
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
	return out
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
	Labels map[string]string
	// Owner is the pod's controller, a ReplicaSet's resolved to its own (a Deployment), when known.
	Owner Owner
	// Step is the span each sample stands for (the CPU samples are means over it).
	Step        time.Duration
	CPU, Memory []HistorySample
}

// Owner is a workload controller in the pod's namespace, e.g. Deployment web.
type Owner struct{ Kind, Name string }

// HistoryProvider returns the usage history to bootstrap the model with.
type HistoryProvider interface {
	History(ctx context.Context) ([]ContainerHistory, error)
}
