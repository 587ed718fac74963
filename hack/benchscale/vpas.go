package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// firstSeen records when something was first seen, by key.
type firstSeen struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (s *firstSeen) record(key string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.at[key]; !ok {
		s.at[key] = at
	}
}

func (s *firstSeen) snapshot() map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]time.Time, len(s.at))
	for k, v := range s.at {
		out[k] = v
	}
	return out
}

// measureRecommendations creates one VPA (updateMode Off) per Deployment, all at once (32 requests in flight),
// and records for each the time from its creation to its first status.recommendation, seen through a watch
// started before the first creation. VPAs still without a recommendation after 10 intervals are counted, not
// waited for.
func measureRecommendations(ctx context.Context, out *report, restCfg *rest.Config, c client.Client, cfg config, n int, h *hvpaProcess, r *result) error {
	wc, err := client.NewWithWatch(restCfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		return err
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w, err := wc.Watch(watchCtx, &vpav1.VerticalPodAutoscalerList{})
	if err != nil {
		return fmt.Errorf("watching VerticalPodAutoscalers: %w", err)
	}
	recommended := &firstSeen{at: map[string]time.Time{}}
	go watchRecommendations(watchCtx, wc, w, recommended)

	created := &firstSeen{at: map[string]time.Time{}}
	var g errgroup.Group
	g.SetLimit(32)
	r.vpasCreatedAt = time.Now()
	for i := range n {
		g.Go(func() error {
			v := offVPA(namespaceOf(cfg, i), appName(i))
			if err := c.Create(ctx, v); err != nil {
				return fmt.Errorf("creating VerticalPodAutoscaler %s/%s: %w", v.Namespace, v.Name, err)
			}
			created.record(v.Namespace+"/"+v.Name, time.Now())
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	r.vpaCreate = time.Since(r.vpasCreatedAt)
	out.Printf("-- %d VerticalPodAutoscalers (updateMode Off) created at once in %s; watching for their first recommendation\n", n, r.vpaCreate.Round(time.Millisecond))
	err = waitFor(ctx, out, "a recommendation in every VPA", 10*cfg.interval+5*time.Minute, func() (bool, string, error) {
		got := len(recommended.snapshot())
		return got >= n, fmt.Sprintf("%d of %d VPAs have a recommendation", got, n), h.exited()
	})
	if ctx.Err() != nil || h.exited() != nil {
		return err
	}
	r.allRecsAt = time.Now()
	recs, made := recommended.snapshot(), created.snapshot()
	for key, at := range made {
		if rec, ok := recs[key]; ok {
			r.toRec = append(r.toRec, rec.Sub(at))
		} else {
			r.noRec++
		}
	}
	slices.Sort(r.toRec)
	if r.noRec > 0 {
		out.Printf("   WARNING: %d VPAs had no recommendation after the wait: %v\n", r.noRec, err)
	}
	return nil
}

// offVPA is a VPA in updateMode Off for the Deployment name.
func offVPA(ns, name string) *vpav1.VerticalPodAutoscaler {
	off := vpav1.UpdateModeOff
	return &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vpav1.VerticalPodAutoscalerSpec{TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
			UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: ptr.To(off)}}}
}

// watchRecommendations records when each VPA first shows a recommendation, until ctx ends.
func watchRecommendations(ctx context.Context, wc client.WithWatch, w watch.Interface, seen *firstSeen) {
	followVPAs(ctx, wc, w, func(v *vpav1.VerticalPodAutoscaler) {
		if hasRecommendation(v) {
			seen.record(v.Namespace+"/"+v.Name, time.Now())
		}
	})
}

// followVPAs calls each for the VPA of every event of the watch w, until ctx ends. When the API server (or the
// client's timeout) ends the watch, it lists the VPAs, calls each for every one (catching up), and watches
// again from the list, retrying every second.
func followVPAs(ctx context.Context, wc client.WithWatch, w watch.Interface, each func(*vpav1.VerticalPodAutoscaler)) {
	for {
		for ev := range w.ResultChan() {
			if v, ok := ev.Object.(*vpav1.VerticalPodAutoscaler); ok {
				each(v)
			}
		}
		for {
			if ctx.Err() != nil {
				return
			}
			var l vpav1.VerticalPodAutoscalerList
			var err error
			if err = wc.List(ctx, &l); err == nil {
				for i := range l.Items {
					each(&l.Items[i])
				}
				if w, err = wc.Watch(ctx, &vpav1.VerticalPodAutoscalerList{}, &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: l.ResourceVersion}}); err == nil {
					break
				}
			}
			time.Sleep(time.Second)
		}
	}
}

func hasRecommendation(v *vpav1.VerticalPodAutoscaler) bool {
	return v.Status.Recommendation != nil && len(v.Status.Recommendation.ContainerRecommendations) > 0
}

// observeSteadyState waits for cfg.loops recommender runs after the steady state began, and keeps every run
// since the VPAs were created. The steady state begins cfg.settle runs after the later of the run that ended
// after every VPA had its recommendation (that run may still have written some) and, with seeded checkpoints,
// the run by which the recommender had written each of them once: its first write of a checkpoint another
// recommender wrote reads it and relabels it (a get and an update besides the status patch), a cost of the
// first checkpoint period only.
func observeSteadyState(ctx context.Context, out *report, cfg config, h *hvpaProcess, r *result, seeded int) error {
	after := func(runs []run, t time.Time) int {
		return slices.IndexFunc(runs, func(x run) bool { return x.at.After(t) })
	}
	// first is the index of the run after which the steady loops begin (-1: not yet known), and why not yet
	first := func(runs []run) (int, string) {
		i := after(runs, r.allRecsAt)
		if i < 0 {
			return -1, "waiting for the run after the last recommendation"
		}
		if seeded > 0 {
			j, written := firstWrites(runs[max(0, after(runs, r.vpasCreatedAt)):], seeded)
			if j < 0 {
				return -1, fmt.Sprintf("%d of the %d seeded checkpoints written once", written, seeded)
			}
			i = max(i, after(runs, r.vpasCreatedAt)+j)
		}
		return i + cfg.settle, ""
	}
	out.Printf("-- observing %d steady-state recommender loops (after every seeded checkpoint was written once, and %d more)\n", cfg.loops, cfg.settle)
	timeout := time.Duration(cfg.settle+cfg.loops+3)*cfg.interval + 10*time.Minute
	if seeded > 0 {
		timeout += 2 * cfg.checkpointPeriod
	}
	err := waitFor(ctx, out, fmt.Sprintf("%d steady-state loops", cfg.loops), timeout, func() (bool, string, error) {
		runs := h.watch.snapshot()
		i, why := first(runs)
		if i < 0 {
			return false, why, h.exited()
		}
		return len(runs)-1-i >= cfg.loops, fmt.Sprintf("%d of %d steady loops", max(0, len(runs)-1-i), cfg.loops), h.exited()
	})
	if err != nil {
		return err
	}
	runs := h.watch.snapshot()
	start, _ := first(runs)
	recs, since := after(runs, r.allRecsAt), after(runs, r.vpasCreatedAt)
	for i := max(1, since); i <= start+cfg.loops; i++ {
		cp := -1.0
		if runs[i].controlPlaneCPU >= 0 && runs[i-1].controlPlaneCPU >= 0 {
			cp = runs[i].controlPlaneCPU - runs[i-1].controlPlaneCPU
		}
		r.loops = append(r.loops, loopStats{run: runs[i], from: runs[i-1].at, cpu: runs[i].cpu - runs[i-1].cpu, controlPlaneCPU: cp, steady: i > start, recommended: i > recs})
	}
	from, to := runs[start].at, runs[start+cfg.loops].at
	r.rss = h.watch.rssBetween(from, to)
	r.errors = h.watch.errorsSince(from)
	return nil
}

// firstWrites is the index of the run by which the runs wrote n checkpoints in all (-1: not yet), and how
// many they wrote.
func firstWrites(runs []run, n int) (int, int) {
	written := 0
	for i, x := range runs {
		written += max(0, x.int("checkpointsWritten"))
		if written >= n {
			return i, written
		}
	}
	return -1, written
}
