package pod

import (
	"context"
	"testing"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
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
