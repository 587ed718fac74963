package v1

import (
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hvpa-dev/hvpa/apis/autoscaling/decodeerr"
)

// VerticalPodAutoscaler recommends (and, depending on its update mode, applies) CPU and memory requests for
// the pods of one workload.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=vpa,path=verticalpodautoscalers,singular=verticalpodautoscaler,scope=Namespaced
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=https://github.com/kubernetes/kubernetes/pull/63797"
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Mode",type="string",JSONPath=".spec.updatePolicy.updateMode"
// +kubebuilder:printcolumn:name="CPU",type="string",JSONPath=".status.recommendation.containerRecommendations[0].target.cpu"
// +kubebuilder:printcolumn:name="Mem",type="string",JSONPath=".status.recommendation.containerRecommendations[0].target.memory"
// +kubebuilder:printcolumn:name="Provided",type="string",JSONPath=".status.conditions[?(@.type=='RecommendationProvided')].status"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
// +kubebuilder:printcolumn:name="MinReplicas",type="integer",JSONPath=".spec.updatePolicy.minReplicas",priority=1
// +kubebuilder:printcolumn:name="OOMSeconds",type="integer",JSONPath=".spec.updatePolicy.evictAfterOOMSeconds",priority=1
type VerticalPodAutoscaler struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired behaviour of the autoscaler.
	// +required
	Spec VerticalPodAutoscalerSpec `json:"spec"`

	// status is the most recently observed state of the autoscaler.
	// +optional
	Status VerticalPodAutoscalerStatus `json:"status,omitempty"`

	// DecodeError is set, in place of spec and status, when the stored object cannot be read (a value the
	// API server accepted before the CRD's validation rules existed): it names the field and the fix. Never
	// serialized; the controllers report it in a condition and serve the other objects.
	DecodeError string `json:"-"`
}

// UnmarshalJSON decodes one object on its own: an object that does not decode becomes its metadata and a
// DecodeError instead of failing the list it arrives in (every object of the kind would stop being served).
func (o *VerticalPodAutoscaler) UnmarshalJSON(data []byte) error {
	type plain VerticalPodAutoscaler // without this method
	return decodeerr.Unmarshal(data, func(p *plain) { *o = VerticalPodAutoscaler(*p) }, func(tm metav1.TypeMeta, om metav1.ObjectMeta, msg string) {
		*o = VerticalPodAutoscaler{TypeMeta: tm, ObjectMeta: om, DecodeError: msg}
	})
}

// VerticalPodAutoscalerSpec is the specification of a VerticalPodAutoscaler.
type VerticalPodAutoscalerSpec struct {
	// targetRef points to the controller that manages the pods to autoscale, for example a Deployment or a
	// StatefulSet. A custom resource with a scale subresource also works.
	// +required
	TargetRef *autoscalingv1.CrossVersionObjectReference `json:"targetRef"`

	// updatePolicy says whether and how recommendations are applied to pods. Unset means updateMode Auto.
	// +optional
	UpdatePolicy *PodUpdatePolicy `json:"updatePolicy,omitempty"`

	// resourcePolicy controls how recommendations are computed for individual containers.
	// +optional
	ResourcePolicy *PodResourcePolicy `json:"resourcePolicy,omitempty"`

	// recommenders names the recommender that should produce the recommendation for this object. Only the
	// first entry is used; unset means the recommender called "default".
	// +optional
	// +listType=atomic
	Recommenders []VerticalPodAutoscalerRecommenderSelector `json:"recommenders,omitempty"`

	// startupBoost gives starting pods more CPU than the recommendation for a while after they become Ready
	// (every container without a startupBoost of its own in its container policy). It needs the
	// CPUStartupBoost feature gate (alpha, off by default).
	// +optional
	StartupBoost *StartupBoost `json:"startupBoost,omitempty"`
}

// StartupBoost is the boost a starting pod gets.
type StartupBoost struct {
	// cpu is the CPU boost; unset means none.
	// +optional
	CPU *GenericStartupBoost `json:"cpu,omitempty"`
}

// GenericStartupBoost is the boost of one resource: the recommended request times a factor, or plus a
// quantity, while the boost lasts.
// +kubebuilder:validation:XValidation:rule="(self.type == 'Factor') == has(self.factor)",message="factor is set exactly when type is Factor (request x factor while boosted)"
// +kubebuilder:validation:XValidation:rule="(self.type == 'Quantity') == has(self.quantity)",message="quantity is set exactly when type is Quantity (added to the request while boosted, e.g. 500m)"
type GenericStartupBoost struct {
	// type is Factor or Quantity.
	// +required
	Type StartupBoostType `json:"type"`
	// factor multiplies the recommended request while boosted (type Factor).
	// +optional
	// +kubebuilder:validation:Minimum=1
	Factor *int32 `json:"factor,omitempty"`
	// quantity is added to the recommended request while boosted (type Quantity).
	// +optional
	Quantity *resource.Quantity `json:"quantity,omitempty"`
	// durationSeconds is how long the boost lasts after the pod becomes Ready (default 0: until Ready).
	// +optional
	// +kubebuilder:validation:Minimum=0
	DurationSeconds *int32 `json:"durationSeconds,omitempty"`
}

// StartupBoostType is how a startup boost is given.
// +kubebuilder:validation:Enum=Factor;Quantity
type StartupBoostType string

// The startup boost types.
const (
	StartupBoostFactor   StartupBoostType = "Factor"
	StartupBoostQuantity StartupBoostType = "Quantity"
)

// EvictionChangeRequirement says which direction of change between a pod's requests and the target allows
// an eviction.
// +kubebuilder:validation:Enum=TargetHigherThanRequests;TargetLowerThanRequests
type EvictionChangeRequirement string

const (
	// TargetHigherThanRequests allows an eviction only when the target is higher than the pod's requests.
	TargetHigherThanRequests EvictionChangeRequirement = "TargetHigherThanRequests"
	// TargetLowerThanRequests allows an eviction only when the target is lower than the pod's requests.
	TargetLowerThanRequests EvictionChangeRequirement = "TargetLowerThanRequests"
)

// EvictionRequirement restricts evictions to changes of a given direction for the listed resources.
type EvictionRequirement struct {
	// resources the requirement applies to.
	// +listType=atomic
	Resources []corev1.ResourceName `json:"resources"`
	// changeRequirement is the direction of change that allows an eviction.
	ChangeRequirement EvictionChangeRequirement `json:"changeRequirement"`
}

// PodUpdatePolicy describes how recommendations are applied to pods.
type PodUpdatePolicy struct {
	// updateMode says whether the autoscaler applies recommendations and how: Off (only recommend),
	// Initial (only when pods are created), Recreate (also evict running pods), Auto (deprecated, same as
	// Recreate), InPlaceOrRecreate (resize running pods in place, evict when that is not possible) or
	// InPlace (only resize in place). Unset means Auto; a new VerticalPodAutoscaler's updatePolicy needs it
	// (the validating webhook, as upstream's), an Hvpa's vpa.template may leave it out.
	// +optional
	UpdateMode *UpdateMode `json:"updateMode,omitempty"`

	// minReplicas is the minimum number of live replicas needed before the updater evicts a pod. It
	// overrides the updater's --min-replicas flag for this object.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// evictionRequirements restrict evictions; every requirement must hold for a pod to be evicted.
	// +optional
	// +listType=atomic
	EvictionRequirements []*EvictionRequirement `json:"evictionRequirements,omitempty"`

	// evictAfterOOMSeconds: a pod OOM-killed within this many seconds of starting is updated (evicted or
	// resized) at once, whatever its age. It overrides the updater's --oom-window (upstream's
	// --evict-after-oom-threshold) for this object.
	// +optional
	// +kubebuilder:validation:Minimum=1
	EvictAfterOOMSeconds *int32 `json:"evictAfterOOMSeconds,omitempty"`
}

// UpdateMode says whether and how recommendations are applied to pods.
// +kubebuilder:validation:Enum=Off;Initial;Recreate;Auto;InPlaceOrRecreate;InPlace
type UpdateMode string

const (
	// UpdateModeOff only writes recommendations into status.
	UpdateModeOff UpdateMode = "Off"
	// UpdateModeInitial sets requests when pods are created and never changes running pods.
	UpdateModeInitial UpdateMode = "Initial"
	// UpdateModeRecreate sets requests at creation and evicts running pods whose requests are far off.
	UpdateModeRecreate UpdateMode = "Recreate"
	// UpdateModeAuto is the deprecated name of Recreate.
	UpdateModeAuto UpdateMode = "Auto"
	// UpdateModeInPlaceOrRecreate resizes running pods in place and evicts them when that is not possible.
	UpdateModeInPlaceOrRecreate UpdateMode = "InPlaceOrRecreate"
	// UpdateModeInPlace only resizes running pods in place and never evicts them.
	UpdateModeInPlace UpdateMode = "InPlace"
)

// PodResourcePolicy controls how recommendations are computed for the containers of a pod.
type PodResourcePolicy struct {
	// containerPolicies are per-container policies. A policy named "*" applies to every container that has
	// no policy of its own.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	ContainerPolicies []ContainerResourcePolicy `json:"containerPolicies,omitempty"`
}

// ContainerResourcePolicy controls how recommendations are computed for one container.
//
// +kubebuilder:validation:XValidation:rule="!has(self.requestToLimitRatio) || !has(self.controlledValues) || self.controlledValues == 'RequestsAndLimits'",message="requestToLimitRatio sets limits: it needs controlledValues RequestsAndLimits (the default); remove requestToLimitRatio or set controlledValues to RequestsAndLimits",fieldPath=".requestToLimitRatio"
// +kubebuilder:validation:XValidation:rule="!has(self.requestToLimitRatio) || !has(self.controlledResources) || ((!has(self.requestToLimitRatio.cpu) || 'cpu' in self.controlledResources) && (!has(self.requestToLimitRatio.memory) || 'memory' in self.controlledResources))",message="requestToLimitRatio names a resource that is not in controlledResources; add the resource to controlledResources or remove its ratio",fieldPath=".requestToLimitRatio"
// +kubebuilder:validation:XValidation:rule="!has(self.minAllowed) || !has(self.maxAllowed) || self.minAllowed.all(k, !(k in self.maxAllowed) || !isQuantity(string(self.minAllowed[k])) || !isQuantity(string(self.maxAllowed[k])) || quantity(string(self.minAllowed[k])).compareTo(quantity(string(self.maxAllowed[k]))) <= 0)",message="minAllowed must not be above maxAllowed for any resource; lower minAllowed or raise maxAllowed",fieldPath=".minAllowed"
type ContainerResourcePolicy struct {
	// containerName is the name of the container, or "*" for every container without its own policy.
	// +optional
	ContainerName string `json:"containerName,omitempty"`

	// mode says whether the autoscaler handles this container: Auto (default) or Off.
	// +optional
	Mode *ContainerScalingMode `json:"mode,omitempty"`

	// minAllowed is the lowest recommendation allowed for the container.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.all(k, isQuantity(string(self[k])))",message="every value must be a Kubernetes quantity such as 500m, 2 or 512Mi (a decimal number, then an optional suffix; an exponent must be a whole number)"
	// +kubebuilder:validation:XValidation:rule="!('cpu' in self) || !isQuantity(string(self['cpu'])) || quantity(string(self['cpu'])).compareTo(quantity('100G')) <= 0",message="cpu must be at most 100G (1e11 cores)"
	// +kubebuilder:validation:XValidation:rule="!('memory' in self) || !isQuantity(string(self['memory'])) || quantity(string(self['memory'])).compareTo(quantity('100T')) <= 0",message="memory must be at most 100T (1e14 bytes)"
	MinAllowed corev1.ResourceList `json:"minAllowed,omitempty"`

	// maxAllowed is the highest recommendation allowed for the container.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self.all(k, isQuantity(string(self[k])))",message="every value must be a Kubernetes quantity such as 500m, 2 or 512Mi (a decimal number, then an optional suffix; an exponent must be a whole number)"
	// +kubebuilder:validation:XValidation:rule="!('cpu' in self) || !isQuantity(string(self['cpu'])) || quantity(string(self['cpu'])).compareTo(quantity('100G')) <= 0",message="cpu must be at most 100G (1e11 cores)"
	// +kubebuilder:validation:XValidation:rule="!('memory' in self) || !isQuantity(string(self['memory'])) || quantity(string(self['memory'])).compareTo(quantity('100T')) <= 0",message="memory must be at most 100T (1e14 bytes)"
	MaxAllowed corev1.ResourceList `json:"maxAllowed,omitempty"`

	// controlledResources are the resources the autoscaler computes recommendations for. Default: cpu and
	// memory.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=8
	ControlledResources *[]corev1.ResourceName `json:"controlledResources,omitempty"`

	// controlledValues says which values the autoscaler changes: RequestsAndLimits (default) or
	// RequestsOnly.
	// +optional
	ControlledValues *ContainerControlledValues `json:"controlledValues,omitempty"`

	// requestToLimitRatio sets limits from the recommended requests by a fixed factor or a fixed headroom
	// instead of keeping the pod's original limit/request ratio (AEP-8515). It needs the
	// RequestToLimitRatio feature gate (alpha, off by default) and controlledValues RequestsAndLimits.
	// +optional
	RequestToLimitRatio *RequestToLimitRatio `json:"requestToLimitRatio,omitempty"`

	// oomBumpUpRatio: after an OOM kill the container's memory is at least this times what it used (default
	// the recommender's --oom-bump-up-ratio, 1.2).
	// +optional
	OOMBumpUpRatio *resource.Quantity `json:"oomBumpUpRatio,omitempty"`

	// oomMinBumpUp: after an OOM kill the container's memory is at least this much more than it used
	// (default the recommender's --oom-min-bump-up-bytes, 100Mi).
	// +optional
	OOMMinBumpUp *resource.Quantity `json:"oomMinBumpUp,omitempty"`

	// memoryAggregationIntervalSeconds is the length of one memory peak window (default the recommender's
	// --memory-aggregation-interval, 24h).
	// +optional
	// +kubebuilder:validation:Minimum=1
	MemoryAggregationIntervalSeconds *int32 `json:"memoryAggregationIntervalSeconds,omitempty"`

	// memoryAggregationIntervalCount is how many windows make the memory history (default the
	// recommender's --memory-aggregation-interval-count, 8).
	// +optional
	// +kubebuilder:validation:Minimum=1
	MemoryAggregationIntervalCount *int64 `json:"memoryAggregationIntervalCount,omitempty"`

	// startupBoost is this container's startup boost, in place of the object's spec.startupBoost.
	// +optional
	StartupBoost *StartupBoost `json:"startupBoost,omitempty"`
}

// ContainerScalingMode says whether a container is autoscaled.
// +kubebuilder:validation:Enum=Auto;Off
type ContainerScalingMode string

const (
	// ContainerScalingModeAuto autoscales the container.
	ContainerScalingModeAuto ContainerScalingMode = "Auto"
	// ContainerScalingModeOff leaves the container alone and gives it no recommendation.
	ContainerScalingModeOff ContainerScalingMode = "Off"
)

// ContainerControlledValues says which resource values are changed.
// +kubebuilder:validation:Enum=RequestsAndLimits;RequestsOnly
type ContainerControlledValues string

const (
	// ContainerControlledValuesRequestsAndLimits changes requests and scales limits with them.
	ContainerControlledValuesRequestsAndLimits ContainerControlledValues = "RequestsAndLimits"
	// ContainerControlledValuesRequestsOnly changes requests and leaves limits as they are.
	ContainerControlledValuesRequestsOnly ContainerControlledValues = "RequestsOnly"
)

// RequestToLimitRatio holds the limit rule per resource.
type RequestToLimitRatio struct {
	// cpu is the rule for the CPU limit.
	// +optional
	CPU *ResourceRequestToLimitRatio `json:"cpu,omitempty"`
	// memory is the rule for the memory limit.
	// +optional
	Memory *ResourceRequestToLimitRatio `json:"memory,omitempty"`
}

// RequestToLimitRatioType is how a limit is derived from a request.
// +kubebuilder:validation:Enum=Factor;Quantity
type RequestToLimitRatioType string

const (
	// RequestToLimitRatioFactor sets limit = request x factor.
	RequestToLimitRatioFactor RequestToLimitRatioType = "Factor"
	// RequestToLimitRatioQuantity sets limit = request + quantity.
	RequestToLimitRatioQuantity RequestToLimitRatioType = "Quantity"
)

// ResourceRequestToLimitRatio is the limit rule for one resource.
//
// +kubebuilder:validation:XValidation:rule="self.type != 'Factor' || (has(self.factor) && !has(self.quantity))",message="type Factor needs factor (a number >= 1, limit = request x factor) and no quantity"
// +kubebuilder:validation:XValidation:rule="self.type != 'Quantity' || (has(self.quantity) && !has(self.factor))",message="type Quantity needs quantity (limit = request + quantity, e.g. 200Mi) and no factor"
type ResourceRequestToLimitRatio struct {
	// type is Factor (limit = request x factor) or Quantity (limit = request + quantity).
	// +required
	Type RequestToLimitRatioType `json:"type"`

	// factor multiplies the request into the limit; at least 1. Only with type Factor.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 1.0",message="factor must be at least 1 (a limit below the request is not allowed); use 1 for limit = request"
	Factor *float64 `json:"factor,omitempty"`

	// quantity is added to the request to give the limit, e.g. 200Mi. Only with type Quantity.
	// +optional
	Quantity *resource.Quantity `json:"quantity,omitempty"`
}

// VerticalPodAutoscalerRecommenderSelector names a recommender.
type VerticalPodAutoscalerRecommenderSelector struct {
	// name of the recommender.
	Name string `json:"name"`
}

// VerticalPodAutoscalerStatus is the observed state of a VerticalPodAutoscaler.
type VerticalPodAutoscalerStatus struct {
	// recommendation is the most recently computed recommendation.
	// +optional
	Recommendation *RecommendedPodResources `json:"recommendation,omitempty"`

	// conditions describe the state of the autoscaler.
	// +optional
	// +patchMergeKey=type
	// +patchStrategy=merge
	// +listType=map
	// +listMapKey=type
	Conditions []VerticalPodAutoscalerCondition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// observedGeneration is the metadata.generation of the spec the recommendation was computed for.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`
}

// RecommendedPodResources is the recommendation for every container of a pod.
type RecommendedPodResources struct {
	// containerRecommendations holds one recommendation per container.
	// +optional
	// +listType=atomic
	ContainerRecommendations []RecommendedContainerResources `json:"containerRecommendations,omitempty"`
}

// RecommendedContainerResources is the recommendation for one container.
type RecommendedContainerResources struct {
	// containerName is the name of the container.
	ContainerName string `json:"containerName,omitempty"`
	// target is the recommended requests, capped to the container policy.
	Target corev1.ResourceList `json:"target"`
	// lowerBound is the lowest requests that are still reasonable, capped to the container policy.
	// +optional
	LowerBound corev1.ResourceList `json:"lowerBound,omitempty"`
	// upperBound is the highest requests that are still reasonable, capped to the container policy.
	// +optional
	UpperBound corev1.ResourceList `json:"upperBound,omitempty"`
	// uncappedTarget is the target before the container policy's minAllowed and maxAllowed were applied.
	// +optional
	UncappedTarget corev1.ResourceList `json:"uncappedTarget,omitempty"`
}

// VerticalPodAutoscalerConditionType names a condition of a VerticalPodAutoscaler.
type VerticalPodAutoscalerConditionType string

const (
	// RecommendationProvided is true when the recommender wrote a recommendation.
	RecommendationProvided VerticalPodAutoscalerConditionType = "RecommendationProvided"
	// LowConfidence is true when the recommendation rests on less than a day of history. While it is, and the
	// VPA's updateMode is Off or Initial, hvpa's recommender writes a recommendation whose targets stay within
	// the dead band (--recommendation-dead-band) and whose bounds only narrow at most every --young-status-delay
	// (15m, spread per VPA) rather than at every run; a target past the band, a widening bound, a condition
	// change and the first recommendation at once.
	LowConfidence VerticalPodAutoscalerConditionType = "LowConfidence"
	// NoPodsMatched is true when the target's selector matches no pods.
	NoPodsMatched VerticalPodAutoscalerConditionType = "NoPodsMatched"
	// FetchingHistory is true while history is being loaded.
	FetchingHistory VerticalPodAutoscalerConditionType = "FetchingHistory"
	// ConfigDeprecated was set for a deprecated setting by older recommenders; no setting of this API is
	// deprecated, and the recommender removes it (as upstream's does).
	ConfigDeprecated VerticalPodAutoscalerConditionType = "ConfigDeprecated"
	// ConfigUnsupported is true when the object cannot be served as written.
	ConfigUnsupported VerticalPodAutoscalerConditionType = "ConfigUnsupported"
	// UsageUnavailable (hvpa's) is true while the last run could not read current usage (metrics.k8s.io):
	// the recommendation is kept from the history held; the condition is removed once usage is read again.
	UsageUnavailable VerticalPodAutoscalerConditionType = "UsageUnavailable"
	// CappedToNode (hvpa's) is true while a container's target is lowered so that the pod fits the largest
	// schedulable node's allocatable less what DaemonSets take there (the message names the node); a pod sized
	// beyond every node would never be scheduled.
	CappedToNode VerticalPodAutoscalerConditionType = "CappedToNode"
	// InPlaceUnavailable (hvpa's) is true on a VPA whose updateMode resizes in place (InPlace,
	// InPlaceOrRecreate) while the cluster serves no pods/resize (before Kubernetes 1.33): pods are evicted
	// instead (InPlaceOrRecreate) or left as they are (InPlace).
	InPlaceUnavailable VerticalPodAutoscalerConditionType = "InPlaceUnavailable"
)

// VerticalPodAutoscalerCondition describes the state of a VerticalPodAutoscaler at a point in time.
type VerticalPodAutoscalerCondition struct {
	// type of the condition.
	Type VerticalPodAutoscalerConditionType `json:"type"`
	// status of the condition: True, False or Unknown.
	Status corev1.ConditionStatus `json:"status"`
	// lastTransitionTime is the last time the condition changed status.
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// reason is a machine-readable PascalCase reason for the last transition.
	// +optional
	Reason string `json:"reason,omitempty"`
	// message is a human-readable explanation.
	// +optional
	Message string `json:"message,omitempty"`
	// observedGeneration is the metadata.generation the condition was set for.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// VerticalPodAutoscalerList is a list of VerticalPodAutoscaler objects.
//
// +kubebuilder:object:root=true
type VerticalPodAutoscalerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VerticalPodAutoscaler `json:"items"`
}
