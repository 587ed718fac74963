package recommender_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// TestLoopServesNewVPAsOfTheirNamespace: between runs the loop serves a VPA the informer says was created,
// reading the VPAs of its namespace only (at 10,000 VPAs, resolving all of them again for each batch of new
// ones cost more than serving the batch); the VPAs elsewhere wait for the run.
func TestLoopServesNewVPAsOfTheirNamespace(t *testing.T) {
	w := newWritesCluster(t, 3, func(o *recommenderctrl.Options) { o.Interval = time.Hour }) // one run: the first
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	elsewhere, _ := workloadObjects("elsewhere", "other", 1)
	for _, o := range elsewhere {
		if err := w.c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var listedIn []string // the namespace of each VPA list ("": all)
	w.r.Client = interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*vpav1.VerticalPodAutoscalerList); ok {
				mu.Lock()
				listedIn = append(listedIn, (&client.ListOptions{}).ApplyOptions(opts).Namespace)
				mu.Unlock()
			}
			return c.List(ctx, list, opts...)
		}})
	informers := &informertest.FakeInformers{Scheme: testenv.Scheme()}
	w.r.Informers = informers
	done := make(chan error, 1)
	go func() { done <- w.r.Start(ctx) }()
	written := func(name string) bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.vpaWrites[name] > 0
	}
	eventually := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not within 10 s: %s", what)
			}
		}
	}
	eventually("the first run writes every status", func() bool { return written("app-0") && written("other") })
	eventually("the first run ends", func() bool { // its last step (garbage collection) lists every VPA
		var m dto.Metric
		if err := w.r.Metrics.StepDuration.WithLabelValues("total").(prometheus.Histogram).Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetHistogram().GetSampleCount() > 0
	})
	mu.Lock()
	listedIn = nil
	mu.Unlock()

	// a VPA replaces app-2's: its pods' history is held
	if err := w.c.Delete(ctx, &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app-2"}}); err != nil {
		t.Fatal(err)
	}
	late := vpaFor("ns", "late", "app-2", vpav1.UpdateModeOff)
	if err := w.c.Create(ctx, late); err != nil {
		t.Fatal(err)
	}
	inf, err := informers.FakeInformerFor(ctx, &vpav1.VerticalPodAutoscaler{})
	if err != nil {
		t.Fatal(err)
	}
	inf.Add(late)
	eventually("the new VPA's status is written before the next run", func() bool { return written("late") })
	var v vpav1.VerticalPodAutoscaler
	if err := w.c.Get(ctx, client.ObjectKeyFromObject(late), &v); err != nil || v.Status.Recommendation == nil {
		t.Errorf("the new VPA has no recommendation (%v): %+v", err, v.Status)
	}
	mu.Lock()
	if len(listedIn) == 0 {
		t.Error("the new VPA was served without listing VPAs")
	}
	for _, ns := range listedIn {
		if ns != "ns" {
			t.Errorf("serving a VPA created in ns listed the VPAs of %q (\"\": all), want ns's only: %q", ns, listedIn)
			break
		}
	}
	mu.Unlock()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("the loop ended with %v", err)
	}
}

// TestQualityObservedPerSample: every usage sample of a container whose target is known is observed in
// hvpa_recommender_usage_to_target_ratio, once per resource (its two series are looked up once, at their first
// sample).
func TestQualityObservedPerSample(t *testing.T) {
	w := newWritesCluster(t, 3, nil)
	w.run(t) // the first targets
	count := func(resource string) uint64 {
		var m dto.Metric
		if err := w.r.Metrics.Quality.WithLabelValues(resource).(prometheus.Histogram).Write(&m); err != nil {
			t.Fatal(err)
		}
		return m.GetHistogram().GetSampleCount()
	}
	before := map[string]uint64{"cpu": count("cpu"), "memory": count("memory")}
	w.run(t)
	w.run(t)
	for _, res := range []string{"cpu", "memory"} {
		if got := count(res) - before[res]; got != 6 { // 3 pods, one container each, 2 runs
			t.Errorf("%s: %d samples observed over 2 runs of 3 containers, want 6", res, got)
		}
	}
}
