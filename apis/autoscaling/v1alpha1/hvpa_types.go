package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hvpa-dev/hvpa/apis/autoscaling/decodeerr"
	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// Hvpa scales one workload horizontally (replicas) and vertically (per-pod requests) from one set of
// scaling intervals. An HPA may target the Hvpa's scale subresource; its desired replicas are one input to
// the decision, the embedded recommender is the other.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=hvpa,path=hvpas,singular=hvpa,scope=Namespaced
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, hvpa is an out-of-tree autoscaler that uses the autoscaling.k8s.io group like the upstream VPA"
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Target",type="string",JSONPath=".spec.targetRef.name"
// +kubebuilder:printcolumn:name="Replicas",type="integer",JSONPath=".status.replicas"
// +kubebuilder:printcolumn:name="Desired",type="integer",JSONPath=".status.desired.replicas"
// +kubebuilder:printcolumn:name="CPU",type="string",JSONPath=".status.desired.containers[0].requests.cpu",description="Per-pod CPU request intended for the first container"
// +kubebuilder:printcolumn:name="Memory",type="string",JSONPath=".status.desired.containers[0].requests.memory",description="Per-pod memory request intended for the first container"
// +kubebuilder:printcolumn:name="Ready",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].status"
// +kubebuilder:printcolumn:name="Reason",type="string",JSONPath=".status.conditions[?(@.type=='Ready')].reason",priority=1
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type Hvpa struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired behaviour of the Hvpa.
	// +required
	Spec HvpaSpec `json:"spec"`

	// status is the most recently observed state of the Hvpa.
	// +optional
	Status HvpaStatus `json:"status,omitempty"`

	// DecodeError is set, in place of spec and status, when the stored object cannot be read (a value the
	// API server accepted before the CRD's validation rules existed): it names the field and the fix. Never
	// serialized; the controllers report it in a condition and serve the other objects.
	DecodeError string `json:"-"`
}

// UnmarshalJSON decodes one object on its own: an object that does not decode becomes its metadata and a
// DecodeError instead of failing the list it arrives in (every object of the kind would stop being served).
func (o *Hvpa) UnmarshalJSON(data []byte) error {
	type plain Hvpa // without this method
	return decodeerr.Unmarshal(data, func(p *plain) { *o = Hvpa(*p) }, func(tm metav1.TypeMeta, om metav1.ObjectMeta, msg string) {
		*o = Hvpa{TypeMeta: tm, ObjectMeta: om, DecodeError: msg}
	})
}

// HvpaSpec is the specification of an Hvpa.
//
// +kubebuilder:validation:XValidation:rule="!((has(self.scaleUp) && has(self.scaleUp.updatePolicy) && has(self.scaleUp.updatePolicy.updateMode) && self.scaleUp.updatePolicy.updateMode == 'MaintenanceWindow') || (has(self.scaleDown) && has(self.scaleDown.updatePolicy) && has(self.scaleDown.updatePolicy.updateMode) && self.scaleDown.updatePolicy.updateMode == 'MaintenanceWindow')) || has(self.maintenanceTimeWindow)",message="updateMode MaintenanceWindow needs spec.maintenanceTimeWindow (begin and end as HHMMSS+ZZZZ); add the window or choose updateMode Auto or Off",fieldPath=".maintenanceTimeWindow",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="!has(self.hpa) || !has(self.hpa.template) || !has(self.hpa.template.minReplicas) || self.hpa.template.minReplicas <= self.hpa.template.maxReplicas",message="hpa.template.minReplicas must not be greater than hpa.template.maxReplicas; lower minReplicas or raise maxReplicas",fieldPath=".hpa.template.minReplicas"
// +kubebuilder:validation:XValidation:rule="has(self.scalingIntervals[size(self.scalingIntervals)-1].maxReplicas) || (has(self.hpa) && has(self.hpa.template))",message="the last scaling interval has no maxReplicas and there is no spec.hpa.template.maxReplicas to default it from; set maxReplicas on the last interval",fieldPath=".scalingIntervals"
// +kubebuilder:validation:XValidation:rule="!has(self.hpa) || !has(self.hpa.deploy) || !self.hpa.deploy || has(self.hpa.template)",message="hpa.deploy needs hpa.template (at least maxReplicas) for the HPA it creates; add the template, or set deploy to false to follow an HPA, a KEDA ScaledObject or kubectl scale on the Hvpa's scale subresource",fieldPath=".hpa.template",reason="FieldValueRequired"
type HvpaSpec struct {
	// targetRef points to the workload to scale: a Deployment, StatefulSet, ReplicaSet or any resource with
	// a scale subresource. It cannot change: the Hvpa's status (its intent, last scaling, HPA basis), its HPA
	// and its recommender's history are the workload's; to scale another workload, create another Hvpa.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="targetRef cannot change: this Hvpa's status, HPA and history belong to the workload it names; delete it and create an Hvpa for the other workload"
	TargetRef autoscalingv2.CrossVersionObjectReference `json:"targetRef"`

	// replicas is the HPA's desired replica count, written by an HPA through this object's scale
	// subresource. It is an input to the decision, not the applied replica count (see status.desired).
	// When unset, the Hvpa controller sets it to the target's replicas (the scale subresource cannot be
	// read without it).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Replicas *int32 `json:"replicas,omitempty"`

	// hpa configures the horizontal input.
	// +optional
	HPA *HpaSpec `json:"hpa,omitempty"`

	// vpa configures the vertical input (the embedded recommender).
	// +optional
	VPA *VpaSpec `json:"vpa,omitempty"`

	// scalingIntervals are the replica ranges and the per-pod maximum resources within each, in increasing
	// order of maxReplicas. Only the last interval may omit maxReplicas (defaulted from
	// hpa.template.maxReplicas) and maxResources (defaulted from the VPA template's maxAllowed).
	// +required
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +listType=atomic
	// +kubebuilder:validation:XValidation:rule="self.all(x, has(x.maxReplicas)) || (self.filter(x, !has(x.maxReplicas)).size() == 1 && !has(self[size(self)-1].maxReplicas))",message="only the last interval may omit maxReplicas (it then defaults to hpa.template.maxReplicas); set maxReplicas on every other interval"
	// +kubebuilder:validation:XValidation:rule="self.filter(x, has(x.maxReplicas)).map(x, x.maxReplicas).isSorted() && self.all(a, !has(a.maxReplicas) || self.exists_one(b, has(b.maxReplicas) && b.maxReplicas == a.maxReplicas))",message="maxReplicas must strictly increase from one interval to the next; order the intervals by maxReplicas and remove duplicates"
	// +kubebuilder:validation:XValidation:rule="[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18].all(i, i >= size(self) - 1 || !has(self[i].maxResources) || !has(self[i+1].maxResources) || ((!has(self[i].maxResources.cpu) || !has(self[i+1].maxResources.cpu) || !isQuantity(string(self[i].maxResources.cpu)) || !isQuantity(string(self[i+1].maxResources.cpu)) || quantity(string(self[i].maxResources.cpu)).compareTo(quantity(string(self[i+1].maxResources.cpu))) <= 0) && (!has(self[i].maxResources.memory) || !has(self[i+1].maxResources.memory) || !isQuantity(string(self[i].maxResources.memory)) || !isQuantity(string(self[i+1].maxResources.memory)) || quantity(string(self[i].maxResources.memory)).compareTo(quantity(string(self[i+1].maxResources.memory))) <= 0)))",message="maxResources must not decrease from one interval to the next (per resource); give each later interval at least the resources of the one before"
	// +kubebuilder:validation:XValidation:rule="!self.exists(x, has(x.effectiveIntervalExtrapolation)) || self.all(x, !has(x.maxReplicas) || x.maxReplicas <= 1000)",message="with effectiveIntervalExtrapolation (one effective interval per replica count) every maxReplicas must be at most 1000; lower maxReplicas or drop the extrapolation"
	ScalingIntervals []ScalingInterval `json:"scalingIntervals"`

	// scalingIntervalsOverlap sets, per resource, how far below an interval's upper boundary the total may
	// fall before the workload scales down to the previous interval (hysteresis). value is a TOTAL quantity
	// across all replicas; percentage is of the previous interval's upper total. Without an overlap the
	// down boundary equals the previous interval's upper boundary.
	// +optional
	ScalingIntervalsOverlap *ResourceChangeParams `json:"scalingIntervalsOverlap,omitempty"`

	// baseResourcesPerReplica is the per-pod overhead of one replica (value per pod, percentage of the
	// per-pod value), used to budget resources when the replica count changes.
	// +optional
	BaseResourcesPerReplica *ResourceChangeParams `json:"baseResourcesPerReplica,omitempty"`

	// scaleUp gates changes that increase replicas or a total.
	// +optional
	ScaleUp *ScaleParams `json:"scaleUp,omitempty"`

	// scaleDown gates changes that decrease replicas or a total.
	// +optional
	ScaleDown *ScaleParams `json:"scaleDown,omitempty"`

	// maintenanceTimeWindow is the daily window in which updateMode MaintenanceWindow applies changes.
	// +optional
	MaintenanceTimeWindow *MaintenanceTimeWindow `json:"maintenanceTimeWindow,omitempty"`

	// limitsRequestsGapScaleParams, when set, makes the limit at least request + max(value, percentage% of
	// the request) per resource.
	// +optional
	LimitsRequestsGapScaleParams *ResourceChangeParams `json:"limitsRequestsGapScaleParams,omitempty"`
}

// HpaSpec configures the horizontal input of an Hvpa.
type HpaSpec struct {
	// deploy makes the Hvpa create and own an autoscaling/v2 HorizontalPodAutoscaler that targets the Hvpa's
	// scale subresource. When false, an existing one is removed, and spec.replicas as anyone else writes it
	// (an HPA or a KEDA ScaledObject that targets the Hvpa, kubectl scale) is the horizontal input.
	// +optional
	Deploy bool `json:"deploy,omitempty"`

	// template is the HPA's specification. Required with deploy; without deploy it only gives the Hvpa's
	// replica bounds (minReplicas, and maxReplicas for a last interval without one).
	// +optional
	Template HpaTemplate `json:"template,omitzero"`
}

// HpaTemplate is the part of a HorizontalPodAutoscaler spec that an Hvpa controls.
type HpaTemplate struct {
	// minReplicas is the lowest replica count. Default 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// maxReplicas is the highest replica count, at most 100000 (far above what one workload runs: Kubernetes
	// is tested to 150,000 pods in a whole cluster).
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MaxReplicas int32 `json:"maxReplicas"`

	// metrics are the HPA's metrics, as in autoscaling/v2.
	// +optional
	// +listType=atomic
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`

	// behavior is the HPA's scaling behaviour, as in autoscaling/v2. Unless set here, the HPA the Hvpa creates
	// gets a scale-down stabilization window of 0 seconds: the Hvpa's own hysteresis replaces it.
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// VpaSpec configures the vertical input of an Hvpa.
type VpaSpec struct {
	// deploy turns on the embedded recommender for the target's pods. No VerticalPodAutoscaler object is
	// created.
	// +optional
	Deploy bool `json:"deploy,omitempty"`

	// template holds the per-container policies.
	// +optional
	Template VpaTemplate `json:"template,omitempty"`
}

// VpaTemplate is the part of a VerticalPodAutoscaler spec that an Hvpa uses.
type VpaTemplate struct {
	// resourcePolicy holds the per-container policies (mode, minAllowed, maxAllowed, controlledResources,
	// controlledValues, requestToLimitRatio), as in a VerticalPodAutoscaler.
	// +optional
	ResourcePolicy *vpav1.PodResourcePolicy `json:"resourcePolicy,omitempty"`

	// updatePolicy says how the updater brings running pods to status.desired: updateMode (default
	// InPlaceOrRecreate; Off and Initial leave running pods to the admission webhook at their next
	// creation), minReplicas and evictionRequirements, as in a VerticalPodAutoscaler.
	// +optional
	UpdatePolicy *vpav1.PodUpdatePolicy `json:"updatePolicy,omitempty"`
}

// Extrapolation says how effective intervals are made inside one scaling interval.
// +kubebuilder:validation:Enum=linear;horizontalOnly
type Extrapolation string

const (
	// ExtrapolationLinear makes one effective interval per replica count, with the upper total growing
	// linearly from the previous interval's to this one's.
	ExtrapolationLinear Extrapolation = "linear"
	// ExtrapolationHorizontalOnly makes one effective interval per replica count with the per-pod value
	// pinned to maxResources: only replicas change inside the interval.
	ExtrapolationHorizontalOnly Extrapolation = "horizontalOnly"
)

// ScalingInterval is one range of replicas and the per-pod maximum resources within it.
type ScalingInterval struct {
	// maxReplicas is the highest replica count of the interval, at most 100000 (1000 with
	// effectiveIntervalExtrapolation). Only the last interval may omit it; it then defaults to
	// hpa.template.maxReplicas.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MaxReplicas *int32 `json:"maxReplicas,omitempty"`

	// maxResources is the per-pod maximum of each scaled resource inside the interval; it applies to every
	// scaled container. A resource left out defaults to the VPA template's maxAllowed.
	// +optional
	MaxResources *ScaledResources `json:"maxResources,omitempty"`

	// effectiveIntervalExtrapolation is linear, horizontalOnly, or unset (one effective interval).
	// +optional
	EffectiveIntervalExtrapolation *Extrapolation `json:"effectiveIntervalExtrapolation,omitempty"`
}

// ChangeParams is an amount given as an absolute value, a percentage, or both; the larger of the two is
// used (base(x) = max(value, x x percentage / 100)), except for minChange, which uses the smaller.
//
// +kubebuilder:validation:XValidation:rule="has(self.value) || has(self.percentage)",message="set value, percentage, or both"
type ChangeParams struct {
	// value is an absolute quantity, e.g. 100m or 512Mi.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!string(self).startsWith('-')",message="value must not be negative"
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",message="value must be a Kubernetes quantity such as 100m or 512Mi (a decimal number, then an optional suffix; an exponent must be a whole number)"
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || quantity(string(self)).compareTo(quantity('100T')) <= 0",message="value must be at most 100T"
	Value *resource.Quantity `json:"value,omitempty"`

	// percentage is a percentage from 0 to 100.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Percentage *int32 `json:"percentage,omitempty"`
}

// ScaleParams gates the changes of one direction.
type ScaleParams struct {
	// updatePolicy says whether changes of this direction are applied.
	// +optional
	UpdatePolicy *UpdatePolicy `json:"updatePolicy,omitempty"`

	// minChange is, per resource, the smallest change of the TOTAL that is applied (value is a total;
	// percentage is of the current total; with both, the smaller threshold counts).
	// +optional
	MinChange *ResourceChangeParams `json:"minChange,omitempty"`

	// stabilizationDuration is how long after the last scaling (of any direction) no change of this
	// direction is applied, e.g. 3m.
	// +optional
	StabilizationDuration *metav1.Duration `json:"stabilizationDuration,omitempty"`
}

// UpdatePolicy says whether changes of one direction are applied.
type UpdatePolicy struct {
	// updateMode is Auto (apply), Off (never apply) or MaintenanceWindow (apply only inside
	// spec.maintenanceTimeWindow).
	// +optional
	// +kubebuilder:default=Auto
	UpdateMode *UpdateMode `json:"updateMode,omitempty"`
}

// UpdateMode says whether changes of one direction are applied.
// +kubebuilder:validation:Enum=Auto;Off;MaintenanceWindow
type UpdateMode string

const (
	// UpdateModeAuto applies changes.
	UpdateModeAuto UpdateMode = "Auto"
	// UpdateModeOff never applies changes.
	UpdateModeOff UpdateMode = "Off"
	// UpdateModeMaintenanceWindow applies changes only inside spec.maintenanceTimeWindow.
	UpdateModeMaintenanceWindow UpdateMode = "MaintenanceWindow"
)

// MaintenanceTimeWindow is a daily time window; it may wrap midnight (begin later than end).
type MaintenanceTimeWindow struct {
	// begin is the start of the window as HHMMSS+ZZZZ, e.g. 220000+0000.
	// +required
	// +kubebuilder:validation:XValidation:rule="self.matches('^([01][0-9]|2[0-3])[0-5][0-9][0-5][0-9][+-]([01][0-9]|2[0-3])[0-5][0-9]$')",message="must be a time of day as HHMMSS+ZZZZ (hours, minutes, seconds, then the UTC offset), e.g. 220000+0000"
	Begin string `json:"begin"`

	// end is the end of the window as HHMMSS+ZZZZ, e.g. 060000+0000.
	// +required
	// +kubebuilder:validation:XValidation:rule="self.matches('^([01][0-9]|2[0-3])[0-5][0-9][0-5][0-9][+-]([01][0-9]|2[0-3])[0-5][0-9]$')",message="must be a time of day as HHMMSS+ZZZZ (hours, minutes, seconds, then the UTC offset), e.g. 060000+0000"
	End string `json:"end"`
}

// ScaledResources is a per-pod quantity of each scaled resource.
type ScaledResources struct {
	// cpu, e.g. 500m or 2.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!string(self).startsWith('-')",message="cpu must not be negative"
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",message="cpu must be a Kubernetes quantity such as 500m or 2 (a decimal number, then an optional suffix; an exponent must be a whole number)"
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || quantity(string(self)).compareTo(quantity('100G')) <= 0",message="cpu must be at most 100G (1e11 cores)"
	CPU *resource.Quantity `json:"cpu,omitempty"`
	// memory, e.g. 512Mi or 2Gi.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!string(self).startsWith('-')",message="memory must not be negative"
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self))",message="memory must be a Kubernetes quantity such as 512Mi or 2Gi (a decimal number, then an optional suffix; an exponent must be a whole number)"
	// +kubebuilder:validation:XValidation:rule="!isQuantity(string(self)) || quantity(string(self)).compareTo(quantity('100T')) <= 0",message="memory must be at most 100T (1e14 bytes)"
	Memory *resource.Quantity `json:"memory,omitempty"`
}

// ResourceChangeParams holds ChangeParams per scaled resource.
type ResourceChangeParams struct {
	// cpu parameters.
	// +optional
	CPU *ChangeParams `json:"cpu,omitempty"`
	// memory parameters.
	// +optional
	Memory *ChangeParams `json:"memory,omitempty"`
}
