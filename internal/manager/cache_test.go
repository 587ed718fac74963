package manager

import (
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
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", RestartCount: 2}}},
	}
	out, err := StripPod(p)
	if err != nil {
		t.Fatal(err)
	}
	s := out.(*corev1.Pod)
	if s.ManagedFields != nil || s.Annotations[lastApplied] != "" || s.Spec.Volumes != nil || s.Spec.Tolerations != nil ||
		s.Spec.Containers[0].Env != nil || s.Spec.Containers[0].Command != nil || s.Spec.InitContainers[0].Env != nil {
		t.Errorf("bulky fields kept: %+v", s)
	}
	if s.Labels["app"] != "a" || s.Annotations["vpaUpdates"] == "" || len(s.OwnerReferences) != 1 || s.Status.ContainerStatuses[0].RestartCount != 2 ||
		s.Spec.Containers[0].Resources.Requests.Cpu().String() != "100m" || s.Spec.InitContainers[0].Resources.Requests.Cpu().String() != "100m" ||
		len(s.Spec.Containers[0].ResizePolicy) != 1 {
		t.Errorf("a field the components read was dropped: %+v", s)
	}
	if o, _ := StripPod("tombstone"); o != "tombstone" {
		t.Errorf("a non-pod changed: %v", o)
	}
}
