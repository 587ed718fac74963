package hvpa

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// TestLivenessFailsWhenAReconcileHangs runs the Reconciler in a controller-runtime controller (one worker, as
// the Hvpa controller runs) with the sources SetupWithManager adds besides its watches (the liveness probes),
// on a fake clock: the probes are answered while the
// worker is free (the check passes, also after many periods), and once a reconcile hangs (its read of the
// Hvpa never returns) the next probe waits behind it and the check fails after 3 periods + 5 minutes; when
// the reconcile returns, the probe is answered and the check passes again.
func TestLivenessFailsWhenAReconcileHangs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	entered, release := make(chan struct{}), make(chan struct{})
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if key.Name == "stuck" {
				close(entered)
				<-release
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	period := 30 * time.Second
	live := NewLiveness(period, clk)
	r := NewReconciler(c, nil, nil, clk, period, nil)
	r.Liveness = live
	ctl, err := controller.NewUnmanaged("hvpa-liveness-test", controller.Options{Reconciler: r, SkipNameValidation: ptr.To(true)})
	if err != nil {
		t.Fatal(err)
	}
	hvpas := make(chan event.GenericEvent, 1) // stands in for the watch of Hvpas
	for _, s := range append(r.channels(), source.Channel(hvpas, &handler.EnqueueRequestForObject{})) {
		if err := ctl.Watch(s); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _ = ctl.Start(ctx) }()
	go func() { _ = live.Start(ctx) }()
	answeredAt := func(want time.Time) {
		t.Helper()
		for end := time.Now().Add(30 * time.Second); !live.LastAnswer().Equal(want); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("the probe of %s was not answered (last answer %s)", want, live.LastAnswer())
			}
		}
	}
	tick := func() time.Time { // one period on: the next probe is sent
		t.Helper()
		for !clk.HasWaiters() {
			time.Sleep(time.Millisecond)
		}
		clk.Step(period)
		return clk.Now()
	}
	answeredAt(clk.Now()) // the probes started
	for range 20 {        // 10 minutes of a healthy controller
		answeredAt(tick())
		if err := live.Check(nil); err != nil {
			t.Fatalf("healthy controller: %v", err)
		}
	}

	hvpas <- event.GenericEvent{Object: &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "stuck"}}}
	<-entered
	last := live.LastAnswer()
	tick() // a probe waits behind the hung reconcile
	clk.Step(3*period + 5*time.Minute)
	if err := live.Check(nil); err == nil || !strings.Contains(err.Error(), "no liveness probe answered by the Hvpa controller for 7m0s (allowed: 6m30s)") {
		t.Fatalf("a hung reconcile: check %v (last answer %s)", err, last)
	}
	close(release)
	answeredAt(clk.Now())
	if err := live.Check(nil); err != nil {
		t.Fatalf("after the reconcile returned: %v", err)
	}
}
