package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/recommender"
)

// seedHistory writes, for each VPA the run will create, the checkpoint a recommender serving it for age would
// have left, as one moving from upstream's recommender finds them (without hvpa's writer label, so that they
// are kept until their VPAs exist, and relabelled at their first write; the run waits for those first writes
// before the steady loops it measures):
//   - the usage history of its Deployment's podsPerApp pods (usageAt, the function the played pods follow
//     live), a sample every interval as the recommender takes them, made by the recommender's own model and
//     codec;
//   - written at realistic ages: a recommender writes each checkpoint once per checkpoint period,
//     round-robin, so the checkpoints it leaves were written evenly over the last period, the i-th of n
//     (i + 0.5) / n periods ago, holding the history up to then. From its first loop the recommender
//     finds about n x interval / period of them due at each run, the steady rate of checkpoint writes, not
//     none (checkpoints all written just now) nor all at once.
//
// The run then measures VPAs with that much history, as in a cluster that has run for days, not the first
// minutes of new VPAs, whose bounds move past the status dead band at every run.
func seedHistory(ctx context.Context, c client.Client, cfg config, n int, age time.Duration) error {
	m, err := recommender.NewModel(recommender.Defaults())
	if err != nil {
		return err
	}
	now := time.Now()
	var g errgroup.Group
	g.SetLimit(32)
	for i := range n {
		g.Go(func() error {
			writtenAt := seededWrittenAt(i, n, cfg.checkpointPeriod, now)
			cp := &vpav1.VerticalPodAutoscalerCheckpoint{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespaceOf(cfg, i), Name: recommenderctrl.CheckpointName(appName(i), "app")},
				Spec:       vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: appName(i), ContainerName: "app"},
			}
			status := recommenderctrl.CheckpointStatus(appHistory(m, appName(i), cfg.podsPerApp, cfg.interval, writtenAt.Add(-age), writtenAt), writtenAt)
			cp.Status = status // in the create: the CRD has no status subresource
			if err := c.Create(ctx, cp); err != nil {
				return fmt.Errorf("creating checkpoint %s/%s: %w", cp.Namespace, cp.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// seededWrittenAt is when the i-th of n seeded checkpoints was written: (i + 0.5) / n periods before now.
func seededWrittenAt(i, n int, period time.Duration, now time.Time) time.Time {
	return now.Add(-time.Duration((float64(i) + 0.5) / float64(n) * float64(period)))
}

// appHistory is the checkpoint of the Deployment app's usage from from to to: pods pods (named as no live pod
// is: their factors are drawn as the live pods' are) sampled every interval.
func appHistory(m *recommender.Model, app string, pods int, interval time.Duration, from, to time.Time) recommender.AggregateCheckpoint {
	a := m.NewAggregate()
	ctrs := make([]*recommender.Container, pods)
	podHashes := make([]uint64, pods)
	appHash := hash64(app)
	for p := range ctrs {
		ctrs[p] = m.NewContainer(a)
		podHashes[p] = hash64(fmt.Sprintf("%s-history-%d", app, p))
	}
	for t := from.Truncate(interval); !t.After(to); t = t.Add(interval) {
		for p, ctr := range ctrs {
			u := usageOf(appHash, podHashes[p], t)
			m.AddCPU(ctr, t, float64(u.CPUMilli)/1000)
			m.AddMemory(ctr, t, float64(u.MemoryBytes))
		}
	}
	return m.SaveAggregate(a, ctrs, to)
}
