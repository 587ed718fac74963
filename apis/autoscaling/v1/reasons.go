package v1

// Reasons of the VerticalPodAutoscaler's conditions, as hvpa sets them. The reasons of ConfigUnsupported
// about the targetRef are the Hvpa's too.
const (
	// RecommendationProvided
	ReasonRecommendationProvided = "RecommendationProvided"
	ReasonNoUsage                = "NoUsage"
	// LowConfidence
	ReasonLowConfidence = "LowConfidence"
	ReasonEnoughHistory = "EnoughHistory"
	// NoPodsMatched
	ReasonNoPodsMatched = "NoPodsMatched"
	ReasonPodsMatched   = "PodsMatched"
	// UsageUnavailable
	ReasonMetricsAPIUnavailable = "MetricsAPIUnavailable"
	// FetchingHistory: the usage history (checkpoints, Prometheus) has not loaded yet
	ReasonHistoryNotLoaded = "HistoryNotLoaded"
	// CappedToNode: a target lowered to the largest schedulable node's room, or every target within it
	ReasonNodeAllocatable = "NodeAllocatable"
	ReasonFitsLargestNode = "FitsLargestNode"
	// InPlaceUnavailable: the API server serves no pods/resize subresource
	ReasonNoResizeSubresource = "NoResizeSubresource"

	// ConfigUnsupported: resolved, or why not
	ReasonTargetResolved = "TargetResolved"
	// another autoscaler serves the same workload (the oldest serves it)
	ReasonMultipleAutoscalers = "MultipleAutoscalers"
	// a recommender.hvpa.dev/ annotation does not parse
	ReasonInvalidOverride = "InvalidOverride"
	// the targetRef
	ReasonInvalidTargetRef       = "InvalidTargetRef"
	ReasonTargetNotFound         = "TargetNotFound"
	ReasonUnknownTargetKind      = "UnknownTargetKind"
	ReasonUnsupportedTargetKind  = "UnsupportedTargetKind"
	ReasonParentControllerTarget = "ParentControllerTarget"
	ReasonInvalidSelector        = "InvalidSelector"
	ReasonNoScaleSubresource     = "NoScaleSubresource"
)
