package updater

// Event reasons. Normal: an action taken; Warning: an update not made, with its reason in the message.
const (
	EventResizedInPlace         = "ResizedInPlace"
	EventResizeFallbackEviction = "ResizeFallbackEviction"
	EventEvicted                = "Evicted"
	EventUpdateSkipped          = "UpdateSkipped"
	EventEvictionBlocked        = "EvictionBlocked"
	EventLoopDetected           = "UpdateLoopDetected"
)

// Reasons (event reasons of skipped updates and of evictions that replace a resize).
const (
	ReasonInfeasible        = "ResizeInfeasible"
	ReasonDeferredTooLong   = "ResizeDeferredTooLong"
	ReasonInProgressTooLong = "ResizeInProgressTooLong"
	ReasonQoSChange         = "QoSClassWouldChange"
	ReasonEvictionReqs      = "EvictionRequirementsNotMet"
	ReasonMinReplicas       = "TooFewReplicas"
	ReasonTolerance         = "EvictionToleranceReached"
	ReasonModeInPlace       = "InPlaceOnly"
	ReasonResizeRefused     = "ResizeRefused"
	// ReasonStartupBoostOver: a startup-boosted pod goes back to its unboosted CPU.
	ReasonStartupBoostOver = "StartupBoostOver"
)
