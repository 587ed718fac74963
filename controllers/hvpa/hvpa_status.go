package hvpa

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/hvpacycle"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

func setCondition(h *hvpav1alpha1.Hvpa, t string, status bool, reason, msg string, now time.Time) {
	hvpacycle.SetCondition(&h.Status.Conditions, h.Generation, t, status, reason, msg, now)
}

func (r *Reconciler) event(h *hvpav1alpha1.Hvpa, typ, reason, msg string) {
	if r.Recorder != nil {
		r.Recorder.Event(h, typ, reason, msg)
	}
}

// patchStatus writes the status when it changed, or when the reconcile acts on it (acts: it scales the target).
// The patch carries the resourceVersion the decision was made from: a status someone else changed since
// (their conditions included, or this controller's own write the cache does not show yet) is refused with a
// conflict, not overwritten. A reconcile that acts without changing the status (finishing a recorded scaling)
// still sends it, with nothing but that resourceVersion: from a stale copy it must not scale (a scaling the
// stored status has already replaced would be applied again). An Hvpa deleted since it was read answers
// NotFound: nothing of the decision is applied.
func (r *Reconciler) patchStatus(ctx context.Context, orig, h *hvpav1alpha1.Hvpa, acts bool) error {
	if !acts && equality.Semantic.DeepEqual(orig.Status, h.Status) {
		return nil
	}
	return r.Client.Status().Patch(ctx, h, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// record writes the decision into status (hvpacycle.Record: every field a decision sets) and leaves on op
// the events and counters that tell of it, sent once the status is written.
func (r *Reconciler) record(op *scaleOp, h *hvpav1alpha1.Hvpa, d scaling.Decision, st scaling.State, now time.Time, pods int) {
	told := hvpacycle.Record(&h.Status, d, h.Generation, now, pods)
	switch {
	case told.Initial != "":
		op.whenScaled(func() { r.event(h, corev1.EventTypeNormal, hvpav1alpha1.EventRescaled, told.Initial) })
	case told.Scaled != "":
		op.whenScaled(func() {
			r.event(h, corev1.EventTypeNormal, hvpav1alpha1.EventRescaled, told.Scaled)
			r.Metrics.scaled(h)
		})
	}
	if len(told.Blocked) > 0 {
		op.later(func() {
			for _, b := range told.Blocked {
				r.Metrics.blocked(h, b.Reason)
			}
			r.event(h, corev1.EventTypeWarning, hvpav1alpha1.EventScalingBlocked, told.BlockedMessage)
		})
	}
	r.Metrics.observe(h, d, st)
}

// youngHistoryHolds is what a LowConfidence condition holds (docs/design/scaling.md section 2a).
const youngHistoryHolds = "replica scale-downs from the recommendation wait for more history, and per-pod memory falls no lower " +
	"than its long history's target (not at all when it jumps)"

// lowConfidence keeps the LowConfidence condition while the embedded recommender is on (spec.vpa.deploy) and
// reports whether the embedded recommendation rests on less history than LowConfidenceDays (replica
// scale-downs decided from it are then blocked). Without a word from the recommender (not running in this
// process, or no recommendation since it started) the condition stays as it was; with no condition yet the
// confidence is unknown and counts as low. The condition is removed while the embedded recommender is off.
func (r *Reconciler) lowConfidence(h *hvpav1alpha1.Hvpa, rec *recommender.HvpaRecommendation, now time.Time) bool {
	if h.Spec.VPA == nil || !h.Spec.VPA.Deploy {
		meta.RemoveStatusCondition(&h.Status.Conditions, hvpav1alpha1.ConditionLowConfidence)
		return false
	}
	threshold := r.LowConfidenceDays
	if threshold <= 0 {
		threshold = 1
	}
	if rec == nil || len(rec.Load) == 0 {
		if c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionLowConfidence); c != nil {
			return c.Status == metav1.ConditionTrue
		}
		setCondition(h, hvpav1alpha1.ConditionLowConfidence, true, hvpav1alpha1.ReasonLowConfidence, fmt.Sprintf("confidence unknown: no recommendation "+
			"from the embedded recommender yet (threshold %g days); %s", threshold, youngHistoryHolds), now)
		return true
	}
	if rec.Confidence < threshold {
		setCondition(h, hvpav1alpha1.ConditionLowConfidence, true, hvpav1alpha1.ReasonLowConfidence, fmt.Sprintf("confidence %.1f days of history (below %g): "+
			"%s; scale-ups are not held", rec.Confidence, threshold, youngHistoryHolds), now)
		return true
	}
	setCondition(h, hvpav1alpha1.ConditionLowConfidence, false, hvpav1alpha1.ReasonEnoughHistory,
		fmt.Sprintf("confidence %.1f days of history (at least %g)", rec.Confidence, threshold), now)
	return false
}
