package recommender_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/usage"
)

// TestRelabelledPodFeedsItsNewAggregate: a running pod whose labels change moves to the VPA that selects its
// new labels, as upstream relinks a relabelled pod's containers. app-0's pod app-0-1 (2 cores) is relabelled
// app=app-1 after an hour: app-1, with no pod of its own, then gets a recommendation from that pod's later
// samples. Before, the pod kept feeding the aggregate of its first labels, so app-1 had nothing and app-0
// went on counting a pod it no longer selects.
func TestRelabelledPodFeedsItsNewAggregate(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	objs, played := fleet(2, 1, 0, nil)
	own, pods := workloadObjects("ns", "app-0", 2)
	objs = append(objs[:0], objs[2:]...) // app-1's Deployment and VPA, without pods; app-0 comes with two
	objs = append(objs, own...)
	for i, cpu := range []int64{100, 2000} {
		played.samples = append(played.samples, usage.ContainerUsage{Namespace: "ns", Pod: pods[i].Name, Container: "app", CPUMilli: cpu, MemoryBytes: 200 << 20})
	}
	played.t = start
	clk := clocktesting.NewFakePassiveClock(start)
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).
		WithStatusSubresource(&vpav1.VerticalPodAutoscaler{}).Build(), interceptor.Funcs{Patch: checkpointPatch(nil)})
	r, err := recommenderctrl.NewRecommender(c, played, nil, nil, clk, recommender.Defaults(), recommenderctrl.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(minutes int) {
		t.Helper()
		for range minutes {
			clk.SetTime(clk.Now().Add(time.Minute))
			if err := r.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	run(60)
	if got := target(t, c, "app-1"); got != nil {
		t.Fatalf("app-1 selects no pod yet, but has a recommendation %v", got)
	}
	moved := pods[1].DeepCopy()
	if err := c.Get(ctx, client.ObjectKeyFromObject(moved), moved); err != nil {
		t.Fatal(err)
	}
	moved.Labels = map[string]string{"app": "app-1"}
	if err := c.Update(ctx, moved); err != nil {
		t.Fatal(err)
	}
	run(60)
	got := target(t, c, "app-1")
	if got == nil || got.Cpu().MilliValue() < 2000 {
		t.Fatalf("app-1's target %v after an hour of the relabelled pod's 2 cores, want at least 2000m: the pod still feeds "+
			"the aggregate of its first labels", got)
	}
}

// target is the first container's recommended target of VPA ns/name (nil: none).
func target(t *testing.T, c client.Client, name string) corev1.ResourceList {
	t.Helper()
	var v vpav1.VerticalPodAutoscaler
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, &v); err != nil {
		t.Fatal(err)
	}
	if v.Status.Recommendation == nil || len(v.Status.Recommendation.ContainerRecommendations) == 0 {
		return nil
	}
	return v.Status.Recommendation.ContainerRecommendations[0].Target
}
