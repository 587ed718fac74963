package hvpa

import (
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// TestPendingScaling: a scaling recorded in status is taken as not applied only while the target is still at
// its fromReplicas, shortly after the record, and only when it changed replicas.
func TestPendingScaling(t *testing.T) {
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	rec := func(from, to int32, ago time.Duration) *hvpav1alpha1.Hvpa {
		return &hvpav1alpha1.Hvpa{Status: hvpav1alpha1.HvpaStatus{LastScaling: &hvpav1alpha1.ScalingRecord{
			Time: metav1.NewTime(now.Add(-ago)), FromReplicas: from, ToReplicas: to}}}
	}
	at := func(r int32) *autoscalingv1.Scale {
		return &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: r}}
	}
	for name, tc := range map[string]struct {
		h     *hvpav1alpha1.Hvpa
		scale *autoscalingv1.Scale
		want  bool
	}{
		"recorded, not applied":          {rec(1, 2, time.Second), at(1), true},
		"a scale-down, not applied":      {rec(3, 2, time.Minute), at(3), true},
		"applied":                        {rec(1, 2, time.Second), at(2), false},
		"changed by someone else since":  {rec(1, 2, time.Second), at(4), false},
		"too old to be an interruption":  {rec(1, 2, pendingScalingWindow+time.Second), at(1), false},
		"a per-pod change, not replicas": {rec(2, 2, time.Second), at(2), false},
		"nothing recorded":               {&hvpav1alpha1.Hvpa{}, at(1), false},
		// the spec changed since the record (a new targetRef: the record may be of another workload)
		"decided from an older spec": {func() *hvpav1alpha1.Hvpa {
			h := rec(1, 2, time.Second)
			h.Generation, h.Status.ObservedGeneration = 3, 2
			return h
		}(), at(1), false},
	} {
		if got := pendingScaling(tc.h, tc.scale, now); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
