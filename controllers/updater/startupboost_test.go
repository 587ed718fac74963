package updater

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
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
	ctl := func(mode vpav1.UpdateMode, boostOnly bool) *Controller {
		c := vpaCtl(mode, 500, 400, 600)
		c.BoostOnly = boostOnly
		c.BoostDuration = func(string) time.Duration { return 10 * time.Second }
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
	} {
		t.Run(name, func(t *testing.T) {
			actions := Plan(tc.ctl, tc.pods, now, o)
			if d := cmp.Diff(tc.want, summary(actions)); d != "" {
				t.Fatalf("actions (-want +got):\n%s", d)
			}
			for _, a := range actions {
				if a.Kind != Resize {
					continue
				}
				if !a.Unboost || len(a.Sized) != 1 || a.Sized[0].Requests != scaling.V(300, -1) || a.Sized[0].Limits != scaling.V(600, -1) {
					t.Errorf("unboost %+v: want app back to cpu 300m/600m", a)
				}
			}
		})
	}
}
