package app_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/webhooks/pod"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// provided is what the workload runs with now: its live pods and their cpu requests in total (millicores).
type provided struct {
	pods    int
	total   int64
	perPods []int64
}

func (p provided) String() string {
	return fmt.Sprintf("%d pods, %dm in total %v", p.pods, p.total, p.perPods)
}

func measure(ctx context.Context, ns, app string) provided {
	var l corev1.PodList
	Expect(k8s.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{"app": app})).To(Succeed())
	var out provided
	for _, p := range l.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		m := p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
		out.pods++
		out.total += m
		out.perPods = append(out.perPods, m)
	}
	return out
}

var _ = Describe("an Hvpa with every component running", func() {
	ctx := context.Background()

	It("does not ratchet under an HPA with a user-set 300 s scale-down window: the provided total stays within 1.5x usage/target and settles", func() {
		ns := framework.NewNamespace(k8s, "ratchet")
		framework.CreateDeployment(k8s, ns, "web", 3, "1")
		const usage, target = 5000, 0.8 // 5 CPU in total, constant; the HPA aims at 80% of the requests
		loads.Set(ns, "web", usage, 300<<20)
		Expect(k8s.Create(ctx, wrappers.MakeHvpa(ns, "web").HPA(true, 1, 10).Utilization(corev1.ResourceCPU, 80).ScaleDownWindow(300).Controlled(corev1.ResourceCPU).CPUPerReplica("500m", "1", "2", "4", "8", "8", "8", "8", "8", "8").Obj())).To(Succeed())

		bound := int64(1.5 * usage / target)
		var series []string
		last, start := "", time.Now()
		since := start
		// at least 50 s; longer only while it has not settled at 4 pods: when the HPA's first reading misses a
		// starting pod (5 x 1000m, then 3 x 1667m held by its window), the 4th pod comes from a reading of the
		// resized pods, which waits until they are warm (scaling.HPAReadingAge after they became ready), then
		// for the HPA's next sync: about 80 s
		for {
			p := measure(ctx, ns, "web")
			Expect(p.total).To(BeNumerically("<=", bound), "provided %s, above 1.5 x usage/target = %dm; before: %s", p, bound, strings.Join(series, "; "))
			if s := p.String(); s != last {
				series = append(series, fmt.Sprintf("%5.1fs %s", time.Since(start).Seconds(), s))
				last, since = s, time.Now()
			}
			if ran := time.Since(start); ran >= 150*time.Second || ran >= 50*time.Second && time.Since(since) >= 20*time.Second && p.pods == 4 {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		AddReportEntry("provided cpu over time (changes only)", strings.Join(series, "\n"))
		GinkgoWriter.Println(strings.Join(series, "\n"))
		Expect(time.Since(since)).To(BeNumerically(">", 20*time.Second), "settled: unchanged for the last 20 s of the run (%s)", strings.Join(series, "; "))
		final := measure(ctx, ns, "web")
		Expect(final.pods).To(Equal(4), "over time: %s", strings.Join(series, "; "))
		// 4 x 1750m, the docs/design/scaling.md reference settlement, from the HPA's 7 x 1000m; when the HPA's
		// first reading misses a starting pod it asks for 5 x 1000m instead, and the HPA's own recommendation on
		// the 3 x 1667m that gives moves it to 4 x 1667m: either is at rest, below 88% used
		Expect(final.perPods).To(Or(HaveEach(Equal(int64(1750))), HaveEach(Equal(int64(1667)))), "over time: %s", strings.Join(series, "; "))

		// the load rises 30%: 93% of 7 CPU. The HPA recommends 5 of the 1750m pods, fewer than the 7 its
		// window holds, so its desired replicas do not move for 300 s; its basis rises to 5/7 of 1750m at once
		// (the basis as recorded stayed at 7 CPU, 93% used, for the whole window) once every pod has been ready
		// for a minute (scaling.HPAPods.Warm): the newest is at most 30 s old at the rise, so within 40 s of it
		const risen = 6500
		loads.Set(ns, "web", risen, 300<<20)
		Eventually(func() int64 { return measure(ctx, ns, "web").total }, 90*time.Second, 250*time.Millisecond).Should(
			BeNumerically(">=", risen/(target*(1+scaling.HPATolerance))), "at %dm of usage the pods are used at most 88%%", risen)
		Consistently(func() int64 { return measure(ctx, ns, "web").total }, 5*time.Second, 250*time.Millisecond).Should(
			BeNumerically("<=", 1.5*risen/target), "within 1.5 x usage/target: no ratchet")
		AddReportEntry("after a 30% rise", measure(ctx, ns, "web").String())
	})

	It("scales out with the load and back in once it falls past the overlap, with the pods sized to the intent", func() {
		ns := framework.NewNamespace(k8s, "updown")
		framework.CreateDeployment(k8s, ns, "web", 1, "500m")
		loads.Set(ns, "web", 300, 300<<20)
		Expect(k8s.Create(ctx, wrappers.MakeHvpa(ns, "web").HPA(true, 1, 5).Utilization(corev1.ResourceCPU, 50).ScaleDownWindow(0).Controlled(corev1.ResourceCPU).CPUPerReplica("500m", "1", "2", "4", "8").Overlap(30, 0).Obj())).To(Succeed())
		intentMet := func(want int) func() string { // want 0: any scaled-out count (3 or more) the intent names
			return func() string {
				wantPods := want
				h := &hvpav1alpha1.Hvpa{}
				Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, h)).To(Succeed())
				p := measure(ctx, ns, "web")
				if h.Status.Desired == nil || len(h.Status.Desired.Containers) == 0 {
					return "no intent yet; " + p.String()
				}
				want := h.Status.Desired.Containers[0].Requests.Cpu().MilliValue()
				if wantPods == 0 && h.Status.Desired.Replicas >= 3 { // scaled out: any count the intent names
					wantPods = int(h.Status.Desired.Replicas)
				}
				if int(h.Status.Desired.Replicas) != wantPods || p.pods != wantPods {
					return fmt.Sprintf("intent %d x %dm, running %s; hpa %+v totals %+v blocked %+v", h.Status.Desired.Replicas, want, p, h.Status.HPA, h.Status.Desired.Totals, h.Status.LastBlockedScaling)
				}
				for _, m := range p.perPods {
					if m != want {
						return fmt.Sprintf("intent %d x %dm, running %s", h.Status.Desired.Replicas, want, p)
					}
				}
				return ""
			}
		}
		// settled: the intent is met and the provided total is within [demand/(1.1 x target), 1.3 x demand/target]
		within := func(demand int64) {
			GinkgoHelper()
			p := measure(ctx, ns, "web")
			Expect(float64(p.total)).To(BeNumerically("<=", 1.3*float64(demand)/0.5), "provided %s for %dm of demand at a 50%% target", p, demand)
			// the HPA leaves a utilization within its tolerance of the target alone: at most 55% at rest
			Expect(float64(p.total)).To(BeNumerically(">=", float64(demand)/(0.5*(1+scaling.HPATolerance))), "provided %s for %dm of demand, above 55%% utilization", p, demand)
		}
		// 2.8 CPU: the HPA at 50% asks for 5.6 CPU of requests, inside the 3-replica interval (up 6) and inside
		// the 4-replica one's hysteresis band (down 4.2): the HPA's first readings of a fresh scale-out decide
		// which, and either is at rest; the total is what must be right
		loads.Set(ns, "web", 2800, 300<<20)
		settled := func(want int) {
			GinkgoHelper()
			// the intent met and unchanged for 3 s (the HPA's first readings of new pods move it); generous
			// bounds: alone this settles in seconds, but under CI's parallel packages on 2 cores a resize round
			// once took over 90 s
			Eventually(func(g Gomega) {
				g.Eventually(intentMet(want), 180*time.Second, 250*time.Millisecond).Should(BeEmpty())
				g.Consistently(intentMet(want), 3*time.Second, 250*time.Millisecond).Should(BeEmpty())
			}, 240*time.Second).Should(Succeed())
		}
		settled(0)
		within(2800)
		scaledOut := measure(ctx, ns, "web")
		// down to 0.1 CPU: the HPA at 50% wants 0.2 CPU of requests, below one pod of the size in force; at its
		// minReplicas its desired replicas stop changing, so the Hvpa reads c x utilization/target from the
		// HPA's metrics instead (docs/design/scaling.md section 2): 200m in total, the 1-replica interval
		loads.Set(ns, "web", 100, 300<<20)
		settled(1)
		within(100)
		AddReportEntry("scale out and back in", fmt.Sprintf("at 2.8 CPU: %s; at 0.1 CPU: %s", scaledOut, measure(ctx, ns, "web")))
	})

	It("acts beside observer VPAs created before it (Goldilocks' updateMode Off, another recommender's): they are served and never stop it", func() {
		ns := framework.NewNamespace(k8s, "observed")
		framework.CreateDeployment(k8s, ns, "web", 1, "500m")
		loads.Set(ns, "web", 1000, 300<<20)
		target := &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
		goldilocks := &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "goldilocks-web"}, Spec: vpav1.VerticalPodAutoscalerSpec{
			TargetRef: target, UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: ptr.To(vpav1.UpdateModeOff)}}}
		upstream := &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "upstream-web"}, Spec: vpav1.VerticalPodAutoscalerSpec{
			TargetRef: target, Recommenders: []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "upstream"}}}}
		Expect(k8s.Create(ctx, goldilocks)).To(Succeed())
		Expect(k8s.Create(ctx, upstream)).To(Succeed())
		time.Sleep(1100 * time.Millisecond) // creationTimestamp has whole seconds: the VPAs are the older
		Expect(k8s.Create(ctx, wrappers.MakeHvpa(ns, "web").HPA(true, 1, 5).Utilization(corev1.ResourceCPU, 50).ScaleDownWindow(0).Controlled(corev1.ResourceCPU).CPUPerReplica("500m", "1", "2", "4", "8").Overlap(30, 0).Obj())).To(Succeed())

		Eventually(func(g Gomega) {
			h := &hvpav1alpha1.Hvpa{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, h)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(h.Status.Conditions, hvpav1alpha1.ConditionConfigUnsupported)).To(BeFalse(), "the Hvpa stopped: %+v", h.Status.Conditions)
			g.Expect(h.Status.Desired).NotTo(BeNil())
			g.Expect(h.Status.Desired.Replicas).To(BeNumerically(">=", 2), "1 CPU at a 50%% target: the Hvpa scales out")
			v := &vpav1.VerticalPodAutoscaler{}
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(goldilocks), v)).To(Succeed())
			g.Expect(v.Status.Recommendation).NotTo(BeNil(), "the observer VPA is served a recommendation")
			for _, c := range v.Status.Conditions {
				g.Expect(c.Type == vpav1.ConfigUnsupported && c.Status == corev1.ConditionTrue).To(BeFalse(), "observer VPA: %+v", c)
			}
		}, 90*time.Second, 250*time.Millisecond).Should(Succeed())
		// the pods the scale-out creates are sized by the Hvpa, with no conflict named
		Eventually(func(g Gomega) {
			var sized int
			for _, p := range framework.LivePods(k8s, ns, "web") {
				if p.Annotations[pod.AnnotationSizedBy] == "Hvpa/web" {
					sized++
					g.Expect(p.Annotations).NotTo(HaveKey(pod.AnnotationAlsoMatched), "observers are no conflict")
				}
			}
			g.Expect(sized).To(BeNumerically(">", 0))
		}, 90*time.Second, 250*time.Millisecond).Should(Succeed())
	})
})
