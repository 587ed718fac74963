package app

import (
	"context"
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	hvpactrl "github.com/hvpa-dev/hvpa/controllers/hvpa"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// checks records what the liveness wiring adds to a manager.
type checks struct {
	runnables []manager.Runnable
	healthz   map[string]healthz.Checker
}

func (c *checks) Add(r manager.Runnable) error { c.runnables = append(c.runnables, r); return nil }

func (c *checks) AddHealthzCheck(name string, check healthz.Checker) error {
	if c.healthz == nil {
		c.healthz = map[string]healthz.Checker{}
	}
	c.healthz[name] = check
	return nil
}

// TestUpdaterLoopLiveness: /healthz "updater-loop" passes while update loops start, fails once one has been
// stuck for three intervals and five minutes (here its first list never returns), and passes again when the
// next loop starts.
func TestUpdaterLoopLiveness(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	entered, release := make(chan struct{}, 1), make(chan struct{})
	stuck := true
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if stuck {
				stuck = false
				entered <- struct{}{}
				<-release
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	o := updater.DefaultOptions()
	o.Interval = time.Minute
	u := updater.New(c, c, nil, clk, nil, o, updater.NewMetrics(nil))
	mgr := &checks{}
	if err := updaterLiveness(mgr, u, clk); err != nil {
		t.Fatal(err)
	}
	check := mgr.healthz["updater-loop"]
	if check == nil {
		t.Fatalf("no updater-loop check: %v", mgr.healthz)
	}
	if err := check(nil); err != nil {
		t.Fatalf("before the updater starts (another replica leads): %v", err)
	}
	go func() { _ = u.Start(ctx) }()
	<-entered // the first loop started, and hangs in its first list
	clk.Step(8 * time.Minute)
	if err := check(nil); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	clk.Step(time.Second)
	if err := check(nil); err == nil || !strings.Contains(err.Error(), "no update loop started for 8m1s (allowed: 8m0s)") {
		t.Fatalf("a loop stuck for 8m1s: %v", err)
	}
	close(release) // the loop ends; the next starts at the next tick
	for start := time.Now(); check(nil) != nil; time.Sleep(5 * time.Millisecond) {
		if clk.HasWaiters() {
			clk.Step(time.Minute)
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("no loop started after the stuck one ended: %v", check(nil))
		}
	}
}

// TestHvpaControllerLivenessWired: the Hvpa controller gets its liveness probes (run on the leader only)
// and /healthz "hvpa-controller" checks them.
func TestHvpaControllerLivenessWired(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	r := hvpactrl.NewReconciler(nil, nil, nil, clk, 30*time.Second, nil)
	mgr := &checks{}
	if err := hvpaLiveness(mgr, r, 30*time.Second, clk); err != nil {
		t.Fatal(err)
	}
	if r.Liveness == nil || len(mgr.runnables) != 1 || mgr.runnables[0] != manager.Runnable(r.Liveness) || !r.Liveness.NeedLeaderElection() {
		t.Fatalf("the probes are not run on the leader: %+v", mgr.runnables)
	}
	if mgr.healthz["hvpa-controller"] == nil {
		t.Fatalf("no hvpa-controller check: %v", mgr.healthz)
	}
}
