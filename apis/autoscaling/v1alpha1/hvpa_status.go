package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// HvpaStatus is the observed state of an Hvpa: what it saw, what it decided and why.
type HvpaStatus struct {
	// replicas is the target's actual replica count (read by an HPA through the scale subresource).
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// selector is the target's pod label selector in string form (read by an HPA through the scale
	// subresource).
	// +optional
	Selector string `json:"selector,omitempty"`

	// observedGeneration is the generation of the spec the status was computed from.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, RecommendationProvided, LowConfidence, ScalingActive, ScalingLimited, ConfigUnsupported.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// recommendation is the embedded recommender's per-container recommendation for the target's pods: the
	// per-pod view, for the current replicas, of workloadRecommendation.
	// +optional
	Recommendation *vpav1.RecommendedPodResources `json:"recommendation,omitempty"`

	// workloadRecommendation is what the embedded recommender's model of the WHOLE workload recommends
	// (replica-aware): per container, the load of all pods together and the total it makes for the current
	// replicas. A restart decides from it until the recommender has a fresh one.
	// +optional
	WorkloadRecommendation *WorkloadRecommendation `json:"workloadRecommendation,omitempty"`

	// effectiveScalingIntervals are the intervals the decision uses, derived from spec.scalingIntervals: all
	// of them up to 21, else the 21 around the current replicas (an extrapolated interval makes one per
	// replica count, up to 1000). `hvpa intervals -f` prints them all.
	// +optional
	// +listType=atomic
	EffectiveScalingIntervals []EffectiveScalingInterval `json:"effectiveScalingIntervals,omitempty"`

	// effectiveScalingIntervalCount is how many effective intervals spec.scalingIntervals make (status lists
	// at most 21 of them).
	// +optional
	EffectiveScalingIntervalCount int32 `json:"effectiveScalingIntervalCount,omitempty"`

	// hpa is the HPA input: its desired replicas and the per-pod values in force when they last changed.
	// +optional
	HPA *HpaStatus `json:"hpa,omitempty"`

	// desired is the sizing intent: the replicas applied to the target and the per-container requests and
	// limits that the admission webhook and the updater apply to pods.
	// +optional
	Desired *DesiredState `json:"desired,omitempty"`

	// lastScaling is the last change that was applied.
	// +optional
	LastScaling *ScalingRecord `json:"lastScaling,omitempty"`

	// lastBlockedScaling is the last change that was (partly) not applied, with the reason for each part.
	// +optional
	LastBlockedScaling *BlockedScaling `json:"lastBlockedScaling,omitempty"`
}

// EffectiveScalingInterval is one effective interval: a replica count and, per resource, the TOTAL across
// all replicas above which the workload scales up (up) and below which it scales down (down).
type EffectiveScalingInterval struct {
	// replicas of this interval.
	Replicas int32 `json:"replicas"`
	// up is, per resource, the upper boundary of the total.
	Up corev1.ResourceList `json:"up"`
	// down is, per resource, the lower boundary of the total.
	Down corev1.ResourceList `json:"down"`
}

// WorkloadRecommendation is the replica-aware recommendation of an Hvpa's embedded recommender.
type WorkloadRecommendation struct {
	// replicas the totals and the per-pod view (status.recommendation) are computed for.
	Replicas int32 `json:"replicas"`
	// lastUpdateTime is when the embedded recommender last provided this recommendation: set when it changes,
	// and at least every quarter of the staleness bound (3 recommender intervals + 5 minutes) while the
	// recommender keeps providing it. Older than the bound, it is stale: scale-downs from it are held.
	// +optional
	LastUpdateTime *metav1.Time `json:"lastUpdateTime,omitempty"`
	// containers are the recommendations per container.
	// +optional
	// +listType=map
	// +listMapKey=name
	Containers []ContainerLoad `json:"containers,omitempty"`
}

// ContainerLoad is the replica-aware recommendation of one container.
type ContainerLoad struct {
	// name of the container.
	Name string `json:"name"`
	// load is the recommended load of the whole workload: the target of the history of the sum over its pods
	// of the usage above each pod's base (spec.baseResourcesPerReplica), uncapped.
	// +optional
	Load corev1.ResourceList `json:"load,omitempty"`
	// lowerBound and upperBound of the load.
	// +optional
	LowerBound corev1.ResourceList `json:"lowerBound,omitempty"`
	// +optional
	UpperBound corev1.ResourceList `json:"upperBound,omitempty"`
	// total is load + replicas x base(per-pod request): the total the decision uses.
	// +optional
	Total corev1.ResourceList `json:"total,omitempty"`
}

// HpaStatus records the HPA input.
type HpaStatus struct {
	// source says who writes spec.replicas and how it counts: the HPA this Hvpa deploys, another
	// HorizontalPodAutoscaler that targets the Hvpa (a user's, or one a KEDA ScaledObject made), or a writer of
	// the scale subresource with no HPA (kubectl scale: a replica floor).
	// +optional
	Source string `json:"source,omitempty"`
	// desiredReplicas is the HPA's desired replica count (spec.replicas) last seen.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`
	// basis is the per-pod value of each container in force when desiredReplicas last changed (after a
	// decrease, no more than the previous total over the new count), raised while the HPA reads the pods above
	// its tolerance. The HPA total is desiredReplicas x basis (for Utilization Resource metrics).
	// +optional
	// +listType=map
	// +listMapKey=name
	Basis []ContainerResources `json:"basis,omitempty"`
	// lastChangeTime is when desiredReplicas last changed.
	// +optional
	LastChangeTime *metav1.Time `json:"lastChangeTime,omitempty"`
}

// ContainerResources are the per-pod requests (and limits) of one container.
type ContainerResources struct {
	// name of the container.
	Name string `json:"name"`
	// requests per pod.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty"`
	// limits per pod.
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty"`
}

// DesiredState is the sizing intent of an Hvpa.
type DesiredState struct {
	// replicas is the replica count applied to the target.
	Replicas int32 `json:"replicas"`
	// sizedForReplicas is the replica count the per-pod values are sized for when it is below replicas: a
	// scale-in that waits for the pods that stay to be resized first (blocked part ResizeFirst). Unset: the
	// per-pod values are sized for replicas.
	// +optional
	SizedForReplicas int32 `json:"sizedForReplicas,omitempty"`
	// containers are the per-pod requests and limits of each scaled container.
	// +optional
	// +listType=map
	// +listMapKey=name
	Containers []ContainerResources `json:"containers,omitempty"`
	// totals are, per container and resource, the totals the decision used and the interval each chose.
	// +optional
	// +listType=atomic
	Totals []ResourceTotal `json:"totals,omitempty"`
}

// ResourceTotal is the total of one container and resource and the replicas it asked for.
type ResourceTotal struct {
	// container name.
	Container string `json:"container"`
	// resource name (cpu or memory).
	Resource corev1.ResourceName `json:"resource"`
	// total across all replicas.
	Total resource.Quantity `json:"total"`
	// source of the total that won: Load (following the recent load), VPA (the long history) or HPA.
	Source string `json:"source"`
	// replicas this total asks for.
	Replicas int32 `json:"replicas"`
}

// ScalingRecord is an applied change.
type ScalingRecord struct {
	// time of the change.
	Time metav1.Time `json:"time"`
	// fromReplicas is the replica count before the change.
	FromReplicas int32 `json:"fromReplicas"`
	// toReplicas is the replica count after the change.
	ToReplicas int32 `json:"toReplicas"`
	// containers are the per-pod requests after the change.
	// +optional
	// +listType=map
	// +listMapKey=name
	Containers []ContainerResources `json:"containers,omitempty"`
	// message describes the change, before -> after.
	// +optional
	Message string `json:"message,omitempty"`
}

// BlockedScaling is a change that was not (fully) applied.
type BlockedScaling struct {
	// time of the decision.
	Time metav1.Time `json:"time"`
	// parts that were blocked, each with its reason.
	// +listType=atomic
	Parts []BlockedPart `json:"parts"`
}

// Direction of a change.
// +kubebuilder:validation:Enum=Up;Down
type Direction string

const (
	// DirectionUp is a change that increases replicas or a total.
	DirectionUp Direction = "Up"
	// DirectionDown is a change that decreases replicas or a total.
	DirectionDown Direction = "Down"
)

// BlockReason is why a part of a change was not applied.
// +kubebuilder:validation:Enum=UpdatePolicy;MaintenanceWindow;StabilizationWindow;MinChange;Saturated;LowConfidence;StaleRecommendation;ResizeFirst
type BlockReason string

const (
	// BlockReasonUpdatePolicy: the direction's updateMode is Off.
	BlockReasonUpdatePolicy BlockReason = "UpdatePolicy"
	// BlockReasonMaintenanceWindow: updateMode MaintenanceWindow and now is outside the window.
	BlockReasonMaintenanceWindow BlockReason = "MaintenanceWindow"
	// BlockReasonStabilizationWindow: the last scaling is more recent than stabilizationDuration.
	BlockReasonStabilizationWindow BlockReason = "StabilizationWindow"
	// BlockReasonMinChange: the change of the total is smaller than minChange.
	BlockReasonMinChange BlockReason = "MinChange"
	// BlockReasonSaturated: the total is above the top interval; the workload cannot grow further.
	BlockReasonSaturated BlockReason = "Saturated"
	// BlockReasonLowConfidence: a replica scale-down decided from the embedded recommendation, whose history
	// is shorter than the confidence threshold.
	BlockReasonLowConfidence BlockReason = "LowConfidence"
	// BlockReasonStaleRecommendation: a scale-down (replicas or per pod) decided from the embedded
	// recommendation, which the recommender has not refreshed within the staleness bound (RecommendationProvided
	// False with reason RecommendationStale or InvalidOverride says why).
	BlockReasonStaleRecommendation BlockReason = "StaleRecommendation"
	// BlockReasonResizeFirst: a replica scale-in waits until the pods that stay run the per-pod values it
	// needs (they are resized first; removing pods before would load the others beyond their sizes).
	BlockReasonResizeFirst BlockReason = "ResizeFirst"
)

// BlockedPart is one part of a change that was not applied.
type BlockedPart struct {
	// part is "replicas" or "<container>/<resource>".
	Part string `json:"part"`
	// direction of the blocked change.
	Direction Direction `json:"direction"`
	// reason it was blocked.
	Reason BlockReason `json:"reason"`
	// message says what was blocked, before -> after, and why.
	// +optional
	Message string `json:"message,omitempty"`
}

// Condition types of an Hvpa.
const (
	// ConditionReady is true when the Hvpa works as configured.
	ConditionReady = "Ready"
	// ConditionRecommendationProvided is true when a recommendation is available.
	ConditionRecommendationProvided = "RecommendationProvided"
	// ConditionScalingActive is true when the Hvpa can scale its target.
	ConditionScalingActive = "ScalingActive"
	// ConditionScalingLimited is true when the desired scaling is clamped (saturated at the top interval or
	// at min/max replicas).
	ConditionScalingLimited = "ScalingLimited"
	// ConditionConfigUnsupported is true when the Hvpa cannot act as configured (e.g. another autoscaler
	// targets the same workload).
	ConditionConfigUnsupported = "ConfigUnsupported"
	// ConditionLowConfidence is true when the embedded recommendation rests on less history than the
	// confidence threshold: scale-downs decided from it, of replicas and per pod, are blocked (scale-ups are
	// not). Present only while the embedded recommender is on (spec.vpa.deploy).
	ConditionLowConfidence = "LowConfidence"
	// ConditionCappedToNode is true while the per-pod maximum is lowered so that a pod fits the largest
	// schedulable node's allocatable less what DaemonSets take there: the Hvpa then goes out to more replicas
	// within its intervals instead of sizing pods no node can hold.
	ConditionCappedToNode = "CappedToNode"
	// ConditionInPlaceUnavailable is true while the cluster serves no pods/resize (before Kubernetes 1.33) and
	// the Hvpa's updateMode resizes in place: pods are evicted instead (InPlaceOrRecreate, the default) or left
	// as they are (InPlace).
	ConditionInPlaceUnavailable = "InPlaceUnavailable"
)

// HvpaList is a list of Hvpa objects.
//
// +kubebuilder:object:root=true
type HvpaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Hvpa `json:"items"`
}
