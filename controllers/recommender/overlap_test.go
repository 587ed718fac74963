package recommender_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
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

// signal is closed once, the first time what it names happens.
type signal struct {
	once sync.Once
	ch   chan struct{}
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }
func (s *signal) fire()  { s.once.Do(func() { close(s.ch) }) }

// waitFor reports whether s fired within d.
func (s *signal) waitFor(d time.Duration) bool {
	select {
	case <-s.ch:
		return true
	case <-time.After(d):
		return false
	}
}

// waitingUsage is a usage source whose read ends only once the run has resolved a target (or after a while).
type waitingUsage struct {
	*playedUsage
	resolved *signal
	waited   bool // the read ended without a target resolved meanwhile
}

func (w *waitingUsage) ContainerUsage(ctx context.Context) ([]usage.ContainerUsage, error) {
	w.waited = !w.resolved.waitFor(5 * time.Second)
	return w.playedUsage.ContainerUsage(ctx)
}

// TestRunOverlapsItsWaits: a run waits on the API server in three places, and does not wait on them one
// after the other (at 10,000 VPAs they were half of a run): the metrics API read goes on while the targets
// resolve (the read here ends only once a target was read), and the status patches go out while the
// checkpoints are written (a status patch here ends only once a checkpoint was written). Done one after the
// other, each would wait 5 s for what never comes.
func TestRunOverlapsItsWaits(t *testing.T) {
	clk, played, base := checkpointFleet(3)
	resolved, checkpointed := newSignal(), newSignal()
	var mu sync.Mutex
	patches, patchesWaited := 0, 0
	c := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*appsv1.Deployment); ok {
				resolved.fire()
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*vpav1.VerticalPodAutoscalerCheckpoint); ok {
				defer checkpointed.fire()
			}
			return c.Create(ctx, obj, opts...)
		},
		Patch: checkpointPatch(func(*vpav1.VerticalPodAutoscalerCheckpoint) { checkpointed.fire() }),
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, o ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*vpav1.VerticalPodAutoscaler); ok {
				waited := !checkpointed.waitFor(5 * time.Second)
				mu.Lock()
				patches++
				if waited {
					patchesWaited++
				}
				mu.Unlock()
			}
			return c.SubResource(sub).Patch(ctx, obj, p, o...)
		},
	})
	source := &waitingUsage{playedUsage: played, resolved: resolved}
	r, err := recommenderctrl.NewRecommender(c, source, nil, nil, clk, recommender.Defaults(), recommenderctrl.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	if source.waited {
		t.Error("the metrics API read had to end before a target resolved: the run reads usage and resolves targets one after the other")
	}
	if patches == 0 || patchesWaited > 0 {
		t.Errorf("%d status patches, %d of them sent before any checkpoint was written and not ended until one was: the run "+
			"wrote its checkpoints after its statuses, not meanwhile (or wrote no status)", patches, patchesWaited)
	}
	var cps vpav1.VerticalPodAutoscalerCheckpointList
	if err := base.List(context.Background(), &cps); err != nil || len(cps.Items) == 0 { // the run's quota of 3: 1
		t.Errorf("%d checkpoints written (%v), want some", len(cps.Items), err)
	}
}

// TestFirstRecommendationLatencyEndsWithItsPatch: a first recommendation's latency
// (hvpa_recommender_recommendation_latency_seconds) ends when its status patch did, not when the run has
// also written its checkpoints: here the checkpoints, written once every status write has read the clock for
// its end, take an hour of the clock, and no VPA's latency may include it.
func TestFirstRecommendationLatencyEndsWithItsPatch(t *testing.T) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	objs, played := fleet(3, 1, 1, func(d, _ int) (int64, int64) { return int64(100 + 10*d), 200 << 20 })
	played.t = start
	for _, o := range objs {
		o.SetCreationTimestamp(metav1.NewTime(start))
	}
	clk := &statusReadsClock{FakePassiveClock: clocktesting.NewFakePassiveClock(start), want: 3, read: newSignal()}
	base := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).WithStatusSubresource(&vpav1.VerticalPodAutoscaler{}).Build()
	c := interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*vpav1.VerticalPodAutoscalerCheckpoint); ok {
				// the patches' end is read after they return: the hour starts only once all three were read
				if !clk.read.waitFor(5 * time.Second) {
					t.Error("the status patches did not end while a checkpoint was written")
				}
				clk.SetTime(start.Add(time.Hour)) // a slow checkpoint write
			}
			return c.Create(ctx, obj, opts...)
		},
		Patch: checkpointPatch(nil),
	})
	r, err := recommenderctrl.NewRecommender(c, played, nil, nil, clk, recommender.Defaults(), recommenderctrl.DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	var m dto.Metric
	if err := r.Metrics.RecommendationLatency.Write(&m); err != nil {
		t.Fatal(err)
	}
	if h := m.GetHistogram(); h.GetSampleCount() != 3 || h.GetSampleSum() >= 3600 {
		t.Errorf("%d first recommendations, latencies summing to %.0f s; want 3, each ended before the hour the checkpoints took",
			h.GetSampleCount(), h.GetSampleSum())
	}
}

// statusReadsClock is a fake clock that fires read once the status writers (sendStatuses, found by the
// calling function's name) have read it want times: a patch's end is read after the patch returns, so a test
// that moves the clock when the patches return races the writers' read.
type statusReadsClock struct {
	*clocktesting.FakePassiveClock
	want  int32
	reads atomic.Int32
	read  *signal
}

func (c *statusReadsClock) Now() time.Time {
	now := c.FakePassiveClock.Now()
	if calledFrom("sendStatuses") && c.reads.Add(1) == c.want {
		c.read.fire()
	}
	return now
}

// calledFrom reports whether a function whose name contains name is on the caller's stack.
func calledFrom(name string) bool {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, name) {
			return true
		}
		if !more {
			return false
		}
	}
}
