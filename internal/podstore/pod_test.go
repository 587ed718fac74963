package podstore

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
		name: "ready while its Ready condition is True; a crash-looping pod (Ready False) is not",
		pod: corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}}},
		want: Pod{Namespace: "ns", Name: "p", UID: "u1", Labels: map[string]string{"app": "a"}, Phase: corev1.PodRunning, Ready: true, Containers: []Container{}},
	}, {
		name: "running but not ready: a container in back-off",
		pod: corev1.Pod{ObjectMeta: meta, Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"}}}},
		want: Pod{Namespace: "ns", Name: "p", UID: "u1", Labels: map[string]string{"app": "a"}, Phase: corev1.PodRunning, Containers: []Container{}},
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

// BenchmarkFrom is the store's transform of distinct pods, as a store filling at start meets them: the pods
// of 1,000 Deployments x 10 replicas in 100 namespaces, each pod with its own name, UID and labels map (equal
// labels within a Deployment, as the informer decodes each pod's anew), one container, and an OOM kill in its
// last state; each op transforms all 10,000 into fresh intern tables. Per pod: ns/pod, B/pod and allocs/pod
// (allocated, the intern keys' garbage included), and retained-B/pod, what stays on the heap per pod after a
// collection once the decoded pods are dropped (the Pod, its containers and kills, its name and UID, and per
// Deployment the shared labels map and the intern tables' entries).
func BenchmarkFrom(b *testing.B) {
	pods := deploymentPods(1000, 10, 10)
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		resetInterned()
		for _, p := range pods {
			_ = From(p)
		}
	}
	runtime.ReadMemStats(&after)
	n := float64(b.N * len(pods))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/pod")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/pod")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/pod")
	b.ReportMetric(retainedPerPod(), "retained-B/pod")
}

// retainedPerPod transforms 10,000 freshly decoded pods into fresh intern tables, drops the decoded pods and
// returns the heap that stays per pod.
func retainedPerPod() float64 {
	resetInterned()
	var base, kept runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&base)
	out := fromFresh() // the decoded pods are garbage once it returns
	runtime.GC()
	runtime.ReadMemStats(&kept)
	runtime.KeepAlive(out)
	return float64(int64(kept.HeapAlloc)-int64(base.HeapAlloc)) / float64(len(out))
}

// fromFresh transforms 10,000 freshly decoded pods and returns only the Pods.
func fromFresh() []*Pod {
	in := deploymentPods(1000, 10, 10)
	out := make([]*Pod, len(in))
	for i, p := range in {
		out[i] = From(p)
	}
	return out
}

// resetInterned starts the intern tables anew.
func resetInterned() {
	podMaps = newInterned()
}

// deploymentPods are the pods of deployments Deployments of replicas pods, perNamespace Deployments a
// namespace: distinct names and UIDs, a labels map of their own (equal within a Deployment), one container
// with requests and an OOM kill in its last state.
func deploymentPods(deployments, replicas, perNamespace int) []*corev1.Pod {
	killed := oomKilled(time.Date(2026, 11, 24, 8, 0, 0, 0, time.UTC))
	var pods []*corev1.Pod
	for d := range deployments {
		app, hash := fmt.Sprintf("app-%04d", d), fmt.Sprintf("%010x", d*7919)
		for r := range replicas {
			pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("bench-%03d", d/perNamespace),
				Name: fmt.Sprintf("%s-%s-%05x", app, hash, r), UID: types.UID(fmt.Sprintf("6f1c2a4e-8b7d-4c21-9e5f-%012x", d*replicas+r)),
				Labels: map[string]string{"app": app, "pod-template-hash": hash}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: requests("100m", "128Mi")}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 1,
					LastTerminationState: killed}}}})
		}
	}
	return pods
}

// TestFromKeepsScheduling: a pod's scheduling constraints (what the node cap reads) are kept, shared between
// pods with equal ones; a pod without any has none.
func TestFromKeepsScheduling(t *testing.T) {
	tolerate := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "batch", Effect: corev1.TaintEffectNoSchedule}}
	mk := func(name string, tol []corev1.Toleration, sel map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.PodSpec{Tolerations: tol, NodeSelector: sel}}
	}
	a, b := From(mk("a", tolerate, nil)), From(mk("b", []corev1.Toleration{tolerate[0]}, nil))
	if a.Scheduling == nil || !reflect.DeepEqual(a.Scheduling.Tolerations, tolerate) || a.Scheduling != b.Scheduling {
		t.Errorf("two pods with one toleration: %+v and %+v, want it kept and shared", a.Scheduling, b.Scheduling)
	}
	if c := From(mk("c", tolerate, map[string]string{"pool": "batch"})); c.Scheduling == a.Scheduling || c.Scheduling.NodeSelector["pool"] != "batch" {
		t.Errorf("a pod with a nodeSelector too: %+v, want its own", c.Scheduling)
	}
	if d := From(mk("d", nil, nil)); d.Scheduling != nil {
		t.Errorf("a pod without constraints: %+v, want none", d.Scheduling)
	}
}
