// Package v1alpha1 holds the autoscaling.k8s.io/v1alpha1 API: Hvpa, one object that scales a workload
// horizontally and vertically from one set of scaling intervals (the HVPA-EP-0001 redesign). The exact
// scaling semantics are those of the scaling package.
//
// +kubebuilder:object:generate=true
// +groupName=autoscaling.k8s.io
package v1alpha1
