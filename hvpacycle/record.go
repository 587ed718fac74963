package hvpacycle

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Told is what recording a decision has to tell once the status that records it is written: the Hvpa
// controller sends it as events and counters (nothing of it when the write is refused).
type Told struct {
	// Initial summarises the first intent ("": this is not the first).
	Initial string
	// Scaled describes the scaling, before -> after ("": the intent did not change).
	Scaled string
	// Blocked are the parts of a blocked change not recorded before (nil: none, or the block already in
	// status, which keeps its record as it is), and BlockedMessage tells of them in one line.
	Blocked        []hvpav1alpha1.BlockedPart
	BlockedMessage string
}

// recordBlocked records the blocked parts of d in s.LastBlockedScaling and returns them and their message when
// they are a new block. The same block as before keeps its record as it is (its messages name elapsed times;
// rewriting them would patch status on every reconcile), unless a scaling came since: then it is a new block,
// told again.
func recordBlocked(s *hvpav1alpha1.HvpaStatus, d scaling.Decision, now time.Time) ([]hvpav1alpha1.BlockedPart, string) {
	parts := d.BlockedParts()
	blockedBefore := s.LastBlockedScaling != nil && (s.LastScaling == nil || !s.LastScaling.Time.After(s.LastBlockedScaling.Time.Time))
	if len(parts) == 0 || (blockedBefore && sameParts(s.LastBlockedScaling.Parts, parts)) {
		return nil, ""
	}
	s.LastBlockedScaling = &hvpav1alpha1.BlockedScaling{Time: metav1.NewTime(now), Parts: parts}
	msgs := make([]string, 0, len(parts))
	for _, b := range parts {
		msgs = append(msgs, fmt.Sprintf("%s (%s): %s", b.Part, b.Reason, b.Message))
	}
	return parts, strings.Join(msgs, "; ")
}

// Record writes decision d into status s, every field a decision sets and nothing else: the window of
// effective intervals, the intent (status.desired), the HPA's record, the last and the last blocked scaling,
// the decision's conditions and Ready (from ScalingActive; pods is how many pods it decided for). generation
// is the Hvpa's metadata.generation, the conditions' observedGeneration.
func Record(s *hvpav1alpha1.HvpaStatus, d scaling.Decision, generation int64, now time.Time, pods int) Told {
	var told Told
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
	// a scaling is a change of the intent, the first intent is none
	switch change := IntentChange(prev, d); {
	case d.CurrentReplicas == 0: // hvpa does not scale a workload at 0 replicas: nothing was decided
	case change == Initial:
		told.Initial = "initial sizing intent: " + intentSummary(s.Desired)
	case change == Scaling:
		told.Scaled = describe(d)
		s.LastScaling = &hvpav1alpha1.ScalingRecord{Time: metav1.NewTime(now), FromReplicas: d.CurrentReplicas, ToReplicas: d.Replicas,
			Containers: s.Desired.Containers, Message: told.Scaled}
	}
	told.Blocked, told.BlockedMessage = recordBlocked(s, d, now)
	for _, c := range d.Conditions {
		SetCondition(&s.Conditions, generation, c.Type, c.Status == metav1.ConditionTrue, c.Reason, c.Message, now)
	}
	if c := meta.FindStatusCondition(s.Conditions, hvpav1alpha1.ConditionScalingActive); c != nil && c.Status == metav1.ConditionTrue {
		SetCondition(&s.Conditions, generation, hvpav1alpha1.ConditionReady, true, hvpav1alpha1.ReasonReady, fmt.Sprintf("deciding for %d running pods", pods), now)
	} else {
		reason, msg := hvpav1alpha1.ReasonNotActive, "scaling is not active"
		if c != nil {
			reason, msg = c.Reason, c.Message
		}
		SetCondition(&s.Conditions, generation, hvpav1alpha1.ConditionReady, false, reason, msg, now)
	}
	return told
}

// SetCondition sets condition t of an Hvpa at generation (its observedGeneration); the transition time is now
// when the status changes.
func SetCondition(conds *[]metav1.Condition, generation int64, t string, status bool, reason, msg string, now time.Time) {
	s := metav1.ConditionFalse
	if status {
		s = metav1.ConditionTrue
	}
	meta.SetStatusCondition(conds, metav1.Condition{Type: t, Status: s, Reason: reason, Message: msg,
		ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now)})
}

// describe renders the change of a decision, before -> after ("replicas 2 -> 3; app cpu 500m -> 1").
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
	for _, t := range d.Totals {
		switch {
		case t.Ahead:
			parts = append(parts, fmt.Sprintf("%s %s ahead of a burst that came at this time %s", t.Container, t.Resource, recurrence(t.AheadEvery)))
		case t.Whole:
			parts = append(parts, fmt.Sprintf("%s %s back from a recurring burst that has ended", t.Container, t.Resource))
		}
	}
	return strings.Join(parts, "; ")
}

// recurrence says when a recurring burst came: at this time of each of the last recommender.RecurTimes
// periods of every.
func recurrence(every time.Duration) string {
	switch every {
	case time.Hour:
		return fmt.Sprintf("of each of the last %d hours", recommender.RecurTimes)
	case 24 * time.Hour:
		return fmt.Sprintf("of each of the last %d days", recommender.RecurTimes)
	}
	return fmt.Sprintf("every %s, the last %d times", strings.TrimSuffix(strings.TrimSuffix(every.String(), "0s"), "0m"), recommender.RecurTimes)
}

func intentSummary(d *hvpav1alpha1.DesiredState) string {
	parts := []string{fmt.Sprintf("%d replicas", d.Replicas)}
	for _, c := range d.Containers {
		parts = append(parts, fmt.Sprintf("%s cpu %s memory %s", c.Name, c.Requests.Cpu(), c.Requests.Memory()))
	}
	return strings.Join(parts, ", ")
}

// sameParts: the same parts blocked in the same directions for the same reasons (their messages aside).
func sameParts(a, b []hvpav1alpha1.BlockedPart) bool {
	key := func(p []hvpav1alpha1.BlockedPart) string {
		s := make([]string, 0, len(p))
		for _, x := range p {
			s = append(s, x.Part+"/"+string(x.Direction)+"/"+string(x.Reason))
		}
		sort.Strings(s)
		return strings.Join(s, ",")
	}
	return key(a) == key(b)
}
