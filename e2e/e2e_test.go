package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// rl is a cpu and memory ResourceList (an empty string leaves one out).
var rl = wrappers.Resources

// deployment runs replicas pods of one container "app"; answer is how the played kubelet answers resizes.
func deployment(ns, name string, replicas int32, answer string, req, lim corev1.ResourceList) *appsv1.Deployment {
	return framework.CreateAnswering(k8s, ns, name, replicas, answer, req, lim)
}

func livePods(ns, app string) []corev1.Pod { return framework.LivePods(k8s, ns, app) }

func uidSet(pods []corev1.Pod) map[types.UID]bool {
	out := map[types.UID]bool{}
	for _, p := range pods {
		out[p.UID] = true
	}
	return out
}

func vpaFor(ns, name string, mode vpav1.UpdateMode) *vpav1.VerticalPodAutoscaler {
	v := wrappers.MakeVPA(ns, name).Mode(mode).Obj()
	Expect(k8s.Create(context.Background(), v)).To(Succeed())
	return v
}

// target is the VPA's current cpu target in millicores (0 without a recommendation).
func target(ns, name string) (cpu, mem int64, rec *vpav1.RecommendedContainerResources) {
	var v vpav1.VerticalPodAutoscaler
	Expect(k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &v)).To(Succeed())
	if v.Status.Recommendation == nil || len(v.Status.Recommendation.ContainerRecommendations) == 0 {
		return 0, 0, nil
	}
	r := &v.Status.Recommendation.ContainerRecommendations[0]
	return r.Target.Cpu().MilliValue(), r.Target.Memory().Value(), r
}

// sizedNear: every live pod's cpu request is within 15% of the VPA's target.
func sizedNear(ns, name string) func() string {
	return func() string {
		cpu, _, _ := target(ns, name)
		pods := livePods(ns, name)
		if cpu == 0 || len(pods) == 0 {
			return "no recommendation or no pods yet"
		}
		for _, p := range pods {
			got := p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
			if float64(got) < 0.85*float64(cpu) || float64(got) > 1.15*float64(cpu) {
				return fmt.Sprintf("pod %s at %dm, target %dm", p.Name, got, cpu)
			}
		}
		return ""
	}
}

var _ = Describe("the hvpa binary", Ordered, func() {
	ctx := context.Background()
	var modesNS, hvpaNS string

	It("serves standalone VPAs in every mode: Off, Initial, Recreate, InPlaceOrRecreate, and an infeasible resize falls back to eviction", func() {
		modesNS = framework.NewNamespace(k8s, "modes")
		apps := map[string]vpav1.UpdateMode{"off": vpav1.UpdateModeOff, "initial": vpav1.UpdateModeInitial, "recreate": vpav1.UpdateModeRecreate,
			"auto": vpav1.UpdateModeAuto, "inplace": vpav1.UpdateModeInPlaceOrRecreate, "infeasible": vpav1.UpdateModeInPlaceOrRecreate,
			"inplace-only": vpav1.UpdateModeInPlace}
		before := map[string]map[types.UID]bool{}
		for app, mode := range apps {
			answer := "accept"
			if app == "infeasible" || app == "inplace-only" {
				answer = "infeasible"
			}
			deployment(modesNS, app, 2, answer, rl("100m", "100Mi"), rl("200m", "200Mi"))
			// 600m per pod, six times the request, whatever the number of running pods: an eviction must not move
			// its pod's load onto the other (the target would swing up and a replacement be sized at the swing)
			loads.SetPerPod(modesNS, app, 600, 300<<20)
			Eventually(func() int { return len(livePods(modesNS, app)) }, framework.LongTimeout, framework.Interval).Should(Equal(2))
			before[app] = uidSet(livePods(modesNS, app))
			vpaFor(modesNS, app, mode)
		}
		for app := range apps {
			Eventually(func() int64 { c, _, _ := target(modesNS, app); return c }, framework.LongTimeout, framework.Interval).Should(BeNumerically(">", 400), "VPA %s recommends", app)
		}
		By("Recreate: evicted and recreated at the target")
		Eventually(sizedNear(modesNS, "recreate"), framework.LongTimeout, framework.Interval).Should(BeEmpty())
		for _, p := range livePods(modesNS, "recreate") {
			Expect(before["recreate"]).NotTo(HaveKey(p.UID), "recreated, not resized")
		}
		By("Auto (deprecated, as Recreate): evicted and recreated at the target")
		Eventually(sizedNear(modesNS, "auto"), framework.LongTimeout, framework.Interval).Should(BeEmpty())
		for _, p := range livePods(modesNS, "auto") {
			Expect(before["auto"]).NotTo(HaveKey(p.UID), "recreated, not resized")
		}
		By("InPlaceOrRecreate: the same pods, resized")
		Eventually(sizedNear(modesNS, "inplace"), framework.LongTimeout, framework.Interval).Should(BeEmpty())
		Expect(uidSet(livePods(modesNS, "inplace"))).To(Equal(before["inplace"]))
		By("InPlaceOrRecreate with an Infeasible resize: evicted, recreated at the target")
		// the refused resize already changed the pods' spec: wait for their replacements
		Eventually(func() string {
			for _, p := range livePods(modesNS, "infeasible") {
				if before["infeasible"][p.UID] {
					return "pod " + p.Name + " not replaced yet"
				}
			}
			return sizedNear(modesNS, "infeasible")()
		}, framework.LongTimeout, framework.Interval).Should(BeEmpty())
		By("InPlace (feature gate InPlace): an infeasible resize is reported, the pods are never evicted")
		Eventually(func() bool {
			var evs corev1.EventList
			Expect(k8s.List(ctx, &evs, client.InNamespace(modesNS))).To(Succeed())
			for _, e := range evs.Items {
				// upstream's reason about a VPA's pod whose infeasible resize is not tried again
				if e.Reason == updater.EventInPlaceResizeSkipped && strings.Contains(e.Message, updater.ReasonInfeasible) && strings.HasPrefix(e.InvolvedObject.Name, "inplace-only") {
					return true
				}
			}
			return false
		}, framework.LongTimeout, framework.Interval).Should(BeTrue())
		Expect(uidSet(livePods(modesNS, "inplace-only"))).To(Equal(before["inplace-only"]))
		By("Initial: running pods untouched, a new pod sized")
		for _, p := range livePods(modesNS, "initial") {
			Expect(p.Spec.Containers[0].Resources.Requests.Cpu().String()).To(Equal("100m"))
		}
		var d appsv1.Deployment
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: modesNS, Name: "initial"}, &d)).To(Succeed())
		d.Spec.Replicas = ptr.To[int32](3)
		Expect(k8s.Update(ctx, &d)).To(Succeed())
		Eventually(func() int {
			n := 0
			for _, p := range livePods(modesNS, "initial") {
				if !before["initial"][p.UID] && p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue() > 400 {
					n++
				}
			}
			return n
		}, framework.LongTimeout, framework.Interval).Should(Equal(1))
		By("Off: nothing changes")
		Expect(uidSet(livePods(modesNS, "off"))).To(Equal(before["off"]))
		for _, p := range livePods(modesNS, "off") {
			Expect(p.Spec.Containers[0].Resources.Requests.Cpu().String()).To(Equal("100m"))
		}
	})

	It("scales an Hvpa's workload out with the HPA and back in, with the pods sized to the intent", func() {
		hvpaNS = framework.NewNamespace(k8s, "hvpa")
		deployment(hvpaNS, "web", 1, "accept", rl("500m", "1Gi"), nil)
		loads.Set(hvpaNS, "web", 300, 300<<20)
		h := wrappers.MakeHvpa(hvpaNS, "web").CPUPerReplica("500m", "1", "2", "4", "8").Overlap(30, 0).
			HPA(true, 1, 5).Utilization(corev1.ResourceCPU, 50).Controlled(corev1.ResourceCPU).Obj()
		Expect(k8s.Create(ctx, h)).To(Succeed())
		atIntent := func(want int) func() string { // want 0: any scaled-out count (3 or more) the intent names
			return func() string {
				var got hvpav1alpha1.Hvpa
				Expect(k8s.Get(ctx, client.ObjectKeyFromObject(h), &got)).To(Succeed())
				live := livePods(hvpaNS, "web")
				d := got.Status.Desired
				pods := want
				if want == 0 && d != nil && d.Replicas >= 3 {
					pods = int(d.Replicas)
				}
				if d == nil || len(d.Containers) == 0 || int(d.Replicas) != pods || len(live) != pods {
					return fmt.Sprintf("intent %+v, %d live pods", d, len(live))
				}
				for _, p := range live {
					if p.Spec.Containers[0].Resources.Requests.Cpu().Cmp(*d.Containers[0].Requests.Cpu()) != 0 {
						return fmt.Sprintf("pod %s at %s, intent %s", p.Name, p.Spec.Containers[0].Resources.Requests.Cpu(), d.Containers[0].Requests.Cpu())
					}
				}
				return ""
			}
		}
		// settled: at the intent and unchanged for 3 s, with the provided total within [demand/(1.1 x target), 1.3 x demand/target]
		settled := func(want int, demand int64) {
			GinkgoHelper()
			Eventually(func(g Gomega) {
				g.Eventually(atIntent(want), 2*framework.LongTimeout, framework.Interval).Should(BeEmpty())
				g.Consistently(atIntent(want), 3*time.Second, framework.Interval).Should(BeEmpty())
			}, 3*framework.LongTimeout).Should(Succeed())
			var total int64
			for _, p := range livePods(hvpaNS, "web") {
				total += p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
			}
			// at most 1.3x demand/target (the intervals' per-replica steps); at least demand/(target x 1.1): the
			// HPA leaves a utilization within its tolerance of the target alone, so no more than 55% is at rest
			Expect(float64(total)).To(And(BeNumerically(">=", float64(demand)/(0.5*(1+scaling.HPATolerance))), BeNumerically("<=", 1.3*float64(demand)/0.5)),
				"provided %dm for %dm of demand at a 50%% target", total, demand)
		}
		// 2.8 CPU: the HPA at 50% asks for 5.6 CPU, inside the 3-replica interval and the 4-replica one's
		// hysteresis band; the HPA's first readings of the new pods decide which
		loads.Set(hvpaNS, "web", 2800, 300<<20)
		settled(0, 2800)
		// 0.1 CPU: the HPA at its minimum; the Hvpa reads utilization/target from its metrics: 200m, 1 pod
		loads.Set(hvpaNS, "web", 100, 300<<20)
		settled(1, 100)
	})

	It("raises the memory recommendation after an OOM kill", func() {
		ns := framework.NewNamespace(k8s, "oom")
		// well above the recommender's 250Mi floor, so that the bump shows: 550Mi used of a 600Mi request
		deployment(ns, "oom", 1, "accept", rl("100m", "600Mi"), rl("200m", "600Mi"))
		loads.Set(ns, "oom", 100, 550<<20)
		vpaFor(ns, "oom", vpav1.UpdateModeOff)
		var before int64
		Eventually(func() int64 { _, m, _ := target(ns, "oom"); before = m; return m }, framework.LongTimeout, framework.Interval).Should(BeNumerically(">", 550<<20))
		Expect(before).To(BeNumerically("<", 720<<20), "before the OOM kill the target follows the 550Mi usage")
		pods := livePods(ns, "oom")
		Expect(pods).To(HaveLen(1))
		Expect(kubelet.OOMKill(ctx, &pods[0], "app", time.Now())).To(Succeed())
		// OOM: memory needed = max(used + 100Mi, used x 1.2) with used = the 600Mi request: 720Mi at least
		Eventually(func() int64 { _, m, _ := target(ns, "oom"); return m }, framework.LongTimeout, framework.Interval).Should(BeNumerically(">=", 720<<20), "before the OOM: %d", before)
	})

	It("restarts without losing recommendations or scaling again, and pods are created while it is down", func() {
		_, _, rec := target(modesNS, "off")
		Expect(rec).NotTo(BeNil())
		upperBefore := rec.UpperBound.Cpu().MilliValue()
		var cps vpav1.VerticalPodAutoscalerCheckpointList
		Eventually(func() int {
			Expect(k8s.List(ctx, &cps, client.InNamespace(modesNS))).To(Succeed())
			return len(cps.Items)
		}, framework.LongTimeout, framework.Interval).Should(BeNumerically(">=", 1), "checkpoints written")
		var h hvpav1alpha1.Hvpa
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: hvpaNS, Name: "web"}, &h)).To(Succeed())
		lastScaling := h.Status.LastScaling.Time.String() + " " + h.Status.LastScaling.Message

		By("SIGTERM: every component stops gracefully")
		stopAll()

		By("pods are created while the webhook is down (failurePolicy Ignore)")
		down := framework.NewNamespace(k8s, "down")
		vpaFor(down, "web", vpav1.UpdateModeInitial)
		start := time.Now()
		Expect(k8s.Create(ctx, wrappers.MakePod(down, "plain").Label("app", "web").
			Container(wrappers.MakeContainer("app").Image("registry.example/app:1").Requests("100m", "").Obj()).Obj())).To(Succeed())
		Expect(time.Since(start)).To(BeNumerically("<", 5*time.Second))

		By("restarting")
		startAll()
		// the Hvpa controller decides again only once its process leads: wait for its first decision of this
		// Hvpa, so that "no scaling" below is about a running controller
		Eventually(func() float64 {
			return scrape(proc("recommender"), fmt.Sprintf("hvpa_controller_decisions_total{hvpa=\"web\",namespace=\"%s\"}", hvpaNS))
		}, framework.LongTimeout, framework.Interval).Should(BeNumerically(">=", 1))
		Consistently(func() string {
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: hvpaNS, Name: "web"}, &h)).To(Succeed())
			return h.Status.LastScaling.Time.String() + " " + h.Status.LastScaling.Message
		}, 8*time.Second, framework.Interval).Should(Equal(lastScaling), "no scaling after the restart")
		Expect(livePods(hvpaNS, "web")).To(HaveLen(1))
		// restored from checkpoints, the recommendation keeps its confidence: a model starting empty would
		// widen the upper bound again on its first runs
		Eventually(proc("recommender").logText, framework.LongTimeout, framework.Interval).Should(MatchRegexp(`"loaded checkpoints","kind":"VerticalPodAutoscalerCheckpoint","count":[1-9]`))
		Eventually(func() float64 {
			return scrape(proc("recommender"), "hvpa_recommender_loop_step_duration_seconds_count{step=\"total\"}")
		}, framework.LongTimeout, framework.Interval).Should(BeNumerically(">=", 3),
			"three recommender runs of the new process")
		_, _, rec = target(modesNS, "off")
		Expect(rec.UpperBound.Cpu().MilliValue()).To(BeNumerically("<=", upperBefore*3/2+1))
		_, _, rec = target(modesNS, "off")
		AddReportEntry("cpu upper bound before and after the restart", fmt.Sprintf("%dm -> %dm (%d checkpoints)", upperBefore, rec.UpperBound.Cpu().MilliValue(), len(cps.Items)))
	})
})
