package updater

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/scaling"
)

func TestRetryBackoff(t *testing.T) {
	o := DefaultOptions()
	for attempts, want := range map[int]time.Duration{0: 0, 1: time.Minute, 2: 2 * time.Minute, 3: 4 * time.Minute, 6: 32 * time.Minute, 7: time.Hour, 50: time.Hour} {
		if got := retryBackoff(attempts, o); got != want {
			t.Errorf("after %d refusals: %s, want %s", attempts, got, want)
		}
	}
}

// infeasible is a pod whose resize to cpu req (millicores, limit twice it) the kubelet refused as Infeasible
// (its spec asks it; the kubelet keeps the old size).
func infeasible(name string, req float64) Pod {
	p := pod(name, time.Hour, req, 2*req)
	p.Resizing, p.ResizePending, p.ResizePendingSince = true, corev1.PodReasonInfeasible, now.Add(-time.Hour)
	return p
}

// deferred is a pod whose resize to cpu req (millicores, limit twice it) the kubelet has deferred for the
// time given.
func deferred(name string, req float64, since time.Duration) Pod {
	p := pod(name, time.Hour, req, 2*req)
	p.Resizing, p.ResizePending, p.ResizePendingSince = true, corev1.PodReasonDeferred, now.Add(-since)
	return p
}

// refused is a refusal of a resize to cpu req, attempts in a row, the last ago.
func refused(req float64, attempts int, ago time.Duration) *Refusal {
	return &Refusal{Asked: []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(req, -1), Limits: scaling.V(2*req, -1)}}, Attempts: attempts, At: now.Add(-ago)}
}

// TestInfeasibleRetry: an Infeasible resize that no eviction replaces (updateMode InPlace, or a workload with
// fewer live pods than minReplicas) no longer traps the pod: a lower target is asked at once, another target
// after the backoff, and with nothing new the refusal is reported at the backoff, silent in between. Where
// an eviction may replace it, it does (InPlaceOrRecreate).
func TestInfeasibleRetry(t *testing.T) {
	o := DefaultOptions()
	with := func(p Pod, r *Refusal) Pod { p.Refused = r; return p }
	type row struct {
		Kind, Reason string
		Backoff      bool
		CPU          float64 // the resize's cpu request
	}
	cases := map[string]struct {
		mode   vpav1.UpdateMode
		target float64
		pods   []Pod
		want   row
	}{
		"InPlace, first sight: reported at once":                {vpav1.UpdateModeInPlace, 900, []Pod{infeasible("a", 900)}, row{"Skip", ReasonInfeasible, true, 0}},
		"InPlace, reported 30s ago: silent":                     {vpav1.UpdateModeInPlace, 900, []Pod{with(infeasible("a", 900), refused(900, 1, 30*time.Second))}, row{"Wait", "", false, 0}},
		"InPlace, backoff (1m) over: reported again":            {vpav1.UpdateModeInPlace, 900, []Pod{with(infeasible("a", 900), refused(900, 1, 61*time.Second))}, row{"Skip", ReasonInfeasible, true, 0}},
		"InPlace, 3 refusals, 3m ago: within the 4m backoff":    {vpav1.UpdateModeInPlace, 900, []Pod{with(infeasible("a", 900), refused(900, 3, 3*time.Minute))}, row{"Wait", "", false, 0}},
		"InPlace, a lower target: resized to it at once":        {vpav1.UpdateModeInPlace, 700, []Pod{with(infeasible("a", 900), refused(900, 3, time.Second))}, row{"Resize", ReasonInfeasible, false, 700}},
		"InPlace, a higher target: not before the backoff":      {vpav1.UpdateModeInPlace, 1000, []Pod{with(infeasible("a", 900), refused(900, 1, 30*time.Second))}, row{"Wait", "", false, 0}},
		"InPlace, a higher target after the backoff: tried":     {vpav1.UpdateModeInPlace, 1000, []Pod{with(infeasible("a", 900), refused(900, 1, 2*time.Minute))}, row{"Resize", ReasonInfeasible, false, 1000}},
		"one replica InPlaceOrRecreate: as InPlace, not stuck":  {vpav1.UpdateModeInPlaceOrRecreate, 700, []Pod{with(infeasible("a", 900), refused(900, 1, time.Second))}, row{"Resize", ReasonInfeasible, false, 700}},
		"one replica InPlaceOrRecreate, first sight: reported":  {vpav1.UpdateModeInPlaceOrRecreate, 900, []Pod{infeasible("a", 900)}, row{"Skip", ReasonInfeasible, true, 0}},
		"two replicas InPlaceOrRecreate: the eviction replaces": {vpav1.UpdateModeInPlaceOrRecreate, 900, []Pod{infeasible("a", 900), pod("b", time.Hour, 900, 1800)}, row{"Evict", ReasonInfeasible, false, 900}},
		// found in review: a deferred resize was reported and left, whatever the target became
		"InPlace, deferred past the timeout, a lower target: at once": {vpav1.UpdateModeInPlace, 700, []Pod{deferred("a", 900, 10*time.Minute)}, row{"Resize", ReasonDeferredTooLong, false, 700}},
		"InPlace, deferred past the timeout, the same target: told":   {vpav1.UpdateModeInPlace, 900, []Pod{deferred("a", 900, 10*time.Minute)}, row{"Skip", ReasonDeferredTooLong, true, 0}},
		"InPlace, deferred a minute: the kubelet may yet":             {vpav1.UpdateModeInPlace, 700, []Pod{deferred("a", 900, time.Minute)}, row{"Wait", "", false, 0}},
		"refused by the API (spec unchanged): waits the backoff":      {vpav1.UpdateModeInPlace, 900, []Pod{with(pod("a", time.Hour, 100, 200), refused(900, 2, time.Minute))}, row{"Wait", "", false, 0}},
		"refused by the API, backoff over: tried again":               {vpav1.UpdateModeInPlace, 900, []Pod{with(pod("a", time.Hour, 100, 200), refused(900, 2, 3*time.Minute))}, row{"Resize", "", false, 900}},
		"refused by the API, a lower target: at once":                 {vpav1.UpdateModeInPlace, 800, []Pod{with(pod("a", time.Hour, 100, 200), refused(900, 5, time.Second))}, row{"Resize", "", false, 800}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctl := vpaCtl(tc.mode, tc.target, tc.target, tc.target)
			actions := Plan(ctl, tc.pods, now, o)
			var got row
			for _, a := range actions {
				if a.Pod.Name != "a" {
					continue
				}
				got = row{string(a.Kind), a.Reason, a.Backoff, 0}
				if len(a.Sized) > 0 && a.Kind != Skip {
					got.CPU, _ = a.Sized[0].Requests.Get(scaling.CPU)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("pod a (-want +got):\n%s\n%+v", d, actions)
			}
		})
	}
}

// TestKeepMemoryLimits: a resize never lowers a memory limit to or below the container's usage (the kubelet
// cannot shrink the cgroup below it), nor without the usage read: that container's memory stays as it is,
// the rest of the resize goes ahead; a resize left with nothing is skipped.
func TestKeepMemoryLimits(t *testing.T) {
	const mi = 1 << 20
	ctl := func(cpu, mem float64) *Controller {
		c := vpaCtl(vpav1.UpdateModeInPlace, cpu, cpu, cpu)
		c.Targets["app"] = scaling.V(cpu, mem)
		c.Lower["app"], c.Upper["app"] = scaling.V(cpu, mem), scaling.V(cpu, mem)
		return c
	}
	running := func(usage map[string]float64, limit bool) Pod {
		p := pod("a", time.Hour, 100, 200)
		p.Containers[0].Requests.Set(scaling.Memory, 400*mi)
		if limit {
			p.Containers[0].Limits.Set(scaling.Memory, 800*mi)
		}
		p.MemoryUsage = usage
		return p
	}
	type row struct {
		Kind, Reason        string
		NeedsUsage          bool
		CPU, MemReq, MemLim float64
	}
	cases := map[string]struct {
		ctl  *Controller
		pod  Pod
		want row
	}{
		"a memory limit lowered, usage not read: read it first": {ctl(200, 200*mi), running(nil, true), row{"Resize", "", true, 200, 200 * mi, 400 * mi}},
		"lowered, still above the usage: made":                  {ctl(200, 200*mi), running(map[string]float64{"app": 300 * mi}, true), row{"Resize", "", false, 200, 200 * mi, 400 * mi}},
		"lowered to the usage: memory kept, cpu resized":        {ctl(200, 200*mi), running(map[string]float64{"app": 400 * mi}, true), row{"Resize", "", false, 200, 400 * mi, 800 * mi}},
		"usage not known: memory kept":                          {ctl(200, 200*mi), running(map[string]float64{}, true), row{"Resize", "", false, 200, 400 * mi, 800 * mi}},
		"only memory, kept: nothing left, skipped":              {ctl(100, 200*mi), running(map[string]float64{"app": 500 * mi}, true), row{"Skip", ReasonMemoryInUse, false, 0, 0, 0}},
		"a memory limit raised: no usage needed":                {ctl(200, 600*mi), running(nil, true), row{"Resize", "", false, 200, 600 * mi, 1200 * mi}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			actions := Plan(tc.ctl, []Pod{tc.pod}, now, DefaultOptions())
			if len(actions) != 1 {
				t.Fatalf("%+v", summary(actions))
			}
			a := actions[0]
			got := row{Kind: string(a.Kind), Reason: a.Reason, NeedsUsage: a.NeedsUsage}
			if a.Kind == Resize {
				got.CPU, _ = a.Sized[0].Requests.Get(scaling.CPU)
				got.MemReq, _ = a.Sized[0].Requests.Get(scaling.Memory)
				got.MemLim, _ = a.Sized[0].Limits.Get(scaling.Memory)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s\n%s", d, a.Message)
			}
		})
	}
}

// TestPodLevelResourcesSkipped: a pod with pod-level resources is not sized by the updater (nor by the
// webhook: scaling.HasPodLevelResources is their one rule).
func TestPodLevelResourcesSkipped(t *testing.T) {
	p := pod("a", time.Hour, 100, 200)
	p.PodLevelResources = true
	want := []got{{"a", "Skip", ReasonPodLevelResources}}
	for _, mode := range []vpav1.UpdateMode{vpav1.UpdateModeInPlaceOrRecreate, vpav1.UpdateModeRecreate} {
		if d := cmp.Diff(want, summary(Plan(vpaCtl(mode, 500, 400, 600), []Pod{p, pod("b", time.Hour, 500, 1000)}, now, DefaultOptions()))); d != "" {
			t.Errorf("%s (-want +got):\n%s", mode, d)
		}
	}
}

// TestInfeasibleRetrySizesSidecars: the retry of an Infeasible resize sizes the pod's sidecars as every other
// update does (it sized the app containers only, so a sidecar's target was left out; found in review).
func TestInfeasibleRetrySizesSidecars(t *testing.T) {
	p := infeasible("a", 900)
	p.Refused = refused(900, 3, time.Second)
	p.InitContainers = []scaling.Container{{Name: "proxy", Kind: scaling.SidecarContainer, Requests: scaling.V(300, -1)}}
	ctl := vpaCtl(vpav1.UpdateModeInPlace, 700, 700, 700)
	ctl.Targets["proxy"], ctl.Lower["proxy"], ctl.Upper["proxy"] = scaling.V(100, -1), scaling.V(100, -1), scaling.V(100, -1)
	actions := Plan(ctl, []Pod{p}, now, DefaultOptions())
	if len(actions) != 1 || actions[0].Kind != Resize {
		t.Fatalf("actions %+v, want one resize", actions)
	}
	sidecar := false
	for _, d := range actions[0].Sized {
		if cpu, _ := d.Requests.Get(scaling.CPU); d.Name == "proxy" && cpu == 100 {
			sidecar = true
		}
	}
	if !sidecar {
		t.Errorf("sized %+v: want the sidecar proxy at its 100m target", actions[0].Sized)
	}
}

// TestInfeasibleRetryKeepsTheQoSClass: a retry that would change the pod's QoS class (a RequestsOnly target
// at the CPU limit of a pod whose memory request is at its limit: Guaranteed) is not asked, as the API
// server refuses it; it is skipped, saying why, at the backoff.
func TestInfeasibleRetryKeepsTheQoSClass(t *testing.T) {
	const gi = 1 << 30
	p := infeasible("a", 900)
	p.Containers[0].Requests.Set(scaling.Memory, gi)
	p.Containers[0].Limits.Set(scaling.Memory, gi)
	p.QoS = QoS(p.Containers)
	p.Refused = refused(900, 1, 2*time.Minute)
	ctl := vpaCtl(vpav1.UpdateModeInPlace, 1800, 1800, 1800)
	ctl.Policies = []scaling.ContainerPolicy{{Name: "app", Controlled: [2]bool{true, true}, ControlledValues: scaling.RequestsOnly}}
	actions := Plan(ctl, []Pod{p}, now, DefaultOptions())
	if len(actions) != 1 || actions[0].Kind != Skip || actions[0].Reason != ReasonQoSChange || !actions[0].Backoff {
		t.Fatalf("actions %+v, want a QoSClassWouldChange skip, told at the backoff (not at every loop)", actions)
	}
	if cpu, _ := actions[0].Sized[0].Requests.Get(scaling.CPU); cpu != 1800 {
		t.Errorf("the skip records an ask of %vm, want the target's 1800m (a lower target is asked at once)", cpu)
	}
}

// TestKeepMemoryLimitsNothingLeft: a resize whose only change was a memory cut kept at the limit is skipped,
// also when it sizes another container as it is (found in review: it stayed a resize that changed nothing, a
// PATCH and a "resized" event at every loop).
func TestKeepMemoryLimitsNothingLeft(t *testing.T) {
	const mi = 1 << 20
	app := scaling.Container{Name: "app", Requests: scaling.V(100, 400*mi), Limits: scaling.V(-1, 800*mi)}
	sidecar := scaling.Container{Name: "sidecar", Requests: scaling.V(50, 64*mi)}
	p := Pod{Name: "a", Containers: []scaling.Container{app, sidecar}, MemoryUsage: map[string]float64{"app": 500 * mi}}
	a := Action{Pod: &p, Kind: Resize, Sized: []scaling.ContainerDecision{
		{Name: "app", Current: app, Requests: scaling.V(100, 200*mi), Limits: scaling.V(-1, 400*mi)}, // below the usage: kept
		{Name: "sidecar", Current: sidecar, Requests: sidecar.Requests, Limits: sidecar.Limits},      // as it is
	}}
	if got := keepMemoryLimits(a, &p); got.Kind != Skip || got.Reason != ReasonMemoryInUse {
		t.Errorf("%s %s: %s; want a MemoryLimitBelowUsage skip", got.Kind, got.Reason, got.Message)
	}
}
