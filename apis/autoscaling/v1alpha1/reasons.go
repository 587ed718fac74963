package v1alpha1

import vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"

// Reasons of the Hvpa's conditions.
const (
	// Ready: the reason of ScalingActive when it is not
	ReasonReady     = "Ready"
	ReasonNotActive = "NotActive"
	// RecommendationProvided
	ReasonRecommendationProvided = vpav1.ReasonRecommendationProvided
	ReasonNoRecommendation       = "NoRecommendation"
	// ScalingActive
	ReasonValidRecommendation = "ValidRecommendation"
	ReasonScalingDisabled     = "ScalingDisabled"
	// ScalingLimited
	ReasonLimited      = "Limited"
	ReasonWithinBounds = "WithinBounds"
	// LowConfidence
	ReasonLowConfidence = vpav1.ReasonLowConfidence
	ReasonEnoughHistory = vpav1.ReasonEnoughHistory
	// ConfigUnsupported (and the targetRef reasons of vpav1)
	ReasonInvalidSpec         = "InvalidSpec"
	ReasonDecisionFailed      = "DecisionFailed"
	ReasonMultipleAutoscalers = vpav1.ReasonMultipleAutoscalers
	ReasonNoScaleSubresource  = vpav1.ReasonNoScaleSubresource
	// another HPA has the name of the Hvpa's HPA
	ReasonHPANameTaken = "HPANameTaken"
	// ConfigUnsupported False: the target resolved and the HPA is the Hvpa's
	ReasonSupported = "Supported"
	// CappedToNode
	ReasonNodeAllocatable = vpav1.ReasonNodeAllocatable
	ReasonFitsLargestNode = vpav1.ReasonFitsLargestNode
	// InPlaceUnavailable
	ReasonNoResizeSubresource = vpav1.ReasonNoResizeSubresource
)

// Reasons of the events on an Hvpa.
const (
	// a scaling applied: replicas, per-pod requests, or both
	EventRescaled = "Rescaled"
	// a change the decision wanted and a rule held back (the message names the rule)
	EventScalingBlocked = "ScalingBlocked"
	// the HPA the Hvpa owns (spec.hpa.deploy) was created, updated from its template, or removed
	EventHPACreated = "HPACreated"
	EventHPAUpdated = "HPAUpdated"
	EventHPARemoved = "HPARemoved"
	// the per-pod maximum was lowered to what the largest schedulable node holds (the message says by how much)
	EventCappedToNode = "CappedToNode"
)
