package wrappers

import (
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// VPAWrapper builds a VerticalPodAutoscaler.
type VPAWrapper struct{ vpav1.VerticalPodAutoscaler }

// MakeVPA is a VPA on Deployment <name> without update or resource policy (upstream's defaults apply).
func MakeVPA(ns, name string) *VPAWrapper {
	return &VPAWrapper{vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: vpav1.VerticalPodAutoscalerSpec{
		TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name}}}}
}

// Obj is the VPA.
func (w *VPAWrapper) Obj() *vpav1.VerticalPodAutoscaler { return &w.VerticalPodAutoscaler }

// Target sets the targetRef (apps/v1 kind name).
func (w *VPAWrapper) Target(kind, name string) *VPAWrapper {
	w.Spec.TargetRef = &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: kind, Name: name}
	return w
}

// NoTarget removes the targetRef.
func (w *VPAWrapper) NoTarget() *VPAWrapper {
	w.Spec.TargetRef = nil
	return w
}

// Mode sets updatePolicy.updateMode.
func (w *VPAWrapper) Mode(m vpav1.UpdateMode) *VPAWrapper {
	if w.Spec.UpdatePolicy == nil {
		w.Spec.UpdatePolicy = &vpav1.PodUpdatePolicy{}
	}
	w.Spec.UpdatePolicy.UpdateMode = &m
	return w
}

// Recommender names the recommender that serves the VPA ("" leaves the default, hvpa's).
func (w *VPAWrapper) Recommender(name string) *VPAWrapper {
	w.Spec.Recommenders = nil
	if name != "" {
		w.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: name}}
	}
	return w
}

// ContainerPolicy appends container policies.
func (w *VPAWrapper) ContainerPolicy(ps ...vpav1.ContainerResourcePolicy) *VPAWrapper {
	if len(ps) == 0 {
		return w
	}
	if w.Spec.ResourcePolicy == nil {
		w.Spec.ResourcePolicy = &vpav1.PodResourcePolicy{}
	}
	w.Spec.ResourcePolicy.ContainerPolicies = append(w.Spec.ResourcePolicy.ContainerPolicies, ps...)
	return w
}

// Recommendation appends container recommendations to the status.
func (w *VPAWrapper) Recommendation(rs ...vpav1.RecommendedContainerResources) *VPAWrapper {
	if len(rs) == 0 {
		return w
	}
	if w.Status.Recommendation == nil {
		w.Status.Recommendation = &vpav1.RecommendedPodResources{}
	}
	w.Status.Recommendation.ContainerRecommendations = append(w.Status.Recommendation.ContainerRecommendations, rs...)
	return w
}

// ContainerRecommendation is the recommendation of one container: target, with its bounds and uncapped target (nil: unset).
func ContainerRecommendation(container string, target, lower, upper corev1.ResourceList) vpav1.RecommendedContainerResources {
	return vpav1.RecommendedContainerResources{ContainerName: container, Target: target, LowerBound: lower, UpperBound: upper, UncappedTarget: target}
}

// UID sets metadata.uid (for objects that never meet an API server).
func (w *VPAWrapper) UID(uid types.UID) *VPAWrapper {
	w.ObjectMeta.UID = uid
	return w
}

// Created sets metadata.creationTimestamp (for objects that never meet an API server).
func (w *VPAWrapper) Created(t time.Time) *VPAWrapper {
	w.CreationTimestamp = metav1.NewTime(t)
	return w
}

// Annotation adds an annotation.
func (w *VPAWrapper) Annotation(k, v string) *VPAWrapper {
	setKey(&w.Annotations, k, v)
	return w
}
