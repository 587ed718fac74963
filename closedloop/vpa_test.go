package closedloop

import (
	"strconv"
	"testing"
	"time"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

var t0 = time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC).Unix()

// testWorkload is workload ns/wl under one run, started at t0 with pods pods of one container "app" with
// requests req (limits = requests), no demand yet.
func testWorkload(t *testing.T, run Run, opts Options, pods int, req scaling.Values) *workload {
	t.Helper()
	h := exampleHvpa(t, "../examples/hvpa-shootout.yaml")
	opts.Runs, opts.HvpaFor = []Run{run}, func(string, string) *hvpav1alpha1.Hvpa { return h }
	sim, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	k := wkey{"ns", "wl"}
	f := &firstSeen{ts: t0, pods: map[string]bool{}, requests: map[string]scaling.Values{"app": req}, order: []string{"app"}}
	for i := 0; i < pods; i++ {
		f.pods["wl-"+strconv.Itoa(i)] = true
	}
	sim.first[k], sim.keys = f, []wkey{k}
	w, err := sim.runs[0].newWorkload(k)
	if err != nil {
		t.Fatal(err)
	}
	w.demand = map[string]*usage{"app": {}}
	return w
}

// recommend gives a VPA the recommendation target, with bounds lower and upper (per pod, container "app").
func recommend(w *workload, target, lower, upper scaling.Values) {
	w.vpa.targets["app"], w.vpa.lower["app"], w.vpa.upper["app"] = target, lower, upper
}

// resized counts the pods with a resize pending and the pods sized like want.
func resized(w *workload, want scaling.Values) (pending, sized int) {
	for _, p := range w.pods {
		if p.resizeAt > 0 {
			pending++
		}
		if p.spec[0].Requests == want {
			sized++
		}
	}
	return pending, sized
}

// TestVPAUpdater: upstream's updater rules on the simulated VPA: a pod within the recommendation's bounds is
// updated only once it lived 12h and its requests differ from the target by 10% or more; a request outside the
// bounds, or a quick OOM kill, is updated at any age; at most floor(replicas x 0.5) pods per loop (one when that
// is 0); scale-ups first; nothing below minReplicas; in place with InPlaceOrRecreate, evicted with Recreate.
func TestVPAUpdater(t *testing.T) {
	req := scaling.V(1000, 2<<30)
	wide := func(x scaling.Values) (scaling.Values, scaling.Values) { return scaling.V(1, 1), scaling.V(1e6, 1e14) }
	cases := map[string]struct {
		pods        int
		age         time.Duration
		target      scaling.Values
		bounds      func(scaling.Values) (scaling.Values, scaling.Values)
		quickOOM    bool
		minReplicas int32
		want        int // pods updated in one loop
	}{
		"old pod, 5% off: the dead band":               {2, 13 * time.Hour, scaling.V(1050, 2<<30), wide, false, 0, 0},
		"old pod, 15% off":                             {2, 13 * time.Hour, scaling.V(1150, 2<<30), wide, false, 0, 1},
		"old pod, 6% + 6% off (summed over resources)": {2, 13 * time.Hour, scaling.V(1060, 2.12*(1<<30)), wide, false, 0, 1},
		"young pod, 50% off within the bounds":         {2, time.Hour, scaling.V(1500, 2<<30), wide, false, 0, 0},
		"young pod, request below the lower bound": {2, time.Hour, scaling.V(1500, 2<<30),
			func(scaling.Values) (scaling.Values, scaling.Values) { return scaling.V(1200, 1), scaling.V(1e6, 1e14) }, false, 0, 1},
		"young pod, request above the upper bound": {2, time.Hour, scaling.V(500, 2<<30),
			func(scaling.Values) (scaling.Values, scaling.Values) { return scaling.V(1, 1), scaling.V(800, 1e14) }, false, 0, 1},
		"young pod, quick OOM, 5% off":            {2, time.Hour, scaling.V(1000, 2.1*(1<<30)), wide, true, 0, 1},
		"young pod, quick OOM, nothing to change": {2, time.Hour, req, wide, true, 0, 0},
		"4 pods: 2 per loop":                      {4, 13 * time.Hour, scaling.V(2000, 2<<30), wide, false, 0, 2},
		"3 pods: 1 per loop":                      {3, 13 * time.Hour, scaling.V(2000, 2<<30), wide, false, 0, 1},
		"1 pod: tolerance 0 lets one go":          {1, 13 * time.Hour, scaling.V(2000, 2<<30), wide, false, 0, 1},
		"1 pod below --min-replicas 2":            {1, 13 * time.Hour, scaling.V(2000, 2<<30), wide, false, 2, 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := testWorkload(t, Run{Policy: PolicyVPA}, Options{VPA: VPAConfig{MinReplicas: tc.minReplicas}}, tc.pods, req)
			lo, hi := tc.bounds(tc.target)
			recommend(w, tc.target, lo, hi)
			now := t0 + int64(tc.age/time.Second)
			for _, p := range w.pods {
				if tc.quickOOM { // killed a minute ago, a minute after its start
					p.ctr[0].killedAt, p.ctr[0].ranFor = now-60, 60
				}
			}
			w.vpa.update(w, now)
			if pending, _ := resized(w, tc.target); pending != tc.want || w.podResizes != tc.want {
				t.Fatalf("%d pods resizing (%d resizes), want %d", pending, w.podResizes, tc.want)
			}
			if tc.want == 0 {
				return
			}
			// the resize applies one updater period later, the next loop takes the next pods
			w.actuate(now + 59)
			if _, sized := resized(w, tc.target); sized != 0 {
				t.Fatalf("%d pods resized before the updater period", sized)
			}
			w.actuate(now + 60)
			if _, sized := resized(w, tc.target); sized != tc.want {
				t.Fatalf("%d pods resized after the updater period, want %d", sized, tc.want)
			}
			for loop := 1; loop < tc.pods; loop++ {
				w.vpa.update(w, now+int64(60*loop))
				w.actuate(now + int64(60*(loop+1)))
			}
			if _, sized := resized(w, tc.target); sized != tc.pods {
				t.Errorf("%d of %d pods resized after %d loops", sized, tc.pods, tc.pods)
			}
		})
	}
	// upstream reads a quick OOM from the last termination state for EvictAfterOOM (10 min) after the kill:
	// a young pod 5% off is updated 9 min after it, not 11 min after
	t.Run("a quick OOM counts for EvictAfterOOM after the kill", func(t *testing.T) {
		for ago, want := range map[int64]int{9 * 60: 1, 11 * 60: 0} {
			w := testWorkload(t, Run{Policy: PolicyVPA}, Options{}, 2, req)
			recommend(w, scaling.V(1000, 2.1*(1<<30)), scaling.V(1, 1), scaling.V(1e6, 1e14))
			now := t0 + 3600
			for _, p := range w.pods {
				p.ctr[0].killedAt, p.ctr[0].ranFor = now-ago, 60
			}
			w.vpa.update(w, now)
			if w.podResizes != want {
				t.Errorf("quick OOM %ds ago: %d resizes, want %d", ago, w.podResizes, want)
			}
		}
	})
	t.Run("scale-ups first", func(t *testing.T) {
		w := testWorkload(t, Run{Policy: PolicyVPA}, Options{}, 2, req)
		w.pods[1].setSpec([]scaling.Container{{Name: "app", Requests: scaling.V(1500, 2<<30), Limits: scaling.V(1500, 2<<30)}})
		// pod 0 grows by 20%, pod 1 shrinks by 20%: pod 0 first, although pod 1's change is as large
		recommend(w, scaling.V(1200, 2<<30), scaling.V(1, 1), scaling.V(1e6, 1e14))
		w.vpa.update(w, t0+13*3600)
		if w.pods[0].resizeAt == 0 || w.pods[1].resizeAt != 0 {
			t.Errorf("resizing: pod 0 %v, pod 1 %v; want pod 0 only", w.pods[0].resizeAt > 0, w.pods[1].resizeAt > 0)
		}
	})
	t.Run("Recreate evicts, the replacement is sized at admission and starts", func(t *testing.T) {
		w := testWorkload(t, Run{Policy: PolicyVPA}, Options{VPA: VPAConfig{UpdateMode: vpav1.UpdateModeRecreate}}, 2, req)
		target := scaling.V(2000, 3<<30)
		recommend(w, target, scaling.V(1, 1), scaling.V(1e6, 1e14))
		now := t0 + 13*3600
		w.vpa.update(w, now)
		if w.evictions != 1 || len(w.pods) != 2 || w.podResizes != 0 {
			t.Fatalf("%d evictions, %d pods, %d resizes; want 1 eviction, 2 pods, no resize", w.evictions, len(w.pods), w.podResizes)
		}
		fresh := w.pods[1]
		if fresh.spec[0].Requests != target || fresh.spec[0].Limits != target || !fresh.starting(now) || fresh.serving(now+59) || !fresh.serving(now+60) {
			t.Errorf("the replacement: %+v, starting %v, serving after 60s %v", fresh.spec[0], fresh.starting(now), fresh.serving(now+60))
		}
		// a young replacement within the bounds stays; the next loop takes the other old pod once the first runs
		w.vpa.update(w, now+60)
		if w.evictions != 2 {
			t.Errorf("%d evictions after the second loop, want 2", w.evictions)
		}
	})
}
