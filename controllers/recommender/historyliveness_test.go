package recommender_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/usage"
)

// slowHistory is a Prometheus history whose read takes took on the clock (five slow queries, each under
// --prometheus-timeout), and then fails; it notes the loop's liveness while it reads.
type slowHistory struct {
	clk     *clocktesting.FakePassiveClock
	took    time.Duration
	healthy func() error
	during  chan error
}

func (h *slowHistory) History(context.Context) ([]usage.ContainerHistory, error) {
	h.clk.SetTime(h.clk.Now().Add(h.took))
	h.during <- h.healthy()
	return nil, errors.New("prometheus query: slow")
}

// TestLoopLivenessSparesThePrometheusRead: the first run's read of the Prometheus history (five queries of up
// to --prometheus-timeout, 5m, each) does not count toward the loop's stall bound, as upstream VPA starts its
// health check after it: a read longer than the bound must not get the process restarted, to read it again.
func TestLoopLivenessSparesThePrometheusRead(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	objs, played := fleet(1, 1, 1, func(int, int) (int64, int64) { return 100, 200 << 20 })
	played.t = clk.Now()
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).Build()
	opts := recommenderctrl.DefaultOptions()
	opts.Storage = recommenderctrl.StoragePrometheus
	h := &slowHistory{clk: clk, during: make(chan error, 1)}
	r, err := recommenderctrl.NewRecommender(c, played, h, nil, clk, recommender.Defaults(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.took, h.healthy = r.StallAfter()+10*time.Minute, func() error { return r.LoopHealthy(nil) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = r.Start(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	select {
	case err := <-h.during:
		if err != nil {
			t.Errorf("reading the history for %s (longer than the stall bound %s): %v", h.took, r.StallAfter(), err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the history was not read")
	}
	if err := r.LoopHealthy(nil); err != nil {
		t.Errorf("right after the read: %v", err)
	}
}
