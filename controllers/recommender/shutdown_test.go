package recommender_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// TestRunStopsAtShutdownAndLogsEachRun: a run whose context ends stops at once (no status write starts after
// the cancellation but the UpdateWorkers-1 already on their way, which the client cuts short; context.Canceled
// returned), and every completed run logs one line with its counts.
func TestRunStopsAtShutdownAndLogsEachRun(t *testing.T) {
	objs, played := fleet(200, 1, 1, func(int, int) (int64, int64) { return 100, 200 << 20 })
	base := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).
		WithStatusSubresource(&vpav1.VerticalPodAutoscaler{}).Build()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	patches, late, cancelAt := 0, 0, 10
	c := interceptor.NewClient(base, interceptor.Funcs{Patch: checkpointPatch(nil), SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, o ...client.SubResourcePatchOption) error {
		mu.Lock()
		defer mu.Unlock()
		if err := ctx.Err(); err != nil {
			late++
			return err // as a real client does with a request whose context has ended
		}
		patches++
		if patches == cancelAt {
			cancel() // shutdown in the middle of the status writes
		}
		return c.SubResource(sub).Patch(ctx, obj, p, o...)
	}})
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	opts := recommenderctrl.DefaultOptions()
	opts.YoungStatusDelay = 0 // every status the cut-short run did not write is written by the next
	r, err := recommenderctrl.NewRecommender(c, played, nil, nil, played, recommender.Defaults(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = r.RunOnce(logf.IntoContext(ctx, logger))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a run cut short returned %v, want context.Canceled", err)
	}
	if patches != cancelAt || late > opts.UpdateWorkers-1 {
		t.Errorf("%d status writes and %d more sent after the cancellation, want %d and at most the %d already on their way",
			patches, late, cancelAt, opts.UpdateWorkers-1)
	}

	lines = nil
	if err := r.RunOnce(logf.IntoContext(context.Background(), logger)); err != nil {
		t.Fatal(err)
	}
	var run string
	for _, l := range lines {
		if strings.Contains(l, `"msg"="recommender run"`) {
			run = l
		}
	}
	for _, want := range []string{`"vpas"=200`, `"pods"=200`, `"usageSamples"=200`, `"statusWrites"=200`, `"checkpointsWritten"=`, `"duration"=`, `"steps"={`, `"usage"=`, `"status"=`} {
		if !strings.Contains(run, want) {
			t.Errorf("the run's log line lacks %s: %q", want, run)
		}
	}
}
