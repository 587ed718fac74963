package hvpa

import (
	"context"
	"fmt"
	"sort"
	"strings"
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
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(&h.Status.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg,
		ObservedGeneration: h.Generation, LastTransitionTime: metav1.NewTime(now)})
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
// stored status has already replaced would be applied again).
func (r *Reconciler) patchStatus(ctx context.Context, orig, h *hvpav1alpha1.Hvpa, acts bool) error {
	if !acts && equality.Semantic.DeepEqual(orig.Status, h.Status) {
		return nil
	}
	return client.IgnoreNotFound(r.Client.Status().Patch(ctx, h, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})))
}

// describe renders the change of a decision, before -> after.
func describe(d scaling.Decision) string {
	var parts []string
	if d.Replicas != d.CurrentReplicas {
		parts = append(parts, fmt.Sprintf("replicas %d -> %d", d.CurrentReplicas, d.Replicas))
	}
	for _, c := range d.Containers {
		for _, r := range scaling.Resources {
			before, hadB := c.Current.Requests.Get(r)
			after, hadA := c.Requests.Get(r)
			if hadA && (!hadB || before != after) {
				parts = append(parts, fmt.Sprintf("%s %s %s -> %s", c.Name, r, scaling.Format(r, before), scaling.Format(r, after)))
			}
		}
	}
	return strings.Join(parts, "; ")
}

// record writes the decision into status (intervals, intent, HPA record, last and blocked scaling,
// conditions) and leaves on op the events and counters that tell of it, sent once the status is written.
func (r *Reconciler) record(op *scaleOp, h *hvpav1alpha1.Hvpa, d scaling.Decision, st scaling.State, now time.Time, pods int) {
	s := &h.Status
	prev := s.Desired
	// a bounded window: status is read (and copied) on every admission, pod event and updater loop
	s.EffectiveScalingIntervals = scaling.IntervalStatusAround(d.Intervals, d.Replicas)
	s.EffectiveScalingIntervalCount = int32(len(d.Intervals))
	s.Desired = d.DesiredState()
	if d.HPA != nil && d.CurrentReplicas > 0 { // a workload at 0 has no per-pod values to record as a basis
		changed := metav1.NewTime(now)
		if s.HPA != nil && s.HPA.DesiredReplicas != nil && *s.HPA.DesiredReplicas == d.HPA.Desired && s.HPA.LastChangeTime != nil {
			changed = *s.HPA.LastChangeTime
		}
		s.HPA = d.HPAStatus(&changed)
	} else if d.HPA == nil {
		s.HPA = nil
	}
	// a scaling is a change of the intent, the first intent is none (hvpacycle.IntentChange)
	change := hvpacycle.IntentChange(prev, s.Desired)
	switch {
	case d.CurrentReplicas == 0: // hvpa does not scale a workload at 0 replicas: nothing was decided
	case change == hvpacycle.Initial:
		initial := "initial sizing intent: " + intentSummary(s.Desired)
		op.later(func() { r.event(h, corev1.EventTypeNormal, hvpav1alpha1.EventRescaled, initial) })
	case change == hvpacycle.Scaling:
		msg := describe(d)
		s.LastScaling = &hvpav1alpha1.ScalingRecord{Time: metav1.NewTime(now), FromReplicas: d.CurrentReplicas, ToReplicas: d.Replicas,
			Containers: s.Desired.Containers, Message: msg}
		op.later(func() {
			r.event(h, corev1.EventTypeNormal, hvpav1alpha1.EventRescaled, msg)
			r.Metrics.scaled(h)
		})
	}
	if parts := d.BlockedParts(); len(parts) > 0 {
		prevBlocked := s.LastBlockedScaling
		if prevBlocked == nil || !sameParts(prevBlocked.Parts, parts) {
			s.LastBlockedScaling = &hvpav1alpha1.BlockedScaling{Time: metav1.NewTime(now), Parts: parts}
			var msgs []string
			for _, b := range parts {
				msgs = append(msgs, fmt.Sprintf("%s (%s): %s", b.Part, b.Reason, b.Message))
			}
			op.later(func() {
				for _, b := range parts {
					r.Metrics.blocked(h, b.Reason)
				}
				r.event(h, corev1.EventTypeWarning, hvpav1alpha1.EventScalingBlocked, strings.Join(msgs, "; "))
			})
		}
		// the same block as before keeps its record as it is (its messages name elapsed times; rewriting them
		// would patch status on every reconcile)
	}
	for _, c := range d.Conditions {
		setCondition(h, c.Type, c.Status == metav1.ConditionTrue, c.Reason, c.Message, now)
	}
	if c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionScalingActive); c != nil && c.Status == metav1.ConditionTrue {
		setCondition(h, hvpav1alpha1.ConditionReady, true, hvpav1alpha1.ReasonReady, fmt.Sprintf("deciding for %d running pods", pods), now)
	} else {
		reason, msg := hvpav1alpha1.ReasonNotActive, "scaling is not active"
		if c != nil {
			reason, msg = c.Reason, c.Message
		}
		setCondition(h, hvpav1alpha1.ConditionReady, false, reason, msg, now)
	}
	r.Metrics.observe(h, d, st)
}

func intentSummary(d *hvpav1alpha1.DesiredState) string {
	parts := []string{fmt.Sprintf("%d replicas", d.Replicas)}
	for _, c := range d.Containers {
		parts = append(parts, fmt.Sprintf("%s cpu %s memory %s", c.Name, c.Requests.Cpu(), c.Requests.Memory()))
	}
	return strings.Join(parts, ", ")
}

func sameParts(a, b []hvpav1alpha1.BlockedPart) bool {
	key := func(p []hvpav1alpha1.BlockedPart) string {
		var s []string
		for _, x := range p {
			s = append(s, x.Part+"/"+string(x.Direction)+"/"+string(x.Reason))
		}
		sort.Strings(s)
		return strings.Join(s, ",")
	}
	return key(a) == key(b)
}

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
			"from the embedded recommender yet (threshold %g days); scale-downs from the recommendation (replicas and per-pod) wait for more history", threshold), now)
		return true
	}
	if rec.Confidence < threshold {
		setCondition(h, hvpav1alpha1.ConditionLowConfidence, true, hvpav1alpha1.ReasonLowConfidence, fmt.Sprintf("confidence %.1f days of history (below %g): "+
			"scale-downs from the recommendation (replicas and per-pod) wait for more history; scale-ups are not held", rec.Confidence, threshold), now)
		return true
	}
	setCondition(h, hvpav1alpha1.ConditionLowConfidence, false, hvpav1alpha1.ReasonEnoughHistory,
		fmt.Sprintf("confidence %.1f days of history (at least %g)", rec.Confidence, threshold), now)
	return false
}
