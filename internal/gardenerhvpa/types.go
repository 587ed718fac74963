// Package gardenerhvpa reads the Hvpa objects of gardener's hvpa-controller (github.com/gardener/hvpa-controller,
// autoscaling.k8s.io/v1alpha1, kind Hvpa: the same group, version and kind as hvpa's own Hvpa, with another
// schema) and converts them into hvpa's Hvpa, naming every field that cannot be carried over as it was.
//
// The types below are this package's own reading of gardener's published schema (its CRD and API reference):
// only the fields gardener defines, with gardener's JSON names. The autoscaling/v2beta1 HPA metrics of
// gardener's hpa template are read in both shapes users wrote them in (v2beta1, and the autoscaling/v2 shape
// of gardener's sample manifest). The package is pure: no client, no I/O.
package gardenerhvpa

import (
	"encoding/json"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIVersion is the apiVersion of gardener's Hvpa (and of hvpa's).
const APIVersion = "autoscaling.k8s.io/v1alpha1"

// GardenerHvpa is a gardener hvpa-controller Hvpa. Its status is not read: the controller writes it.
type GardenerHvpa struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   Spec            `json:"spec"`
	Status json.RawMessage `json:"status,omitempty"`
}

// Spec is gardener's HvpaSpec.
type Spec struct {
	Replicas                    *int32                                     `json:"replicas,omitempty"`
	Hpa                         HpaSpec                                    `json:"hpa,omitempty"`
	Vpa                         VpaSpec                                    `json:"vpa,omitempty"`
	WeightBasedScalingIntervals []WeightBasedScalingInterval               `json:"weightBasedScalingIntervals,omitempty"`
	TargetRef                   *autoscalingv2.CrossVersionObjectReference `json:"targetRef,omitempty"`
	MaintenanceTimeWindow       *MaintenanceTimeWindow                     `json:"maintenanceTimeWindow,omitempty"`
}

// HpaSpec is gardener's spec.hpa: the HPA gardener's controller creates and how its changes are applied.
type HpaSpec struct {
	Selector  *metav1.LabelSelector `json:"selector,omitempty"`
	Deploy    bool                  `json:"deploy,omitempty"`
	ScaleUp   ScaleType             `json:"scaleUp,omitempty"`
	ScaleDown ScaleType             `json:"scaleDown,omitempty"`
	Template  HpaTemplate           `json:"template,omitempty"`
}

// HpaTemplate is the HPA object's metadata and spec.
type HpaTemplate struct {
	// Metadata is kept unread (gardener's CRD preserves any field in it).
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Spec     HpaTemplateSpec `json:"spec,omitempty"`
}

// HpaTemplateSpec is the part of an autoscaling/v2beta1 HPA spec that gardener's template holds.
type HpaTemplateSpec struct {
	MinReplicas *int32       `json:"minReplicas,omitempty"`
	MaxReplicas int32        `json:"maxReplicas,omitempty"`
	Metrics     []MetricSpec `json:"metrics,omitempty"`
}

// VpaSpec is gardener's spec.vpa: the VPA gardener's controller creates (recommendation only) and how its
// recommendations are applied.
type VpaSpec struct {
	Selector                     *metav1.LabelSelector `json:"selector,omitempty"`
	Deploy                       bool                  `json:"deploy,omitempty"`
	ScaleUp                      ScaleType             `json:"scaleUp,omitempty"`
	ScaleDown                    ScaleType             `json:"scaleDown,omitempty"`
	Template                     VpaTemplate           `json:"template,omitempty"`
	LimitsRequestsGapScaleParams ScaleParams           `json:"limitsRequestsGapScaleParams,omitempty"`
}

// VpaTemplate is the VPA object's metadata and spec.
type VpaTemplate struct {
	// Metadata is kept unread (gardener's CRD preserves any field in it).
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Spec     VpaTemplateSpec `json:"spec,omitempty"`
}

// VpaTemplateSpec holds the VPA's resource policy.
type VpaTemplateSpec struct {
	ResourcePolicy *PodResourcePolicy `json:"resourcePolicy,omitempty"`
}

// PodResourcePolicy is the autoscaling.k8s.io/v1 VPA resource policy as gardener's CRD has it.
type PodResourcePolicy struct {
	ContainerPolicies []ContainerResourcePolicy `json:"containerPolicies,omitempty"`
}

// ContainerResourcePolicy is one container's policy, with the fields gardener's CRD has.
type ContainerResourcePolicy struct {
	ContainerName       string                 `json:"containerName,omitempty"`
	Mode                *string                `json:"mode,omitempty"`
	MinAllowed          corev1.ResourceList    `json:"minAllowed,omitempty"`
	MaxAllowed          corev1.ResourceList    `json:"maxAllowed,omitempty"`
	ControlledResources *[]corev1.ResourceName `json:"controlledResources,omitempty"`
	ControlledValues    *string                `json:"controlledValues,omitempty"`
}

// ScaleType is how the changes of one direction are applied (gardener's hpa/vpa scaleUp and scaleDown).
type ScaleType struct {
	UpdatePolicy          UpdatePolicy `json:"updatePolicy,omitempty"`
	MinChange             ScaleParams  `json:"minChange,omitempty"`
	StabilizationDuration *string      `json:"stabilizationDuration,omitempty"`
}

// UpdatePolicy holds gardener's updateMode: Auto (the default), Off or MaintenanceWindow.
type UpdatePolicy struct {
	UpdateMode *string `json:"updateMode,omitempty"`
}

// ScaleParams are change parameters per resource (gardener's minChange and limitsRequestsGapScaleParams).
type ScaleParams struct {
	CPU      ChangeParams `json:"cpu,omitempty"`
	Memory   ChangeParams `json:"memory,omitempty"`
	Replicas ChangeParams `json:"replicas,omitempty"`
}

// ChangeParams is gardener's value (a quantity, as a string) and percentage.
type ChangeParams struct {
	Value      *string `json:"value,omitempty"`
	Percentage *int32  `json:"percentage,omitempty"`
}

// WeightBasedScalingInterval is one replica range and the weight given to the VPA's recommendation in it
// (0: horizontal only, 100: vertical only). A start of 0 means hpa minReplicas, a last of 0 hpa maxReplicas.
type WeightBasedScalingInterval struct {
	VpaWeight         int32 `json:"vpaWeight,omitempty"`
	StartReplicaCount int32 `json:"startReplicaCount,omitempty"`
	LastReplicaCount  int32 `json:"lastReplicaCount,omitempty"`
}

// MaintenanceTimeWindow is a daily window, begin and end as HHMMSS+ZONE.
type MaintenanceTimeWindow struct {
	Begin string `json:"begin"`
	End   string `json:"end"`
}

// MetricSpec is one HPA metric as gardener's template holds it: autoscaling/v2beta1 (targetAverageUtilization,
// metricName, ...), or the autoscaling/v2 shape (target, metric, describedObject) that some manifests use.
type MetricSpec struct {
	Type              autoscalingv2.MetricSourceType `json:"type"`
	Resource          *ResourceMetric                `json:"resource,omitempty"`
	ContainerResource *ContainerResourceMetric       `json:"containerResource,omitempty"`
	Pods              *PodsMetric                    `json:"pods,omitempty"`
	Object            *ObjectMetric                  `json:"object,omitempty"`
	External          *ExternalMetric                `json:"external,omitempty"`
}

// ResourceMetric is a Resource metric source.
type ResourceMetric struct {
	Name                     corev1.ResourceName         `json:"name"`
	TargetAverageUtilization *int32                      `json:"targetAverageUtilization,omitempty"`
	TargetAverageValue       *resource.Quantity          `json:"targetAverageValue,omitempty"`
	Target                   *autoscalingv2.MetricTarget `json:"target,omitempty"`
}

// ContainerResourceMetric is a ContainerResource metric source.
type ContainerResourceMetric struct {
	Name                     corev1.ResourceName         `json:"name"`
	Container                string                      `json:"container"`
	TargetAverageUtilization *int32                      `json:"targetAverageUtilization,omitempty"`
	TargetAverageValue       *resource.Quantity          `json:"targetAverageValue,omitempty"`
	Target                   *autoscalingv2.MetricTarget `json:"target,omitempty"`
}

// PodsMetric is a Pods metric source.
type PodsMetric struct {
	MetricName         string                          `json:"metricName,omitempty"`
	Selector           *metav1.LabelSelector           `json:"selector,omitempty"`
	TargetAverageValue *resource.Quantity              `json:"targetAverageValue,omitempty"`
	Metric             *autoscalingv2.MetricIdentifier `json:"metric,omitempty"`
	Target             *autoscalingv2.MetricTarget     `json:"target,omitempty"`
}

// ObjectMetric is an Object metric source. Its target is the described object in v2beta1 and the metric
// target in v2 (where describedObject names the object), so ObjectTarget has the fields of both.
type ObjectMetric struct {
	Target          ObjectTarget                               `json:"target"`
	MetricName      string                                     `json:"metricName,omitempty"`
	TargetValue     *resource.Quantity                         `json:"targetValue,omitempty"`
	Selector        *metav1.LabelSelector                      `json:"selector,omitempty"`
	AverageValue    *resource.Quantity                         `json:"averageValue,omitempty"`
	DescribedObject *autoscalingv2.CrossVersionObjectReference `json:"describedObject,omitempty"`
	Metric          *autoscalingv2.MetricIdentifier            `json:"metric,omitempty"`
}

// ObjectTarget is an Object metric's target in either shape.
type ObjectTarget struct {
	APIVersion         string                         `json:"apiVersion,omitempty"`
	Kind               string                         `json:"kind,omitempty"`
	Name               string                         `json:"name,omitempty"`
	Type               autoscalingv2.MetricTargetType `json:"type,omitempty"`
	Value              *resource.Quantity             `json:"value,omitempty"`
	AverageValue       *resource.Quantity             `json:"averageValue,omitempty"`
	AverageUtilization *int32                         `json:"averageUtilization,omitempty"`
}

// ExternalMetric is an External metric source.
type ExternalMetric struct {
	MetricName         string                          `json:"metricName,omitempty"`
	MetricSelector     *metav1.LabelSelector           `json:"metricSelector,omitempty"`
	TargetValue        *resource.Quantity              `json:"targetValue,omitempty"`
	TargetAverageValue *resource.Quantity              `json:"targetAverageValue,omitempty"`
	Metric             *autoscalingv2.MetricIdentifier `json:"metric,omitempty"`
	Target             *autoscalingv2.MetricTarget     `json:"target,omitempty"`
}
