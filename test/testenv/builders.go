package testenv

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
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

// CPUHvpa scales Deployment name on cpu only, HPA-driven (Utilization of cpu), with one interval per replica
// count whose per-pod cpu maximum is perPod[i], the HPA's scale-down window (seconds) and the intervals'
// overlap (percent of cpu; 0: none) as given.
func CPUHvpa(ns, name string, utilization, window, overlapPct int32, perPod ...string) *hvpav1alpha1.Hvpa {
	var iv []hvpav1alpha1.ScalingInterval
	for i, cpu := range perPod {
		q := resource.MustParse(cpu)
		iv = append(iv, hvpav1alpha1.ScalingInterval{MaxReplicas: ptr.To(int32(i + 1)), MaxResources: &hvpav1alpha1.ScaledResources{CPU: &q}})
	}
	h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: hvpav1alpha1.HvpaSpec{
		TargetRef:        autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
		ScalingIntervals: iv,
		HPA: &hvpav1alpha1.HpaSpec{Deploy: true, Template: hvpav1alpha1.HpaTemplate{MinReplicas: ptr.To[int32](1), MaxReplicas: int32(len(perPod)),
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
				Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(utilization)}}}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(window)}}}},
		VPA: &hvpav1alpha1.VpaSpec{Template: hvpav1alpha1.VpaTemplate{ResourcePolicy: &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{{
			ContainerName: "*", ControlledResources: &[]corev1.ResourceName{corev1.ResourceCPU}}}}}},
	}}
	if overlapPct > 0 {
		h.Spec.ScalingIntervalsOverlap = &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Percentage: ptr.To(overlapPct)}}
	}
	return h
}
