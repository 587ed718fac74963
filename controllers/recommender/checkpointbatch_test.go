package recommender_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
)

// TestLoopWritesCheckpointsBesideTheNextRun: in the loop a run ends once its statuses are written, its
// checkpoint writes going on beside the next run; the next run waits for them before it starts its own (one
// batch at a time), and the loop ends only once they ended.
func TestLoopWritesCheckpointsBesideTheNextRun(t *testing.T) {
	const interval = 50 * time.Millisecond
	w := newWritesCluster(t, 3, func(o *recommenderctrl.Options) { o.Interval, o.CheckpointPeriod = interval, 0 })
	release := make(chan struct{})
	var inFlight, maxInFlight atomic.Int32
	var once sync.Once
	blocked := newSignal()
	hold := func() func() { // a checkpoint write, held until release
		n := inFlight.Add(1)
		for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
		}
		once.Do(blocked.fire)
		<-release
		return func() { inFlight.Add(-1) }
	}
	w.r.Client = interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.CreateOption) error {
			if _, ok := obj.(*vpav1.VerticalPodAutoscalerCheckpoint); ok {
				defer hold()()
			}
			return c.Create(ctx, obj, o...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, o ...client.PatchOption) error {
			if _, ok := obj.(*vpav1.VerticalPodAutoscalerCheckpoint); ok {
				defer hold()()
			}
			return c.Patch(ctx, obj, p, o...)
		},
	})
	runs := func() uint64 {
		var m dto.Metric
		if err := w.r.Metrics.StepDuration.WithLabelValues("total").(prometheus.Histogram).Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetHistogram().GetSampleCount()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.r.Start(ctx) }()
	if !blocked.waitFor(10 * time.Second) {
		t.Fatal("no checkpoint write within 10 s")
	}
	for deadline := time.Now().Add(10 * time.Second); runs() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			close(release)
			t.Fatal("the first run did not end while its checkpoint writes were held: it waited for them")
		}
	}
	time.Sleep(10 * interval) // the next runs are due: each waits in its checkpoint step for the first run's writes
	if got := runs(); got != 1 {
		t.Errorf("%d runs ended while the first run's checkpoint writes were held, want 1: a run started its own beside them", got)
	}
	close(release)
	for deadline := time.Now().Add(10 * time.Second); runs() < 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d runs within 10 s of the writes going through, want 3", runs())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the loop ended with %v", err)
	}
	if n := inFlight.Load(); n != 0 {
		t.Errorf("the loop ended with %d checkpoint writes still going out", n)
	}
	if m := maxInFlight.Load(); m > 3 {
		t.Errorf("%d checkpoint writes at once, want at most the fleet's 3 (one run's batch at a time)", m)
	}
}
