package wrappers

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodWrapper builds a Pod.
type PodWrapper struct{ corev1.Pod }

// MakePod is a pod without labels, owner or containers.
func MakePod(ns, name string) *PodWrapper {
	return &PodWrapper{corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}}
}

// Obj is the Pod.
func (w *PodWrapper) Obj() *corev1.Pod { return &w.Pod }

// GenerateName replaces the name by a generateName prefix.
func (w *PodWrapper) GenerateName(prefix string) *PodWrapper {
	w.Name, w.ObjectMeta.GenerateName = "", prefix
	return w
}

// Label adds a label.
func (w *PodWrapper) Label(k, v string) *PodWrapper {
	setKey(&w.ObjectMeta.Labels, k, v)
	return w
}

// Labels adds labels.
func (w *PodWrapper) Labels(l map[string]string) *PodWrapper {
	for k, v := range l {
		w.Label(k, v)
	}
	return w
}

// ControlledBy sets the controller owner reference (apps/v1 kind name).
func (w *PodWrapper) ControlledBy(kind, name string, uid types.UID) *PodWrapper {
	t := true
	w.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: &t}}
	return w
}

// Container appends containers.
func (w *PodWrapper) Container(c ...corev1.Container) *PodWrapper {
	w.Spec.Containers = append(w.Spec.Containers, c...)
	return w
}

// InitContainer appends init containers (sidecars: ContainerWrapper.Sidecar).
func (w *PodWrapper) InitContainer(c ...corev1.Container) *PodWrapper {
	w.Spec.InitContainers = append(w.Spec.InitContainers, c...)
	return w
}

// Phase sets status.phase.
func (w *PodWrapper) Phase(p corev1.PodPhase) *PodWrapper {
	w.Status.Phase = p
	return w
}
