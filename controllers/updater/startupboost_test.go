package updater

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// TestPlanStartupBoost: a boosted pod waits until it has been Ready for the boost's duration, then goes back
// in place to the annotation's CPU, in every mode (an Off VPA only ends boosts); a boosted pod is never sized
// by the usual rules meanwhile.
func TestPlanStartupBoost(t *testing.T) {
	o := DefaultOptions()
	boosted := func(name string, readyFor time.Duration) Pod {
		p := pod(name, time.Hour, 900, 1800)
		if readyFor >= 0 {
			p.ReadySince = ptr.To(now.Add(-readyFor))
		}
		p.Unboosted = map[string]vpav1.Unboosted{"app": {CPURequest: ptr.To(resource.MustParse("300m")), CPULimit: ptr.To(resource.MustParse("600m"))}}
		return p
	}
	guaranteed := func(name string) Pod { // boosted to its limit (RequestsOnly), memory at its limit too
		p := boosted(name, time.Minute)
		p.Containers[0].Requests, p.Containers[0].Limits = scaling.V(600, 256<<20), scaling.V(600, 256<<20)
		p.Unboosted = map[string]vpav1.Unboosted{"app": {CPURequest: ptr.To(resource.MustParse("300m"))}}
		p.QoS = QoS(p.Containers)
		return p
	}
	ctl := func(mode vpav1.UpdateMode, boostOnly bool) *Controller {
		c := vpaCtl(mode, 500, 400, 600)
		c.BoostOnly = boostOnly
		c.BoostDuration = func(string) time.Duration { return 10 * time.Second }
		c.Boosts = func(container string) bool { return container == "app" }
		return c
	}
	for name, tc := range map[string]struct {
		ctl  *Controller
		pods []Pod
		want []got
	}{
		"not Ready yet: waits":                   {ctl(vpav1.UpdateModeRecreate, false), []Pod{boosted("a", -1)}, []got{{"a", "Wait", ""}}},
		"Ready for less than the boost: waits":   {ctl(vpav1.UpdateModeRecreate, false), []Pod{boosted("a", 5*time.Second)}, []got{{"a", "Wait", ""}}},
		"Ready past the boost: back in place":    {ctl(vpav1.UpdateModeRecreate, false), []Pod{boosted("a", 11*time.Second)}, []got{{"a", "Resize", ReasonStartupBoostOver}}},
		"Off: only the boost ends, nothing else": {ctl(vpav1.UpdateModeOff, true), []Pod{boosted("a", time.Minute), pod("b", time.Hour, 100, 0)}, []got{{"a", "Resize", ReasonStartupBoostOver}}},
		"Recreate: the others sized as usual, the boosted one never evicted": {ctl(vpav1.UpdateModeRecreate, false),
			[]Pod{boosted("a", time.Second), pod("b", time.Hour, 100, 0)}, []got{{"b", "Evict", ""}, {"a", "Wait", ""}}},
		"a controller that boosts nothing: the annotation's values are not followed, the pod is sized as any other": {func() *Controller {
			c := ctl(vpav1.UpdateModeInPlaceOrRecreate, false)
			c.Boosts = nil
			return c
		}(), []Pod{boosted("a", time.Minute), pod("b", time.Hour, 500, 1000)}, []got{{"a", "Resize", ""}}},
		"ending a boost never raises CPU: values above the current ones are not followed": {ctl(vpav1.UpdateModeInPlaceOrRecreate, false), []Pod{func() Pod {
			p := boosted("a", time.Minute)
			p.Unboosted = map[string]vpav1.Unboosted{"app": {CPURequest: ptr.To(resource.MustParse("64")), CPULimit: ptr.To(resource.MustParse("128"))}}
			return p
		}(), pod("b", time.Hour, 500, 1000)}, []got{{"a", "Resize", ""}}},
		// found in review: a boost capped at the limit itself made a pod Guaranteed, and its end, a resize that
		// the API server refuses (a QoS change), was retried at every loop
		"a boost that made the pod Guaranteed: evicted, never resized":  {ctl(vpav1.UpdateModeInPlaceOrRecreate, false), []Pod{guaranteed("a"), pod("b", time.Hour, 500, 0)}, []got{{"a", "Evict", ReasonQoSChange}}},
		"a boost that made the pod Guaranteed, the only live pod: left": {ctl(vpav1.UpdateModeInPlaceOrRecreate, false), []Pod{guaranteed("a")}, []got{{"a", "Skip", ReasonQoSChange}}},
		"a boost that made the pod Guaranteed, InPlace: left":           {ctl(vpav1.UpdateModeInPlace, false), []Pod{guaranteed("a")}, []got{{"a", "Skip", ReasonQoSChange}}},
		"a boost that made the pod Guaranteed, Off: left":               {ctl(vpav1.UpdateModeOff, true), []Pod{guaranteed("a")}, []got{{"a", "Skip", ReasonQoSChange}}},
	} {
		t.Run(name, func(t *testing.T) {
			actions := Plan(tc.ctl, tc.pods, now, o)
			if d := cmp.Diff(tc.want, summary(actions)); d != "" {
				t.Fatalf("actions (-want +got):\n%s", d)
			}
			for _, a := range actions {
				if a.Kind != Resize || a.Reason != ReasonStartupBoostOver {
					continue
				}
				if !a.Unboost || len(a.Sized) != 1 || a.Sized[0].Requests != scaling.V(300, -1) || a.Sized[0].Limits != scaling.V(600, -1) {
					t.Errorf("unboost %+v: want app back to cpu 300m/600m", a)
				}
			}
		})
	}
}

// TestBoostedPodState: a pod follows its startup-boost annotation only while its controller boosts the
// container (a VPA's startupBoost with the CPUStartupBoost gate on) and the pod has not been resized since it
// was created (metadata.generation 1); the updater never writes the pod to end a boost.
func TestBoostedPodState(t *testing.T) {
	annotated := func(gen int64, value string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Generation: gen, Annotations: map[string]string{vpav1.AnnotationStartupBoost: value}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "sidecar"}}}}
	}
	app := func(c string) bool { return c == "app" }
	both := `{"app":{"cpuRequest":"300m"},"sidecar":{"cpuRequest":"50m"}}`
	for name, tc := range map[string]struct {
		pod     *corev1.Pod
		boosts  func(string) bool
		want    []string
		wantErr bool
	}{
		"boosted: the containers the controller boosts":     {annotated(1, both), app, []string{"app"}, false},
		"no controller that boosts (gate off, no boost)":    {annotated(1, both), nil, nil, false},
		"resized since its creation: the boost is over":     {annotated(2, both), app, nil, false},
		"only containers the controller does not boost":     {annotated(1, `{"sidecar":{"cpuRequest":"50m"}}`), app, nil, false},
		"not decodable: back to the targets, with an error": {annotated(1, `{`), app, []string{}, true},
	} {
		t.Run(name, func(t *testing.T) {
			s := podState(tc.pod, now, DefaultOptions(), tc.boosts)
			var got []string
			if s.Unboosted != nil {
				got = []string{}
				for c := range s.Unboosted {
					got = append(got, c)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" || (s.UnboostedErr != nil) != tc.wantErr {
				t.Errorf("boosted containers (-want +got):\n%s error %v", d, s.UnboostedErr)
			}
		})
	}
}
