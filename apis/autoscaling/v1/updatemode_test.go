package v1_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// TestUpdateModeRules: the one table of what each mode lets the webhook and the updater do, as upstream's
// documentation says (Auto is Recreate's deprecated name; unset is Auto).
func TestUpdateModeRules(t *testing.T) {
	for _, tc := range []struct {
		mode                        *vpav1.UpdateMode // nil: unset
		effective                   vpav1.UpdateMode
		sizesNew, actsOnRunning, ip bool
	}{
		{nil, vpav1.UpdateModeAuto, true, true, false},
		{ptr.To(vpav1.UpdateModeOff), vpav1.UpdateModeOff, false, false, false},
		{ptr.To(vpav1.UpdateModeInitial), vpav1.UpdateModeInitial, true, false, false},
		{ptr.To(vpav1.UpdateModeRecreate), vpav1.UpdateModeRecreate, true, true, false},
		{ptr.To(vpav1.UpdateModeAuto), vpav1.UpdateModeAuto, true, true, false},
		{ptr.To(vpav1.UpdateModeInPlaceOrRecreate), vpav1.UpdateModeInPlaceOrRecreate, true, true, true},
		{ptr.To(vpav1.UpdateModeInPlace), vpav1.UpdateModeInPlace, true, true, true},
	} {
		v := &vpav1.VerticalPodAutoscaler{Spec: vpav1.VerticalPodAutoscalerSpec{UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: tc.mode}}}
		m := v.EffectiveUpdateMode()
		if m != tc.effective || m.SizesNewPods() != tc.sizesNew || m.ActsOnRunningPods() != tc.actsOnRunning || m.ResizesInPlace() != tc.ip {
			t.Errorf("%q: effective %q, sizes new pods %v, acts on running pods %v, in place %v; want %q %v %v %v", ptr.Deref(tc.mode, ""),
				m, m.SizesNewPods(), m.ActsOnRunningPods(), m.ResizesInPlace(), tc.effective, tc.sizesNew, tc.actsOnRunning, tc.ip)
		}
		// the updater acts where it acts on running pods, InPlace only with its gate on
		if gateOn, gateOff := m.UpdaterActs(true), m.UpdaterActs(false); gateOn != tc.actsOnRunning || gateOff != (tc.actsOnRunning && m != vpav1.UpdateModeInPlace) {
			t.Errorf("%q: the updater acts with the InPlace gate on %v, off %v", m, gateOn, gateOff)
		}
	}
	if m := (&vpav1.VerticalPodAutoscaler{}).EffectiveUpdateMode(); m != vpav1.UpdateModeAuto {
		t.Errorf("no updatePolicy: %q, want Auto", m)
	}
}

// TestOOMKill: only a termination with the kubelet's OOMKilled reason is an OOM kill.
func TestOOMKill(t *testing.T) {
	for _, tc := range []struct {
		state corev1.ContainerState
		kill  bool
	}{
		{corev1.ContainerState{}, false},
		{corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}, false},
		{corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137}}, false},
		{corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: vpav1.ReasonOOMKilled, ExitCode: 137}}, true},
	} {
		if got := vpav1.OOMKill(tc.state) != nil; got != tc.kill {
			t.Errorf("%+v: OOM kill %v, want %v", tc.state, got, tc.kill)
		}
	}
}
