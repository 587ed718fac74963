package testenv

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewNamespace creates a namespace named prefix-<random> for one spec and returns its name.
func NewNamespace(ctx context.Context, c client.Client, prefix string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(ctx, ns); err != nil {
		return "", err
	}
	return ns.Name, nil
}

// Container is a played container (no image runs here) with the given requests and limits.
func Container(name string, req, lim corev1.ResourceList) corev1.Container {
	return corev1.Container{Name: name, Image: "played", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}
}

// Deployment is a Deployment whose pods carry app=<name> (its selector) and podLabels.
func Deployment(ns, name string, replicas int32, podLabels map[string]string, containers ...corev1.Container) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	for k, v := range podLabels {
		labels[k] = v
	}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: containers}}}}
}
