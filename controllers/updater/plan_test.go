package updater

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/scaling"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// pod is a live Burstable pod with one container "app" at cpu request/limit (millicores).
func pod(name string, age time.Duration, req, lim float64) Pod {
	c := scaling.Container{Name: "app", Requests: scaling.V(req, -1)}
	if lim > 0 {
		c.Limits = scaling.V(lim, -1)
	}
	return Pod{Name: name, UID: types.UID(name), Created: now.Add(-age), Live: true, Running: true, Containers: []scaling.Container{c}, QoS: QoS([]scaling.Container{c})}
}

func vpaCtl(mode vpav1.UpdateMode, target, lower, upper float64) *Controller {
	return &Controller{Kind: "VerticalPodAutoscaler", Namespace: "ns", Name: "web", Mode: mode,
		Targets: map[string]scaling.Values{"app": scaling.V(target, -1)},
		Lower:   map[string]scaling.Values{"app": scaling.V(lower, -1)}, Upper: map[string]scaling.Values{"app": scaling.V(upper, -1)}}
}

// withMemory is p with a memory request of its container.
func withMemory(p Pod, bytes float64) Pod {
	p.Containers[0].Requests.Set(scaling.Memory, bytes)
	return p
}

// withSidecar is p with a second container "sidecar" requesting cpuMilli.
func withSidecar(p Pod, cpuMilli float64) Pod {
	p.Containers = append(p.Containers, scaling.Container{Name: "sidecar", Requests: scaling.V(cpuMilli, -1)})
	return p
}

type got struct{ Pod, Kind, Reason string }

func summary(actions []Action) []got {
	var out []got
	for _, a := range actions {
		out = append(out, got{a.Pod.Name, string(a.Kind), a.Reason})
	}
	return out
}

func TestPlan(t *testing.T) {
	o := DefaultOptions()
	with := func(p Pod, f func(*Pod)) Pod { f(&p); return p }
	cases := map[string]struct {
		ctl  *Controller
		pods []Pod
		want []got
	}{
		"Off and Initial never touch running pods": {ctl: vpaCtl(vpav1.UpdateModeInitial, 500, 400, 600),
			pods: []Pod{pod("a", time.Hour, 100, 0), pod("b", time.Hour, 100, 0)}},
		"Recreate evicts a pod outside the bounds": {ctl: vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600),
			pods: []Pod{pod("a", time.Hour, 100, 0), pod("b", time.Hour, 500, 0)}, want: []got{{"a", "Evict", ""}}},
		"within the bounds: only pods older than 12h beyond the threshold": {ctl: vpaCtl(vpav1.UpdateModeRecreate, 500, 300, 700),
			pods: []Pod{pod("young", time.Hour, 400, 0), pod("old", 13*time.Hour, 400, 0), pod("close", 13*time.Hour, 480, 0)},
			want: []got{{"old", "Evict", ""}}},
		"InPlaceOrRecreate resizes": {ctl: vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600),
			pods: []Pod{pod("a", time.Hour, 100, 200), pod("b", time.Hour, 100, 200)}, want: []got{{"a", "Resize", ""}, {"b", "Resize", ""}}},
		"InPlaceOrRecreate evicts when the QoS class would change": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600)
			c.Policies = []scaling.ContainerPolicy{{Name: "app", Controlled: [2]bool{true, true}, ControlledValues: scaling.RequestsAndLimits,
				Ratio: [2]*scaling.Ratio{{Type: scaling.RatioFactor, Factor: 1}}}}
			return c
		}(), pods: []Pod{with(pod("a", time.Hour, 100, 200), func(p *Pod) {
			p.Containers[0].Requests.Set(scaling.Memory, 1<<20)
			p.Containers[0].Limits.Set(scaling.Memory, 1<<20)
		}),
			with(pod("b", time.Hour, 100, 200), func(p *Pod) {
				p.Containers[0].Requests.Set(scaling.Memory, 1<<20)
				p.Containers[0].Limits.Set(scaling.Memory, 1<<20)
			})},
			want: []got{{"a", "Evict", ReasonQoSChange}, {"b", "Skip", ReasonTolerance}}},
		"InPlace skips a QoS-changing update": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeInPlace, 500, 400, 600)
			c.Policies = []scaling.ContainerPolicy{{Name: "app", Controlled: [2]bool{true, true}, ControlledValues: scaling.RequestsAndLimits,
				Ratio: [2]*scaling.Ratio{{Type: scaling.RatioFactor, Factor: 1}}}}
			return c
		}(), pods: []Pod{with(pod("a", time.Hour, 100, 200), func(p *Pod) {
			p.Containers[0].Requests.Set(scaling.Memory, 1<<20)
			p.Containers[0].Limits.Set(scaling.Memory, 1<<20)
		})},
			want: []got{{"a", "Skip", ReasonQoSChange}}},
		"an infeasible resize falls back to eviction; a fresh deferral waits": {ctl: vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600),
			pods: []Pod{with(pod("inf", time.Hour, 500, 0), func(p *Pod) { p.Resizing, p.ResizePending = true, corev1.PodReasonInfeasible }),
				with(pod("def", time.Hour, 500, 0), func(p *Pod) {
					p.Resizing, p.ResizePending, p.ResizePendingSince = true, corev1.PodReasonDeferred, now.Add(-time.Minute)
				}),
				pod("c", time.Hour, 500, 0), pod("d", time.Hour, 500, 0)},
			want: []got{{"inf", "Evict", ReasonInfeasible}, {"def", "Wait", ""}}},
		"a deferral past its timeout falls back to eviction; InPlace only reports": {ctl: vpaCtl(vpav1.UpdateModeInPlace, 500, 400, 600),
			pods: []Pod{with(pod("def", time.Hour, 500, 0), func(p *Pod) {
				p.Resizing, p.ResizePending, p.ResizePendingSince = true, corev1.PodReasonDeferred, now.Add(-6*time.Minute)
			})},
			want: []got{{"def", "Skip", ReasonDeferredTooLong}}},
		"a resize in progress past its timeout falls back to eviction": {ctl: vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600),
			pods: []Pod{with(pod("slow", time.Hour, 500, 0), func(p *Pod) {
				since := now.Add(-61 * time.Minute)
				p.Resizing, p.ResizeInProgressSince = true, &since
			}), with(pod("recent", time.Hour, 500, 0), func(p *Pod) {
				since := now.Add(-59 * time.Minute)
				p.Resizing, p.ResizeInProgressSince = true, &since
			}), pod("c", time.Hour, 500, 0), pod("d", time.Hour, 500, 0)},
			want: []got{{"slow", "Evict", ReasonInProgressTooLong}, {"recent", "Wait", ""}}},
		"a resize the kubelet reports failed, or pending for an unknown reason, falls back at once, as upstream": {ctl: vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600),
			pods: []Pod{with(pod("failed", time.Hour, 500, 0), func(p *Pod) {
				since := now.Add(-time.Minute)
				p.Resizing, p.ResizeInProgressSince, p.ResizeFailure = true, &since, "Error: cannot shrink memory below usage"
			}), with(pod("odd", time.Hour, 500, 0), func(p *Pod) {
				p.Resizing, p.ResizePending, p.ResizePendingSince = true, "SomethingNew", now.Add(-time.Minute)
			}), pod("c", time.Hour, 500, 0), pod("d", time.Hour, 500, 0)},
			want: []got{{"failed", "Evict", ReasonResizeFailed}, {"odd", "Evict", ReasonResizeFailed}}},
		"a fresh deferral is read before a failure in progress, as upstream reads them: it waits": {ctl: vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600),
			pods: []Pod{with(pod("both", time.Hour, 500, 0), func(p *Pod) {
				since := now.Add(-time.Minute)
				p.Resizing, p.ResizeInProgressSince, p.ResizeFailure = true, &since, "Error"
				p.ResizePending, p.ResizePendingSince = corev1.PodReasonDeferred, since
			}), pod("c", time.Hour, 500, 0)},
			want: []got{{"both", "Wait", ""}}},
		"evictionRequirements as upstream: one listed resource moving the required way is enough": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600)
			c.Targets["app"] = scaling.V(500, 150<<20)
			c.EvictionRequirements = []vpav1.EvictionRequirement{{Resources: []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory}, ChangeRequirement: vpav1.TargetHigherThanRequests}}
			return c
		}(), pods: []Pod{withMemory(pod("mixed", time.Hour, 100, 0), 200<<20), withMemory(pod("b", time.Hour, 500, 0), 150<<20)},
			want: []got{{"mixed", "Evict", ""}}},
		"the tolerance is a share of the desired replicas: missing pods count as disrupted": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600)
			c.Replicas = 6
			return c
		}(), pods: []Pod{pod("a", time.Hour, 100, 0), pod("b", time.Hour, 100, 0), pod("c", time.Hour, 100, 0)},
			want: []got{{"a", "Skip", ReasonTolerance}, {"b", "Skip", ReasonTolerance}, {"c", "Skip", ReasonTolerance}}},
		"resizes that restart a container count against the tolerance": {ctl: vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600),
			pods: []Pod{with(pod("a", time.Hour, 100, 200), func(p *Pod) { p.RestartOnResize = true }), with(pod("b", time.Hour, 100, 200), func(p *Pod) { p.RestartOnResize = true }),
				with(pod("c", time.Hour, 100, 200), func(p *Pod) { p.RestartOnResize = true }), with(pod("d", time.Hour, 100, 200), func(p *Pod) { p.RestartOnResize = true })},
			want: []got{{"a", "Resize", ""}, {"b", "Resize", ""}, {"c", "Skip", ReasonTolerance}, {"d", "Skip", ReasonTolerance}}},
		"a running pod that is not ready (OOM-killed early) is still a candidate": {ctl: vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 300, 700),
			pods: []Pod{with(pod("crashing", time.Hour, 400, 800), func(p *Pod) { p.Live, p.OOMKilledEarly = false, true }), pod("b", time.Hour, 500, 1000)},
			want: []got{{"crashing", "Resize", ""}}},
		"an init container without limits keeps the pod Burstable: no QoS change, a resize": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600)
			c.Policies = []scaling.ContainerPolicy{{Name: "app", Controlled: [2]bool{true, true}, ControlledValues: scaling.RequestsAndLimits,
				Ratio: [2]*scaling.Ratio{{Type: scaling.RatioFactor, Factor: 1}}}}
			return c
		}(), pods: []Pod{with(pod("a", time.Hour, 100, 100), func(p *Pod) {
			p.Containers[0].Requests.Set(scaling.Memory, 1<<20)
			p.Containers[0].Limits.Set(scaling.Memory, 1<<20)
			p.InitContainers = []scaling.Container{{Name: "init", Requests: scaling.V(10, -1)}}
			p.QoS = corev1.PodQOSBurstable
		}), pod("b", time.Hour, 500, 500)},
			want: []got{{"a", "Resize", ""}}},
		"a single replica is not evicted": {ctl: vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600),
			pods: []Pod{pod("a", time.Hour, 100, 0)}, want: []got{{"a", "Skip", ReasonMinReplicas}}},
		"unless minReplicas is 1": {ctl: func() *Controller { c := vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600); c.MinReplicas = 1; return c }(),
			pods: []Pod{pod("a", time.Hour, 100, 0)}, want: []got{{"a", "Evict", ""}}},
		"at most half of the replicas per loop, the biggest change first": {ctl: vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600),
			pods: []Pod{pod("a", time.Hour, 300, 0), pod("b", time.Hour, 100, 0), pod("c", time.Hour, 200, 0), pod("d", time.Hour, 350, 0)},
			want: []got{{"b", "Evict", ""}, {"c", "Evict", ""}, {"a", "Skip", ReasonTolerance}, {"d", "Skip", ReasonTolerance}}},
		"pods already disrupted use up the tolerance": {ctl: vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600),
			pods: []Pod{pod("a", time.Hour, 100, 0), with(pod("b", time.Hour, 500, 0), func(p *Pod) { p.Live = false }), pod("c", time.Hour, 500, 0), pod("d", time.Hour, 500, 0)},
			want: []got{{"a", "Evict", ""}}},
		"scale-ups go first": {ctl: vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600),
			pods: []Pod{pod("down", time.Hour, 100000, 0), pod("up", time.Hour, 380, 0), pod("x", time.Hour, 500, 0), pod("y", time.Hour, 500, 0)},
			want: []got{{"up", "Evict", ""}, {"down", "Evict", ""}}},
		"evictionRequirements TargetHigherThanRequests refuse a decrease": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600)
			c.EvictionRequirements = []vpav1.EvictionRequirement{{Resources: []corev1.ResourceName{corev1.ResourceCPU}, ChangeRequirement: vpav1.TargetHigherThanRequests}}
			return c
		}(), pods: []Pod{withMemory(pod("down", time.Hour, 5000, 0), 1<<30), withMemory(pod("up", time.Hour, 100, 0), 1<<30)},
			want: []got{{"up", "Evict", ""}, {"down", "Skip", ReasonEvictionReqs}}},
		"evictionRequirements hold an in-place resize too, as upstream filters both": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600)
			c.EvictionRequirements = []vpav1.EvictionRequirement{{Resources: []corev1.ResourceName{corev1.ResourceCPU}, ChangeRequirement: vpav1.TargetHigherThanRequests}}
			return c
		}(), pods: []Pod{withMemory(pod("down", time.Hour, 900, 1800), 1<<30), withMemory(pod("up", time.Hour, 100, 200), 1<<30)},
			want: []got{{"up", "Resize", ""}, {"down", "Skip", ReasonEvictionReqs}}},
		"evictionRequirements read spec.containers only, as upstream: a sidecar's rise does not meet them": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600)
			c.Targets["sidecar"], c.Lower["sidecar"], c.Upper["sidecar"] = scaling.V(300, -1), scaling.V(50, -1), scaling.V(400, -1)
			c.EvictionRequirements = []vpav1.EvictionRequirement{{Resources: []corev1.ResourceName{corev1.ResourceCPU}, ChangeRequirement: vpav1.TargetHigherThanRequests}}
			return c
		}(), pods: []Pod{with(withMemory(pod("a", 13*time.Hour, 500, 0), 1<<30), func(p *Pod) {
			p.InitContainers = []scaling.Container{{Name: "sidecar", Kind: scaling.SidecarContainer, Requests: scaling.V(100, 1<<20)}}
		}), withMemory(pod("b", time.Hour, 500, 0), 1<<30)},
			want: []got{{"a", "Skip", ReasonEvictionReqs}}},
		"evictionRequirements admit a container without a memory request, as upstream": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600)
			c.EvictionRequirements = []vpav1.EvictionRequirement{{Resources: []corev1.ResourceName{corev1.ResourceCPU}, ChangeRequirement: vpav1.TargetHigherThanRequests}}
			return c
		}(), pods: []Pod{pod("down", time.Hour, 5000, 0), withMemory(pod("b", time.Hour, 500, 0), 1<<30)},
			want: []got{{"down", "Evict", ""}}},
		"the update threshold is the pod's: a sidecar's doubling beside a large container is 0.5% of it": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeRecreate, 2000, 1000, 4000)
			c.Targets["sidecar"], c.Lower["sidecar"], c.Upper["sidecar"] = scaling.V(20, -1), scaling.V(5, -1), scaling.V(40, -1)
			return c
		}(), pods: []Pod{withSidecar(pod("a", 13*time.Hour, 2000, 0), 10), withSidecar(pod("b", 13*time.Hour, 2000, 0), 10)}},
		"the update threshold adds the resources: cpu and memory 8% each are 16%": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeRecreate, 540, 300, 700)
			c.Targets["app"] = scaling.V(540, 1080<<20)
			return c
		}(), pods: []Pod{withMemory(pod("a", 13*time.Hour, 500, 0), 1000<<20), withMemory(pod("b", 13*time.Hour, 540, 0), 1080<<20)},
			want: []got{{"a", "Evict", ""}}},
		"bounds capped as the target is: a maxAllowed below the request is outside at once": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 1000)
			c.Policies = []scaling.ContainerPolicy{{Name: "app", Controlled: [2]bool{true, true}, MaxAllowed: scaling.V(600, -1)}}
			return c
		}(), pods: []Pod{pod("a", time.Hour, 900, 0), pod("b", time.Hour, 500, 0)}, want: []got{{"a", "Evict", ""}}},
		"no request where one is recommended is outside at once, as upstream": {ctl: func() *Controller {
			c := vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600)
			c.Targets["app"] = scaling.V(500, 150<<20)
			return c
		}(), pods: []Pod{pod("nomem", time.Hour, 500, 0), withMemory(pod("b", time.Hour, 500, 0), 150<<20)}, want: []got{{"nomem", "Evict", ""}}},
		"a pod that is not ready is evicted below minReplicas: it serves nothing, and the update may end its OOM loop": {
			ctl:  vpaCtl(vpav1.UpdateModeRecreate, 500, 300, 700),
			pods: []Pod{with(pod("crashing", time.Hour, 400, 0), func(p *Pod) { p.Live, p.OOMKilledEarly = false, true }), pod("b", time.Hour, 400, 0)},
			want: []got{{"crashing", "Evict", ""}}},
		"a pod not ready for another reason counts as disrupted: minReplicas holds it": {
			ctl:  vpaCtl(vpav1.UpdateModeRecreate, 500, 300, 700),
			pods: []Pod{with(pod("unready", 13*time.Hour, 400, 0), func(p *Pod) { p.Live = false }), pod("b", time.Hour, 500, 0)},
			want: []got{{"unready", "Skip", ReasonMinReplicas}}},
		"an Hvpa's intent is applied at any age, beyond rounding only": {ctl: &Controller{Kind: "Hvpa", Namespace: "ns", Name: "web", Mode: vpav1.UpdateModeInPlaceOrRecreate, Exact: true,
			Targets: map[string]scaling.Values{"app": scaling.V(525, -1)}},
			pods: []Pod{pod("a", time.Minute, 500, 1000), pod("b", time.Minute, 524, 1048)}, want: []got{{"a", "Resize", ""}}},
		"an early OOM kill makes a young pod within bounds a candidate": {ctl: vpaCtl(vpav1.UpdateModeRecreate, 500, 300, 700),
			pods: []Pod{with(pod("oom", time.Hour, 400, 0), func(p *Pod) { p.OOMKilledEarly = true }), pod("b", time.Hour, 400, 0)},
			want: []got{{"oom", "Evict", ""}}},
		"an early OOM kill makes a young pod a candidate for a lower target too (upstream: any difference)": {ctl: vpaCtl(vpav1.UpdateModeRecreate, 500, 300, 700),
			pods: []Pod{with(pod("oom", time.Hour, 600, 0), func(p *Pod) { p.OOMKilledEarly = true }), pod("b", time.Hour, 600, 0)},
			want: []got{{"oom", "Evict", ""}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, summary(Plan(tc.ctl, tc.pods, now, o))); d != "" {
				t.Errorf("actions (-want +got):\n%s", d)
			}
		})
	}
}

func TestQoS(t *testing.T) {
	c := func(req, lim scaling.Values) scaling.Container {
		return scaling.Container{Name: "c", Requests: req, Limits: lim}
	}
	cases := map[string]struct {
		cs   []scaling.Container
		want corev1.PodQOSClass
	}{
		"nothing set":                         {[]scaling.Container{c(scaling.Values{}, scaling.Values{})}, corev1.PodQOSBestEffort},
		"limits equal requests":               {[]scaling.Container{c(scaling.V(100, 1<<20), scaling.V(100, 1<<20))}, corev1.PodQOSGuaranteed},
		"limits only (requests default)":      {[]scaling.Container{c(scaling.Values{}, scaling.V(100, 1<<20))}, corev1.PodQOSGuaranteed},
		"a memory limit missing":              {[]scaling.Container{c(scaling.V(100, 1<<20), scaling.V(100, -1))}, corev1.PodQOSBurstable},
		"one container of two not Guaranteed": {[]scaling.Container{c(scaling.V(100, 1<<20), scaling.V(100, 1<<20)), c(scaling.V(100, -1), scaling.Values{})}, corev1.PodQOSBurstable},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := QoS(tc.cs); got != tc.want {
				t.Errorf("QoS = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestPlanLoopGuardedEvictionsTakeNoBudget: replacements of pods evicted for a change, back unsized (a webhook
// that failed open), are refused by loop detection; they must not use up the tolerance of the pods that
// existed at the first eviction and may still go.
func TestPlanLoopGuardedEvictionsTakeNoBudget(t *testing.T) {
	ctl := vpaCtl(vpav1.UpdateModeRecreate, 500, 400, 600)
	pods := []Pod{pod("new-1", time.Minute, 100, 0), pod("new-2", time.Minute, 100, 0), pod("old-1", time.Hour, 100, 0), pod("old-2", time.Hour, 100, 0)}
	first := Plan(ctl, pods, now, DefaultOptions())
	if len(first) == 0 {
		t.Fatal("no action planned")
	}
	known := map[types.UID]bool{"old-1": true, "old-2": true, "gone-1": true, "gone-2": true}
	ctl.Evicted = map[string]EvictedChange{first[0].Fingerprint: {Known: known}}
	want := []got{{"new-1", "Evict", ""}, {"new-2", "Evict", ""}, {"old-1", "Evict", ""}, {"old-2", "Evict", ""}}
	if d := cmp.Diff(want, summary(Plan(ctl, pods, now, DefaultOptions()))); d != "" {
		t.Errorf("actions (-want +got):\n%s", d)
	}
	// the workload was evicted for another change since, which the new pods hold and their template does not
	// (they were sized for it): they are no replacements that came back unsized, and take the budget first as
	// any pod
	withTemplate := func(cpu float64) []Pod { // sized at admission (the webhook's annotation), from a template of cpu
		out := slices.Clone(pods)
		for i := range out {
			out[i].Containers = slices.Clone(out[i].Containers)
			out[i].Containers[0].Origin = &scaling.Container{Name: "app", Requests: scaling.V(cpu, -1)}
			out[i].SizedAtAdmission = true
		}
		return out
	}
	unsized := withTemplate(50)
	for i := range unsized {
		unsized[i].SizedAtAdmission = false
	}
	ctl.Evicted = map[string]EvictedChange{first[0].Fingerprint: {Known: known, MovedTo: []string{"app cpu=900;", "app cpu=100;"}}}
	want = []got{{"new-1", "Evict", ""}, {"new-2", "Evict", ""}, {"old-1", "Skip", ReasonTolerance}, {"old-2", "Skip", ReasonTolerance}}
	if d := cmp.Diff(want, summary(Plan(ctl, withTemplate(50), now, DefaultOptions()))); d != "" {
		t.Errorf("the new pods hold a change moved to, actions (-want +got):\n%s", d)
	}
	// they hold none of the changes moved to, or one their template gives (what a replacement that came back
	// unsized holds), or their template is not known, or no webhook sized them (a resize did): held still
	for name, tc := range map[string]struct {
		movedTo  string
		template []Pod
	}{"none": {"app cpu=900;", withTemplate(50)}, "the template's": {"app cpu=100;", withTemplate(100)}, "template not known": {"app cpu=100;", pods},
		"not sized at admission, a": {"app cpu=100;", unsized}} {
		ctl.Evicted = map[string]EvictedChange{first[0].Fingerprint: {Known: known, MovedTo: []string{tc.movedTo}}}
		want = []got{{"new-1", "Evict", ""}, {"new-2", "Evict", ""}, {"old-1", "Evict", ""}, {"old-2", "Evict", ""}}
		if d := cmp.Diff(want, summary(Plan(ctl, tc.template, now, DefaultOptions()))); d != "" {
			t.Errorf("the new pods hold %s change moved to, actions (-want +got):\n%s", name, d)
		}
	}
	// another change is another matter: the record does not guard it
	ctl.Evicted = map[string]EvictedChange{"app cpu=1;": {Known: map[types.UID]bool{"old-1": true}}}
	want = []got{{"new-1", "Evict", ""}, {"new-2", "Evict", ""}, {"old-1", "Skip", ReasonTolerance}, {"old-2", "Skip", ReasonTolerance}}
	if d := cmp.Diff(want, summary(Plan(ctl, pods, now, DefaultOptions()))); d != "" {
		t.Errorf("actions (-want +got):\n%s", d)
	}
}

// TestEvictedChangeHolds: loop detection holds a pod created after the first eviction for a change, unless
// it holds a change the workload was evicted for since (it was sized for that one at admission: coming back
// to this change it needs an eviction like any other pod). Holding a change is read as the planner compares
// a target with a pod: requests and limits each within its rounding, sidecars too.
func TestEvictedChangeHolds(t *testing.T) {
	known := map[types.UID]bool{"old": true}
	template := scaling.Container{Name: "app", Requests: scaling.V(100, 256<<20)}
	app := func(cpu, limit float64) scaling.Container {
		c := scaling.Container{Name: "app", Requests: scaling.V(cpu, 256<<20), Origin: &template}
		if limit > 0 {
			c.Limits = scaling.V(limit, -1)
		}
		return c
	}
	sidecarTemplate := scaling.Container{Name: "proxy", Requests: scaling.V(50, -1)}
	sidecar := scaling.Container{Name: "proxy", Kind: scaling.SidecarContainer, Requests: scaling.V(50, -1), Origin: &sidecarTemplate}
	unknown := app(334, 667)
	unknown.Origin = nil
	g := fingerprint([]scaling.ContainerDecision{{Name: "app", Requests: scaling.V(333.4, 256<<20), Limits: scaling.V(666.7, -1)}, {Name: "proxy", Requests: scaling.V(50, -1)}})
	for name, tc := range map[string]struct {
		e    EvictedChange
		uid  types.UID
		ctrs []scaling.Container
		want bool
	}{
		"a pod known at the first eviction":             {EvictedChange{Known: known}, "old", []scaling.Container{app(100, 0)}, false},
		"a replacement":                                 {EvictedChange{Known: known}, "new", []scaling.Container{app(100, 0)}, true},
		"a replacement, the workload moved on":          {EvictedChange{Known: known, MovedTo: []string{g}}, "new", []scaling.Container{app(100, 0), sidecar}, true},
		"a pod sized for the change moved to":           {EvictedChange{Known: known, MovedTo: []string{g}}, "new", []scaling.Container{app(334, 667), sidecar}, false},
		"sized for it, within the planner's rounding":   {EvictedChange{Known: known, MovedTo: []string{g}}, "new", []scaling.Container{app(336, 668), sidecar}, false},
		"its limit not the change's":                    {EvictedChange{Known: known, MovedTo: []string{g}}, "new", []scaling.Container{app(334, 900), sidecar}, true},
		"its sidecar not the change's":                  {EvictedChange{Known: known, MovedTo: []string{g}}, "new", []scaling.Container{app(334, 667), {Name: "proxy", Kind: scaling.SidecarContainer, Requests: scaling.V(80, -1)}}, true},
		"without the sidecar the change names":          {EvictedChange{Known: known, MovedTo: []string{g}}, "new", []scaling.Container{app(334, 667)}, true},
		"sized for the first of two changes moved to":   {EvictedChange{Known: known, MovedTo: []string{g, "app cpu=900;"}}, "new", []scaling.Container{app(334, 667), sidecar}, false},
		"a fingerprint that does not parse holds a pod": {EvictedChange{Known: known, MovedTo: []string{"app cpu=lots;"}}, "new", []scaling.Container{app(100, 0)}, true},
		"a change to the template's values":             {EvictedChange{Known: known, MovedTo: []string{"app cpu=100 memory=268435456;"}}, "new", []scaling.Container{app(100, 0)}, true},
		"a change within rounding of the template's":    {EvictedChange{Known: known, MovedTo: []string{"app cpu=102;"}}, "new", []scaling.Container{app(100, 0)}, true},
		"a change the template gives on what it names":  {EvictedChange{Known: known, MovedTo: []string{"app cpu=100;"}}, "new", []scaling.Container{app(100, 0)}, true},
		"its template not known":                        {EvictedChange{Known: known, MovedTo: []string{g}}, "new", []scaling.Container{unknown, sidecar}, true},
	} {
		p := &Pod{UID: tc.uid, SizedAtAdmission: true, Containers: tc.ctrs}
		if got := tc.e.Holds(p); got != tc.want {
			t.Errorf("%s: holds %v, want %v", name, got, tc.want)
		}
		// without the webhook's annotation nothing says it was sized for the change: only a known pod goes
		p.SizedAtAdmission = false
		if got, want := tc.e.Holds(p), tc.uid != "old"; got != want {
			t.Errorf("%s, not sized at admission: holds %v, want %v", name, got, want)
		}
	}
}

// TestParseFingerprint: a fingerprint reads back into the values it was made of, to whole units (so that
// fingerprinting them again gives it back), and what is not one does not parse.
func TestParseFingerprint(t *testing.T) {
	for _, sized := range [][]scaling.ContainerDecision{
		{{Name: "app", Requests: scaling.V(250, 268435456), Limits: scaling.V(500, 536870912)}, {Name: "sidecar", Requests: scaling.V(50, -1)}},
		{{Name: "app", Requests: scaling.V(-1, 1<<30)}},
		{{Name: "app", Limits: scaling.V(333.3, -1)}},
		{{Name: "a"}},
	} {
		fp := fingerprint(sized)
		back, ok := parseFingerprint(fp)
		if !ok || fingerprint(back) != fp {
			t.Errorf("%q: read back %v (%v), fingerprinted again %q", fp, back, ok, fingerprint(back))
		}
	}
	for _, bad := range []string{"", "app", "app cpu=1", ";", " cpu=1;", "app cpu=x;", "app cpu;", "app gpu=1;", "app cpu=1;x"} {
		if got, ok := parseFingerprint(bad); ok {
			t.Errorf("%q parsed as %v", bad, got)
		}
	}
}

// FuzzParseFingerprint: whatever it is given, parseFingerprint does not panic, and what it reads is a
// fingerprint's values (fingerprinting them and reading that back gives the same).
func FuzzParseFingerprint(f *testing.F) {
	f.Add("app cpu=250 memory=268435456 cpu-limit=500;sidecar cpu=50;")
	f.Add("app memory-limit=1;")
	f.Fuzz(func(t *testing.T, fp string) {
		sized, ok := parseFingerprint(fp)
		if !ok {
			return
		}
		again := fingerprint(sized)
		back, ok := parseFingerprint(again)
		if !ok || fingerprint(back) != again {
			t.Fatalf("%q read as %v, fingerprinted %q, read back %v (%v)", fp, sized, again, back, ok)
		}
	})
}

// TestInPlaceSkipDisruptionBudget: resizes that restart nothing take no share of the eviction tolerance by
// default; --in-place-skip-disruption-budget=false (upstream VPA's default) counts them as disruptions.
func TestInPlaceSkipDisruptionBudget(t *testing.T) {
	ctl := vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600)
	pods := []Pod{pod("a", time.Hour, 100, 200), pod("b", time.Hour, 100, 200), pod("c", time.Hour, 100, 200), pod("d", time.Hour, 100, 200)}
	o := DefaultOptions()
	all := []got{{"a", "Resize", ""}, {"b", "Resize", ""}, {"c", "Resize", ""}, {"d", "Resize", ""}}
	if d := cmp.Diff(all, summary(Plan(ctl, pods, now, o))); d != "" {
		t.Errorf("skipping the budget (default), actions (-want +got):\n%s", d)
	}
	o.InPlaceSkipDisruptionBudget = false
	half := []got{{"a", "Resize", ""}, {"b", "Resize", ""}, {"c", "Skip", ReasonTolerance}, {"d", "Skip", ReasonTolerance}}
	if d := cmp.Diff(half, summary(Plan(ctl, pods, now, o))); d != "" {
		t.Errorf("--in-place-skip-disruption-budget=false, actions (-want +got):\n%s", d)
	}
}

// TestPlanBudget pins the disruption budget PlanWithBudget returns (what a resize the API refuses may spend on
// an eviction) and the eviction tolerance on odd replica counts: at most half of the replicas, rounded down,
// at least one, less those missing; none while fewer pods are live than minReplicas.
func TestPlanBudget(t *testing.T) {
	o := DefaultOptions()
	pods := func(n int, req float64) []Pod {
		var out []Pod
		for i := range n {
			out = append(out, pod(fmt.Sprintf("p%d", i), time.Hour, req, 0))
		}
		return out
	}
	ctl := func(mode vpav1.UpdateMode, replicas, minReplicas int32) *Controller {
		c := vpaCtl(mode, 500, 400, 600)
		c.Replicas, c.MinReplicas = replicas, minReplicas
		return c
	}
	cases := map[string]struct {
		ctl     *Controller
		pods    []Pod
		evicted int // evictions planned (the first ones), the others skipped for the tolerance
		budget  int
	}{
		"3 replicas: 1 eviction per loop (half of 3, rounded down), none left":      {ctl(vpav1.UpdateModeRecreate, 3, 0), pods(3, 100), 1, 0},
		"5 replicas: 2 evictions per loop, none left":                               {ctl(vpav1.UpdateModeRecreate, 5, 0), pods(5, 100), 2, 0},
		"5 replicas, 1 needs it: 1 left for a refused resize":                       {ctl(vpav1.UpdateModeRecreate, 5, 0), append(pods(1, 100), pods(5, 500)[1:]...), 1, 1},
		"3 replicas in place, nothing disrupts: the whole budget of 1 is left":      {ctl(vpav1.UpdateModeInPlaceOrRecreate, 3, 0), pods(3, 100), 0, 1},
		"7 replicas in place: 3 left for refused resizes":                           {ctl(vpav1.UpdateModeInPlaceOrRecreate, 7, 0), pods(7, 100), 0, 3},
		"1 replica: at least one, but minReplicas 2 (the default) leaves none":      {ctl(vpav1.UpdateModeInPlaceOrRecreate, 1, 0), pods(1, 100), 0, 0},
		"1 replica with minReplicas 1: one":                                         {ctl(vpav1.UpdateModeInPlaceOrRecreate, 1, 1), pods(1, 100), 0, 1},
		"3 live of 3 desired, minReplicas 4: none, though the tolerance allows one": {ctl(vpav1.UpdateModeInPlaceOrRecreate, 3, 4), pods(3, 100), 0, 0},
		"5 desired, 3 live: 2 missing count as disrupted, none left":                {ctl(vpav1.UpdateModeInPlaceOrRecreate, 5, 0), pods(3, 100), 0, 0},
		"9 desired, 8 live: 4 less the missing one":                                 {ctl(vpav1.UpdateModeInPlaceOrRecreate, 9, 0), pods(8, 100), 0, 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			actions, budget := PlanWithBudget(tc.ctl, tc.pods, now, o)
			n := 0
			for _, a := range actions {
				if a.Kind == Evict {
					n++
				} else if a.Kind == Skip && a.Reason != ReasonTolerance {
					t.Errorf("%s skipped for %s: %s", a.Pod.Name, a.Reason, a.Message)
				}
			}
			if n != tc.evicted || budget != tc.budget {
				t.Errorf("%d evictions planned, budget %d left; want %d and %d", n, budget, tc.evicted, tc.budget)
			}
		})
	}
}

// TestEvictionGates: a replacement created after an eviction for the same change within the window is not
// evicted again, nor is any pod while the admission webhook is not serving; a pod that existed at that first
// eviction, or any pod without one, goes ahead.
func TestEvictionGates(t *testing.T) {
	first := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	a := Action{Kind: Evict, Message: "cpu 100m -> 300m"}
	for name, tc := range map[string]struct {
		g       EvictionGates
		outcome string // "": goes ahead
		reason  string
		message string
	}{
		"no earlier eviction, webhook serving":      {EvictionGates{Admission: true}, "", "", ""},
		"a pod known at the first eviction":         {EvictionGates{Last: &first, Admission: true}, "", "", ""},
		"a replacement of an evicted pod":           {EvictionGates{Last: &first, Loops: true, Admission: true}, "loop", EventLoopDetected, "created after an eviction for the same change (cpu 100m -> 300m; the last at 2026-11-26T12:00:00Z)"},
		"webhook not serving":                       {EvictionGates{NotServing: "its Lease is 5m old"}, "no_admission", EventUpdateSkipped, "AdmissionNotServing: cpu 100m -> 300m; not evicting: its Lease is 5m old"},
		"a replacement, webhook not serving either": {EvictionGates{Last: &first, Loops: true}, "loop", EventLoopDetected, "is the admission webhook sizing pods?"},
	} {
		h := tc.g.Hold(a)
		switch {
		case tc.outcome == "" && h != nil:
			t.Errorf("%s: held (%+v), want it to go ahead", name, *h)
		case tc.outcome != "" && (h == nil || h.Outcome != tc.outcome || h.Reason != tc.reason || !strings.Contains(h.Message, tc.message)):
			t.Errorf("%s: %+v, want outcome %s, reason %s, a message with %q", name, h, tc.outcome, tc.reason, tc.message)
		}
	}
}

// TestPodStateReadsAResizeFailure: a PodResizeInProgress condition with the kubelet's reason Error (and its
// message) is a failed resize, which falls back to eviction at once; one without a reason is a resize still
// running, which waits for --in-place-in-progress-timeout.
func TestPodStateReadsAResizeFailure(t *testing.T) {
	for _, tc := range []struct {
		reason, message, want string
	}{{"", "", ""}, {corev1.PodReasonError, "cannot shrink memory below usage", "Error: cannot shrink memory below usage"}, {corev1.PodReasonError, "", "Error"}} {
		p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue, Reason: tc.reason, Message: tc.message}}}}
		s := podState(p, now, DefaultOptions(), nil)
		if s.ResizeInProgressSince == nil || s.ResizeFailure != tc.want {
			t.Errorf("reason %q: in progress %v, failure %q, want %q", tc.reason, s.ResizeInProgressSince != nil, s.ResizeFailure, tc.want)
		}
	}
}
