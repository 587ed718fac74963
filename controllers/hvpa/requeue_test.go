package hvpa

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// TestRequeueFor: an Hvpa is decided again after the sync period, or as soon as its pods are at work (the
// newest ready from its start HPAReadingAge ago, the last replica change as long ago) when that is sooner and
// an HPA's readings are an input; never sooner than minRequeue.
func TestRequeueFor(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	readyAgo := func(d time.Duration) corev1.Pod {
		return corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-d))}}}}
	}
	scaled := func(ago time.Duration, from, to int32) *hvpav1alpha1.Hvpa {
		return &hvpav1alpha1.Hvpa{Status: hvpav1alpha1.HvpaStatus{LastScaling: &hvpav1alpha1.ScalingRecord{
			Time: metav1.NewTime(now.Add(-ago)), FromReplicas: from, ToReplicas: to}}}
	}
	none := &hvpav1alpha1.Hvpa{}
	withHPA := scaling.State{Replicas: 2, HPA: &scaling.HPAInput{Desired: 2}}
	atWork := []corev1.Pod{readyAgo(time.Hour), readyAgo(2 * time.Minute)}
	for name, tc := range map[string]struct {
		sync time.Duration
		h    *hvpav1alpha1.Hvpa
		st   scaling.State
		pods []corev1.Pod
		want time.Duration
	}{
		"pods at work: the sync period":                    {30 * time.Second, none, withHPA, atWork, 30 * time.Second},
		"a pod ready 50 s ago: when it is at work":         {30 * time.Second, none, withHPA, []corev1.Pod{readyAgo(time.Hour), readyAgo(50 * time.Second)}, 10 * time.Second},
		"a pod ready 10 s ago: the sync period, sooner":    {30 * time.Second, none, withHPA, []corev1.Pod{readyAgo(10 * time.Second)}, 30 * time.Second},
		"no HPA input: the sync period":                    {30 * time.Second, none, scaling.State{Replicas: 2}, []corev1.Pod{readyAgo(50 * time.Second)}, 30 * time.Second},
		"no sync period: when the pods are at work":        {0, none, withHPA, []corev1.Pod{readyAgo(50 * time.Second)}, 10 * time.Second},
		"scaled in 45 s ago: a minute after it":            {30 * time.Second, scaled(45*time.Second, 3, 2), withHPA, atWork, 15 * time.Second},
		"resized 45 s ago, no replica change: the sync":    {30 * time.Second, scaled(45*time.Second, 2, 2), withHPA, atWork, 30 * time.Second},
		"a pod ready 50 s ago, scaled 55 s ago: the later": {30 * time.Second, scaled(55*time.Second, 1, 2), withHPA, []corev1.Pod{readyAgo(50 * time.Second)}, 10 * time.Second},
		"at work in a moment: not sooner than a second":    {30 * time.Second, none, withHPA, []corev1.Pod{readyAgo(time.Minute - time.Millisecond)}, minRequeue},
	} {
		r := &Reconciler{SyncPeriod: tc.sync}
		if got := r.requeueFor(tc.h, tc.st, scaling.HPAPodsOf(tc.st.Replicas, tc.pods, now)).RequeueAfter; got != tc.want {
			t.Errorf("%s: requeue after %v, want %v", name, got, tc.want)
		}
	}
}
