package wrappers

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// DeploymentWrapper builds a Deployment.
type DeploymentWrapper struct{ appsv1.Deployment }

// MakeDeployment is a Deployment of one replica whose pods carry app=<name>, its selector, and no containers.
func MakeDeployment(ns, name string) *DeploymentWrapper {
	app := map[string]string{"app": name}
	return &DeploymentWrapper{appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: app},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}}}}}
}

// Obj is the Deployment.
func (w *DeploymentWrapper) Obj() *appsv1.Deployment { return &w.Deployment }

// Replicas sets spec.replicas.
func (w *DeploymentWrapper) Replicas(n int32) *DeploymentWrapper {
	w.Spec.Replicas = &n
	return w
}

// PodLabel adds a label to the pod template (not to the selector).
func (w *DeploymentWrapper) PodLabel(k, v string) *DeploymentWrapper {
	setKey(&w.Spec.Template.Labels, k, v)
	return w
}

// PodAnnotation adds an annotation to the pod template.
func (w *DeploymentWrapper) PodAnnotation(k, v string) *DeploymentWrapper {
	setKey(&w.Spec.Template.Annotations, k, v)
	return w
}

// Container appends containers to the pod template.
func (w *DeploymentWrapper) Container(c ...corev1.Container) *DeploymentWrapper {
	w.Spec.Template.Spec.Containers = append(w.Spec.Template.Spec.Containers, c...)
	return w
}

// Toleration adds tolerations to the pod template.
func (w *DeploymentWrapper) Toleration(t ...corev1.Toleration) *DeploymentWrapper {
	w.Spec.Template.Spec.Tolerations = append(w.Spec.Template.Spec.Tolerations, t...)
	return w
}

// InitContainer appends init containers (sidecars: ContainerWrapper.Sidecar) to the pod template.
func (w *DeploymentWrapper) InitContainer(c ...corev1.Container) *DeploymentWrapper {
	w.Spec.Template.Spec.InitContainers = append(w.Spec.Template.Spec.InitContainers, c...)
	return w
}

// StatefulSetWrapper builds a StatefulSet.
type StatefulSetWrapper struct{ appsv1.StatefulSet }

// MakeStatefulSet is a StatefulSet of one replica whose pods carry app=<name>, its selector, and no containers.
func MakeStatefulSet(ns, name string) *StatefulSetWrapper {
	return &StatefulSetWrapper{appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}}}}}}
}

// Obj is the StatefulSet.
func (w *StatefulSetWrapper) Obj() *appsv1.StatefulSet { return &w.StatefulSet }

// Replicas sets spec.replicas.
func (w *StatefulSetWrapper) Replicas(n int32) *StatefulSetWrapper {
	w.Spec.Replicas = &n
	return w
}

// Container appends containers to the pod template.
func (w *StatefulSetWrapper) Container(c ...corev1.Container) *StatefulSetWrapper {
	w.Spec.Template.Spec.Containers = append(w.Spec.Template.Spec.Containers, c...)
	return w
}
