package podstore

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func requests(cpu, memory string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}
}

func oomKilled(at time.Time) corev1.ContainerState {
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", FinishedAt: metav1.NewTime(at)}}
}

// TestFrom: a Pod keeps what the recommender reads: the requests in force (status after an in-place resize,
// per resource), OOM kills of the current and last state, a kubelet eviction's message and time.
func TestFrom(t *testing.T) {
	t0 := time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC)
	meta := metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u1", Labels: map[string]string{"app": "a"}}
	tests := []struct {
		name string
		pod  corev1.Pod
		want Pod
	}{{
		name: "spec requests of each container, in order",
		pod: corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "app", Resources: requests("250m", "128Mi")}, {Name: "side"}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		want: Pod{Namespace: "ns", Name: "p", UID: "u1", Labels: map[string]string{"app": "a"}, Phase: corev1.PodRunning,
			Containers: []Container{{Name: "app", CPUMilli: 250, MemoryBytes: 128 << 20}, {Name: "side"}}},
	}, {
		name: "resized in place: the status's requests are in force, resource by resource",
		pod: corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: requests("250m", "128Mi")}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
				Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}},
		want: Pod{Namespace: "ns", Name: "p", UID: "u1", Labels: map[string]string{"app": "a"}, Phase: corev1.PodRunning,
			Containers: []Container{{Name: "app", CPUMilli: 1000, MemoryBytes: 128 << 20}}},
	}, {
		name: "OOM kills of the current and the last state; other terminations are not kills",
		pod: corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: requests("1", "1Gi")}, {Name: "b"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{
				{Name: "b", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error"}}},
				{Name: "app", State: oomKilled(t0.Add(time.Minute)), LastTerminationState: oomKilled(t0)}}}},
		want: Pod{Namespace: "ns", Name: "p", UID: "u1", Labels: map[string]string{"app": "a"}, Phase: corev1.PodRunning,
			Containers: []Container{{Name: "app", CPUMilli: 1000, MemoryBytes: 1 << 30, OOMKills: []time.Time{t0.Add(time.Minute), t0}}, {Name: "b"}}},
	}, {
		name: "a sidecar (restartable init container) after the containers, with its OOM kills; an init container is not kept",
		pod: corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: requests("1", "1Gi")}},
			InitContainers: []corev1.Container{{Name: "migrate", Resources: requests("2", "2Gi")},
				{Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: requests("100m", "64Mi")}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "migrate", State: oomKilled(t0)}, {Name: "proxy", LastTerminationState: oomKilled(t0)}}}},
		want: Pod{Namespace: "ns", Name: "p", UID: "u1", Labels: map[string]string{"app": "a"}, Phase: corev1.PodRunning,
			Containers: []Container{{Name: "app", CPUMilli: 1000, MemoryBytes: 1 << 30}, {Name: "proxy", CPUMilli: 100, MemoryBytes: 64 << 20, OOMKills: []time.Time{t0}}}},
	}, {
		name: "evicted by the kubelet: the message and the DisruptionTarget transition",
		pod: corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory.",
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, LastTransitionTime: metav1.NewTime(t0.Add(time.Hour))},
					{Type: corev1.DisruptionTarget, LastTransitionTime: metav1.NewTime(t0)}}}},
		want: Pod{Namespace: "ns", Name: "p", UID: "u1", Labels: map[string]string{"app": "a"}, Phase: corev1.PodFailed,
			EvictionMessage: "The node was low on resource: memory.", EvictedAt: t0, Containers: []Container{{Name: "app"}}},
	}, {
		name: "evicted without a DisruptionTarget condition: the latest transition",
		pod: corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "m",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, LastTransitionTime: metav1.NewTime(t0.Add(time.Hour))},
				{Type: corev1.PodScheduled, LastTransitionTime: metav1.NewTime(t0)}}}},
		want: Pod{Namespace: "ns", Name: "p", UID: "u1", Labels: map[string]string{"app": "a"}, Phase: corev1.PodFailed,
			EvictionMessage: "m", EvictedAt: t0.Add(time.Hour), Containers: []Container{}},
	}, {
		name: "a failed pod that was not evicted carries no message",
		pod:  corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "DeadlineExceeded", Message: "m"}},
		want: Pod{Namespace: "ns", Name: "p", UID: "u1", Labels: map[string]string{"app": "a"}, Phase: corev1.PodFailed, Containers: []Container{}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := From(&tt.pod); !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("From:\n got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

// TestFromSharesLabels: pods with equal labels share one map, and a Pod is keyed like its pod.
func TestFromSharesLabels(t *testing.T) {
	a := From(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a", Labels: map[string]string{"app": "x", "pod-template-hash": "1"}}})
	b := From(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", Labels: map[string]string{"pod-template-hash": "1", "app": "x"}}})
	if reflect.ValueOf(a.Labels).UnsafePointer() != reflect.ValueOf(b.Labels).UnsafePointer() {
		t.Error("equal labels are two maps")
	}
	if key, err := toolscache.MetaNamespaceKeyFunc(a); err != nil || key != "ns/a" {
		t.Errorf("store key of a Pod = %q, %v; want ns/a", key, err)
	}
}

// TestTransform: pods become Pods; a Pod (already transformed) and anything else pass as they are.
func TestTransform(t *testing.T) {
	out, err := Transform(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}})
	p, ok := out.(*Pod)
	if err != nil || !ok || p.Name != "p" {
		t.Fatalf("Transform(pod) = %T %v, %v", out, out, err)
	}
	if again, _ := Transform(p); again != p {
		t.Error("Transform of a Pod is not the Pod itself")
	}
	tomb := toolscache.DeletedFinalStateUnknown{Key: "ns/p", Obj: p}
	if o, _ := Transform(tomb); o != tomb {
		t.Error("a tombstone was changed")
	}
}

// BenchmarkFrom is the store's transform of one pod as a Deployment makes them (labels shared with its
// siblings): its B/op is what a pod costs in the store, besides the store's own index entries.
func BenchmarkFrom(b *testing.B) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop-0001", Name: "web-7d4b9c8f6d-x2k9q", UID: "6f1c2a4e-8b7d-4c21-9e5f-0a1b2c3d4e5f",
		Labels: map[string]string{"app": "web", "pod-template-hash": "7d4b9c8f6d"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: requests("100m", "128Mi")}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 1,
			LastTerminationState: oomKilled(time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC))}}}}
	b.ReportAllocs()
	for b.Loop() {
		_ = From(p)
	}
}
