package recommender_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// A checkpoint that was not there when the checkpoints were listed at start is created with its status in
// one request, without a read first; one another recommender created meanwhile is read and taken over as
// before; later writes are one patch of the object each (the CRD has no status subresource, as upstream's).
func TestCheckpointCreatedWithoutARead(t *testing.T) {
	clk, played, base := checkpointFleet(3)
	type counts struct{ get, create, update, patch, statusPatch int }
	seen := map[string]*counts{}
	var mu sync.Mutex // checkpoints are written several at a time (each one's requests in one goroutine)
	of := func(name string) *counts {
		mu.Lock()
		defer mu.Unlock()
		if seen[name] == nil {
			seen[name] = &counts{}
		}
		return seen[name]
	}
	meanwhile := recommenderctrl.CheckpointName("app-1", "app")
	c := interceptor.NewClient(base, interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if _, ok := list.(*vpav1.VerticalPodAutoscalerCheckpointList); ok { // another recommender creates one after the list
				cp := &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: meanwhile, Labels: map[string]string{recommenderctrl.WriterLabel: "upstream"}},
					Spec: vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: "app-1", ContainerName: "app"}}
				if err := c.Create(ctx, cp); err != nil && !apierrors.IsAlreadyExists(err) {
					return err
				}
			}
			return nil
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*vpav1.VerticalPodAutoscalerCheckpoint); ok {
				of(key.Name).get++
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if _, ok := obj.(*vpav1.VerticalPodAutoscalerCheckpoint); ok {
				of(obj.GetName()).create++
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*vpav1.VerticalPodAutoscalerCheckpoint); ok {
				of(obj.GetName()).update++
			}
			return c.Update(ctx, obj, opts...)
		},
		Patch: checkpointPatch(func(cp *vpav1.VerticalPodAutoscalerCheckpoint) { of(cp.Name).patch++ }),
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, o ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*vpav1.VerticalPodAutoscalerCheckpoint); ok {
				of(obj.GetName()).statusPatch++
			}
			return c.SubResource(sub).Patch(ctx, obj, p, o...)
		},
	})
	opts := recommenderctrl.DefaultOptions()
	opts.CheckpointPeriod = 0 // every checkpoint at every run
	r, err := recommenderctrl.NewRecommender(c, played, nil, nil, clk, recommender.Defaults(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		clk.SetTime(clk.Now().Add(time.Minute))
		if err := r.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]counts{
		recommenderctrl.CheckpointName("app-0", "app"): {create: 1, patch: 1},
		meanwhile: {create: 1, get: 1, update: 1, patch: 2}, // refused as existing: read, relabelled
		recommenderctrl.CheckpointName("app-2", "app"): {create: 1, patch: 1},
	}
	for name, w := range want {
		if got := of(name); *got != w {
			t.Errorf("%s: %+v requests over two runs, want %+v", name, *got, w)
		}
	}
	var cp vpav1.VerticalPodAutoscalerCheckpoint
	if err := base.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: meanwhile}, &cp); err != nil || cp.Labels[recommenderctrl.WriterLabel] != opts.Name {
		t.Errorf("the checkpoint created meanwhile: %v, labels %v, want it labelled as this recommender's", err, cp.Labels)
	}
}

// checkpointFleet is n VPAs of one pod each on the fake client (VPAs with a status subresource, checkpoints
// without, as the CRDs are), their played usage, and a fake clock at the start of the usage.
func checkpointFleet(n int) (*clocktesting.FakePassiveClock, *playedUsage, client.WithWatch) {
	start := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	objs, played := fleet(n, 1, 1, func(d, _ int) (int64, int64) { return int64(100 + 10*d), 200 << 20 })
	played.t = start
	base := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).
		WithStatusSubresource(&vpav1.VerticalPodAutoscaler{}).Build()
	return clocktesting.NewFakePassiveClock(start), played, base
}

// checkpointPatch is a fake client's Patch that answers a checkpoint's status patch (see answerStatus), after
// seen (nil: none); other patches go through.
func checkpointPatch(seen func(*vpav1.VerticalPodAutoscalerCheckpoint)) func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
	return func(ctx context.Context, c client.WithWatch, obj client.Object, p client.Patch, o ...client.PatchOption) error {
		cp, ok := obj.(*vpav1.VerticalPodAutoscalerCheckpoint)
		if !ok {
			return c.Patch(ctx, obj, p, o...)
		}
		if seen != nil {
			seen(cp)
		}
		return answerStatus(ctx, c, cp, p)
	}
}

// answerStatus answers a checkpoint's status patch (one "add" of /status, as the recommender writes it) with
// the stored object carrying the new status, as the API server does; it is not stored (the fake client's
// field tracking cannot take the histogram's int-keyed map).
func answerStatus(ctx context.Context, c client.Client, cp *vpav1.VerticalPodAutoscalerCheckpoint, p client.Patch) error {
	data, err := p.Data(cp)
	if err != nil {
		return err
	}
	var ops []struct {
		Op    string                                      `json:"op"`
		Path  string                                      `json:"path"`
		Value vpav1.VerticalPodAutoscalerCheckpointStatus `json:"value"`
	}
	if err := json.Unmarshal(data, &ops); err != nil {
		return fmt.Errorf("a checkpoint patch %s: %w", data, err)
	}
	if len(ops) != 1 || ops[0].Path != "/status" {
		return fmt.Errorf("a checkpoint patch %s, want one operation on /status", data)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(cp), cp); err != nil {
		return err
	}
	cp.Status = ops[0].Value
	return nil
}

// Checkpoints are written UpdateWorkers at a time (upstream's --update-worker-count): at 10,000 VPAs a run
// writes 500 of them, which one at a time would take seconds of the loop.
func TestCheckpointsWrittenUpdateWorkersAtATime(t *testing.T) {
	for _, workers := range []int{1, 4} {
		clk, played, base := checkpointFleet(24)
		var inFlight, most, writes atomic.Int64
		observe := func(n int64) {
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
		}
		slow := func() { // a write that takes a moment, as against an API server
			observe(inFlight.Add(1))
			// it lasts until the workers' writes are all in flight (or 200 ms), so that a loaded machine that
			// starts a worker late does not hide the concurrency
			for deadline := time.Now().Add(200 * time.Millisecond); inFlight.Load() < int64(workers) && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			observe(inFlight.Load())
			time.Sleep(5 * time.Millisecond)
			inFlight.Add(-1)
			writes.Add(1)
		}
		c := interceptor.NewClient(base, interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, o ...client.CreateOption) error {
				if _, ok := obj.(*vpav1.VerticalPodAutoscalerCheckpoint); ok {
					slow()
				}
				return c.Create(ctx, obj, o...)
			},
			Patch: checkpointPatch(func(*vpav1.VerticalPodAutoscalerCheckpoint) { slow() }),
		})
		opts := recommenderctrl.DefaultOptions()
		opts.CheckpointPeriod, opts.UpdateWorkers = 0, workers
		r, err := recommenderctrl.NewRecommender(c, played, nil, nil, clk, recommender.Defaults(), opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		clk.SetTime(clk.Now().Add(time.Minute))
		if err := r.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
		if writes.Load() != 24 || most.Load() != int64(workers) {
			t.Errorf("update workers %d: %d checkpoint writes, at most %d at once; want 24, %d at once", workers, writes.Load(), most.Load(), workers)
		}
	}
	if _, err := recommenderctrl.NewRecommender(nil, nil, nil, nil, nil, recommender.Defaults(), recommenderctrl.Options{Storage: recommenderctrl.StorageCheckpoint}, nil); err == nil ||
		!strings.Contains(err.Error(), "--update-worker-count 0: must be at least 1") {
		t.Errorf("no update workers: %v, want the flag named", err)
	}
}
