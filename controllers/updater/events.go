package updater

import (
	corev1 "k8s.io/api/core/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// Event reasons. Normal: an action taken, or an update held for a routine reason (the workload's disruption
// budget, its minimum replicas, a startup boost); Warning: an update that cannot be made as asked (a resize
// the kubelet refuses, a QoS class change, a stale admission webhook), with its reason in the message. The
// pods of a VerticalPodAutoscaler get upstream VPA's updater's reasons where upstream has one (EvictedByVPA,
// EvictedPod, InPlaceResizedByVPA, InPlaceResizeSkipped), so that what watches upstream's events keeps
// working; an Hvpa's pods get hvpa's own.
const (
	// EventResizedInPlace: a pod was resized in place (pods/resize), on an Hvpa's pod, and on the VPA or Hvpa.
	EventResizedInPlace = "ResizedInPlace"
	// EventResizeFallbackEviction: a resize that could not be made was replaced by an eviction (an Hvpa's pod
	// and the Hvpa).
	EventResizeFallbackEviction = "ResizeFallbackEviction"
	// EventEvicted is hvpa's own reason for an eviction of an Hvpa's pod, on the pod and the Hvpa: the
	// kubelet's "Evicted" (node-pressure evictions) stays the kubelet's, so alerts on kubelet evictions never
	// count hvpa's.
	EventEvicted = "EvictedByHvpa"
	// EventEvictedByVPA: upstream's reason on a VPA's pod evicted to apply its recommendation (also when the
	// eviction replaces a resize that could not be made; the message says so).
	EventEvictedByVPA = "EvictedByVPA"
	// EventEvictedPod: upstream's reason on the VPA whose pod was evicted.
	EventEvictedPod = "EvictedPod"
	// EventInPlaceResizedByVPA: upstream's reason on a VPA's pod resized in place (pods/resize accepted).
	EventInPlaceResizedByVPA = "InPlaceResizedByVPA"
	// EventInPlaceResizeSkipped: upstream's reason on a VPA's pod whose resize is not tried again: an earlier
	// one was infeasible and the target is not lower (the message starts with ResizeInfeasible).
	EventInPlaceResizeSkipped = "InPlaceResizeSkipped"
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
	// ReasonResizeFailed: the kubelet reports a resize failed (PodResizeInProgress with reason Error) or pending
	// for a reason the updater does not know; InPlaceOrRecreate falls back to eviction at once, as upstream.
	ReasonResizeFailed  = "ResizeFailed"
	ReasonQoSChange     = "QoSClassWouldChange"
	ReasonEvictionReqs  = "EvictionRequirementsNotMet"
	ReasonMinReplicas   = "TooFewReplicas"
	ReasonTolerance     = "EvictionToleranceReached"
	ReasonModeInPlace   = "InPlaceOnly"
	ReasonResizeRefused = "ResizeRefused"
	// ReasonInPlaceUnavailable: the cluster serves no pods/resize (Kubernetes before 1.33) and updateMode InPlace
	// never evicts.
	ReasonInPlaceUnavailable = "InPlaceUnavailable"
	// ReasonStartupBoostOver: a startup-boosted pod goes back to its unboosted CPU.
	ReasonStartupBoostOver = "StartupBoostOver"
	// ReasonPodLevelResources: the pod sets pod-level resources (spec.resources); hvpa does not size it.
	ReasonPodLevelResources = "PodLevelResources"
	// ReasonReplacementRefused: a server-side dry run of the pod's replacement (the pod as it would be
	// recreated with the new resources) was refused, so the pod is not evicted: its replacement would be
	// refused too (a ValidatingAdmissionPolicy, Gatekeeper, Kyverno, a LimitRange).
	ReasonReplacementRefused = "ReplacementWouldBeRefused"
	// ReasonReplacementUnchecked: the updater may not send the dry run of the pod's replacement (its
	// identity lacks create pods, which it uses only with dryRun=All), so the pod is not evicted: an
	// eviction whose replacement the API server might refuse could lose the pod.
	ReasonReplacementUnchecked = "ReplacementNotChecked"
	// ReasonReplacementUnsized: the dry run of the pod's replacement was admitted without a sizing webhook
	// matching it (hvpa's or upstream's: the webhook is not called in the namespace or for the pod, or it
	// failed open), so the pod is not evicted: its replacement would start at its template's resources.
	ReasonReplacementUnsized = "ReplacementNotSized"
	// ReasonMemoryInUse: a resize would lower a container's memory limit to or below the memory it uses (or
	// its usage could not be read), which the kubelet cannot do; that container's memory is kept.
	ReasonMemoryInUse = "MemoryLimitBelowUsage"
)

// routine are the skip reasons of updates held by design (the message says until when): Normal events.
var routine = map[string]bool{ReasonMinReplicas: true, ReasonTolerance: true, ReasonEvictionReqs: true}

// skipEventType is the event type of an update skipped for reason.
func skipEventType(reason string) string {
	if routine[reason] {
		return corev1.EventTypeNormal
	}
	return corev1.EventTypeWarning
}

// skipEvent is the event reason and type of an update of a kind's pod skipped for reason: upstream's
// InPlaceResizeSkipped (Normal, as upstream sends it) for a VPA's pod whose infeasible resize is not tried
// again, else UpdateSkipped.
func skipEvent(kind, reason string) (string, string) {
	if kind == vpav1.KindVerticalPodAutoscaler && reason == ReasonInfeasible {
		return EventInPlaceResizeSkipped, corev1.EventTypeNormal
	}
	return EventUpdateSkipped, skipEventType(reason)
}

// resizedEvent is the reason of the event on a kind's pod resized in place (the VPA or Hvpa gets
// EventResizedInPlace).
func resizedEvent(kind string) string {
	if kind == vpav1.KindVerticalPodAutoscaler {
		return EventInPlaceResizedByVPA
	}
	return EventResizedInPlace
}

// evictedEvents are the reasons of the events on a kind's evicted pod and on its VPA or Hvpa.
func evictedEvents(kind string, fromResize bool) (pod, object string) {
	switch {
	case kind == vpav1.KindVerticalPodAutoscaler:
		return EventEvictedByVPA, EventEvictedPod
	case fromResize:
		return EventResizeFallbackEviction, EventResizeFallbackEviction
	}
	return EventEvicted, EventEvicted
}
