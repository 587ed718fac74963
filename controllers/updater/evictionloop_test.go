package updater

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// evictionStep is one eviction the updater is asked for: at a time after the start, of a pod of workload web
// (or "other/name": of workload other) whose app container holds a cpu request of holds millicores
// (templateCPU: as its template has it, unsized), for the change to cpu millicores; evicted: whether it goes ahead. restart: a
// new updater process reads the records back first.
type evictionStep struct {
	at         time.Duration
	pod        string
	holds, cpu float64
	resized    bool // holds from an in-place resize, not from the webhook
	evicted    bool
	restart    bool
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

// templateCPU is the cpu request the workload's pod template gives its app container: what a pod the webhook
// did not size holds.
const templateCPU = 100

// plannedPod is the pod as the plan reads it (podState), its containers with their template's values as
// Origin.
func plannedPod(pod *corev1.Pod) *Pod {
	p := podState(pod, now, DefaultOptions(), nil)
	withOrigins(p.Containers, map[string]scaling.Container{"app": {Name: "app", Requests: scaling.V(templateCPU, -1)}})
	return &p
}

// evictOne creates pod name of workload ctl in c, its app container holding a cpu request of holds
// millicores (from the webhook at admission, as its annotation says, unless that is the template's value or
// resized: from an in-place resize), and asks u to evict it for the change of cpu millicores, as the only pod
// the workload has this loop.
func evictOne(t *testing.T, u *Updater, c client.Client, ctl, name string, holds, cpu float64, resized bool) {
	t.Helper()
	var sized map[string]string
	if holds != templateCPU && !resized {
		sized = map[string]string{vpav1.AnnotationSizedResources: "app: cpu request 100m -> " + scaling.Format(scaling.CPU, holds)}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(name), Annotations: sized},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1",
			Resources: corev1.ResourceRequirements{Requests: scaling.ToResourceList(scaling.V(holds, -1))}}}}}
	if err := c.Create(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	budget := 1
	s := served{ctl: Controller{Kind: "Hvpa", Namespace: "shop", Name: ctl}, obj: pod, budget: &budget, known: map[types.UID]bool{pod.UID: true}}
	change := []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(cpu, -1)}}
	a := &Action{Kind: Evict, Pod: plannedPod(pod), Sized: change, Fingerprint: fingerprint(change), Message: "app cpu request -> " + scaling.Format(scaling.CPU, cpu)}
	u.evict(context.Background(), s, pod, a, true, "", u.Clock.Now())
	_ = c.Delete(context.Background(), pod) // gone either way: a pod not evicted is not asked again
}

// TestEvictionLoopMovesOn: loop detection holds a replacement that came back without the change it was
// evicted for, but not a pod that holds a change the workload was evicted for since. An Hvpa's intent that
// goes to another size and back within the loop window (F, G, F: an hourly burst's rise and fall) has its
// pods evicted each time: a pod admitted while the workload was at G was sized for G, and needs the eviction
// for F like any other. Before the rule, it was held for the rest of the window with a loop warning that
// blamed the webhook. A pod that came back unsized holds none of the changes, so it stays held whatever the
// order of the changes: two needed at once (pods that differ), or a target that flips while the webhook does
// not size pods, make no more evictions than before. The records survive a restart of the updater (the
// ConfigMap).
func TestEvictionLoopMovesOn(t *testing.T) {
	start := now
	m := time.Minute
	cases := map[string][]evictionStep{
		"F, G, F": {
			{at: 0, pod: "a", holds: 100, cpu: 500, evicted: true},                      // F: the first eviction for it
			{at: m, pod: "a2", holds: 100, cpu: 500},                                    // a's replacement came back without F: held
			{at: 5 * m, pod: "a2", holds: 100, cpu: 900, evicted: true},                 // G: the workload moves on from F
			{at: 10 * m, pod: "a3", holds: 900, cpu: 500, evicted: true, restart: true}, // F again: a3 was sized for G
			{at: 11 * m, pod: "a4", holds: 100, cpu: 500},                               // a3's replacement without F: held again
		},
		"F, G, H, F": {
			{at: 0, pod: "a", holds: 100, cpu: 500, evicted: true},
			{at: m, pod: "a2", holds: 100, cpu: 900, evicted: true},
			{at: 2 * m, pod: "a3", holds: 900, cpu: 1200, evicted: true},
			{at: 3 * m, pod: "b", holds: 900, cpu: 500, evicted: true, restart: true}, // sized for G, not yet evicted for H
			{at: 4 * m, pod: "a4", holds: 1200, cpu: 500, evicted: true},              // sized for H
		},
		"G, F, G, F": {
			{at: 0, pod: "a", holds: 100, cpu: 900, evicted: true},
			{at: m, pod: "a2", holds: 900, cpu: 500, evicted: true},
			{at: 2 * m, pod: "a3", holds: 500, cpu: 900, evicted: true},                // G's record is open: F is noted moved to G
			{at: 3 * m, pod: "a4", holds: 900, cpu: 500, evicted: true, restart: true}, // sized for G the second time
		},
		"two changes at once, replacements unsized": {
			{at: 0, pod: "a", holds: 100, cpu: 500, evicted: true},
			{at: 0, pod: "b", holds: 100, cpu: 900, evicted: true},
			{at: m, pod: "a2", holds: 100, cpu: 500},
			{at: m, pod: "b2", holds: 100, cpu: 900},
			{at: 2 * m, pod: "a2", holds: 100, cpu: 500, restart: true},
			{at: 2 * m, pod: "b2", holds: 100, cpu: 900},
		},
		"a target that flips, replacements unsized": {
			{at: 0, pod: "a", holds: 100, cpu: 500, evicted: true},
			{at: m, pod: "a2", holds: 100, cpu: 900, evicted: true}, // a new change evicts every pod once, as ever
			{at: 2 * m, pod: "a3", holds: 100, cpu: 500},
			{at: 3 * m, pod: "a3", holds: 100, cpu: 900, restart: true},
			{at: 4 * m, pod: "a3", holds: 100, cpu: 500},
		},
		"a change back to the template's values, replacements unsized": {
			{at: 0, pod: "a", holds: 200, cpu: 500, evicted: true},
			{at: m, pod: "b", holds: 200, cpu: 100, evicted: true}, // the template's own value: noted, but no sign of sizing
			{at: 2 * m, pod: "a2", holds: 100, cpu: 500},           // holds it as any unsized pod does: held
			{at: 3 * m, pod: "a2", holds: 100, cpu: 500, restart: true},
		},
		"an unsized replacement resized in place since": {
			{at: 0, pod: "a", holds: 200, cpu: 500, evicted: true},
			{at: m, pod: "b", holds: 200, cpu: 300, evicted: true},
			{at: 2 * m, pod: "a2", holds: 300, resized: true, cpu: 500}, // came back unsized, resized to G in place: held
			{at: 3 * m, pod: "a2", holds: 300, resized: true, cpu: 500, restart: true},
		},
		"another workload's eviction moves nothing": {
			{at: 0, pod: "a", holds: 100, cpu: 500, evicted: true},
			{at: 2 * m, pod: "other/x", holds: 100, cpu: 900, evicted: true},
			{at: 3 * m, pod: "a2", holds: 900, cpu: 500, restart: true},
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
				evictOne(t, u, c, ctl, name, st.holds, st.cpu, st.resized)
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
// made, and leaves the records as they were: the workload's other change does not note it (a pod holding
// it would otherwise be released for that change, on an eviction that was never made).
func TestEvictionRecordNotWrittenMovesNothing(t *testing.T) {
	evictions, failWrites := 0, false
	c := evictionServer(&evictions, &failWrites)
	o := DefaultOptions()
	o.LoopRecords = types.NamespacedName{Namespace: "hvpa", Name: "loops"}
	clk := clocktesting.NewFakeClock(now)
	u := New(c, c, record.NewFakeRecorder(100), clk, nil, o, NewMetrics(nil))
	evict := func(name string, cpu float64) { t.Helper(); evictOne(t, u, c, "web", name, templateCPU, cpu, false) }
	evict("a", 500)
	f := "Hvpa/shop/web|" + fingerprint([]scaling.ContainerDecision{{Name: "app", Requests: scaling.V(500, -1)}})
	g := fingerprint([]scaling.ContainerDecision{{Name: "app", Requests: scaling.V(900, -1)}})
	if evictions != 1 || len(u.evicted) != 1 || len(u.evicted[f].MovedTo) != 0 {
		t.Fatalf("%d evictions, records %+v: want a's, one record for F", evictions, u.evicted)
	}
	clk.Step(time.Minute)
	failWrites = true
	evict("b", 900)
	if evictions != 1 || len(u.evicted) != 1 || len(u.evicted[f].MovedTo) != 0 {
		t.Fatalf("the record for G not written: %d evictions, records %+v; want no eviction and F's record as it was", evictions, u.evicted)
	}
	clk.Step(time.Minute)
	failWrites = false
	evict("b", 900)
	if evictions != 2 || len(u.evicted) != 2 || !slices.Equal(u.evicted[f].MovedTo, []string{g}) {
		t.Fatalf("written: %d evictions, records %+v; want b evicted, F noting G", evictions, u.evicted)
	}
}

// TestEvictionHeldAsPlanned: a pod the plan read as held by loop detection at the loop's start (which spared
// it the disruption budget's checks) is held at the eviction too, even when an eviction earlier in the loop
// noted a change it holds on the record: the eviction comes at the next loop, within the budget.
func TestEvictionHeldAsPlanned(t *testing.T) {
	f := []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(500, -1)}}
	g := []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(900, -1)}}
	for _, tc := range []struct {
		name    string
		planned map[string]EvictedChange
		held    bool
	}{
		{"planned as held", map[string]EvictedChange{fingerprint(f): {Known: map[types.UID]bool{"a": true}}}, true}, // the record at the loop's start
		{"planned free", nil, false},
	} {
		evictions, failWrites := 0, false
		c := evictionServer(&evictions, &failWrites)
		u := New(c, c, record.NewFakeRecorder(100), clocktesting.NewFakeClock(now), nil, DefaultOptions(), NewMetrics(nil))
		// the record now: it notes G, which b holds
		u.evicted["Hvpa/shop/web|"+fingerprint(f)] = eviction{at: now.Add(-time.Minute), EvictedChange: EvictedChange{Known: map[types.UID]bool{"a": true}, MovedTo: []string{fingerprint(g)}}}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "b", UID: "b", Annotations: map[string]string{vpav1.AnnotationSizedResources: "app: cpu request 100m -> 900m"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1", Resources: corev1.ResourceRequirements{Requests: scaling.ToResourceList(scaling.V(900, -1))}}}}}
		if err := c.Create(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		budget := 1
		s := served{ctl: Controller{Kind: "Hvpa", Namespace: "shop", Name: "web", Evicted: tc.planned}, obj: pod, budget: &budget, known: map[types.UID]bool{"a": true, "b": true}}
		a := &Action{Kind: Evict, Pod: plannedPod(pod), Sized: f, Fingerprint: fingerprint(f), Message: "app cpu request -> 500m"}
		u.evict(context.Background(), s, pod, a, true, "", now)
		loops := testutil.ToFloat64(u.Metrics.Evictions.WithLabelValues("loop"))
		if held := loops == 1 && evictions == 0; held != tc.held || !held && evictions != 1 {
			t.Errorf("%s: %d evictions, %v held by loop detection; want held %v", tc.name, evictions, loops, tc.held)
		}
	}
}

// TestMovedToKeepsTheNewest: a record notes each change the workload is evicted for once, and keeps the
// newest MaxMovedTo of them (a target that moves through many sizes within the window must not fill the
// loop-records ConfigMap, which would drop other workloads' records); another workload's records note none.
func TestMovedToKeepsTheNewest(t *testing.T) {
	u := New(nil, nil, record.NewFakeRecorder(1), clocktesting.NewFakeClock(now), nil, DefaultOptions(), NewMetrics(nil))
	u.evicted["Hvpa/shop/web|f"] = eviction{at: now.Add(-time.Minute)}
	u.evicted["Hvpa/shop/other|f"] = eviction{at: now.Add(-time.Minute)}
	u.evicted["Hvpa/shop/web|old"] = eviction{at: now.Add(-2 * time.Hour)} // out of the window
	var want []string
	for i := range MaxMovedTo + 3 {
		change := fmt.Sprintf("app cpu=%d;", 200+i)
		u.noteMovedTo("Hvpa/shop/web", change, now)
		u.noteMovedTo("Hvpa/shop/web", change, now) // a second eviction for it notes nothing more
		want = append(want, change)
	}
	want = want[len(want)-MaxMovedTo:]
	if got := u.evicted["Hvpa/shop/web|f"].MovedTo; !slices.Equal(got, want) {
		t.Errorf("noted %q, want the newest %d: %q", got, MaxMovedTo, want)
	}
	if got := u.evicted["Hvpa/shop/other|f"].MovedTo; got != nil {
		t.Errorf("another workload's record noted %q", got)
	}
	if got := u.evicted["Hvpa/shop/web|old"].MovedTo; got != nil {
		t.Errorf("a record out of the window noted %q", got)
	}
}

// TestSizedAtAdmissionFromTheTemplate: a pod's sizing annotation counts as the webhook's only when the
// workload's template does not carry it too (a template made from a pod copies it onto every replacement,
// sized or not); upstream's admission annotation counts only when it lists a change.
func TestSizedAtAdmissionFromTheTemplate(t *testing.T) {
	sized := map[string]string{vpav1.AnnotationSizedResources: "app: cpu request 100m -> 900m"}
	for _, tc := range []struct {
		name        string
		pod, tmpl   map[string]string
		wantSizedAt bool
	}{
		{"sized by hvpa's webhook", sized, nil, true},
		{"the template carries the annotation", sized, sized, false},
		{"no annotation", nil, nil, false},
		{"upstream's, a change listed", map[string]string{vpav1.AnnotationUpstreamUpdates: "Pod resources updated by web: container 0: cpu request, memory request"}, nil, true},
		{"upstream's, no change listed", map[string]string{vpav1.AnnotationUpstreamUpdates: "Pod resources updated by web: container 0: "}, nil, false},
	} {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: appsv1.DeploymentSpec{
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: tc.tmpl}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1",
				Resources: corev1.ResourceRequirements{Requests: scaling.ToResourceList(scaling.V(templateCPU, -1))}}}}}}}
		c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(d).Build()
		u := New(c, c, record.NewFakeRecorder(1), clocktesting.NewFakeClock(now), nil, DefaultOptions(), NewMetrics(nil))
		pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "u1", Annotations: tc.pod},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1", Resources: corev1.ResourceRequirements{Requests: scaling.ToResourceList(scaling.V(900, -1))}}}}}
		s := served{ctl: Controller{Kind: "Hvpa", Namespace: "shop", Name: "web"}, gvk: appsv1.SchemeGroupVersion.WithKind("Deployment"), target: workload.Ref{Group: "apps", Kind: "Deployment", Name: "web"}}
		states := u.podStates(context.Background(), s, []corev1.Pod{pod}, now)
		if got := states[0].SizedAtAdmission; got != tc.wantSizedAt || states[0].Containers[0].Origin == nil {
			t.Errorf("%s: sized at admission %v (template read: %v), want %v", tc.name, got, states[0].Containers[0].Origin != nil, tc.wantSizedAt)
		}
	}
}

// TestEvictionRateLimitWaitsWithinTheLoop: with --eviction-rate-limit, an eviction waits for its token as
// upstream's updater does, within the loop: at 4 a second (burst 1) three evictions asked at once all go
// ahead in one loop (with the token only taken when there, the second and third were rate-limited until the
// next loop, a rate of one a loop whatever the flag said). A token that would come after the loop's end is
// not waited for: at one per 100 s the second eviction is rate-limited at once. Without a limit nothing
// waits, even in a loop that ran past its end.
func TestEvictionRateLimitWaitsWithinTheLoop(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		want int
	}{{4, 3}, {0.01, 1}} {
		evictions, failWrites := 0, false
		c := evictionServer(&evictions, &failWrites)
		o := DefaultOptions()
		o.EvictionRateLimit, o.EvictionBurst = tc.rate, 1
		u := New(c, c, record.NewFakeRecorder(100), clocktesting.NewFakeClock(now), nil, o, NewMetrics(nil))
		for i := range 3 {
			evictOne(t, u, c, fmt.Sprintf("web-%d", i), fmt.Sprintf("p-%d", i), templateCPU, 500, false)
		}
		if evictions != tc.want {
			t.Errorf("rate %v/s, burst 1: %d of 3 evictions in one loop, want %d", tc.rate, evictions, tc.want)
		}
		if got := testutil.ToFloat64(u.Metrics.Evictions.WithLabelValues("rate_limited")); got != float64(3-tc.want) {
			t.Errorf("rate %v/s: %v rate_limited, want %d", tc.rate, got, 3-tc.want)
		}
	}
	// a loop that ran past its end (many pods, slow writes): without a limit every eviction still goes ahead
	evictions, failWrites := 0, false
	c := evictionServer(&evictions, &failWrites)
	u := New(c, c, record.NewFakeRecorder(100), clocktesting.NewFakeClock(now), nil, DefaultOptions(), NewMetrics(nil))
	u.loopEnd = time.Now().Add(-time.Second)
	for i := range 3 {
		evictOne(t, u, c, fmt.Sprintf("web-%d", i), fmt.Sprintf("p-%d", i), templateCPU, 500, false)
	}
	if evictions != 3 {
		t.Errorf("no rate limit, the loop past its end: %d of 3 evictions, want every one", evictions)
	}
}

// TestDaemonSetDesiredReplicas: a DaemonSet's desired replicas are the nodes it should run on
// (status.desiredNumberScheduled), as upstream v1.8.1 reads them for the eviction tolerance: a pod a node
// still lacks counts as disrupted. Before, a DaemonSet's were unknown (0) and the plan counted the pods.
func TestDaemonSetDesiredReplicas(t *testing.T) {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "agent"}, Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 4, NumberReady: 3}}
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(ds).Build()
	u := New(c, c, record.NewFakeRecorder(1), clocktesting.NewFakeClock(now), nil, DefaultOptions(), NewMetrics(nil))
	s := served{ctl: Controller{Kind: "VerticalPodAutoscaler", Namespace: "shop", Name: "agent"}, target: workload.Ref{Kind: "DaemonSet", Name: "agent"},
		gvk: appsv1.SchemeGroupVersion.WithKind("DaemonSet")}
	if got := u.desiredReplicas(context.Background(), s); got != 4 {
		t.Errorf("a DaemonSet scheduled on 4 nodes (3 ready): desired replicas %d, want 4", got)
	}
}
