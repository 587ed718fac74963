package playedkubelet

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hvpa-dev/hvpa/test/testenv"
)

// TestWorkloadsPlay: Set splits a workload's CPU total over its running pods; SetPerPod gives every running pod
// the same usage whatever their number (an evicted pod's load does not move onto the others).
func TestWorkloadsPlay(t *testing.T) {
	pod := func(name, app string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}, Status: corev1.PodStatus{Phase: phase}}
	}
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(
		pod("total-0", "total", corev1.PodRunning), pod("total-1", "total", corev1.PodRunning),
		pod("each-0", "each", corev1.PodRunning), pod("each-1", "each", corev1.PodRunning), pod("each-2", "each", corev1.PodPending)).Build()
	ms := StartMetricsServer()
	defer ms.Close()
	var w Workloads
	w.Set("ns", "total", 1200, 100<<20)
	w.SetPerPod("ns", "each", 600, 200<<20)
	w.Play(context.Background(), c, ms)
	got := map[string]int64{}
	for _, pm := range ms.list("ns").Items {
		for _, k := range pm.Containers {
			got[pm.Name] = k.Usage.Cpu().MilliValue()
		}
	}
	// each-2 is not running: no usage; Set would have given each-0 and each-1 300m
	want := map[string]int64{"total-0": 600, "total-1": 600, "each-0": 600, "each-1": 600}
	if len(got) != len(want) {
		t.Fatalf("usage %v, want %v", got, want)
	}
	for p, v := range want {
		if got[p] != v {
			t.Errorf("%s: %dm, want %dm (all: %v)", p, got[p], v, got)
		}
	}
}
