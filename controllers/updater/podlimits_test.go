package updater

import (
	"testing"
	"time"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// TestPlanCountsSidecarsInPodLimitRange: a resize is checked by the API server's LimitRanger like a new pod,
// so the updater sizes a pod with the sidecars and init containers it has: a sidecar (restartable init
// container) counts toward the LimitRange pod max, and is never resized.
func TestPlanCountsSidecarsInPodLimitRange(t *testing.T) {
	c := vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 800, 700, 900)
	c.LimitRange = &scaling.LimitRange{PodMax: scaling.V(1000, -1)}
	pods := []Pod{pod("a", time.Hour, 100, 100), pod("b", time.Hour, 100, 100)}
	for i := range pods {
		pods[i].InitContainers = []scaling.Container{{Name: "proxy", Requests: scaling.V(300, -1), Limits: scaling.V(300, -1), Kind: scaling.SidecarContainer}}
	}
	actions := Plan(c, pods, now, DefaultOptions())
	if len(actions) == 0 {
		t.Fatal("no action: want a resize of pod a")
	}
	a := actions[0]
	if a.Kind != Resize || len(a.Sized) != 1 || a.Sized[0].Name != "app" {
		t.Fatalf("%s %s, sized %+v: want a resize of the app container only", a.Kind, a.Pod.Name, a.Sized)
	}
	if q, _ := a.Sized[0].Requests.Get(scaling.CPU); q != 700 {
		t.Errorf("app request %v, want 700 (pod max 1000 - the sidecar's 300)", q)
	}
	if l, _ := a.Sized[0].Limits.Get(scaling.CPU); l != 700 {
		t.Errorf("app limit %v, want 700", l)
	}
}
