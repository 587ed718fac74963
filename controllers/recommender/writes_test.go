package recommender_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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

// writesCluster is n Deployments with one pod and one VPA each on a fake client that counts the status
// writes of VPAs and checkpoints per object, and a recommender on a fake clock one minute per run.
type writesCluster struct {
	c           client.Client
	r           *recommenderctrl.Recommender
	clk         *clocktesting.FakePassiveClock
	usage       *playedUsage
	mu          sync.Mutex
	vpaWrites   map[string]int
	cpWrites    map[string]int
	cpWrittenAt map[string]time.Time
}

func newWritesCluster(t *testing.T, n int, mutate func(*recommenderctrl.Options)) *writesCluster {
	t.Helper()
	start := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	w := &writesCluster{clk: clocktesting.NewFakePassiveClock(start),
		vpaWrites: map[string]int{}, cpWrites: map[string]int{}, cpWrittenAt: map[string]time.Time{}}
	objs, played := fleet(n, 1, 1, func(d, _ int) (int64, int64) { return int64(100 + 10*d), int64(200+d) << 20 })
	played.t = start
	w.usage = played
	base := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).
		WithStatusSubresource(&vpav1.VerticalPodAutoscaler{}).Build()
	cpWritten := func(cp *vpav1.VerticalPodAutoscalerCheckpoint) {
		w.mu.Lock() // checkpoints are written several at a time
		defer w.mu.Unlock()
		w.cpWrites[cp.Name]++
		w.cpWrittenAt[cp.Name] = w.clk.Now()
	}
	w.c = interceptor.NewClient(base, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.CreateOption) error {
			if cp, ok := obj.(*vpav1.VerticalPodAutoscalerCheckpoint); ok {
				cpWritten(cp) // created with its status
			}
			return c.Create(ctx, obj, o...)
		},
		Patch: checkpointPatch(cpWritten),
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, o ...client.SubResourcePatchOption) error {
			w.mu.Lock() // status patches are sent several at a time
			defer w.mu.Unlock()
			if _, ok := obj.(*vpav1.VerticalPodAutoscaler); ok {
				w.vpaWrites[obj.GetName()]++
			}
			return c.SubResource(sub).Patch(ctx, obj, p, o...)
		},
	})
	opts := recommenderctrl.DefaultOptions()
	opts.CheckpointGCInterval = time.Hour
	opts.YoungStatusDelay = 0 // the dead band alone (TestYoungStatusDelay: the young histories' delay)
	if mutate != nil {
		mutate(&opts)
	}
	r, err := recommenderctrl.NewRecommender(w.c, w.usage, nil, nil, w.clk, recommender.Defaults(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.r = r
	return w
}

// run is one recommender run, a minute after the previous one; it returns the status writes it made.
func (w *writesCluster) run(t *testing.T) int {
	t.Helper()
	before := 0
	for _, n := range w.vpaWrites {
		before += n
	}
	w.clk.SetTime(w.clk.Now().Add(time.Minute))
	if err := w.r.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := 0
	for _, n := range w.vpaWrites {
		after += n
	}
	return after - before
}

// checkStatus: every VPA's status has the target the model gives now, exactly, and bounds within band of
// the model's (what the dead band allows and nothing more).
func (w *writesCluster) checkStatus(t *testing.T, band float64, when string) {
	t.Helper()
	w.eachStatus(t, func(v vpav1.VerticalPodAutoscaler, fresh *vpav1.RecommendedPodResources) {
		st := v.Status.Recommendation
		if st == nil || fresh == nil || len(st.ContainerRecommendations) != 1 || len(fresh.ContainerRecommendations) != 1 {
			t.Fatalf("%s: %s status %v, model %v", when, v.Name, st, fresh)
		}
		got, want := st.ContainerRecommendations[0], fresh.ContainerRecommendations[0]
		for r, q := range want.Target {
			if g := got.Target[r]; g.Cmp(q) != 0 {
				t.Errorf("%s: %s status target %s %s, the model's is %s", when, v.Name, r, g.String(), q.String())
			}
		}
		for _, b := range [][2]corev1.ResourceList{{got.LowerBound, want.LowerBound}, {got.UpperBound, want.UpperBound}} {
			for r, q := range b[1] {
				g, fr := b[0][r], q.AsApproximateFloat64()
				if d := g.AsApproximateFloat64() - fr; d > band*g.AsApproximateFloat64()+1e-9 || -d > band*g.AsApproximateFloat64()+1e-9 {
					t.Errorf("%s: %s status bound %s %s, the model's %s: beyond the dead band %g", when, v.Name, r, g.String(), q.String(), band)
				}
			}
		}
	})
}

// eachStatus calls f with every VPA as stored and the recommendation the model gives for it now.
func (w *writesCluster) eachStatus(t *testing.T, f func(v vpav1.VerticalPodAutoscaler, fresh *vpav1.RecommendedPodResources)) {
	t.Helper()
	m, err := recommender.NewModel(recommender.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	var vpas vpav1.VerticalPodAutoscalerList
	if err := w.c.List(context.Background(), &vpas); err != nil {
		t.Fatal(err)
	}
	for _, v := range vpas.Items {
		sel := labels.SelectorFromSet(labels.Set{"app": v.Spec.TargetRef.Name})
		fresh, _ := recommenderctrl.Recommendation(m, w.r.MergedAggregates(v.Namespace, v.Name, sel, m), nil)
		f(v, fresh)
	}
}

// TestStatusDeadBandNeverLosesAChange: with the dead band, status holds the model's targets exactly and its
// bounds within the band after every run; a load change that moves a target is written in the run that
// sees it; and the band saves writes that a band of 0 makes (bounds drifting as history builds).
func TestStatusDeadBandNeverLosesAChange(t *testing.T) {
	writes := map[float64]int{}
	for _, band := range []float64{0, 0.1} {
		w := newWritesCluster(t, 20, func(o *recommenderctrl.Options) { o.StatusDeadBand = band })
		if n := w.run(t); n != 20 {
			t.Fatalf("band %g: first run wrote %d statuses, want 20", band, n)
		}
		for i := range 30 {
			writes[band] += w.run(t)
			w.checkStatus(t, band, fmt.Sprintf("band %g, run %d", band, i+2))
		}
		// app-3's load jumps tenfold: each run's status holds the model's target of that run (checkStatus),
		// so the run in which the target moves writes it
		w.usage.samples[3].CPUMilli *= 10
		for i := range 10 {
			w.run(t)
			w.checkStatus(t, band, fmt.Sprintf("band %g, run %d after the jump", band, i+1))
		}
		var v vpav1.VerticalPodAutoscaler
		if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "app-3"}, &v); err != nil {
			t.Fatal(err)
		}
		if got := v.Status.Recommendation.ContainerRecommendations[0].Target[corev1.ResourceCPU]; got.Cmp(resource.MustParse("1")) <= 0 {
			t.Errorf("band %g: app-3's cpu target %s after 10 runs at 1300m (130m before)", band, got.String())
		}
	}
	t.Logf("status writes over runs 2-31 of 20 VPAs: band 0: %d, band 0.1: %d", writes[0], writes[0.1])
	if writes[0.1] >= writes[0] {
		t.Errorf("the dead band saved no write: %d with it, %d without", writes[0.1], writes[0])
	}
}

func TestWithinDeadBand(t *testing.T) {
	rec := func(target, lower, upper string) *vpav1.RecommendedPodResources {
		l := func(q string) corev1.ResourceList {
			return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
		}
		return &vpav1.RecommendedPodResources{ContainerRecommendations: []vpav1.RecommendedContainerResources{
			{ContainerName: "app", Target: l(target), UncappedTarget: l(target), LowerBound: l(lower), UpperBound: l(upper)}}}
	}
	other := rec("100m", "90m", "200m")
	other.ContainerRecommendations[0].ContainerName = "sidecar"
	for _, c := range []struct {
		name     string
		old, cur *vpav1.RecommendedPodResources
		want     bool
	}{
		{"same", rec("100m", "90m", "200m"), rec("100m", "90m", "200m"), true},
		{"bounds drift within the band", rec("100m", "90m", "200m"), rec("100m", "95m", "181m"), true},
		{"upper bound past the band", rec("100m", "90m", "200m"), rec("100m", "90m", "179m"), false},
		{"lower bound past the band", rec("100m", "90m", "200m"), rec("100m", "80m", "200m"), false},
		{"target moved a millicore", rec("100m", "90m", "200m"), rec("101m", "90m", "200m"), false},
		{"no recommendation in status", nil, rec("100m", "90m", "200m"), false},
		{"recommendation gone", rec("100m", "90m", "200m"), nil, false},
		{"another container", rec("100m", "90m", "200m"), other, false},
	} {
		if got := recommenderctrl.WithinDeadBand(c.old, c.cur, 0.1); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCheckpointsRoundRobin: with a period of 10 runs, each run writes a tenth of the checkpoints, the
// longest unwritten first; each is written once per period, never twice within it, and none waits longer
// than the period; a new VPA's checkpoint is written at the next run.
func TestCheckpointsRoundRobin(t *testing.T) {
	w := newWritesCluster(t, 20, func(o *recommenderctrl.Options) { o.Interval, o.CheckpointPeriod = time.Minute, 10*time.Minute })
	if got := recommenderctrl.CheckpointQuota(20, time.Minute, 10*time.Minute); got != 2 {
		t.Fatalf("quota %d, want 2", got)
	}
	last := map[string]time.Time{}
	for i := range 30 {
		total := 0
		for _, n := range w.cpWrites {
			total -= n
		}
		w.run(t)
		for _, n := range w.cpWrites {
			total += n
		}
		if total != 2 {
			t.Errorf("run %d wrote %d checkpoints, want 2 (20 x 1m / 10m)", i+1, total)
		}
		for name, at := range w.cpWrittenAt {
			if prev, ok := last[name]; ok && at != prev && at.Sub(prev) < 10*time.Minute {
				t.Errorf("run %d: %s written %s after its last write, within the period", i+1, name, at.Sub(prev))
			}
			last[name] = at
		}
		if i >= 10 {
			if len(w.cpWrittenAt) != 20 {
				t.Fatalf("after %d runs %d of 20 checkpoints were ever written", i+1, len(w.cpWrittenAt))
			}
			for name, at := range w.cpWrittenAt {
				if age := w.clk.Now().Sub(at); age > 10*time.Minute {
					t.Errorf("run %d: %s last written %s ago, longer than the period", i+1, name, age)
				}
			}
		}
	}

	// a new VPA (and its pod): its checkpoint goes first at the next run
	late, _ := workloadObjects("ns", "late", 1)
	for _, o := range late {
		if err := w.c.Create(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	w.usage.samples = append(w.usage.samples, usage.ContainerUsage{Namespace: "ns", Pod: "late-0", Container: "app", CPUMilli: 100, MemoryBytes: 100 << 20})
	w.run(t)
	if w.cpWrites[recommenderctrl.CheckpointName("late", "app")] != 1 {
		t.Errorf("the new VPA's checkpoint was not written at the first run that had its usage: %v", w.cpWrites)
	}
	if len(w.cpWrittenAt) != 21 {
		t.Errorf("%d checkpoints written, want 21", len(w.cpWrittenAt))
	}
}

// TestServeNewRecommendsAtOnce: a VPA created between runs for pods whose usage the recommender already
// holds gets its recommendation from ServeNew, without a run and without writing any other VPA.
func TestServeNewRecommendsAtOnce(t *testing.T) {
	w := newWritesCluster(t, 5, nil)
	ctx := context.Background()
	if n, err := w.r.ServeNew(ctx); err != nil || n != 0 {
		t.Fatalf("before the first run ServeNew served %d (%v), want 0: the first run loads history", n, err)
	}
	for range 3 {
		w.run(t)
	}
	if err := w.c.Create(ctx, vpaFor("ns", "late", "app-2", vpav1.UpdateModeOff)); err != nil {
		t.Fatal(err)
	}
	if err := w.c.Delete(ctx, &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app-2"}}); err != nil {
		t.Fatal(err)
	}
	writes := map[string]int{}
	for k, v := range w.vpaWrites {
		writes[k] = v
	}
	n, err := w.r.ServeNew(ctx)
	if err != nil || n != 1 {
		t.Fatalf("ServeNew served %d (%v), want 1", n, err)
	}
	for k, v := range w.vpaWrites {
		if k != "late" && writes[k] != v {
			t.Errorf("ServeNew wrote %s, which already had its status", k)
		}
	}
	var v vpav1.VerticalPodAutoscaler
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "late"}, &v); err != nil {
		t.Fatal(err)
	}
	if v.Status.Recommendation == nil {
		t.Fatalf("the new VPA has no recommendation: %+v", v.Status)
	}
	if got := v.Status.Recommendation.ContainerRecommendations[0].Target[corev1.ResourceCPU]; got.Cmp(resource.MustParse("100m")) < 0 {
		t.Errorf("cpu target %s for a pod using 120m", got.String())
	}
	w.checkStatus(t, recommenderctrl.DefaultOptions().StatusDeadBand, "after ServeNew")
	if n, err := w.r.ServeNew(ctx); err != nil || n != 0 {
		t.Errorf("a second ServeNew served %d (%v), want 0", n, err)
	}
}

// TestLoopHealthyFailsWhenStuck: the liveness check passes before the loop starts and while runs end, and
// fails once no run has ended for StallAfter.
func TestLoopHealthyFailsWhenStuck(t *testing.T) {
	w := newWritesCluster(t, 2, nil)
	if err := w.r.LoopHealthy(nil); err != nil {
		t.Fatalf("before the loop starts: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.r.Start(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) { // until the first run wrote a status (the client is safe to share)
		var v vpav1.VerticalPodAutoscaler
		if err := w.c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "app-1"}, &v); err == nil && v.Status.Recommendation != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if err := w.r.LoopHealthy(nil); err != nil {
		t.Errorf("right after a run: %v", err)
	}
	w.clk.SetTime(w.clk.Now().Add(w.r.StallAfter() + time.Second)) // the next run never comes (the ticker is a minute away)
	if err := w.r.LoopHealthy(nil); err == nil || !strings.Contains(err.Error(), "no recommender run has ended for") {
		t.Errorf("stuck for longer than %s: %v", w.r.StallAfter(), err)
	}
}
