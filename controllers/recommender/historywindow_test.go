package recommender_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// givenHistory is a Prometheus history given as it is.
type givenHistory []usage.ContainerHistory

func (h givenHistory) History(context.Context) ([]usage.ContainerHistory, error) { return h, nil }

// firstRecommendation runs a recommender with --storage=prometheus once at now on objs (in namespace ns),
// the played usage and the history, and returns the first container recommendation of VPA ns/vpa.
func firstRecommendation(t *testing.T, objs []client.Object, played *playedUsage, h usage.HistoryProvider, now time.Time, vpa string) vpav1.RecommendedContainerResources {
	t.Helper()
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).
		WithStatusSubresource(&vpav1.VerticalPodAutoscaler{}).Build(), interceptor.Funcs{Patch: checkpointPatch(nil)})
	opts := recommenderctrl.DefaultOptions()
	opts.Storage = recommenderctrl.StoragePrometheus
	r, err := recommenderctrl.NewRecommender(c, played, h, nil, clocktesting.NewFakePassiveClock(now), recommender.Defaults(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	var v vpav1.VerticalPodAutoscaler
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: vpa}, &v); err != nil {
		t.Fatal(err)
	}
	if v.Status.Recommendation == nil || len(v.Status.Recommendation.ContainerRecommendations) == 0 {
		t.Fatal("no recommendation")
	}
	return v.Status.Recommendation.ContainerRecommendations[0]
}

// TestHistoryWindowGoesOnLive: the memory window the Prometheus history of a running pod leaves open goes on
// with the pod's live samples, one peak for the window, as upstream feeds history and live samples into one
// container state, also when Prometheus has the pod's labels in another form (kube-state-metrics rewrites
// their keys): the running pod's own labels count. The pod used 1 GiB for the 60 hours of its history
// (windows ending 36 h ago, 12 h ago and in 12 h) and 3 GiB live: the window that holds now peaks at 3 GiB and outweighs the two before it, so the
// memory lower bound (the 50th percentile of the peaks) is above 3 GiB. Before, the history fed a container of
// its own: its open window kept a 1 GiB peak and the live samples opened a window of their own, and the
// lower bound stayed at about 1.15 GiB.
func TestHistoryWindowGoesOnLive(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	objs, played := fleet(1, 1, 1, func(int, int) (int64, int64) { return 200, 3 << 30 })
	played.t = now.Add(-time.Minute) // the first read is dated now
	// kube-state-metrics' form of the pod's labels: keys rewritten, and one the live pod has not (any more)
	h := usage.ContainerHistory{Namespace: "ns", Pod: "app-0-0", Container: "app", Labels: map[string]string{"app": "app-0", "pod_template_hash": "5d4f"},
		Step: time.Hour}
	for at := now.Add(-60 * time.Hour); at.Before(now); at = at.Add(time.Hour) {
		h.CPU = append(h.CPU, usage.HistorySample{Time: at, Value: 0.2})
		h.Memory = append(h.Memory, usage.HistorySample{Time: at, Value: 1 << 30})
	}
	rec := firstRecommendation(t, objs, played, givenHistory{h}, now, "app-0")
	if lb := rec.LowerBound.Memory(); lb.Value() < 3<<30 {
		t.Errorf("memory lower bound %s, want at least 3Gi: the history's open window did not go on with the live samples", lb)
	}
}

// TestGoneHistoryTakesItsWorkloadsLabels: the history of a pod that is gone counts for the VPA of the workload
// that owned it, through the workload's pod template, though Prometheus has its labels too: kube-state-metrics
// exports them with rewritten keys (app.kubernetes.io/name as app_kubernetes_io_name), which the VPA's
// selector does not name. The gone pod used 2 cores for two days, the live one 100m for an hour: the target
// holds the gone pod's history (before, it went to an aggregate of the rewritten labels, and the target was
// the live pod's).
func TestGoneHistoryTakesItsWorkloadsLabels(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	sel := map[string]string{"app.kubernetes.io/name": "web"}
	objs := []client.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}}}},
		vpaFor("ns", "web", "web", vpav1.UpdateModeOff),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-live", Labels: sel},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
	}
	played := &playedUsage{t: now.Add(-time.Minute), samples: []usage.ContainerUsage{{Namespace: "ns", Pod: "web-live", Container: "app", CPUMilli: 100, MemoryBytes: 200 << 20}}}
	gone := usage.ContainerHistory{Namespace: "ns", Pod: "web-gone", Container: "app", Step: time.Hour,
		Labels: map[string]string{"app_kubernetes_io_name": "web"}, Owner: usage.Owner{Kind: "Deployment", Name: "web"}}
	for at := now.Add(-50 * time.Hour); at.Before(now.Add(-2 * time.Hour)); at = at.Add(time.Hour) {
		gone.CPU = append(gone.CPU, usage.HistorySample{Time: at, Value: 2})
		gone.Memory = append(gone.Memory, usage.HistorySample{Time: at, Value: 200 << 20})
	}
	rec := firstRecommendation(t, objs, played, givenHistory{gone}, now, "web")
	if cpu := rec.Target.Cpu(); cpu.MilliValue() < 2000 {
		t.Errorf("cpu target %s, want at least 2 cores: the gone pod's history did not count for its workload's VPA", cpu)
	}
}
