package recommender

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/usage"
)

// gaugeValues reads a cpu and a memory gauge vector as "namespace/kind/object/container/resource" -> value.
func gaugeValues(t *testing.T, cpu, memory *prometheus.GaugeVec) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for resource, g := range map[string]*prometheus.GaugeVec{"cpu": cpu, "memory": memory} {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(g)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			for _, m := range mf.Metric {
				l := map[string]string{}
				for _, p := range m.Label {
					l[p.GetName()] = p.GetValue()
				}
				out[l["namespace"]+"/"+l["kind"]+"/"+l["object"]+"/"+l["container"]+"/"+resource] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

func rec(container, cpu, mem string) *vpav1.RecommendedPodResources {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return &vpav1.RecommendedPodResources{ContainerRecommendations: []vpav1.RecommendedContainerResources{{ContainerName: container, Target: l}}}
}

func TestTargetMetric(t *testing.T) {
	m := NewMetrics(nil)
	vpa := func(name string, r *vpav1.RecommendedPodResources) *served {
		return &served{vpa: &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}, rec: r}
	}
	m.setTargets([]*served{vpa("web", rec("app", "250m", "1Gi")), vpa("none", nil)},
		map[types.NamespacedName]recommender.HvpaRecommendation{{Namespace: "ns", Name: "h"}: {Pods: 2, Load: []recommender.ContainerLoad{{Container: "main", Target: recommender.Amounts{CPUMilli: 4000, MemoryBytes: -1}}}}})
	want := map[string]float64{
		"ns/VerticalPodAutoscaler/web/app/cpu":    0.25,
		"ns/VerticalPodAutoscaler/web/app/memory": 1 << 30,
		"ns/Hvpa/h/main/cpu":                      2,
	}
	if diff := cmp.Diff(want, gaugeValues(t, m.TargetCPU, m.TargetMemory)); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	// the next run: web lost its recommendation, the Hvpa is gone
	m.setTargets([]*served{vpa("web", nil), vpa("none", rec("app", "100m", ""))}, nil)
	want = map[string]float64{"ns/VerticalPodAutoscaler/none/app/cpu": 0.1}
	if diff := cmp.Diff(want, gaugeValues(t, m.TargetCPU, m.TargetMemory)); diff != "" {
		t.Errorf("targets after the next run (-want +got):\n%s", diff)
	}
}

func TestUsageMetric(t *testing.T) {
	m := NewMetrics(nil)
	web := []objectRef{{vpav1.KindVerticalPodAutoscaler, "web"}}
	both := []objectRef{{vpav1.KindVerticalPodAutoscaler, "web"}, {hvpav1alpha1.KindHvpa, "h"}}
	sums := usageSums{}
	sums.add("ns", web, usage.ContainerUsage{Container: "app", CPUMilli: 100, MemoryBytes: 300})
	sums.add("ns", both, usage.ContainerUsage{Container: "app", CPUMilli: 300, MemoryBytes: -1})   // no memory sample
	sums.add("ns", nil, usage.ContainerUsage{Container: "app", CPUMilli: 5000, MemoryBytes: 5000}) // selected by none
	m.setUsage(sums)
	want := map[string]float64{
		"ns/VerticalPodAutoscaler/web/app/cpu":    0.2,
		"ns/VerticalPodAutoscaler/web/app/memory": 300,
		"ns/Hvpa/h/app/cpu":                       0.3,
	}
	if diff := cmp.Diff(want, gaugeValues(t, m.UsageCPU, m.UsageMemory)); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
	m.setUsage(usageSums{}) // a failed read: no usage known
	if diff := cmp.Diff(map[string]float64{}, gaugeValues(t, m.UsageCPU, m.UsageMemory)); diff != "" {
		t.Errorf("usage after an empty read (-want +got):\n%s", diff)
	}
}

// Without per-object series the recommender sets none, and drops the ones it had set.
func TestPerObjectMetricsOff(t *testing.T) {
	m := NewMetrics(nil)
	sums := usageSums{}
	sums.add("ns", []objectRef{{vpav1.KindVerticalPodAutoscaler, "web"}}, usage.ContainerUsage{Container: "app", CPUMilli: 100, MemoryBytes: 300})
	m.setUsage(sums)
	if n := len(gaugeValues(t, m.UsageCPU, m.UsageMemory)); n != 2 {
		t.Fatalf("per-object on: %d usage series, want 2", n)
	}
	m.PerObject = false
	m.setUsage(sums)
	m.setTargets([]*served{{vpa: &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}, rec: rec("app", "1", "1Gi")}}, nil)
	if got := gaugeValues(t, m.UsageCPU, m.UsageMemory); len(got) != 0 {
		t.Errorf("per-object off: usage series %v, want none", got)
	}
	if got := gaugeValues(t, m.TargetCPU, m.TargetMemory); len(got) != 0 {
		t.Errorf("per-object off: target series %v, want none", got)
	}
}
