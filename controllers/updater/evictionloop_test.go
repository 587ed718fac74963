package updater

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// evictionStep is one eviction the updater is asked for: at a time after the start, of a pod of workload web
// (or "other/name": of workload other) created then (relative to the start), for the change of cpu millicores;
// evicted: whether it goes ahead. restart: a new updater process reads the records back first.
type evictionStep struct {
	at      time.Duration
	pod     string
	created time.Duration
	cpu     float64
	evicted bool
	restart bool
}

// evictionServer is a client that answers as the API server does for evictions (the pod goes; each counted
// in evictions) and admits every replacement's dry run; while *failWrites, writes of ConfigMaps (the loop
// records) fail.
func evictionServer(evictions *int, failWrites *bool) client.Client {
	refuse := func(obj client.Object) error {
		if _, ok := obj.(*corev1.ConfigMap); ok && *failWrites {
			return errors.New("etcdserver: request timed out")
		}
		return nil
	}
	return fake.NewClientBuilder().WithScheme(testenv.Scheme()).
		WithIndex(&corev1.Pod{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if _, ok := obj.(*corev1.Pod); ok && len((&client.CreateOptions{}).ApplyOptions(opts).DryRun) > 0 {
					return nil // the replacement's dry run: admitted
				}
				if err := refuse(obj); err != nil {
					return err
				}
				return c.Create(ctx, obj, opts...)
			},
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				if err := refuse(obj); err != nil {
					return err
				}
				return c.Update(ctx, obj, opts...)
			},
			SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
				*evictions++
				return c.SubResource(sub).Create(ctx, obj, subObj, opts...)
			},
		}).Build()
}

// evictOne creates pod name (created at created) of workload ctl in c and asks u to evict it for the change of
// cpu millicores, as the only pod the workload has this loop.
func evictOne(t *testing.T, u *Updater, c client.Client, ctl, name string, created time.Time, cpu float64) {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(name), CreationTimestamp: metav1.NewTime(created.Truncate(time.Second))},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
	if err := c.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	budget := 1
	s := served{ctl: Controller{Kind: "Hvpa", Namespace: "shop", Name: ctl}, obj: pod, budget: &budget, known: map[types.UID]bool{pod.UID: true}}
	sized := []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(cpu, -1)}}
	a := &Action{Kind: Evict, Sized: sized, Fingerprint: fingerprint(sized), Message: "app cpu request -> " + scaling.Format(scaling.CPU, cpu)}
	u.evict(context.Background(), s, pod, a, true, "", u.Clock.Now())
	_ = c.Delete(context.Background(), pod) // gone either way: a pod not evicted is not asked again
}

// TestEvictionLoopMovesOn: loop detection holds a replacement that came back without the change it was
// evicted for, but only while that change is the workload's last. An Hvpa's intent that goes to another size
// and back within the loop window (F, G, F: an hourly burst's rise and fall) has its pods evicted each time:
// a pod created while the workload was at G was sized for G, and needs the eviction for F like any other.
// Before the rule, it was held for the rest of the window with a loop warning that blamed the webhook. A
// replacement of the new F eviction that comes back without F is held again, and so is one created before
// the workload moved on (records of two changes a workload's pods may need at once do not release each
// other's replacements). The records survive a restart of the updater between the moves (the ConfigMap).
func TestEvictionLoopMovesOn(t *testing.T) {
	start := now
	m := time.Minute
	cases := map[string][]evictionStep{
		"F, G, F": {
			{at: 0, pod: "a", created: -time.Hour, cpu: 500, evicted: true},                                // F: the first eviction for it
			{at: m, pod: "a2", created: 10 * time.Second, cpu: 500},                                        // a's replacement came back without F: held
			{at: 5 * m, pod: "a2", created: 10 * time.Second, cpu: 900, evicted: true},                     // G: the workload moves on from F
			{at: 10 * m, pod: "a3", created: 5*m + 10*time.Second, cpu: 500, evicted: true, restart: true}, // F again: a3 was sized for G
			{at: 11 * m, pod: "a4", created: 10*m + 10*time.Second, cpu: 500},                              // a3's replacement without F: held again
		},
		"replacements from before the move stay held": {
			{at: 0, pod: "a", created: -time.Hour, cpu: 500, evicted: true},
			{at: m, pod: "b", created: -time.Hour, cpu: 900, evicted: true},            // another change: the workload moves on from F
			{at: 2 * m, pod: "a2", created: 10 * time.Second, cpu: 500, restart: true}, // created before the move: held
			{at: 3 * m, pod: "b2", created: m + 10*time.Second, cpu: 900},              // G is the last change: held
		},
		"another workload's eviction moves nothing": {
			{at: 0, pod: "a", created: -time.Hour, cpu: 500, evicted: true},
			{at: 2 * m, pod: "other/x", created: -time.Hour, cpu: 900, evicted: true},
			{at: 3 * m, pod: "a2", created: 3 * m, cpu: 500, restart: true},
		},
	}
	o := DefaultOptions()
	o.LoopRecords = types.NamespacedName{Namespace: "hvpa", Name: "loops"}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			evictions, failWrites := 0, false
			c := evictionServer(&evictions, &failWrites)
			clk := clocktesting.NewFakeClock(start)
			u := New(c, c, record.NewFakeRecorder(100), clk, nil, o, NewMetrics(nil))
			for i, st := range steps {
				if st.restart { // a new process, or a new leader, reads the records back
					u = New(c, c, record.NewFakeRecorder(100), clk, nil, o, NewMetrics(nil))
					u.loadLoopRecords(context.Background())
				}
				clk.SetTime(start.Add(st.at))
				ctl, name := "web", st.pod
				if w, p, ok := strings.Cut(st.pod, "/"); ok {
					ctl, name = w, p
				}
				loops := func() float64 { return testutil.ToFloat64(u.Metrics.Evictions.WithLabelValues("loop")) }
				before, held := evictions, loops()
				evictOne(t, u, c, ctl, name, start.Add(st.created), st.cpu)
				if got := evictions > before; got != st.evicted {
					t.Fatalf("step %d (%s for %.0fm at %s): evicted %v, want %v", i+1, st.pod, st.cpu, st.at, got, st.evicted)
				}
				if !st.evicted && loops() != held+1 {
					t.Fatalf("step %d: not evicted, but not held by loop detection", i+1)
				}
			}
		})
	}
}

// TestEvictionRecordNotWrittenMovesNothing: an eviction whose loop record cannot be written ahead is not
// made, and leaves the records as they were: the workload's other change is not moved on from (a replacement
// of it created since would otherwise be evicted again, with nothing recorded to stop the next one).
func TestEvictionRecordNotWrittenMovesNothing(t *testing.T) {
	evictions, failWrites := 0, false
	c := evictionServer(&evictions, &failWrites)
	o := DefaultOptions()
	o.LoopRecords = types.NamespacedName{Namespace: "hvpa", Name: "loops"}
	clk := clocktesting.NewFakeClock(now)
	u := New(c, c, record.NewFakeRecorder(100), clk, nil, o, NewMetrics(nil))
	evict := func(name string, cpu float64) { t.Helper(); evictOne(t, u, c, "web", name, now.Add(-time.Hour), cpu) }
	evict("a", 500)
	f := "Hvpa/shop/web|" + fingerprint([]scaling.ContainerDecision{{Name: "app", Requests: scaling.V(500, -1)}})
	if evictions != 1 || len(u.evicted) != 1 || !u.evicted[f].movedOn.IsZero() {
		t.Fatalf("%d evictions, records %+v: want a's, one record for F", evictions, u.evicted)
	}
	clk.Step(time.Minute)
	failWrites = true
	evict("b", 900)
	if evictions != 1 || len(u.evicted) != 1 || !u.evicted[f].movedOn.IsZero() {
		t.Fatalf("the record for G not written: %d evictions, records %+v; want no eviction and F's record as it was", evictions, u.evicted)
	}
	clk.Step(time.Minute)
	failWrites = false
	evict("b", 900)
	if evictions != 2 || len(u.evicted) != 2 || !u.evicted[f].movedOn.Equal(clk.Now()) {
		t.Fatalf("written: %d evictions, records %+v; want b evicted, F moved on from now", evictions, u.evicted)
	}
}
