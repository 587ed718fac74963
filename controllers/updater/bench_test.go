package updater

import (
	"context"
	"fmt"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/memcache"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// BenchmarkPlan500Pods plans one workload of 500 pods, half of them outside the bounds: the updater's
// per-workload work in one loop besides the API calls.
func BenchmarkPlan500Pods(b *testing.B) {
	c := vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600)
	pods := make([]Pod, 500)
	for i := range pods {
		req := 500.0
		if i%2 == 0 {
			req = 100
		}
		pods[i] = pod(fmt.Sprintf("p%d", i), time.Hour, req, 2*req)
	}
	o := DefaultOptions()
	b.ReportAllocs()
	for b.Loop() {
		if a := Plan(c, pods, now, o); len(a) != 250 {
			b.Fatalf("%d actions, want 250", len(a))
		}
	}
}

// cachedReads is a client that reads from Reader (the manager's cache) and writes with Client.
type cachedReads struct {
	client.Client
	Reader client.Reader
}

func (c cachedReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c cachedReads) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.Reader.List(ctx, list, opts...)
}

// BenchmarkHvpaControllers200 is the updater's read of the Hvpas at the start of every loop: 200 Hvpas of 1,000
// effective intervals each (their status listing every interval, as stored before the status window, or the
// window of 21 the controller writes now), read from controller-runtime's informer cache over the objects in
// memory (test/memcache: the cache's own readers, so a deep copy per Hvpa counts as in the updater).
func BenchmarkHvpaControllers200(b *testing.B) {
	iv, err := scaling.EffectiveIntervals([]scaling.Interval{{MaxReplicas: 1000, MaxResources: scaling.V(8000, 32<<30), Extrapolation: scaling.ExtrapolationLinear}},
		1, [scaling.NumResources]*scaling.ChangeParams{})
	if err != nil {
		b.Fatal(err)
	}
	for _, listed := range []int{1000, scaling.MaxStatusIntervals} {
		b.Run(fmt.Sprintf("status-%d", listed), func(b *testing.B) {
			status := scaling.IntervalStatus(iv[:listed])
			var objs []client.Object
			for i := range 200 {
				h := hvpaWorld()[2].(*hvpav1alpha1.Hvpa)
				h.Name = fmt.Sprintf("app-%d", i)
				h.Status.EffectiveScalingIntervals = status
				objs = append(objs, h)
			}
			c := cachedReads{Client: fake.NewClientBuilder().WithScheme(testenv.Scheme()).Build(), Reader: memcache.New(b, testenv.Scheme(), nil, objs...)}
			u := New(c, c, nil, nil, features.New(), DefaultOptions(), NewMetrics(nil))
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if s, err := u.hvpaControllers(ctx); err != nil || len(s) != 200 {
					b.Fatalf("%d Hvpas served: %v", len(s), err)
				}
			}
		})
	}
}
