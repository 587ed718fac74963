package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	vpactrl "github.com/hvpa-dev/hvpa/controllers/vpa"
	"github.com/hvpa-dev/hvpa/recommender"
)

// seedHistory writes, for each VPA the run will create, the checkpoint a recommender serving it for age
// would have left (as one moving from upstream's recommender finds them: without hvpa's writer label, so
// that they are kept until their VPAs exist, and relabelled at their first write): usage like the played pods' (podsPerApp pods of 50-149m CPU and 96-159 MiB, a sample
// every 10 minutes), made by the recommender's own model and codec. The run then measures VPAs with that
// much history, as in a cluster that has run for days, not the first minutes of new VPAs, whose bounds move
// past the status dead band at every run.
func seedHistory(ctx context.Context, c client.Client, cfg config, n int, age time.Duration) error {
	m, err := recommender.NewModel(recommender.Defaults())
	if err != nil {
		return err
	}
	now := time.Now()
	a := m.NewAggregate()
	pods := make([]*recommender.Container, cfg.podsPerApp)
	for p := range pods {
		pods[p] = m.NewContainer(a)
	}
	for t := now.Add(-age); t.Before(now); t = t.Add(10 * time.Minute) {
		for p, ctr := range pods {
			step := int64(t.Unix()/600) + int64(p)*37
			m.AddCPU(ctr, t, float64(50+step%100)/1000)
			m.AddMemory(ctr, t, float64((96+step%64)<<20))
		}
	}
	status := vpactrl.CheckpointStatus(m.SaveAggregate(a, pods, now), now)
	var g errgroup.Group
	g.SetLimit(32)
	for i := range n {
		g.Go(func() error {
			cp := &vpav1.VerticalPodAutoscalerCheckpoint{
				ObjectMeta: metav1.ObjectMeta{Namespace: namespaceOf(cfg, i), Name: vpactrl.CheckpointName(appName(i), "app")},
				Spec:       vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: appName(i), ContainerName: "app"},
			}
			if err := c.Create(ctx, cp); err != nil {
				return fmt.Errorf("creating checkpoint %s/%s: %w", cp.Namespace, cp.Name, err)
			}
			cp.Status = status
			if err := c.Status().Update(ctx, cp); err != nil {
				return fmt.Errorf("checkpoint %s/%s status: %w", cp.Namespace, cp.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}
