package updater

// Event reasons. Normal: an action taken, or an update held for a routine reason (the workload's disruption
// budget, its minimum replicas, a startup boost); Warning: an update that cannot be made as asked (a resize
// the kubelet refuses, a QoS class change, a stale admission webhook), with its reason in the message.
const (
	// EventResizedInPlace: a pod was resized in place (pods/resize), on the pod and its VPA or Hvpa.
	EventResizedInPlace = "ResizedInPlace"
	// EventResizeFallbackEviction: a resize that could not be made was replaced by an eviction.
	EventResizeFallbackEviction = "ResizeFallbackEviction"
	// EventEvicted is hvpa's own reason: the kubelet's "Evicted" (node-pressure evictions) stays the
	// kubelet's, so alerts on kubelet evictions never count hvpa's.
	EventEvicted = "EvictedByHvpa"
	// EventUpdateSkipped: an update was not made now; the message starts with its reason (below).
	EventUpdateSkipped = "UpdateSkipped"
	// EventEvictionBlocked: the Eviction API refused an eviction (a PodDisruptionBudget).
	EventEvictionBlocked = "EvictionBlocked"
	// EventLoopDetected: a change that did not help is not made again (--update-loop-window).
	EventLoopDetected = "UpdateLoopDetected"
)

// Reasons of skipped updates (first in an UpdateSkipped message) and of evictions that replace a resize.
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
	// ReasonInPlaceUnavailable: the cluster serves no pods/resize (Kubernetes before 1.33) and updateMode InPlace
	// never evicts.
	ReasonInPlaceUnavailable = "InPlaceUnavailable"
	// ReasonStartupBoostOver: a startup-boosted pod goes back to its unboosted CPU.
	ReasonStartupBoostOver = "StartupBoostOver"
)

// routine are the skip reasons of updates held by design (the message says until when): Normal events.
var routine = map[string]bool{ReasonMinReplicas: true, ReasonTolerance: true, ReasonEvictionReqs: true}

// skipEventType is the event type of an update skipped for reason.
func skipEventType(reason string) string {
	if routine[reason] {
		return "Normal"
	}
	return "Warning"
}
