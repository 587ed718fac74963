package usage

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

// podMetricsList is two pods: one with two containers (one reporting only CPU), one with one container.
func podMetricsList(at time.Time) *metricsv1beta1.PodMetricsList {
	ts := metav1.NewTime(at)
	return &metricsv1beta1.PodMetricsList{
		TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: "metrics.k8s.io/v1beta1"},
		ListMeta: metav1.ListMeta{ResourceVersion: "7"},
		Items: []metricsv1beta1.PodMetrics{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web-1", Labels: map[string]string{"app": "web"}}, Timestamp: ts,
				Window: metav1.Duration{Duration: 30 * time.Second}, Containers: []metricsv1beta1.ContainerMetrics{
					{Name: "app", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("300Mi")}},
					{Name: "sidecar", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "db-0"}, Timestamp: ts, Window: metav1.Duration{Duration: time.Minute},
				Containers: []metricsv1beta1.ContainerMetrics{
					{Name: "db", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("2Gi")}},
				}},
		},
	}
}

func TestDecodePodMetricsList(t *testing.T) {
	at := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	want := []ContainerUsage{
		{Namespace: "a", Pod: "web-1", Container: "app", Time: at, Window: 30 * time.Second, CPUMilli: 250, MemoryBytes: 300 << 20},
		{Namespace: "a", Pod: "web-1", Container: "sidecar", Time: at, Window: 30 * time.Second, CPUMilli: 1000, MemoryBytes: -1},
		{Namespace: "b", Pod: "db-0", Container: "db", Time: at, Window: time.Minute, CPUMilli: 1500, MemoryBytes: 2 << 30},
	}
	s := runtime.NewScheme()
	if err := metricsv1beta1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(s, s).Encode(podMetricsList(at), &pb); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(podMetricsList(at))
	if err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"protobuf": pb.Bytes(), "json": js} {
		got, err := decodePodMetricsList(body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: samples differ (-want +got):\n%s", name, d)
		}
	}
	// a body cut short is an error, never a partial list taken as the whole
	for _, n := range []int{len(pb.Bytes()) - 3, len(pb.Bytes()) / 2} {
		if got, err := decodePodMetricsList(pb.Bytes()[:n]); err == nil {
			t.Errorf("protobuf cut to %d of %d bytes: want an error, got %d samples", n, pb.Len(), len(got))
		}
	}
	if _, err := decodePodMetricsList([]byte("<html>proxy error</html>")); err == nil {
		t.Error("a body that is neither protobuf nor JSON: want an error")
	}
}

// BenchmarkDecodePodMetricsList decodes 10,000 pods' metrics in protobuf, item by item.
func BenchmarkDecodePodMetricsList(b *testing.B) {
	list := &metricsv1beta1.PodMetricsList{TypeMeta: metav1.TypeMeta{Kind: "PodMetricsList", APIVersion: "metrics.k8s.io/v1beta1"}}
	one := podMetricsList(time.Now()).Items[0]
	for i := range 10000 {
		pm := *one.DeepCopy()
		pm.Name = "web-" + string(rune('a'+i%26)) + time.Duration(i).String()
		list.Items = append(list.Items, pm)
	}
	s := runtime.NewScheme()
	if err := metricsv1beta1.AddToScheme(s); err != nil {
		b.Fatal(err)
	}
	var pb bytes.Buffer
	if err := protobuf.NewSerializer(s, s).Encode(list, &pb); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if out, err := decodePodMetricsList(pb.Bytes()); err != nil || len(out) != 20000 {
			b.Fatalf("%d samples, %v", len(out), err)
		}
	}
}
