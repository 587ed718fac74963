package recommender_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/internal/podstore"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/test/memcache"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/usage"
)

// playedUsage is a Source that returns the same containers every run, one minute later each time.
type playedUsage struct {
	samples []usage.ContainerUsage
	t       time.Time
}

// Now is the time of the latest samples, or the wall clock when that is later: the clock of a recommender
// reading them (it refuses samples dated after its now).
func (p *playedUsage) Now() time.Time {
	if p.t.After(time.Now()) {
		return p.t
	}
	return time.Now()
}

func (p *playedUsage) Since(t time.Time) time.Duration { return p.Now().Sub(t) }

func (p *playedUsage) ContainerUsage(context.Context) ([]usage.ContainerUsage, error) {
	p.t = p.t.Add(time.Minute)
	for i := range p.samples {
		p.samples[i].Time = p.t
	}
	return p.samples, nil
}

// benchRecommender is n VPAs (one Deployment each, 10 per namespace, as make bench-scale makes them) and 10 x n
// running pods (10 per Deployment) on controller-runtime's in-memory fake client, after two runs. Status writes are counted and
// their patches made (the client's cost of a write), not applied: the fake client's patch path costs far more than the API server's and would hide the loop's own
// cost; so every VPA stays without status, as if just created.
func benchRecommender(b *testing.B, n int) (*recommenderctrl.Recommender, *atomic.Int64) {
	ctx := context.Background()
	objs, played := fleet(n, n/10, 10, func(_, p int) (int64, int64) { return int64(100 + p*10), int64(200+p) << 20 })
	base := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).
		WithStatusSubresource(&vpav1.VerticalPodAutoscaler{}).Build()
	patches := &atomic.Int64{} // status patches are sent several at a time
	// the VPAs and Deployments from controller-runtime's informer cache over the fleet, as the binary reads them
	// (the fake client encodes and decodes every object at each read, which costs far more than the loop); status
	// writes are not applied (below), so what it holds stays what the API server would hold
	cached := memcache.New(b, testenv.Scheme(), nil, objs...)
	c := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*appsv1.Deployment); ok {
				return cached.Get(ctx, key, obj, opts...)
			}
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*vpav1.VerticalPodAutoscalerList); ok {
				return cached.List(ctx, list, opts...)
			}
			return c.List(ctx, list, opts...)
		},
		SubResourcePatch: func(_ context.Context, _ client.Client, _ string, obj client.Object, p client.Patch, _ ...client.SubResourcePatchOption) error {
			patches.Add(1)
			_, err := p.Data(obj) // the client's own cost of a write: making its patch
			return err
		}})
	opts := recommenderctrl.DefaultOptions()
	opts.CheckpointBudget = 0 // checkpoints are measured apart: this is the recommendation loop
	r, err := recommenderctrl.NewRecommender(c, played, nil, nil, played, recommender.Defaults(), opts, nil)
	if err != nil {
		b.Fatal(err)
	}
	if r.Pods, err = holdPods(ctx, base); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 2; i++ { // warm up: first recommendations and status writes
		if err := r.RunOnce(ctx); err != nil {
			b.Fatal(err)
		}
	}
	patches.Store(0)
	return r, patches
}

// heldPods is a podstore.Lister over pods held once, as the binary's podstore.Store holds them: the
// benchmarks measure the loop, not the fake client's copy of every pod at each list.
type heldPods map[string][]*podstore.Pod

func holdPods(ctx context.Context, c client.Reader) (heldPods, error) {
	pods, err := podstore.ClientLister{Reader: c}.List(ctx, "")
	if err != nil {
		return nil, err
	}
	held := heldPods{}
	for _, p := range pods {
		held[""] = append(held[""], p)
		held[p.Namespace] = append(held[p.Namespace], p)
	}
	return held, nil
}

func (h heldPods) List(_ context.Context, ns string) ([]*podstore.Pod, error) { return h[ns], nil }

// benchSizes are the fleets of the unit benchmarks: bench-scale's 1,000 and its growth point 3,000.
var benchSizes = []int{1000, 3000}

// BenchmarkRunOnce is one recommender run over benchRecommender's cluster: the recommender's own work per
// run (listing, matching, feeding the model, recommending, comparing status), not API-server latency.
func BenchmarkRunOnce(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("vpas=%d", n), func(b *testing.B) {
			ctx := context.Background()
			r, patches := benchRecommender(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := r.RunOnce(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if got := patches.Load(); got < int64(n*b.N) {
				b.Fatalf("%d status writes over %d runs: the recommendations were not computed", got, b.N)
			}
		})
	}
}

// BenchmarkServeNew is ServeNew over benchRecommender's cluster, where every one of the 1,000 VPAs is new
// (no status): their first recommendations from the history already held, without a run.
func BenchmarkServeNew(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("vpas=%d", n), func(b *testing.B) {
			ctx := context.Background()
			r, patches := benchRecommender(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if served, err := r.ServeNew(ctx); err != nil || served != n {
					b.Fatalf("served %d (%v), want %d", served, err, n)
				}
			}
			b.StopTimer()
			if got := patches.Load(); got != int64(n*b.N) {
				b.Fatalf("%d status writes over %d calls, want %d each", got, b.N, n)
			}
		})
	}
}
