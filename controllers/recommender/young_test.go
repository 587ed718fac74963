package recommender_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
)

// TestYoungStatusDelay: while the histories are young, a status whose bounds only narrow waits for its
// delay (spread per VPA from half to one and a half times it) instead of being written at every run; the
// first recommendation and a target beyond the dead band are written in the run that makes them; every
// status is at all times either the model's within the dead band or a held one (targets within the band,
// bounds no more than the band wider than the model's), and no held status is older than its delay.
func TestYoungStatusDelay(t *testing.T) {
	const n, delay, band = 20, 15 * time.Minute, 0.1
	writes := map[time.Duration]int{}
	for _, d := range []time.Duration{0, delay} {
		w := newWritesCluster(t, n, func(o *recommenderctrl.Options) { o.YoungStatusDelay = d })
		if got := w.run(t); got != n {
			t.Fatalf("delay %s: the first run wrote %d statuses, want %d (a first recommendation is never delayed)", d, got, n)
		}
		lastWrite := map[string]int{}
		counts := map[string]int{}
		for k, v := range w.vpaWrites {
			counts[k], lastWrite[k] = v, 1
		}
		check := func(run int, when string) {
			t.Helper()
			w.eachStatus(t, func(v vpav1.VerticalPodAutoscaler, fresh *vpav1.RecommendedPodResources) {
				if c := w.vpaWrites[v.Name]; c != counts[v.Name] {
					counts[v.Name], lastWrite[v.Name] = c, run
				}
				st := v.Status.Recommendation
				switch {
				case recommenderctrl.WithinDeadBand(st, fresh, band):
				case d > 0 && recommenderctrl.YoungHold(st, fresh, band):
					// held: written within one and a half delays (and a run) of the last write
					if age := time.Duration(run-lastWrite[v.Name]) * time.Minute; age > delay*3/2+time.Minute {
						t.Errorf("%s: %s held for %s since its last write, past 1.5 x the %s delay", when, v.Name, age, delay)
					}
				default:
					t.Errorf("%s: %s status %v is neither the model's %v within the dead band nor a held young one", when, v.Name, st, fresh)
				}
			})
		}
		for run := 2; run <= 31; run++ {
			writes[d] += w.run(t)
			check(run, fmt.Sprintf("delay %s, run %d", d, run))
		}
		// app-3's load jumps tenfold: its target leaves the band and is written by the run that sees it
		w.usage.samples[3].CPUMilli *= 10
		for run := 32; run <= 36; run++ {
			w.run(t)
			check(run, fmt.Sprintf("delay %s, run %d after the jump", d, run))
		}
		var v vpav1.VerticalPodAutoscaler
		if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "app-3"}, &v); err != nil {
			t.Fatal(err)
		}
		if got := v.Status.Recommendation.ContainerRecommendations[0].Target[corev1.ResourceCPU]; got.Cmp(resource.MustParse("1")) <= 0 {
			t.Errorf("delay %s: app-3's cpu target %s after 5 runs at 1300m (130m before)", d, got.String())
		}
	}
	perRun := func(d time.Duration) float64 { return float64(writes[d]) / 30 }
	t.Logf("status writes a run over runs 2-31 of %d new VPAs: without the delay %.1f, with %s %.1f", n, perRun(0), delay, perRun(delay))
	// each VPA written about once per delay: n x interval / delay a run, against about one a VPA without it
	if want := float64(n) * time.Minute.Seconds() / delay.Seconds() * 1.5; perRun(delay) > want || perRun(delay) > perRun(0)/3 || math.IsNaN(perRun(0)) {
		t.Errorf("with the delay %.1f status writes a run, want at most %.1f and a third of the %.1f without", perRun(delay), want, perRun(0))
	}
}

func TestYoungHold(t *testing.T) {
	rec := func(target, lower, upper string) *vpav1.RecommendedPodResources {
		l := func(q string) corev1.ResourceList {
			return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
		}
		return &vpav1.RecommendedPodResources{ContainerRecommendations: []vpav1.RecommendedContainerResources{
			{ContainerName: "app", Target: l(target), UncappedTarget: l(target), LowerBound: l(lower), UpperBound: l(upper)}}}
	}
	old := rec("100m", "50m", "400m")
	for _, c := range []struct {
		name string
		cur  *vpav1.RecommendedPodResources
		want bool
	}{
		{"the bounds narrow by any amount", rec("100m", "90m", "120m"), true},
		{"the target within the band", rec("109m", "50m", "400m"), true},
		{"the target past the band, up", rec("111m", "50m", "400m"), false},
		{"the target past the band, down", rec("89m", "50m", "400m"), false},
		{"the upper bound widens within the band", rec("100m", "50m", "439m"), true},
		{"the upper bound widens past the band", rec("100m", "50m", "441m"), false},
		{"the lower bound widens within the band", rec("100m", "46m", "400m"), true},
		{"the lower bound widens past the band", rec("100m", "44m", "400m"), false},
		{"no recommendation yet: the first is written", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := recommenderctrl.YoungHold(old, c.cur, 0.1); got != c.want {
				t.Errorf("YoungHold = %t, want %t", got, c.want)
			}
		})
	}
	if recommenderctrl.YoungHold(nil, old, 0.1) {
		t.Error("a VPA without a recommendation in status is held")
	}
}

// The delay holds only VPAs whose running pods the updater leaves alone (Off, Initial): where it acts on them
// (Auto here) it evicts or resizes a pod when its request leaves the bounds, so every move past the dead band
// is written as before.
func TestYoungStatusDelaySparesVPAsTheUpdaterActsOn(t *testing.T) {
	writes := map[time.Duration]int{}
	for _, d := range []time.Duration{0, 15 * time.Minute} {
		w := newWritesCluster(t, 10, func(o *recommenderctrl.Options) { o.YoungStatusDelay = d })
		var vpas vpav1.VerticalPodAutoscalerList
		if err := w.c.List(context.Background(), &vpas); err != nil {
			t.Fatal(err)
		}
		for i := range vpas.Items {
			v := &vpas.Items[i]
			v.Spec.UpdatePolicy = &vpav1.PodUpdatePolicy{UpdateMode: ptr.To(vpav1.UpdateModeAuto)}
			if err := w.c.Update(context.Background(), v); err != nil {
				t.Fatal(err)
			}
		}
		for range 31 {
			writes[d] += w.run(t)
		}
	}
	if writes[0] == 0 || writes[15*time.Minute] != writes[0] {
		t.Errorf("Auto VPAs: %d status writes over 31 runs with the delay, %d without: want the same, and some", writes[15*time.Minute], writes[0])
	}
}
