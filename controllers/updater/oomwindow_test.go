package updater

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/internal/features"
)

// TestEvictAfterOOMSeconds: with PerVPAConfig on, a VPA's updatePolicy.evictAfterOOMSeconds replaces
// --oom-window for its pods (upstream's --evict-after-oom-threshold): a container OOM-killed 5 minutes after
// its start, 4 minutes ago, is "early" under the 10-minute default, not under a 2-minute policy, and is under
// a 30-minute one. With the gate off the policy is not read (upstream's updater). The kill counts for the
// window after it, as upstream's v1.8 reads it: 12 minutes ago it no longer does under the default, and does
// under the 30-minute policy.
func TestEvictAfterOOMSeconds(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	podWith := func(started, killed time.Time) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", CreationTimestamp: metav1.NewTime(started)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled",
					StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(killed)}}}}},
		}
	}
	recent := podWith(now.Add(-9*time.Minute), now.Add(-4*time.Minute))
	old := podWith(now.Add(-17*time.Minute), now.Add(-12*time.Minute))
	o := DefaultOptions()
	for _, tc := range []struct {
		pod     *corev1.Pod
		gate    bool
		seconds *int32
		early   bool
	}{{recent, true, nil, true}, {recent, true, ptr.To[int32](120), false}, {recent, true, ptr.To[int32](1800), true}, {recent, false, ptr.To[int32](120), true},
		{old, true, nil, false}, {old, true, ptr.To[int32](1800), true}} {
		gates := features.New()
		if err := gates.SetFromMap(map[string]bool{string(features.PerVPAConfig): tc.gate}); err != nil {
			t.Fatal(err)
		}
		c := &Controller{}
		(&Updater{Options: o, Gates: gates}).applyPolicy(c, &vpav1.PodUpdatePolicy{EvictAfterOOMSeconds: tc.seconds})
		if got := podState(tc.pod, now, c.Options(o), nil).OOMKilledEarly; got != tc.early {
			t.Errorf("killed %v ago, PerVPAConfig %v, evictAfterOOMSeconds %v: OOM-killed early %v, want %v", now.Sub(tc.pod.Status.ContainerStatuses[0].LastTerminationState.Terminated.FinishedAt.Time),
				tc.gate, ptr.Deref(tc.seconds, 0), got, tc.early)
		}
	}
}

// TestSkipEventTypes: updates held by design are Normal events, updates that cannot be made Warnings; an
// eviction has hvpa's own reason, never the kubelet's "Evicted".
func TestSkipEventTypes(t *testing.T) {
	for reason, want := range map[string]string{ReasonMinReplicas: "Normal", ReasonTolerance: "Normal", ReasonEvictionReqs: "Normal",
		ReasonInfeasible: "Warning", ReasonQoSChange: "Warning", ReasonResizeRefused: "Warning", ReasonDeferredTooLong: "Warning"} {
		if got := skipEventType(reason); got != want {
			t.Errorf("%s: %s, want %s", reason, got, want)
		}
	}
	if EventEvicted == "Evicted" {
		t.Error(`the eviction event reason is the kubelet's "Evicted"`)
	}
}
