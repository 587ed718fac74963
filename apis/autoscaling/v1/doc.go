// Package v1 holds the autoscaling.k8s.io/v1 API: VerticalPodAutoscaler and VerticalPodAutoscalerCheckpoint.
//
// The types accept every manifest written for the upstream Vertical Pod Autoscaler v1 API (the fields of
// upstream VPA 1.8) unchanged, and add the per-container requestToLimitRatio policy (AEP-8515, behind the
// RequestToLimitRatio feature gate). Status conditions keep the upstream VPA condition shape (type, status,
// lastTransitionTime, reason, message) so that tools written for the upstream VPA keep reading them.
//
// +kubebuilder:object:generate=true
// +groupName=autoscaling.k8s.io
package v1
