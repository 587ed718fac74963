package scaling

import (
	"fmt"
	"time"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// Resource is a scaled resource.
type Resource int

// The scaled resources. Amounts are float64 in base units: millicores for CPU, bytes for memory.
const (
	CPU Resource = iota
	Memory
	NumResources
)

// Resources lists every scaled resource, in order.
var Resources = [NumResources]Resource{CPU, Memory}

func (r Resource) String() string {
	switch r {
	case CPU:
		return "cpu"
	case Memory:
		return "memory"
	}
	return fmt.Sprintf("Resource(%d)", int(r))
}

// Values holds an optional amount per resource (millicores for CPU, bytes for memory).
type Values struct {
	v  [NumResources]float64
	ok [NumResources]bool
}

// Get returns the amount of r and whether it is set.
func (v Values) Get(r Resource) (float64, bool) { return v.v[r], v.ok[r] }

// Has reports whether r is set.
func (v Values) Has(r Resource) bool { return v.ok[r] }

// Set sets the amount of r.
func (v *Values) Set(r Resource, x float64) { v.v[r], v.ok[r] = x, true }

// Unset removes r.
func (v *Values) Unset(r Resource) { v.v[r], v.ok[r] = 0, false }

// Empty reports whether no resource is set.
func (v Values) Empty() bool { return !v.ok[CPU] && !v.ok[Memory] }

// V builds Values from CPU millicores and memory bytes; a negative argument leaves that resource unset.
func V(cpuMilli, memoryBytes float64) Values {
	var v Values
	if cpuMilli >= 0 {
		v.Set(CPU, cpuMilli)
	}
	if memoryBytes >= 0 {
		v.Set(Memory, memoryBytes)
	}
	return v
}

// ChangeParams is an amount given as an absolute value, a percentage, or both.
type ChangeParams struct {
	Value, Percentage       float64
	HasValue, HasPercentage bool
}

// Base is base(x) = max(value, x * percentage / 100), 0 when nothing is set (docs/design/scaling.md "Words").
func (c *ChangeParams) Base(x float64) float64 {
	if c == nil {
		return 0
	}
	b := 0.0
	if c.HasValue {
		b = c.Value
	}
	if c.HasPercentage {
		b = max(b, x*c.Percentage/100)
	}
	return b
}

// Threshold is the minChange threshold for a current total x: min(value, percentage% of x) when both are
// set, otherwise the one that is set; 0 when nothing is set.
func (c *ChangeParams) Threshold(x float64) float64 {
	switch {
	case c == nil:
		return 0
	case c.HasValue && c.HasPercentage:
		return min(c.Value, x*c.Percentage/100)
	case c.HasValue:
		return c.Value
	case c.HasPercentage:
		return x * c.Percentage / 100
	}
	return 0
}

// Extrapolation says how effective intervals are made inside one scaling interval.
type Extrapolation string

// The extrapolations.
const (
	ExtrapolationNone           Extrapolation = ""
	ExtrapolationLinear         Extrapolation = "linear"
	ExtrapolationHorizontalOnly Extrapolation = "horizontalOnly"
)

// Interval is one resolved scaling interval: its maxReplicas and per-pod maxResources, defaults applied.
type Interval struct {
	MaxReplicas   int32
	MaxResources  Values
	Extrapolation Extrapolation
}

// UpdateMode says whether the changes of one direction are applied.
type UpdateMode string

// The update modes.
const (
	UpdateModeAuto              UpdateMode = "Auto"
	UpdateModeOff               UpdateMode = "Off"
	UpdateModeMaintenanceWindow UpdateMode = "MaintenanceWindow"
)

// Policy gates the changes of one direction.
type Policy struct {
	Mode          UpdateMode
	MinChange     [NumResources]*ChangeParams
	Stabilization time.Duration
}

// ControlledValues says which values of a container are changed.
type ControlledValues string

// The controlled values.
const (
	RequestsAndLimits ControlledValues = "RequestsAndLimits"
	RequestsOnly      ControlledValues = "RequestsOnly"
)

// RatioType is how a limit is derived from a request by a requestToLimitRatio.
type RatioType string

// The ratio types.
const (
	RatioFactor   RatioType = "Factor"
	RatioQuantity RatioType = "Quantity"
)

// Ratio is a requestToLimitRatio for one resource: limit = request x Factor, or request + Quantity.
type Ratio struct {
	Type     RatioType
	Factor   float64
	Quantity float64
}

// ContainerPolicy is the resolved policy of one container name ("*" for every container without its own).
type ContainerPolicy struct {
	Name             string
	Off              bool
	MinAllowed       Values
	MaxAllowed       Values
	Controlled       [NumResources]bool
	ControlledValues ControlledValues
	Ratio            [NumResources]*Ratio
}

// Spec is an Hvpa's specification as plain values (see FromHvpa).
type Spec struct {
	MinReplicas, MaxReplicas int32
	// Tracking are the load-following total's parameters (DefaultTracking).
	Tracking           Tracking
	Intervals          []Interval
	Overlap            [NumResources]*ChangeParams
	Base               [NumResources]*ChangeParams
	LimitsGap          [NumResources]*ChangeParams
	ScaleUp, ScaleDown Policy
	Window             *Window
	Policies           []ContainerPolicy
	// HPAUtilization is true when every HPA metric is a Resource metric with a Utilization target: the
	// HPA's desired replicas then make a total (h x basis; h_raw x the current per-pod value while h sits at
	// the HPA's minReplicas or maxReplicas); otherwise they are a replica floor.
	HPAUtilization bool
	// HPATargets are the HPA's target utilizations (fractions) of the resources it measures (0: none).
	HPATargets [NumResources]float64
	// HPAMeasures are the resources the HPA's Utilization metrics measure (none set: cpu, the HPA's default
	// metric). At the HPA's bounds its total is h_raw x the values in force for these resources only: h_raw is
	// what they measure, and multiplying another resource's values by it at every decision would grow that
	// resource without bound while h_raw stays above the replicas (say, with cpu capped per pod).
	HPAMeasures [NumResources]bool
}

// hpaMeasures is HPAMeasures with its default.
func (s *Spec) hpaMeasures() [NumResources]bool {
	if s.HPAMeasures == ([NumResources]bool{}) {
		return [NumResources]bool{CPU: true}
	}
	return s.HPAMeasures
}

// PolicyFor returns the policy of a container: its own, else the "*" policy, else the default (controlled
// cpu and memory, RequestsAndLimits).
func (s *Spec) PolicyFor(name string) ContainerPolicy { return PolicyFor(s.Policies, name) }

// PolicyFor returns the policy of container name among policies (vpav1.PolicyIndex: its own, else the "*"
// policy), else the default (controlled cpu and memory, RequestsAndLimits).
func PolicyFor(policies []ContainerPolicy, name string) ContainerPolicy {
	if i := vpav1.PolicyIndex(len(policies), func(i int) string { return policies[i].Name }, name); i >= 0 {
		p := policies[i]
		p.Name = name
		return p
	}
	return ContainerPolicy{Name: name, Controlled: [NumResources]bool{true, true}, ControlledValues: RequestsAndLimits}
}

// Container is the current per-pod requests and limits of one container.
type Container struct {
	Name     string
	Requests Values
	Limits   Values
	// Origin, when set, holds the requests and limits the workload's pod template gives the container: the
	// original limit/request ratio (docs/design/scaling.md section 6) is read from it rather than from Requests and
	// Limits, which an earlier in-place resize with a requestToLimitRatio may have moved off the workload's
	// ratio (AEP-8515: with the policy or the gate gone, limits return to the workload's ratio).
	Origin *Container
	// Kind says where the container is in the pod spec: app containers and sidecars are sized (SizePod); init
	// containers count in the pod's LimitRange sums as the API server counts them (ApplyPodLimitRange).
	Kind ContainerKind
}

// ContainerKind is where a container is in the pod spec.
type ContainerKind int

const (
	// AppContainer is a container of spec.containers.
	AppContainer ContainerKind = iota
	// InitContainer is a container of spec.initContainers that runs to completion before the app containers.
	InitContainer
	// SidecarContainer is a restartable init container (restartPolicy Always): started before the app
	// containers (and the init containers listed after it), it runs beside them, and is sized like them.
	SidecarContainer
)

// Recommendation is the recommender's recommendation for one container.
type Recommendation struct {
	Name string
	// Target and UncappedTarget are per-pod values (the per-pod model).
	Target         Values
	UncappedTarget Values
	// Load is the uncapped target of the replica-aware model of the WHOLE workload's load: a total across all
	// pods with each pod's base (spec.baseResourcesPerReplica) already subtracted (docs/design/scaling.md section 2, L).
	// When it has a resource, the VPA total is Spec.VPATotal of it; otherwise c x UncappedTarget (else Target).
	Load Values
	// Recent is the workload's load (as Load: above the pods' base, summed over the pods) sampled over the
	// last hour (the recommender keeps 1 h: the longest window the decision reads, Tracking.MemoryWindow), oldest first: the current load that the total follows (section 2). Empty: the long history
	// (Load) alone decides.
	Recent []LoadSample
	// MemoryRise is the largest fraction by which the memory load rose within one reaction time (a few
	// minutes), a maximum that decays over a day: memory never follows the load closer than that.
	MemoryRise float64
	// RecurringCPU is the CPU usage (the pods' whole usage, summed) of a burst that came at this time of each of
	// the last periods of RecurringEvery (an hour, a few hours, a day) and starts within minutes (0: none): the
	// CPU estimate of section 2a is at least its load (above the base of pods of that usage), ahead of the
	// burst.
	RecurringCPU   float64
	RecurringEvery time.Duration
	// RecurringFrom and RecurringEnded: a recurring burst was ahead from RecurringFrom (the first minute the
	// recommender saw it ahead; zero: none) and has ended at RecurringEnded, the usage of its first minutes
	// since far below its level (zero: not yet: it is under way, and scale-downs wait, section 5); RecurringBefore is the peak CPU usage (as RecurringCPU) of the minutes
	// before RecurringFrom (-1: none). The CPU estimate reads no sample before RecurringEnded, and when the last
	// scaling came at or after the rise and before that end, the CPU total falls back to the load since, at
	// least the load before (section 2a: the return from a recurring burst).
	RecurringFrom, RecurringEnded time.Time
	RecurringBefore               float64
	// RecurringEndedEarliest is the earliest the burst may have ended (minutes nobody sampled before
	// RecurringEnded: a restart of the recommender, a gap in the metrics; zero: RecurringEnded): a scaling
	// after it may have been a fall back from the burst already, not the rise for it.
	RecurringEndedEarliest time.Time
	// RecurringNext is the first minute, within minutes from now, at which a recurring burst is ahead (zero:
	// none): within RecurQuiet before it, scale-downs wait (section 5).
	RecurringNext time.Time
	// PodMin is the least per-pod value of the container that the embedded recommender gives (its pod
	// minimum, upstream's --pod-recommendation-min-cpu-millicores and -memory-mb, split over the pod's
	// containers): a total from the workload's load is at least c x PodMin, under the container policy's
	// bounds (section 2).
	PodMin Values
}

// LoadSample is one sample of the workload's load (a resource without a value: not sampled).
type LoadSample struct {
	At   time.Time
	Load Values
}

// HPAInput is the HPA's desired replicas, the per-pod requests in force when they last changed, and what the
// HPA's metrics say when its desired replicas are clamped at the template's bounds.
type HPAInput struct {
	Desired int32
	// Basis per container; nil means the desired replicas just changed, so the current requests are the basis.
	Basis map[string]Values
	// Min and Max are the HPA template's minReplicas (default 1) and maxReplicas; 0: unknown.
	Min, Max int32
	// Raw is c x current / target of the HPA's Resource Utilization metrics (the largest ratio over them, the
	// current utilization taken against the requests in force, see HPARaw): the replicas the HPA would want
	// without its bounds; 0 when unknown.
	Raw float64
	// RawAtWork: Raw was measured on the pods at work, none of them ready from a start for less than
	// HPAReadingAge when it was read (the workload's usage; or an HPA reading, over the ready pods, when none
	// had been added or removed within HPAReadingAge either). At the HPA's bounds only such a reading gives a
	// total.
	RawAtWork bool
	// RawCurrent: RawAtWork, and Raw was measured on the pods in force (the workload's usage, or an HPA
	// reading taken against the per-pod requests in force while every replica was ready); an HPA reading
	// from before the pods' last resize is not. Only such a reading raises the HPA's basis.
	RawCurrent bool
}

// AtBound reports whether the HPA's desired replicas sit at the template's minReplicas or maxReplicas.
func (in *HPAInput) AtBound() bool {
	return in != nil && ((in.Max > 0 && in.Desired >= in.Max) || (in.Min > 0 && in.Desired <= in.Min))
}

// Pinned reports whether the HPA's desired replicas sit at the template's minReplicas or maxReplicas with a
// known raw replica count (section 2: the clamped replicas then carry no information, Raw is used instead).
func (in *HPAInput) Pinned() bool {
	return in.AtBound() && in.Raw > 0
}

// LimitRange is the LimitRange bounds that apply to the target's namespace (zero Values: no bound).
type LimitRange struct {
	ContainerMin, ContainerMax Values
	// PodMin and PodMax bound the pod's request and limit of each resource as the API server's LimitRanger
	// sums them (ApplyPodLimitRange).
	PodMin, PodMax Values
	// MaxLimitRequestRatio is a container's largest allowed limit/request per resource.
	MaxLimitRequestRatio Values
	// PodMaxLimitRequestRatio is the pod's largest allowed limit/request per resource (its sums).
	PodMaxLimitRequestRatio Values
}

// State is what the decision looks at besides the spec.
type State struct {
	Now            time.Time
	Replicas       int32
	Containers     []Container
	Recommendation []Recommendation
	HPA            *HPAInput
	LastScaleTime  *time.Time
	// OOMSinceLastScaling: a target pod was OOM-killed (or CPU-starved) since the last scaling.
	OOMSinceLastScaling bool
	LimitRange          *LimitRange
	// InitContainers are the pod's init containers and sidecars, in spec order (Kind InitContainer or
	// SidecarContainer): never sized, they count toward the LimitRange's pod bounds.
	InitContainers []Container
	// LowConfidence: the embedded recommendation's history is shorter than the confidence threshold. Replica
	// scale-downs decided from the VPA source are then blocked (reason LowConfidence); scale-ups are not.
	LowConfidence bool
	// NodeRoom is the room of the largest node the pods may go to (Nodes.RoomFor; nil: unknown, no cap): the intervals'
	// per-pod maxima are lowered to what a pod can have there, so the Hvpa scales out instead.
	NodeRoom *NodeRoom
	// StaleRecommendation: the recommendation has not been refreshed within the staleness bound (the
	// recommender skips the object, or has stopped). Scale-downs decided from the VPA source, of replicas and
	// per pod, are then blocked (reason StaleRecommendation, before LowConfidence); scale-ups are not.
	StaleRecommendation bool
	// PodsResizing: some pod of the target does not run the per-pod values in force (Containers) yet. A replica
	// scale-in waits for them (reason ResizeFirst).
	PodsResizing bool
	// IntentReplicas is the replicas the per-pod values in force are sized for (the last decision's SizedFor;
	// 0: Replicas). Below Replicas, a scale-in waits for the pods to be resized to them: the decision is made
	// from these replicas and applies them once the pods run the values in force.
	IntentReplicas int32
	// RecentUnknown: the recent load is not known in this process yet (the embedded recommender has not run
	// since the process started): a total that follows the recent load keeps the values in force rather than
	// jumping to the long history's total and back (section 2a).
	RecentUnknown bool

	// returning: the last scaling rose for a recurring burst that has ended since (Decide sets it from the
	// recommendations): the scale-down stabilization does not hold the fall back (section 5).
	returning bool
	// burstSoon: a recurring burst is ahead again within RecurQuiet, burstSince: one is under way since
	// (Decide sets them): scale-downs wait.
	burstSoon, burstSince time.Time
}

// vpaHold is why scale-downs decided from the VPA source are held in st, and what they wait for, in the words
// of the blocked parts' messages; ok is false when they are not held.
func (st State) vpaHold() (reason hvpav1alpha1.BlockReason, why, waitFor string, ok bool) {
	switch {
	case st.StaleRecommendation:
		return hvpav1alpha1.BlockReasonStaleRecommendation, "the recommendation is stale (not refreshed within the bound; see the RecommendationProvided condition)",
			"a fresh one", true
	case st.LowConfidence:
		return hvpav1alpha1.BlockReasonLowConfidence, "the recommendation's history is shorter than the confidence threshold", "more history", true
	}
	return "", "", "", false
}

// VPATotal is the VPA-source total of resource r for c replicas from the workload's load (docs/design/scaling.md section
// 2): T = load + c x base_r(pCur), where load is the replica-aware model's uncapped target with the per-pod
// base subtracted (Recommendation.Load) and pCur the container's current per-pod request (0 when unset).
func (s *Spec) VPATotal(r Resource, load float64, c int32, pCur float64) float64 {
	return load + float64(c)*s.Base[r].Base(pCur)
}
