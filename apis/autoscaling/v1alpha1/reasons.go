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
	// ReasonInvalidOverride (RecommendationProvided False): an annotation under recommender.hvpa.dev/ does not
	// parse, or asks for a model the embedded recommender does not run for Hvpas; the recommender skips the Hvpa
	// until it is fixed, so the recommendation in status ages and, once stale, drives no scale-down.
	ReasonInvalidOverride = vpav1.ReasonInvalidOverride
	// ReasonRecommendationStale (RecommendationProvided False): the recommendation in status has not been
	// refreshed for longer than the staleness bound (3 recommender intervals + 5 minutes); scale-downs from it
	// are held (blocked part reason StaleRecommendation), scale-ups still follow it.
	ReasonRecommendationStale = "RecommendationStale"
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
	// Ready and ScalingActive False: the API server refuses spec.hpa.template as an HPA's spec; the Hvpa stays
	// supported (its last intent is still applied) and decides nothing new until the template is corrected
	ReasonHPATemplateRefused = "HPATemplateRefused"
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
	// (Warning) the target's scale subresource refused the replicas a scaling recorded in status (the message
	// has the error); the scaling is retried
	EventScaleFailed = "ScaleFailed"
)
