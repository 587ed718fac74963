package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// floorWriter is the first recommendation's floor (-first-rec-floor): a clairvoyant writer in place of the
// recommender, which knows every VPA's recommendation before it exists and patches it into the VPA's status
// the moment a watch shows the VPA created, cfg.floorWorkers patches at once (hvpa's --update-worker-count),
// with the client limits the benchmark gives hvpa. It reads no pods and no usage and computes nothing: what it
// measures is the API server's time to create the VPAs and take one status patch each, on this machine.
type floorWriter struct {
	errs chan error
}

// startFloorWriter starts the writer; it runs until ctx ends.
func startFloorWriter(ctx context.Context, restCfg *rest.Config, workers int) (*floorWriter, error) {
	cfg := rest.CopyConfig(restCfg)
	cfg.QPS, cfg.Burst = 1000, 2000 // as the benchmark's -hvpa-args give hvpa at 10,000
	wc, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return nil, err
	}
	w, err := wc.Watch(ctx, &vpav1.VerticalPodAutoscalerList{})
	if err != nil {
		return nil, fmt.Errorf("watching VerticalPodAutoscalers: %w", err)
	}
	f := &floorWriter{errs: make(chan error, 1)}
	created := make(chan *vpav1.VerticalPodAutoscaler, 1<<16)
	go func() { // each VPA once: a watch that ends (the client's timeout) is caught up by a list
		defer close(created)
		queued := map[types.NamespacedName]bool{}
		followVPAs(ctx, wc, w, func(v *vpav1.VerticalPodAutoscaler) {
			if key := client.ObjectKeyFromObject(v); !hasRecommendation(v) && !queued[key] {
				queued[key] = true
				created <- v
			}
		})
	}()
	for range workers {
		go func() {
			for v := range created {
				if err := wc.Status().Patch(ctx, v, client.RawPatch(types.MergePatchType, floorPatch(v.ResourceVersion))); err != nil && ctx.Err() == nil {
					select {
					case f.errs <- fmt.Errorf("patching %s/%s: %w", v.Namespace, v.Name, err):
					default:
					}
				}
			}
		}()
	}
	return f, nil
}

// err is the writer's first failed patch (nil: none).
func (f *floorWriter) err() error {
	select {
	case err := <-f.errs:
		return err
	default:
		return nil
	}
}

// floorPatch is the status the writer patches: a recommendation for the benchmark's container (its request)
// and the condition hvpa writes with it, under resourceVersion rv as hvpa's patch is.
func floorPatch(rv string) []byte {
	amounts := map[string]string{"cpu": "100m", "memory": "128Mi"}
	now := time.Now().UTC().Format(time.RFC3339)
	b, _ := json.Marshal(map[string]any{
		"metadata": map[string]any{"resourceVersion": rv},
		"status": map[string]any{
			"recommendation": map[string]any{"containerRecommendations": []any{map[string]any{"containerName": "app",
				"target": amounts, "lowerBound": amounts, "upperBound": amounts, "uncappedTarget": amounts}}},
			"conditions": []any{map[string]any{"type": "RecommendationProvided", "status": "True", "lastTransitionTime": now}},
		},
	})
	return b
}

// runFloor measures the first recommendation's floor at n (-first-rec-floor): the same control plane, fleet
// and workloads as runOne, then the VPAs created as runOne creates them, with the floor writer in place of hvpa.
func runFloor(ctx context.Context, cfg config, n int, out *report) (*result, error) {
	r, err := newResult(cfg, n)
	if err != nil {
		return nil, err
	}
	say := func(format string, args ...any) { out.Printf(format+"\n", args...) }
	say("\n== FLOOR N=%d: %d Deployments x %d pods = %d pods in %d namespaces; a clairvoyant writer (%d patches at once) in place of hvpa",
		n, n, cfg.podsPerApp, r.pods, r.namespaces, cfg.floorWorkers)
	phase := r.phases(say)
	cl, err := setUpCluster(ctx, out, cfg, n, r, phase, say)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	restCfg, c := cl.restCfg, cl.c
	writerCtx, stopWriter := context.WithCancel(ctx)
	defer stopWriter()
	f, err := startFloorWriter(writerCtx, restCfg, cfg.floorWorkers)
	if err != nil {
		return nil, err
	}
	if err := measureRecommendations(ctx, out, restCfg, c, cfg, n, nil, r); err != nil {
		return nil, err
	}
	if err := f.err(); err != nil {
		return nil, fmt.Errorf("the floor writer: %w", err)
	}
	phase("every VPA has a recommendation")
	out.Printf("\n==== FLOOR N=%d: time from VPA creation to its first recommendation written by a clairvoyant writer, %d patches at once "+
		"(%d VPAs created at once in %s): min %s  p50 %s  p95 %s  max %s\n", n, cfg.floorWorkers, n, r.vpaCreate.Round(time.Millisecond),
		sec(percentile(r.toRec, 0)), sec(percentile(r.toRec, 0.5)), sec(percentile(r.toRec, 0.95)), sec(percentile(r.toRec, 1)))
	return r, out.Err()
}
