package hvpacycle

import (
	"k8s.io/apimachinery/pkg/api/equality"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
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

// IntentChange classifies next (status.desired after a decision) against prev, the intent in force (nil
// before the first). A scaling is a change of the intent, not of the running pods: the pods follow the
// intent through the webhook and the updater, so comparing with them would count the same change again on
// every reconcile until they are resized.
func IntentChange(prev, next *hvpav1alpha1.DesiredState) Change {
	switch {
	case next == nil:
		return Unchanged
	case prev == nil:
		return Initial
	case prev.Replicas != next.Replicas || !equality.Semantic.DeepEqual(prev.Containers, next.Containers):
		return Scaling
	}
	return Unchanged
}
