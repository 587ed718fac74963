package recommender

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hvpa-dev/hvpa/internal/podstore"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/usage"
)

// usageFunc is a usage source that returns what its function gives.
type usageFunc func() []usage.ContainerUsage

func (f usageFunc) ContainerUsage(context.Context) ([]usage.ContainerUsage, error) { return f(), nil }

// A usage sample dated in the future (a node's clock years ahead, or a forged timestamp) is refused: it
// neither enters the history nor blocks the container's samples that follow; a few seconds ahead count as now.
func TestFeedUsageRefusesFutureSamples(t *testing.T) {
	now := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(now)
	var next []usage.ContainerUsage
	r, err := NewRecommender(fake.NewClientBuilder().Build(), usageFunc(func() []usage.ContainerUsage { return next }), nil, nil, clk,
		recommender.Defaults(), DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &podstore.Pod{Namespace: "ns", Name: "web-0", Labels: map[string]string{"app": "web"}, Phase: corev1.PodRunning}
	m := podMatch{pods: map[types.NamespacedName]*matchedPod{p.Key(): {pod: p}}}
	sample := func(at time.Time, cpu int64) []usage.ContainerUsage {
		return []usage.ContainerUsage{{Namespace: "ns", Pod: "web-0", Container: "app", Time: at, Window: time.Minute, CPUMilli: cpu, MemoryBytes: 100 << 20}}
	}
	ctx := context.Background()
	next = sample(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), 8000)
	if n, _ := r.feedUsage(ctx, m, r.readUsage(ctx)); n != 0 {
		t.Errorf("a sample dated 2100 counted: %d samples", n)
	}
	clk.Step(time.Minute)
	next = sample(now.Add(time.Minute+20*time.Second), 100) // 20 s ahead: recorded at now
	if n, _ := r.feedUsage(ctx, m, r.readUsage(ctx)); n != 1 {
		t.Errorf("a sample 20 s ahead: %d samples, want 1", n)
	}
	clk.Step(time.Minute)
	next = sample(now.Add(2*time.Minute), 120)
	r.feedUsage(ctx, m, r.readUsage(ctx))
	a := r.state.MustAggregate(recommender.AggregateKey{Namespace: "ns", Container: "app", Group: recommender.LabelKey(p.Labels)})
	if a.TotalSamples != 2 || !a.LastSample.Equal(now.Add(2*time.Minute)) || !a.FirstSample.Equal(now.Add(time.Minute)) || a.LastUpdate.After(now.Add(2*time.Minute)) {
		t.Errorf("history: %d CPU samples from %s to %s (updated %s); want 2, from %s to %s", a.TotalSamples, a.FirstSample, a.LastSample, a.LastUpdate,
			now.Add(time.Minute), now.Add(2*time.Minute))
	}
}
