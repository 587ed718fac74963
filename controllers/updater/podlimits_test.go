package updater

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// TestPlanResizesSidecars: a native sidecar under a VPA is resized like an app container, from its own
// recommendation (a sidecar whose request is outside its bounds makes the pod a candidate by itself).
func TestPlanResizesSidecars(t *testing.T) {
	c := vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 100, 90, 200) // the app container is within its bounds
	c.Targets["proxy"], c.Lower["proxy"], c.Upper["proxy"] = scaling.V(400, -1), scaling.V(300, -1), scaling.V(600, -1)
	p := pod("a", time.Hour, 100, 100)
	p.InitContainers = []scaling.Container{
		{Name: "migrate", Requests: scaling.V(50, -1), Kind: scaling.InitContainer},
		{Name: "proxy", Requests: scaling.V(100, -1), Limits: scaling.V(100, -1), Kind: scaling.SidecarContainer},
	}
	c.Targets["migrate"] = scaling.V(900, -1) // an init container is never resized
	actions := Plan(c, []Pod{p}, now, DefaultOptions())
	if len(actions) != 1 || actions[0].Kind != Resize {
		t.Fatalf("actions %+v: want a resize of pod a", summary(actions))
	}
	var names []string
	for _, d := range actions[0].Sized {
		names = append(names, d.Name)
		if d.Name == "proxy" {
			if q, _ := d.Requests.Get(scaling.CPU); q != 400 {
				t.Errorf("sidecar request %v, want its target 400m", q)
			}
			if d.Current.Kind != scaling.SidecarContainer {
				t.Errorf("sidecar decision of kind %v: the resize must go to spec.initContainers", d.Current.Kind)
			}
		}
	}
	if d := cmp.Diff([]string{"app", "proxy"}, names); d != "" {
		t.Errorf("sized containers (-want +got):\n%s", d)
	}
	if !strings.Contains(actions[0].Message, "proxy cpu request 100m -> 400m") {
		t.Errorf("message %q does not say the sidecar changes", actions[0].Message)
	}
}

// TestResizePatchSidecars: the pods/resize patch puts a sidecar under spec.initContainers and an app container
// under spec.containers, each merged by name, with the pod's UID.
func TestResizePatchSidecars(t *testing.T) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid-1"}}
	sized := []scaling.ContainerDecision{
		{Name: "app", Current: scaling.Container{Name: "app"}, Requests: scaling.V(400, -1)},
		{Name: "proxy", Current: scaling.Container{Name: "proxy", Kind: scaling.SidecarContainer}, Requests: scaling.V(300, -1), Limits: scaling.V(600, -1)},
	}
	body, err := resizePatch(p, sized)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"uid":"uid-1"},"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"400m"}}}],"initContainers":[{"name":"proxy","resources":{"requests":{"cpu":"300m"},"limits":{"cpu":"600m"}}}]}}`
	if string(body) != want {
		t.Errorf("patch\n%s\nwant\n%s", body, want)
	}
}

// TestPlanWithoutInPlaceResize: on a cluster that serves no pods/resize, InPlaceOrRecreate evicts at once (no
// resize that cannot succeed first) and InPlace skips with InPlaceUnavailable.
func TestPlanWithoutInPlaceResize(t *testing.T) {
	o := DefaultOptions()
	o.NoInPlaceResize = true
	pods := []Pod{pod("a", time.Hour, 100, 100), pod("b", time.Hour, 100, 100)}
	if got := summary(Plan(vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 800, 700, 900), pods, now, o)); len(got) == 0 || got[0].Kind != string(Evict) {
		t.Errorf("InPlaceOrRecreate without pods/resize: %+v, want an eviction", got)
	}
	got := Plan(vpaCtl(vpav1.UpdateModeInPlace, 800, 700, 900), pods, now, o)
	if len(got) != 2 || got[0].Kind != Skip || got[0].Reason != ReasonInPlaceUnavailable || !strings.Contains(got[0].Message, "serves no pods/resize") {
		t.Errorf("InPlace without pods/resize: %+v, want both skipped with %s", summary(got), ReasonInPlaceUnavailable)
	}
	if got := summary(Plan(vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 800, 700, 900), pods, now, DefaultOptions())); len(got) == 0 || got[0].Kind != string(Resize) {
		t.Errorf("with pods/resize: %+v, want a resize", got)
	}
}
