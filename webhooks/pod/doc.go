// Package pod is the pod admission webhook: on pod CREATE it finds the VerticalPodAutoscaler or Hvpa that
// controls the pod's workload and sizes the pod's containers from that object's recommendation (a VPA) or
// sizing intent (an Hvpa's status.desired), through scaling.SizePod, the function the updater uses too.
//
// Matching: the pod's top-most controller (a Deployment through its ReplicaSet, ...) must be the object's
// targetRef, and the object's pod selector must select the pod. When several objects match, the oldest
// (then by kind and name) wins and the pod is annotated with the choice; upstream VPA leaves this undefined.
//
// The pod is left untouched (and admitted) when nothing matches, the VPA's updateMode is Off, the
// recommendation or intent is missing, or anything fails: the webhook's failurePolicy is Ignore, and an
// internal error never blocks a pod. Every change is recorded in annotations: what was changed (before ->
// after) and why (maxAllowed, LimitRange, the limit's source).
package pod
