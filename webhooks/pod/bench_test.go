package pod

import (
	"context"
	"fmt"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/memcache"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// BenchmarkAdmitThreeContainers is one pod CREATE through the whole handler: listing the namespace's
// VPAs, Hvpas and LimitRanges, walking pod -> ReplicaSet -> Deployment, sizing three containers and building
// the JSON patch. The reads go to controller-runtime's fake client, which copies objects the way the
// informer cache does (and somewhat slower), so this bounds the webhook's own time per pod.
func BenchmarkAdmitThreeContainers(b *testing.B) {
	v := vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "250m", "200Mi"), rec("sidecar", "50m", "64Mi"), rec("proxy", "120m", "128Mi"))
	h := newTestHandler(b, false, world(v)...)
	req := request(b, webPod(ctr("app", rl("100m", "100Mi"), rl("200m", "300Mi")), ctr("sidecar", rl("10m", "32Mi"), rl("20m", "64Mi")),
		ctr("proxy", rl("100m", "128Mi"), nil)))
	ctx := context.Background()
	// the selector of the VPA's target is resolved once and then reused, as in a running webhook
	if resp := h.Handle(ctx, req); len(resp.Patches) == 0 {
		b.Fatalf("the pod was not sized: %+v", resp)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if resp := h.Handle(ctx, req); len(resp.Patches) == 0 {
			b.Fatal("the pod was not sized")
		}
	}
}

// manyHvpas are n Hvpas in namespace ns, each on a Deployment of its own ("app-<i>"), and one more on the
// Deployment "web" with a sizing intent; each has one linear interval to 1,000 replicas, and in
// status.effectiveScalingIntervals the first listed of its effective intervals: 1,000 as before issue 31
// (about 1.3 MiB in memory per Hvpa), or as many as the controller writes now (scaling.MaxStatusIntervals).
func manyHvpas(tb testing.TB, n, listed int) []client.Object {
	tb.Helper()
	iv, err := scaling.EffectiveIntervals([]scaling.Interval{{MaxReplicas: 1000, MaxResources: scaling.V(8000, 32<<30), Extrapolation: scaling.ExtrapolationLinear}},
		1, [scaling.NumResources]*scaling.ChangeParams{})
	if err != nil {
		tb.Fatal(err)
	}
	status := scaling.IntervalStatus(iv[:listed])
	var out []client.Object
	for i := range n {
		h := wrappers.MakeHvpa("ns", fmt.Sprintf("app-%d", i)).Obj()
		h.CreationTimestamp = metav1.NewTime(t0)
		h.Spec.TargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: h.Name}
		h.Status.Selector = "app=" + h.Name
		h.Status.EffectiveScalingIntervals = status
		h.Status.Desired = &hvpav1alpha1.DesiredState{Replicas: 3, Containers: []hvpav1alpha1.ContainerResources{{Name: "app", Requests: rl("1", "2Gi")}}}
		out = append(out, h)
	}
	web := wrappers.MakeHvpa("ns", "web").Obj()
	web.CreationTimestamp = metav1.NewTime(t0)
	web.Spec.TargetRef = autoscalingv2Ref()
	web.Status.Selector = "app=web"
	web.Status.EffectiveScalingIntervals = status
	web.Status.Desired = &hvpav1alpha1.DesiredState{Replicas: 2, Containers: []hvpav1alpha1.ContainerResources{
		{Name: "app", Requests: rl("700m", "1Gi")}, {Name: "sidecar", Requests: rl("50m", "64Mi")}, {Name: "proxy", Requests: rl("120m", "128Mi")}}}
	return append(out, web)
}

// BenchmarkAdmitWith200Hvpas is one pod CREATE in a namespace with 200 Hvpas of 1,000 effective intervals
// each (issue 31, item 5), read from controller-runtime's informer cache over the objects in memory
// (test/memcache: the cache's own readers, so its deep copies count as in the webhook). "status-1000": every
// interval in status, as stored before the fix; "status-21": the window the controller writes now.
func BenchmarkAdmitWith200Hvpas(b *testing.B) {
	for _, listed := range []int{1000, scaling.MaxStatusIntervals} {
		b.Run(fmt.Sprintf("status-%d", listed), func(b *testing.B) {
			objs := world(manyHvpas(b, 200, listed)...)
			c := memcache.New(b, testenv.Scheme(), nil, objs...)
			live := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).Build()
			h := NewHandler(c, live, features.New(), NewMetrics(nil), clocktesting.NewFakeClock(t0))
			req := request(b, webPod(ctr("app", rl("100m", "100Mi"), rl("200m", "300Mi")), ctr("sidecar", rl("10m", "32Mi"), rl("20m", "64Mi")),
				ctr("proxy", rl("100m", "128Mi"), nil)))
			ctx := context.Background()
			if resp := h.Handle(ctx, req); len(resp.Patches) == 0 || !strings.Contains(fmt.Sprint(resp.Patches), "Hvpa/web") {
				b.Fatalf("the pod was not sized by Hvpa/web: %+v", resp)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if resp := h.Handle(ctx, req); len(resp.Patches) == 0 {
					b.Fatal("the pod was not sized")
				}
			}
		})
	}
}
