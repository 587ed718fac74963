package app

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStripPodKeepsWhatTheComponentsRead: the pod transform drops the bulky fields and keeps labels,
// annotations of hvpa, owners, resources and the status.
func TestStripPodKeepsWhatTheComponentsRead(t *testing.T) {
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "a"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}},
			Annotations:     map[string]string{lastApplied: "{...}", "vpaUpdates": "cpu request"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "a-1"}}},
		Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v"}}, Tolerations: []corev1.Toleration{{Key: "k"}},
			InitContainers: []corev1.Container{{Name: "init", Env: []corev1.EnvVar{{Name: "E"}}, Resources: res}},
			Containers:     []corev1.Container{{Name: "app", Command: []string{"run"}, Env: []corev1.EnvVar{{Name: "E"}}, Resources: res, ResizePolicy: []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBurstable, PodIP: "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: "Deferred"}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 2, Image: "registry/app:1", ImageID: "sha256:1", ContainerID: "containerd://1",
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ContainerID: "containerd://0"}},
				AllocatedResources:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}}},
	}
	p.Spec.Containers[0].Image, p.Spec.NodeSelector, p.Spec.SchedulerName = "registry/app:1", map[string]string{"zone": "a"}, "default-scheduler"
	out, err := StripPod(p)
	if err != nil {
		t.Fatal(err)
	}
	s := out.(*corev1.Pod)
	if s.ManagedFields != nil || s.Annotations[lastApplied] != "" || s.Spec.Volumes != nil ||
		s.Spec.Containers[0].Env != nil || s.Spec.Containers[0].Command != nil || s.Spec.InitContainers[0].Env != nil ||
		s.Spec.Containers[0].Image != "" || s.Spec.SchedulerName != "" || s.Status.PodIP != "" ||
		s.Status.ContainerStatuses[0].Image != "" || s.Status.ContainerStatuses[0].ImageID != "" || s.Status.ContainerStatuses[0].ContainerID != "" ||
		s.Status.ContainerStatuses[0].LastTerminationState.Terminated.ContainerID != "" {
		t.Errorf("bulky fields kept: %+v", s)
	}
	if s.Labels["app"] != "a" || s.Annotations["vpaUpdates"] == "" || len(s.OwnerReferences) != 1 || s.Status.ContainerStatuses[0].RestartCount != 2 ||
		s.Spec.Containers[0].Resources.Requests.Cpu().String() != "100m" || s.Spec.InitContainers[0].Resources.Requests.Cpu().String() != "100m" ||
		len(s.Spec.Containers[0].ResizePolicy) != 1 || s.Status.QOSClass != corev1.PodQOSBurstable || len(s.Status.Conditions) != 1 ||
		s.Status.ContainerStatuses[0].LastTerminationState.Terminated.Reason != "OOMKilled" ||
		s.Status.ContainerStatuses[0].AllocatedResources.Memory().String() != "1Gi" {
		t.Errorf("a field the components read was dropped: %+v", s)
	}
	// where the pod may go stays (the Hvpa's node cap reads the newest pod's), found in review: the node cap
	// of a workload on a tolerated dedicated pool read stripped pods
	if len(s.Spec.Tolerations) != 1 || s.Spec.Tolerations[0].Key != "k" || s.Spec.NodeSelector["zone"] != "a" {
		t.Errorf("scheduling constraints dropped: tolerations %+v, nodeSelector %v", s.Spec.Tolerations, s.Spec.NodeSelector)
	}
	if o, _ := StripPod("tombstone"); o != "tombstone" {
		t.Errorf("a non-pod changed: %v", o)
	}
}

// TestStripPodSharesEqualMaps: pods with equal labels and resources share one map each (the informers keep
// one per distinct value), and a pod with other values keeps its own, unchanged.
func TestStripPodSharesEqualMaps(t *testing.T) {
	pod := func(name, cpu string) *corev1.Pod {
		res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("128Mi")}
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web", "pod-template-hash": cpu}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()}}}},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app", AllocatedResources: res.DeepCopy(),
				Resources: &corev1.ResourceRequirements{Requests: res.DeepCopy()}}}},
		}
	}
	strip := func(p *corev1.Pod) *corev1.Pod {
		out, err := StripPod(p)
		if err != nil {
			t.Fatal(err)
		}
		return out.(*corev1.Pod)
	}
	same := func(a, b any) bool { return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() }
	a, b, c := strip(pod("a", "100m")), strip(pod("b", "100m")), strip(pod("c", "250m"))
	if !same(a.Labels, b.Labels) || !same(a.Spec.Containers[0].Resources.Requests, b.Spec.Containers[0].Resources.Requests) ||
		!same(a.Spec.Containers[0].Resources.Requests, b.Status.ContainerStatuses[0].AllocatedResources) ||
		!same(a.Spec.Containers[0].Resources.Limits, b.Status.ContainerStatuses[0].Resources.Requests) {
		t.Error("equal labels or resources of two pods are not shared")
	}
	if same(a.Labels, c.Labels) || same(a.Spec.Containers[0].Resources.Requests, c.Spec.Containers[0].Resources.Requests) {
		t.Error("different labels or resources share a map")
	}
	if c.Labels["pod-template-hash"] != "250m" || c.Spec.Containers[0].Resources.Requests.Cpu().String() != "250m" ||
		b.Status.ContainerStatuses[0].AllocatedResources.Memory().String() != "128Mi" || len(b.Labels) != 2 {
		t.Errorf("values changed: %v %v %v", c.Labels, c.Spec.Containers[0].Resources.Requests, b.Status.ContainerStatuses[0].AllocatedResources)
	}
}

// TestStripNodeKeepsWhatTheNodeCapReads: the node transform keeps name, labels, cordon, taints and allocatable
// (what scaling.NewNodes reads) and drops the images list and the rest.
func TestStripNodeKeepsWhatTheNodeCapReads(t *testing.T) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"pool": "a"}, Annotations: map[string]string{"a": "b"}},
		Spec: corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
			Images: []corev1.ContainerImage{{Names: []string{"registry/big:1"}, SizeBytes: 1 << 30}}, Addresses: []corev1.NodeAddress{{Address: "10.0.0.1"}}}}
	out, err := StripNode(n)
	if err != nil {
		t.Fatal(err)
	}
	s := out.(*corev1.Node)
	if s.Status.Images != nil || s.Status.Addresses != nil || s.Annotations != nil {
		t.Errorf("bulky fields kept: %+v", s.Status)
	}
	if s.Name != "n" || s.Labels["pool"] != "a" || !s.Spec.Unschedulable || len(s.Spec.Taints) != 1 || s.Status.Allocatable.Cpu().String() != "8" {
		t.Errorf("what the node cap reads is gone: %+v", s)
	}
}
