package hvpa

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hvpa-dev/hvpa/scaling"
)

// TestRequeueFor: an Hvpa is decided again after the sync period, or as soon as its pods are at work (the
// newest ready HPAReadingAge ago) when that is sooner and an HPA's readings are an input.
func TestRequeueFor(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	readyAgo := func(d time.Duration) corev1.Pod {
		return corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-d))}}}}
	}
	withHPA := scaling.State{Replicas: 2, HPA: &scaling.HPAInput{Desired: 2}}
	for name, tc := range map[string]struct {
		sync time.Duration
		st   scaling.State
		pods []corev1.Pod
		want time.Duration
	}{
		"pods at work: the sync period":                 {30 * time.Second, withHPA, []corev1.Pod{readyAgo(time.Hour), readyAgo(2 * time.Minute)}, 30 * time.Second},
		"a pod ready 50 s ago: when it is at work":      {30 * time.Second, withHPA, []corev1.Pod{readyAgo(time.Hour), readyAgo(50 * time.Second)}, 10 * time.Second},
		"a pod ready 10 s ago: the sync period, sooner": {30 * time.Second, withHPA, []corev1.Pod{readyAgo(10 * time.Second)}, 30 * time.Second},
		"no HPA input: the sync period":                 {30 * time.Second, scaling.State{Replicas: 2}, []corev1.Pod{readyAgo(50 * time.Second)}, 30 * time.Second},
		"no sync period: when the pods are at work":     {0, withHPA, []corev1.Pod{readyAgo(50 * time.Second)}, 10 * time.Second},
	} {
		r := &Reconciler{SyncPeriod: tc.sync}
		if got := r.requeueFor(tc.st, tc.pods, now).RequeueAfter; got != tc.want {
			t.Errorf("%s: requeue after %v, want %v", name, got, tc.want)
		}
	}
}
