// Package playedkubelet plays, in tests only, the parts of a cluster that cannot run here: the kubelet
// (Node objects, pods bound and marked Running, OOM kills written into pod status) and the resource metrics
// pipeline (container usage served as the metrics.k8s.io API through a real APIService, so that the code
// under test uses its real client path). Nothing in product code imports it.
package playedkubelet

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Usage is the played usage of one container.
type Usage struct {
	CPUMilli, MemoryBytes int64
}

// MetricsServer serves the metrics.k8s.io/v1beta1 API (PodMetrics) from played usage over HTTPS. Every read
// is a fresh sample stamped with the current time.
type MetricsServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	usage map[string]map[string]Usage // "ns/pod" -> container -> usage
	reads int
	Now   func() time.Time
}

// StartMetricsServer starts the server on a loopback port.
func StartMetricsServer() *MetricsServer {
	m := &MetricsServer{usage: map[string]map[string]Usage{}, Now: time.Now}
	m.srv = httptest.NewUnstartedServer(http.HandlerFunc(m.serve))
	m.srv.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	m.srv.StartTLS()
	return m
}

// Close stops the server.
func (m *MetricsServer) Close() { m.srv.Close() }

// Port is the server's loopback port.
func (m *MetricsServer) Port() int {
	_, p, _ := net.SplitHostPort(m.srv.Listener.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}

// Set plays the usage of one container of one pod.
func (m *MetricsServer) Set(ns, pod, container string, u Usage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := ns + "/" + pod
	if m.usage[k] == nil {
		m.usage[k] = map[string]Usage{}
	}
	m.usage[k][container] = u
}

// Clear removes every played usage.
func (m *MetricsServer) Clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.usage = map[string]map[string]Usage{}
}

// Reads counts the PodMetrics list calls served.
func (m *MetricsServer) Reads() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.reads
}

func (m *MetricsServer) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	// a failed write means the client went away: a fake metrics API has no one to tell (hence the _ = below)
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "/apis/metrics.k8s.io/v1beta1":
		_ = json.NewEncoder(w).Encode(metav1.APIResourceList{
			TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: "metrics.k8s.io/v1beta1",
			APIResources: []metav1.APIResource{
				{Name: "pods", Kind: "PodMetrics", Namespaced: true, Verbs: []string{"get", "list"}},
				{Name: "nodes", Kind: "NodeMetrics", Namespaced: false, Verbs: []string{"get", "list"}},
			},
		})
	case path == "/apis/metrics.k8s.io/v1beta1/pods" || strings.HasPrefix(path, "/apis/metrics.k8s.io/v1beta1/namespaces/"):
		ns := ""
		if rest, ok := strings.CutPrefix(path, "/apis/metrics.k8s.io/v1beta1/namespaces/"); ok {
			ns = strings.SplitN(rest, "/", 2)[0]
		}
		list := m.list(ns)
		if strings.Contains(r.Header.Get("Accept"), runtime.ContentTypeProtobuf) { // as metrics-server serves it
			w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
			_ = protobufMetrics.Encode(&list, w)
			return
		}
		_ = json.NewEncoder(w).Encode(list)
	case path == "/apis/metrics.k8s.io/v1beta1/nodes":
		_ = json.NewEncoder(w).Encode(metricsv1beta1.NodeMetricsList{TypeMeta: metav1.TypeMeta{Kind: "NodeMetricsList", APIVersion: "metrics.k8s.io/v1beta1"}})
	default:
		http.NotFound(w, r)
	}
}

func (m *MetricsServer) list(ns string) metricsv1beta1.PodMetricsList {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reads++
	now := metav1.NewTime(m.Now().Truncate(time.Second))
	out := metricsv1beta1.PodMetricsList{TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: "metrics.k8s.io/v1beta1"}}
	for k, containers := range m.usage {
		parts := strings.SplitN(k, "/", 2)
		if ns != "" && parts[0] != ns {
			continue
		}
		pm := metricsv1beta1.PodMetrics{ObjectMeta: metav1.ObjectMeta{Namespace: parts[0], Name: parts[1]}, Timestamp: now, Window: metav1.Duration{Duration: time.Minute}}
		for name, u := range containers {
			pm.Containers = append(pm.Containers, metricsv1beta1.ContainerMetrics{Name: name, Usage: corev1.ResourceList{
				corev1.ResourceCPU:    *resource.NewMilliQuantity(u.CPUMilli, resource.DecimalSI),
				corev1.ResourceMemory: *resource.NewQuantity(u.MemoryBytes, resource.BinarySI),
			}})
		}
		out.Items = append(out.Items, pm)
	}
	return out
}

// protobufMetrics encodes metrics.k8s.io lists in Kubernetes' protobuf envelope.
var protobufMetrics = func() runtime.Encoder {
	s := runtime.NewScheme()
	if err := metricsv1beta1.AddToScheme(s); err != nil {
		panic(err)
	}
	return protobuf.NewSerializer(s, s)
}()

// Namespace holds the played metrics Service.
const Namespace = "played-metrics"

// Start plays a one-node cluster for tests and the demo: a metrics server registered as metrics.k8s.io and
// the kubelet of a Node called node. Close the metrics server when done.
func Start(ctx context.Context, c client.Client, node string) (*MetricsServer, *Kubelet, error) {
	ms := StartMetricsServer()
	if err := ms.Register(ctx, c); err != nil {
		ms.Close()
		return nil, nil, err
	}
	k, err := New(ctx, c, node)
	if err != nil {
		ms.Close()
		return nil, nil, err
	}
	return ms, k, nil
}

// Register makes the API server serve metrics.k8s.io from this server: a Service of type ExternalName
// pointing at localhost (Endpoints refuse loopback addresses, and there is no kube-proxy) in Namespace, and an
// APIService for v1beta1.metrics.k8s.io. It waits until the API answers.
func (m *MetricsServer) Register(ctx context.Context, c client.Client) error {
	namespace := Namespace
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", namespace, err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "played-metrics-server"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Name: "https", Port: int32(m.Port())}}}}
	if err := c.Create(ctx, svc); err != nil {
		return fmt.Errorf("creating the metrics Service: %w", err)
	}
	api := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec": map[string]any{
			"group": "metrics.k8s.io", "version": "v1beta1", "insecureSkipTLSVerify": true,
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
			"service": map[string]any{"namespace": namespace, "name": svc.Name, "port": int64(m.Port())},
		},
	}}
	if err := c.Create(ctx, api); err != nil {
		return fmt.Errorf("creating the APIService: %w", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var l metricsv1beta1.PodMetricsList
		err := c.List(ctx, &l)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("metrics.k8s.io did not become available through the API server: %w", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
