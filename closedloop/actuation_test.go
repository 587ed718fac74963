package closedloop

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

// steps runs the workload's steps from `from` for n steps of 15s (no loop due) and returns the time after.
func steps(t *testing.T, w *workload, from int64, n int) int64 {
	t.Helper()
	for i := 0; i < n; i++ {
		w.actuate(from)
		w.serve(from)
		from += 15
	}
	return from
}

// TestActuation: the one actuation model of every policy: a new pod costs its requests at once and serves after
// the start-up delay, the demand is split over the serving pods, a resize applies one updater period after it
// was decided, an OOM-killed container serves again after the kubelet's back-off (10s rounded up to the step,
// doubling), and a scale-down takes the pods that do not serve first.
func TestActuation(t *testing.T) {
	req := scaling.V(500, 1<<30)
	t.Run("a new pod costs at once and serves after the start-up delay", func(t *testing.T) {
		w := testWorkload(t, Run{Policy: PolicyHPA}, Options{}, 1, req)
		w.demand["app"] = &usage{cpu: 800, mem: 1 << 29, hasCPU: true, hasMem: true}
		w.scaleTo(t0, 2)
		now := steps(t, w, t0, 4) // the first minute: one pod serves 800m of the 500m it requests
		if p, s := w.capacity(now-15, 0); reqOrZero(p, scaling.CPU) != 1000 || reqOrZero(s, scaling.CPU) != 500 {
			t.Fatalf("cpu provided %v, serving %v; want 1000m and 500m", p, s)
		}
		if got := w.cpuTally.short; got != 4*300 {
			t.Errorf("cpu shortfall over the first minute %g, want 4 x 300m", got)
		}
		steps(t, w, now, 1)
		if w.cpuTally.short != 4*300 || w.pods[1].ctr[0].row.cpuSum != 400 {
			t.Errorf("after the start-up delay: shortfall %g (want no more), the new pod's usage %g (want half of 800m)", w.cpuTally.short, w.pods[1].ctr[0].row.cpuSum)
		}
	})
	t.Run("an OOM kill restarts the container after the back-off", func(t *testing.T) {
		w := testWorkload(t, Run{Policy: PolicyHPA}, Options{}, 1, req)
		w.demand["app"] = &usage{cpu: 100, mem: 1.5 * (1 << 30), hasCPU: true, hasMem: true}
		p := w.pods[0]
		var kills []int64
		for now := t0; now < t0+300; now += 15 {
			before := w.ooms
			steps(t, w, now, 1)
			if w.ooms > before {
				kills = append(kills, now-t0)
			}
		}
		// 10s -> the next 15s step, then 20s -> 30s, 40s -> 45s, 80s -> 90s, 160s -> 165s
		if want := []int64{0, 15, 45, 90, 180}; !slices.Equal(kills, want) {
			t.Fatalf("kills at %v s, want %v", kills, want)
		}
		if w.restarts != w.ooms || len(w.pendingOOMs) != 5 || w.pendingOOMs[0].peak != 1<<30 || p.serving(t0+180) {
			t.Errorf("restarts %d, ooms %d, pending %d, peak %g, serving while restarting %v", w.restarts, w.ooms, len(w.pendingOOMs), w.pendingOOMs[0].peak, p.serving(t0+180))
		}
	})
	t.Run("the back-off starts again after ten minutes of running", func(t *testing.T) {
		w := testWorkload(t, Run{Policy: PolicyHPA}, Options{}, 1, req)
		p := w.pods[0]
		w.kill(t0, p, 0, 1<<30, 1)
		w.kill(t0+15, p, 0, 1<<30, 1)
		if p.ctr[0].restartAt != t0+45 {
			t.Fatalf("second kill restarts at +%ds, want +45s", p.ctr[0].restartAt-t0)
		}
		w.kill(t0+45+600, p, 0, 1<<30, 1)
		if p.ctr[0].restartAt != t0+45+600+15 {
			t.Errorf("a kill after ten minutes of running restarts at +%ds, want +15s", p.ctr[0].restartAt-t0-645)
		}
	})
	t.Run("a scale-down takes the starting, then the restarting, then the newest pods", func(t *testing.T) {
		w := testWorkload(t, Run{Policy: PolicyHPA}, Options{}, 3, req)
		old := slices.Clone(w.pods)
		w.kill(t0+100, old[0], 0, 1<<30, 1)
		w.scaleTo(t0+100, 5) // two starting pods
		w.scaleTo(t0+100, 2)
		if len(w.pods) != 2 || w.pods[0] != old[1] || w.pods[1] != old[2] {
			t.Fatalf("pods left: %v", w.pods)
		}
		w.scaleTo(t0+200, 1)
		if len(w.pods) != 1 || w.pods[0] != old[1] {
			t.Errorf("the newest pod should go first")
		}
	})
	t.Run("the metrics window: usage averaged over the steps a pod served, none for a pod that did not", func(t *testing.T) {
		w := testWorkload(t, Run{Policy: PolicyHPA}, Options{}, 2, req)
		w.demand["app"] = &usage{cpu: 600, mem: 1 << 29, hasCPU: true, hasMem: true}
		w.scaleTo(t0, 3)
		steps(t, w, t0, 4)
		w.closeMetrics()
		a, b, fresh := w.pods[0], w.pods[1], w.pods[2]
		if !a.hasMetric || a.usage != scaling.V(300, 1<<28) || b.usage != a.usage || fresh.hasMetric {
			t.Errorf("metrics: %v %v, %v %v, new pod %v", a.hasMetric, a.usage, b.hasMetric, b.usage, fresh.hasMetric)
		}
		if cpu, ok := w.usageOf(scaling.CPU); !ok || math.Abs(cpu-600) > 1e-9 {
			t.Errorf("workload usage %g (%v), want 600", cpu, ok)
		}
	})
	t.Run("a resize restarts a container waiting in back-off and starts its back-off anew (kubernetes/kubernetes#125757)", func(t *testing.T) {
		bigger := []scaling.Container{{Name: "app", Requests: scaling.V(500, 2<<30), Limits: scaling.V(500, 2<<30)}}
		for _, keep := range []bool{false, true} {
			w := testWorkload(t, Run{Policy: PolicyHPA}, Options{Actuation: Actuation{ResizeKeepsBackoff: keep}}, 1, req)
			p := w.pods[0]
			w.kill(t0, p, 0, 1<<30, 1)
			w.kill(t0+15, p, 0, 1<<30, 1)
			w.kill(t0+45, p, 0, 1<<30, 1) // in back-off until +90s
			w.resize(t0+20, p, bigger)    // applies one updater period later, +80s
			w.actuate(t0 + 80)
			if reqOf(p.spec[0], scaling.Memory) != 2<<30 {
				t.Fatalf("keep %v: the resize did not apply: %+v", keep, p.spec[0])
			}
			if keep {
				if p.serving(t0+80) || p.ctr[0].crashes != 3 {
					t.Errorf("kept back-off: serving %v at +80s, crashes %d; want waiting until +90s, 3", p.serving(t0+80), p.ctr[0].crashes)
				}
				continue
			}
			if !p.serving(t0+80) || p.ctr[0].crashes != 0 {
				t.Fatalf("after the resize: serving %v, crashes %d; want serving at once with a fresh back-off", p.serving(t0+80), p.ctr[0].crashes)
			}
			w.kill(t0+95, p, 0, 2<<30, 1)
			if p.ctr[0].restartAt != t0+95+15 {
				t.Errorf("a kill after the resize restarts at +%ds, want +15s (the first delay)", p.ctr[0].restartAt-t0-95)
			}
			// a resize to the values in force changes no resources: the back-off stays
			w.resize(t0+100, p, slices.Clone(bigger))
			w.actuate(t0 + 160)
			if p.ctr[0].crashes != 1 {
				t.Errorf("a resize to the same values reset the back-off: crashes %d, want 1", p.ctr[0].crashes)
			}
		}
	})
	t.Run("a resize starts anew the back-off of a running container and of the resized containers only", func(t *testing.T) {
		w := testWorkload(t, Run{Policy: PolicyHPA}, Options{}, 1, req)
		two := []scaling.Container{{Name: "app", Requests: scaling.V(500, 1<<30), Limits: scaling.V(500, 1<<30)},
			{Name: "side", Requests: scaling.V(50, 1<<28), Limits: scaling.V(50, 1<<28)}}
		p := w.newPod(t0-600, two) // started at -540s
		w.kill(t0-300, p, 0, 1<<30, 1)
		w.kill(t0-285, p, 0, 1<<30, 1) // app: running again since -255s after two kills
		w.kill(t0-10, p, 1, 1<<28, 1)
		w.kill(t0+5, p, 1, 1<<28, 1) // side: in back-off until +35s
		resized := slices.Clone(two)
		resized[0].Requests, resized[0].Limits = scaling.V(500, 2<<30), scaling.V(500, 2<<30)
		w.resize(t0-50, p, resized) // app only, applies at +10s
		w.actuate(t0 + 10)
		if p.ctr[0].crashes != 0 || p.ctr[0].restartAt > t0+10 {
			t.Errorf("the resized running container: crashes %d, restart at %+ds; want a fresh back-off, running", p.ctr[0].crashes, p.ctr[0].restartAt-t0)
		}
		if p.ctr[1].crashes != 2 || p.ctr[1].restartAt != t0+35 || p.serving(t0+10) {
			t.Errorf("the container left as it was: crashes %d, restart at %+ds, pod serving %v; want 2, +35s, not serving", p.ctr[1].crashes, p.ctr[1].restartAt-t0, p.serving(t0+10))
		}
	})
	t.Run("an OOM kill carries the pods that served in its step", func(t *testing.T) {
		w := testWorkload(t, Run{Policy: PolicyHPA}, Options{}, 2, req)
		w.demand["app"] = &usage{cpu: 100, mem: 2.5 * (1 << 30), hasCPU: true, hasMem: true}
		w.scaleTo(t0, 3) // a third pod starting: it serves nothing yet
		steps(t, w, t0, 1)
		if len(w.pendingOOMs) != 2 || w.pendingOOMs[0].serving != 2 || w.pendingOOMs[1].serving != 2 {
			t.Fatalf("kills %+v, want both serving pods killed, each with 2 serving", w.pendingOOMs)
		}
		steps(t, w, t0+15, 4) // at +60s the new pod serves alone while the others wait in back-off until +90s
		last := w.pendingOOMs[len(w.pendingOOMs)-1]
		if last.at != t0+60 || last.pod != w.pods[2] || last.serving != 1 {
			t.Errorf("the last kill %+v, want the new pod's at +60s, serving alone", last)
		}
	})
	t.Run("the Hvpa's memory history hears an OOM kill over the pods that served, its recent load over every pod", func(t *testing.T) {
		w := testWorkload(t, Run{Policy: PolicyHvpa, Model: ModelTotal}, Options{}, 3, req)
		at := time.Unix(t0, 0).UTC()
		w.pendingOOMs = []oomEvent{{at: t0, pod: w.pods[0], container: 0, request: 1 << 30, peak: 1 << 30, serving: 1}}
		w.hv.feed(w, at)
		total := w.run.state.Total(w.hv.models["app"], recommender.OwnerKey{Namespace: "ns", Owner: w.hv.owner, Container: "app"}, at)
		need := w.hv.models["app"].Config.OOMBump(1 << 30) // the example has no memory base per replica
		if got := total.OpenWindowPeak(); got != need {
			t.Errorf("memory history %v GiB, want 1 serving pod x the bump, %v GiB", got/(1<<30), need/(1<<30))
		}
		load, _ := w.run.state.WorkloadRecommendation("ns", w.hv.owner, func(string) recommender.Policy { return recommender.DefaultPolicy() })
		if len(load) != 1 || len(load[0].Recent) == 0 || load[0].Recent[len(load[0].Recent)-1].MemoryBytes != 3*need {
			t.Errorf("recent load %+v, want 3 pods x the bump, %v GiB", load, 3*need/(1<<30))
		}
	})
	t.Run("Instant: resizes at once, new pods serve at once", func(t *testing.T) {
		w := testWorkload(t, Run{Policy: PolicyHPA}, Options{Actuation: Actuation{Instant: true}}, 1, req)
		w.scaleTo(t0, 2)
		w.resize(t0, w.pods[0], []scaling.Container{{Name: "app", Requests: scaling.V(700, 1<<30), Limits: scaling.V(700, 1<<30)}})
		if !w.pods[1].serving(t0) || reqOf(w.pods[0].spec[0], scaling.CPU) != 700 {
			t.Errorf("new pod serving %v, resized pod %+v", w.pods[1].serving(t0), w.pods[0].spec[0])
		}
	})
}

// TestFixedSizing: --hpa-requests is per pod, split over the containers in proportion to the trace's requests
// (evenly without any), limits = requests; a resource it leaves out keeps the trace's.
func TestFixedSizing(t *testing.T) {
	template := []scaling.Container{
		{Name: "app", Requests: scaling.V(300, 1<<30), Limits: scaling.V(300, 1<<30)},
		{Name: "sidecar", Requests: scaling.V(100, -1), Limits: scaling.V(100, -1)},
	}
	req, err := ParsePodRequests("cpu=1")
	if err != nil {
		t.Fatal(err)
	}
	got := fixedSizing(template, &req)
	if got[0].Requests != scaling.V(750, 1<<30) || got[1].Requests != scaling.V(250, -1) || got[0].Limits != got[0].Requests || got[1].Limits != got[1].Requests {
		t.Errorf("cpu=1 over 300m and 100m: %+v", got)
	}
	req, _ = ParsePodRequests("memory=4Gi")
	got = fixedSizing(template, &req)
	if got[0].Requests != scaling.V(300, 4<<30) || got[1].Requests != scaling.V(100, -1) {
		t.Errorf("memory=4Gi, only the app requests memory: %+v", got)
	}
	bare := []scaling.Container{{Name: "a"}, {Name: "b"}}
	if got := fixedSizing(bare, &req); got[0].Requests != scaling.V(-1, 2<<30) || got[1].Requests != got[0].Requests {
		t.Errorf("memory=4Gi over containers without requests: %+v", got)
	}
}

// TestReadiness: what the Hvpa's HPA input reads of the pods (scaling.HPAPodsOf in a cluster): the serving
// pods, and when the newest became ready (a new pod after the start-up delay, a restarted container when it
// runs again); the usage it reads counts as a reading of the pods at work (RawCurrent, which may raise the
// HPA's basis) only once none became ready within a minute.
func TestReadiness(t *testing.T) {
	req := scaling.V(500, 1<<30)
	w := testWorkload(t, Run{Policy: PolicyHvpa, Model: ModelTotal}, Options{}, 2, req)
	w.demand["app"] = &usage{cpu: 1200, mem: 1 << 29, hasCPU: true, hasMem: true}
	at := func(s int64) time.Time { return time.Unix(s, 0) }
	check := func(what string, now int64, ready int32, newest int64, warm bool) {
		t.Helper()
		got := w.readiness(at(now))
		if got.Ready != ready || !got.LastReady.Equal(at(newest)) || got.Warm() != warm {
			t.Errorf("%s, at +%ds: %+v, want %d ready, the newest at +%ds, warm %v", what, now-t0, got, ready, newest-t0, warm)
		}
		// 1200m over 500m pods at 80%: 3 pods' worth, current only once warm
		if in := w.hv.hpaInput(w, at(now)); in.Raw < 2.9 || in.RawCurrent != warm {
			t.Errorf("%s, at +%ds: HPA input %+v, want raw 3, current %v", what, now-t0, in, warm)
		}
	}
	run := func(from int64, n int) int64 { // n steps of 15 s, then the metrics window closes
		now := steps(t, w, from, n)
		w.closeMetrics()
		return now
	}
	now := run(t0, 8) // two minutes: the first pods serve since t0
	check("two pods serving since t0", now, 2, t0, true)
	w.scaleTo(now, 3)
	start := now
	now = run(now, 2) // 30 s: the new pod is starting
	check("a new pod starting", now, 2, t0, true)
	now = run(now, 4) // 90 s: it has served for 30 s
	check("the new pod serving for 30 s", now, 3, start+w.run.startup, false)
	now = run(now, 2)
	check("the new pod serving for 60 s", now, 3, start+w.run.startup, true)
	// a container of the first pod restarted 30 s ago: the pod was not ready while it was down
	w.pods[0].ctr[0].restartAt = now - 30
	check("a container running again for 30 s", now, 3, now-30, false)
	now = run(now, 2)
	check("a container running again for 60 s", now, 3, now-60, true)
}

// TestMetricResolution: the autoscalers read the last closed metrics window (Actuation.MetricResolution, 15s
// by default as metrics-server's manifests set it): a rise of the demand at a trace row reaches the HPA one
// window later, 15 s into the row, not when the one-minute row is over; the recommenders are still fed each
// row's usage.
func TestMetricResolution(t *testing.T) {
	req := scaling.V(250, 1<<30)
	for _, tc := range []struct {
		resolution time.Duration
		seen       int64 // seconds after the rise the HPA first scales out
	}{{0, 15}, {15 * time.Second, 15}, {30 * time.Second, 30}, {time.Minute, 60}} {
		w := testWorkload(t, Run{Policy: PolicyHPA}, Options{Actuation: Actuation{MetricResolution: tc.resolution}}, 2, req)
		w.demand["app"] = &usage{cpu: 400, mem: 1 << 28, hasCPU: true, hasMem: true} // 80% of 2 x 250m: 2 pods
		rise, seen := t0+120, int64(-1)
		for now := t0; now < t0+300 && seen < 0; now += 15 {
			if now == rise {
				w.demand["app"] = &usage{cpu: 1600, mem: 1 << 28, hasCPU: true, hasMem: true}
			}
			if err := w.tick(now, due{}); err != nil {
				t.Fatal(err)
			}
			switch {
			case w.desired > 2:
				seen = now - rise
			case now < rise && w.desired != 2:
				t.Fatalf("resolution %s: %d replicas before the rise, want 2", tc.resolution, w.desired)
			}
		}
		if seen != tc.seen {
			t.Errorf("metric resolution %s: the HPA scaled out %ds after the rise, want %ds", tc.resolution, seen, tc.seen)
		}
	}
	none := func(string, string) *hvpav1alpha1.Hvpa { return nil }
	if _, err := New(Options{HvpaFor: none, Actuation: Actuation{MetricResolution: 20 * time.Second}}); err == nil || !strings.Contains(err.Error(), "--metric-resolution 20s") {
		t.Errorf("a resolution that is no multiple of the 15s step: %v, want an error naming --metric-resolution", err)
	}
	// another sync period alone takes the first multiple of it from 15s (found in review: --hpa-sync-period 30s
	// was refused for the default resolution)
	for step, want := range map[time.Duration]time.Duration{10 * time.Second: 20 * time.Second, 30 * time.Second: 30 * time.Second, time.Minute: time.Minute} {
		sim, err := New(Options{HvpaFor: none, Actuation: Actuation{Step: step}})
		if err != nil {
			t.Errorf("--hpa-sync-period %s alone: %v", step, err)
		} else if got := sim.opts.Actuation.MetricResolution; got != want {
			t.Errorf("--hpa-sync-period %s alone: resolution %s, want %s", step, got, want)
		}
	}
}
