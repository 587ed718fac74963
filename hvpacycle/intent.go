package hvpacycle

import (
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Change is what a new sizing intent is against the one in force.
type Change int

const (
	// Unchanged: the same replicas and per-pod requests and limits.
	Unchanged Change = iota
	// Initial: the first intent of the Hvpa. It is no scaling: it starts no stabilization window.
	Initial
	// Scaling: the replicas applied or some per-pod request or limit changed; the stabilization window of
	// docs/design/scaling.md section 5 starts.
	Scaling
)

// IntentChange classifies the intent of decision d (what status.desired becomes) against prev, the intent in
// force (nil before the first). A scaling is a change of the intent, not of the running pods: the pods follow
// the intent through the webhook and the updater, so comparing with them would count the same change again on
// every reconcile until they are resized. The decision's values are compared as status.desired renders them
// (scaling.Decision.DesiredState), without rendering them: the simulator classifies every decision.
func IntentChange(prev *hvpav1alpha1.DesiredState, d scaling.Decision) Change {
	switch {
	case prev == nil:
		return Initial
	case prev.Replicas != d.Replicas || !sameContainers(prev.Containers, d.Containers):
		return Scaling
	}
	return Unchanged
}

// sameContainers reports whether a are the containers of decision b in the same order with the requests and
// limits status.desired renders from them, quantities compared by value (500m is 0.5) and an empty list the
// same as none: what equality.Semantic.DeepEqual says of a and b's rendering, without its reflection (it ran
// at every decision and took a tenth of the closed-loop simulator's time) and without rendering b.
func sameContainers(a []hvpav1alpha1.ContainerResources, b []scaling.ContainerDecision) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !scaling.SameValues(a[i].Requests, b[i].Requests) || !scaling.SameValues(a[i].Limits, b[i].Limits) {
			return false
		}
	}
	return true
}
