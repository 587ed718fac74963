package vpa_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	vpactrl "github.com/hvpa-dev/hvpa/controllers/vpa"
	"github.com/hvpa-dev/hvpa/internal/testenv"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/metrics"
)

// playedUsage is a UsageSource that returns the same containers every run, one minute later each time.
type playedUsage struct {
	samples []metrics.ContainerUsage
	t       time.Time
}

func (p *playedUsage) ContainerUsage(context.Context) ([]metrics.ContainerUsage, error) {
	p.t = p.t.Add(time.Minute)
	for i := range p.samples {
		p.samples[i].Time = p.t
	}
	return p.samples, nil
}

// benchRecommender is 1,000 VPAs (one Deployment each, 10 namespaces) and 10,000 running pods (10 per
// Deployment) on controller-runtime's in-memory fake client, after two runs. Status writes are counted, not
// applied: the fake client's patch path costs far more than the API server's and would hide the loop's own
// cost; so every VPA stays without status, as if just created.
func benchRecommender(b *testing.B) (*vpactrl.Recommender, *int) {
	ctx := context.Background()
	objs, usage := fleet(1000, 10, 10, func(_, p int) (int64, int64) { return int64(100 + p*10), int64(200+p) << 20 })
	base := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).
		WithStatusSubresource(&vpav1.VerticalPodAutoscaler{}, &vpav1.VerticalPodAutoscalerCheckpoint{}).Build()
	patches := 0
	c := interceptor.NewClient(base, interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
		patches++
		return nil
	}})
	opts := vpactrl.DefaultOptions()
	opts.CheckpointBudget = 0 // checkpoints are measured apart: this is the recommendation loop
	r, err := vpactrl.NewRecommender(c, usage, nil, nil, clock.RealClock{}, recommender.Defaults(), opts, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 2; i++ { // warm up: first recommendations and status writes
		if err := r.RunOnce(ctx); err != nil {
			b.Fatal(err)
		}
	}
	patches = 0
	return r, &patches
}

// BenchmarkRunOnce is one recommender run over benchRecommender's cluster: the recommender's own work per
// run (listing, matching, feeding the model, recommending, comparing status), not API-server latency.
func BenchmarkRunOnce(b *testing.B) {
	ctx := context.Background()
	r, patches := benchRecommender(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := r.RunOnce(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if *patches < 1000*b.N {
		b.Fatalf("%d status writes over %d runs: the recommendations were not computed", *patches, b.N)
	}
}

// BenchmarkServeNew is ServeNew over benchRecommender's cluster, where every one of the 1,000 VPAs is new
// (no status): their first recommendations from the history already held, without a run.
func BenchmarkServeNew(b *testing.B) {
	ctx := context.Background()
	r, patches := benchRecommender(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if n, err := r.ServeNew(ctx); err != nil || n != 1000 {
			b.Fatalf("served %d (%v), want 1000", n, err)
		}
	}
	b.StopTimer()
	if *patches != 1000*b.N {
		b.Fatalf("%d status writes over %d calls, want 1,000 each", *patches, b.N)
	}
}
