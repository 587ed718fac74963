package hvpa_test

import (
	"context"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/hvpa-dev/hvpa/apis/autoscaling/decodeerr"
	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	hvpactrl "github.com/hvpa-dev/hvpa/controllers/hvpa"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// epHvpa is the EP-0001 kube-apiserver Hvpa on Deployment name (per pod 0.5/1/2/4/8 CPU), 30% overlap.
func epHvpa(ns, name string) *hvpav1alpha1.Hvpa {
	return wrappers.MakeHvpa(ns, name).Interval(1, "500m", "2Gi").Interval(2, "1", "4Gi").Interval(3, "2", "8Gi").
		Interval(4, "4", "16Gi").Interval(5, "8", "32Gi").Overlap(30, 30).Obj()
}

func withHPA(h *hvpav1alpha1.Hvpa, utilization int32) *hvpav1alpha1.Hvpa {
	h.Spec.HPA = &hvpav1alpha1.HpaSpec{Deploy: true, Template: hvpav1alpha1.HpaTemplate{MinReplicas: ptr.To[int32](1), MaxReplicas: 5,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(utilization)}}}}}}
	return h
}

func getHvpa(ctx context.Context, ns, name string) *hvpav1alpha1.Hvpa {
	GinkgoHelper()
	h := &hvpav1alpha1.Hvpa{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h)).To(Succeed())
	return h
}

func deploymentReplicas(ctx context.Context, ns, name string) func() int32 {
	return func() int32 {
		d := &appsv1.Deployment{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			return -1
		}
		return *d.Spec.Replicas
	}
}

func eventReasons(ctx context.Context, ns, name string) []string {
	var l eventsv1.EventList
	_ = k8s.List(ctx, &l, client.InNamespace(ns))
	var out []string
	for _, e := range l.Items {
		if e.Regarding.Name == name {
			out = append(out, e.Reason+": "+e.Note)
		}
	}
	return out
}

var _ = Describe("an Hvpa", func() {
	ctx := context.Background()

	It("is the target of a real HPA, whose desired replicas reach spec.replicas and drive the decision", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "web", 1, "500m")
		loads.set(ns, "web", 400) // 80% of 500m on one pod: the HPA (50% target) wants 2
		Expect(k8s.Create(ctx, withHPA(epHvpa(ns, "web"), 50))).To(Succeed())

		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		Eventually(func() error { return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, hpa) }, framework.LongTimeout).Should(Succeed(),
			func() string {
				h := getHvpa(ctx, ns, "web")
				return fmt.Sprintf("hvpa status %+v spec.replicas %v", h.Status, h.Spec.Replicas)
			})
		Expect(hpa.Spec.ScaleTargetRef).To(Equal(autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.k8s.io/v1alpha1", Kind: "Hvpa", Name: "web"}))
		Expect(*hpa.Spec.Behavior.ScaleDown.StabilizationWindowSeconds).To(Equal(int32(0)), "the Hvpa's hysteresis replaces HPA's window")
		Expect(metav1.GetControllerOf(hpa).Kind).To(Equal("Hvpa"))

		Eventually(func() *int32 { return getHvpa(ctx, ns, "web").Spec.Replicas }, framework.LongTimeout).Should(HaveValue(Equal(int32(2))), "the HPA writes 2 through the Hvpa's scale subresource")
		Eventually(deploymentReplicas(ctx, ns, "web"), framework.LongTimeout).Should(Equal(int32(2)))
		// the target is scaled before the decision's status patch lands
		Eventually(func() int32 {
			if d := getHvpa(ctx, ns, "web").Status.Desired; d != nil {
				return d.Replicas
			}
			return 0
		}, framework.LongTimeout).Should(Equal(int32(2)))
		h := getHvpa(ctx, ns, "web")
		Expect(h.Status.Selector).To(Equal("app=web"))
		Expect(h.Status.HPA.Basis).To(HaveLen(1))
		Expect(h.Status.HPA.Basis[0].Requests.Cpu().String()).To(Equal("500m"), "the per-pod value when HPA's desired replicas changed")
		Expect(h.Status.LastScaling.Message).To(ContainSubstring("replicas 1 -> 2"))
		Expect(h.Status.EffectiveScalingIntervals).To(HaveLen(5))
		Expect(meta.IsStatusConditionTrue(h.Status.Conditions, hvpav1alpha1.ConditionReady)).To(BeTrue())
		Eventually(func() int32 { return getHvpa(ctx, ns, "web").Status.Replicas }, framework.LongTimeout).Should(Equal(int32(2)), "status.replicas follows the target")
		Eventually(func() []string { return eventReasons(ctx, ns, "web") }, framework.LongTimeout).Should(ContainElement(ContainSubstring("Rescaled: replicas 1 -> 2")))
		// every change is recorded once: a reconcile right after the controller's own status patch reads the
		// Hvpa uncached, so it does not record the same change again
		var evs eventsv1.EventList
		Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		for _, e := range evs.Items {
			if e.Regarding.Name == "web" && e.Reason == "Rescaled" {
				Expect(e.DeprecatedCount).To(BeNumerically("<=", 1), "event %q recorded %d times", e.Note, e.DeprecatedCount)
			}
		}

		By("deleting the Hvpa: its HPA goes with it, the target keeps its replicas")
		Expect(k8s.Delete(ctx, h)).To(Succeed())
		Eventually(func() bool {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &autoscalingv2.HorizontalPodAutoscaler{}) != nil
		}, framework.LongTimeout).Should(BeTrue(), "the garbage collector removes the owned HPA")
		loads.set(ns, "web", 5000)
		Consistently(deploymentReplicas(ctx, ns, "web"), 3*time.Second).Should(Equal(int32(2)))
	})

	It("walks through the intervals as the recommended total rises", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "api", 1, "500m")
		h := epHvpa(ns, "api")
		h.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}
		loads.set(ns, "api", 300) // x1.15 = 345m: inside the 1-replica interval (up 500m)
		Expect(k8s.Create(ctx, h)).To(Succeed())
		Eventually(func() *vpav1.RecommendedPodResources { return getHvpa(ctx, ns, "api").Status.Recommendation }, framework.LongTimeout).ShouldNot(BeNil())
		Consistently(deploymentReplicas(ctx, ns, "api"), 2*time.Second).Should(Equal(int32(1)))

		loads.set(ns, "api", 1300) // about 1.5 CPU in total: out of the 1-replica interval (up 500m), inside the 2-replica one (up 2)
		Eventually(deploymentReplicas(ctx, ns, "api"), framework.LongTimeout).Should(Equal(int32(2)))
		// the recommender models the whole workload's load (docs/design/scaling.md section 2): the scale-out does not move
		// the total, so the workload stays in the interval of its load
		Consistently(deploymentReplicas(ctx, ns, "api"), 3*time.Second).Should(Equal(int32(2)))
		Expect(getHvpa(ctx, ns, "api").Status.WorkloadRecommendation).NotTo(BeNil())
		loads.set(ns, "api", 4000) // about 4.6 CPU in total: the 3-replica interval (up 6)
		Eventually(deploymentReplicas(ctx, ns, "api"), framework.LongTimeout).Should(Equal(int32(3)))
		// per-pod intent at rest (d == c) follows the recent load (docs/design/scaling.md section 2a): the 4 CPU
		// of load plus its headroom (5%; the check allows up to 10%) over 3 pods, within the 3-replica
		// interval's per-pod maximum (2 CPU)
		Eventually(func() string {
			h := getHvpa(ctx, ns, "api")
			if h.Status.Recommendation == nil || h.Status.Desired == nil || h.Status.Desired.Replicas != 3 {
				return "no decision at 3 replicas yet"
			}
			perPod := h.Status.Desired.Containers[0].Requests.Cpu().MilliValue()
			if lo, hi := int64(4000/3), int64(4400/3)+2; perPod < lo || perPod > min(hi, 2000) {
				return fmt.Sprintf("per pod %dm, want between the load's %dm and %dm (10%% headroom)", perPod, lo, min(hi, 2000))
			}
			return ""
		}, framework.LongTimeout).Should(BeEmpty())
		Expect(strings.Join(eventReasons(ctx, ns, "api"), "\n")).To(And(ContainSubstring("replicas 1 -> 2"), ContainSubstring("replicas 2 -> 3")))
	})

	It("keeps its intent while the pods are not resized yet (no flip-flop under stabilization)", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "steady", 1, "300m")
		h := epHvpa(ns, "steady")
		h.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}
		h.Spec.ScaleUp = &hvpav1alpha1.ScaleParams{StabilizationDuration: &metav1.Duration{Duration: 3 * time.Second}}
		h.Spec.ScaleDown = &hvpav1alpha1.ScaleParams{StabilizationDuration: &metav1.Duration{Duration: 3 * time.Second}}
		// the per-pod intent moves up from the pods' 300m to about 430m (within the 1-replica interval), and stays
		// there (a scale-up: a young history holds scale-downs with LowConfidence)
		loads.set(ns, "steady", 380)
		Expect(k8s.Create(ctx, h)).To(Succeed())
		Eventually(func() int64 {
			d := getHvpa(ctx, ns, "steady").Status.Desired
			if d == nil || len(d.Containers) == 0 {
				return 1 << 40 // no intent yet
			}
			return d.Containers[0].Requests.Cpu().MilliValue()
		}, framework.LongTimeout).Should(SatisfyAll(BeNumerically(">", 300), BeNumerically("<=", 500)))
		last := getHvpa(ctx, ns, "steady").Status.LastScaling.Time
		// the pods keep running at 300m (nothing resizes them in this suite): the intent, not the pods, is what the
		// next decisions start from, so nothing is re-decided and the stabilization clock is not reset
		Consistently(func() metav1.Time { return getHvpa(ctx, ns, "steady").Status.LastScaling.Time }, 5*time.Second).Should(Equal(last))
	})

	It("shows why a scaling is blocked, in status and events", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "frozen", 1, "500m")
		h := withHPA(epHvpa(ns, "frozen"), 50)
		h.Spec.ScaleUp = &hvpav1alpha1.ScaleParams{UpdatePolicy: &hvpav1alpha1.UpdatePolicy{UpdateMode: ptr.To(hvpav1alpha1.UpdateModeOff)}}
		loads.set(ns, "frozen", 450)
		Expect(k8s.Create(ctx, h)).To(Succeed())
		Eventually(func() *hvpav1alpha1.BlockedScaling { return getHvpa(ctx, ns, "frozen").Status.LastBlockedScaling }, framework.LongTimeout).ShouldNot(BeNil())
		b := getHvpa(ctx, ns, "frozen").Status.LastBlockedScaling
		Expect(b.Parts).To(ContainElement(And(HaveField("Part", "replicas"), HaveField("Direction", hvpav1alpha1.DirectionUp), HaveField("Reason", hvpav1alpha1.BlockReasonUpdatePolicy))))
		Eventually(func() []string { return eventReasons(ctx, ns, "frozen") }, framework.LongTimeout).Should(ContainElement(And(HavePrefix("ScalingBlocked:"), ContainSubstring("replicas (UpdatePolicy)"))))
		Consistently(deploymentReplicas(ctx, ns, "frozen"), 2*time.Second).Should(Equal(int32(1)))
	})

	It("holds a replica scale-down from a young recommendation, and says so", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "young", 3, "500m")
		h := epHvpa(ns, "young")
		h.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}
		loads.set(ns, "young", 150) // far below the 3-replica interval's down boundary (1.4 CPU): the total asks for 1
		Expect(k8s.Create(ctx, h)).To(Succeed())
		Eventually(func() string {
			c := meta.FindStatusCondition(getHvpa(ctx, ns, "young").Status.Conditions, hvpav1alpha1.ConditionLowConfidence)
			if c == nil {
				return ""
			}
			return string(c.Status) + " " + c.Reason + ": " + c.Message
		}, framework.LongTimeout).Should(And(HavePrefix("True LowConfidence: confidence 0.0 days of history (below 1)")))
		Eventually(func() []hvpav1alpha1.BlockedPart {
			if b := getHvpa(ctx, ns, "young").Status.LastBlockedScaling; b != nil {
				return b.Parts
			}
			return nil
		}, framework.LongTimeout).Should(ContainElement(And(HaveField("Part", "replicas"), HaveField("Direction", hvpav1alpha1.DirectionDown),
			HaveField("Reason", hvpav1alpha1.BlockReasonLowConfidence), HaveField("Message", HavePrefix("replicas 3 -> ")))))
		Eventually(func() []string { return eventReasons(ctx, ns, "young") }, framework.LongTimeout).Should(ContainElement(And(HavePrefix("ScalingBlocked:"),
			ContainSubstring("replicas (LowConfidence): replicas 3 -> "))))
		Consistently(deploymentReplicas(ctx, ns, "young"), 2*time.Second).Should(Equal(int32(3)))
		Expect(getHvpa(ctx, ns, "young").Status.Desired.Replicas).To(Equal(int32(3)))
	})

	It("does not act on a workload that an older VPA also targets, and says which one serves it", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "shared", 1, "500m")
		loads.set(ns, "shared", 3000)
		Expect(k8s.Create(ctx, wrappers.MakeVPA(ns, "shared-vpa").Target("Deployment", "shared").Obj())).To(Succeed())
		time.Sleep(1100 * time.Millisecond) // creation timestamps have whole seconds: the VPA is the older one
		h := epHvpa(ns, "shared")
		h.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}
		Expect(k8s.Create(ctx, h)).To(Succeed())
		Eventually(unsupportedMessage(ctx, ns, "shared"), framework.LongTimeout).Should(And(HavePrefix("MultipleAutoscalers"), ContainSubstring("the oldest, VerticalPodAutoscaler shared-vpa, serves it")))
		Consistently(deploymentReplicas(ctx, ns, "shared"), 2*time.Second).Should(Equal(int32(1)))
		// the VPA serves the workload: the recommender does not mark it (controllers/recommender tests that side)
		v := &vpav1.VerticalPodAutoscaler{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "shared-vpa"}, v)).To(Succeed())
		for _, c := range v.Status.Conditions {
			Expect(c.Type == vpav1.ConfigUnsupported && c.Status == corev1.ConditionTrue).To(BeFalse(), "the older VPA was marked: %s", c.Message)
		}
	})

	It("reports an Hvpa stored before the CRD's rules that does not decode, and goes on with the others", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "good", 1, "500m")
		framework.CreateDeployment(k8s, ns, "stale", 1, "500m")
		loads.set(ns, "good", 1300) // about 1.5 CPU: the 2-replica interval
		loads.set(ns, "stale", 1300)
		restore, err := testenv.WithoutCELRules(ctx, k8s, "hvpas.autoscaling.k8s.io")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(restore)
		stale := epHvpa(ns, "stale")
		stale.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}
		raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(stale)
		Expect(err).NotTo(HaveOccurred())
		u := &unstructured.Unstructured{Object: raw}
		u.SetGroupVersionKind(hvpav1alpha1.GroupVersion.WithKind("Hvpa"))
		intervals, _, _ := unstructured.NestedSlice(u.Object, "spec", "scalingIntervals")
		Expect(unstructured.SetNestedField(intervals[1].(map[string]any), "1e1.5", "maxResources", "cpu")).To(Succeed())
		Expect(unstructured.SetNestedSlice(u.Object, intervals, "spec", "scalingIntervals")).To(Succeed())
		Eventually(func() error { return k8s.Create(ctx, u.DeepCopy()) }, 10*time.Second, 100*time.Millisecond).Should(Succeed())
		Expect(restore()).To(Succeed())
		// with the rules back, the stored object still takes writes (a rule that failed on its value, rather
		// than rejected it, would refuse every one, the controller's status report included)
		probe := u.DeepCopy()
		probe.SetName("probe")
		Eventually(func() error { return k8s.Create(ctx, probe.DeepCopy(), client.DryRunAll) }, 10*time.Second, 100*time.Millisecond).
			Should(MatchError(ContainSubstring("must be a Kubernetes quantity")), "the rules are in force again")
		Expect(k8s.Patch(ctx, u.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"touched":"after-the-rules"}}}`)))).To(Succeed())
		good := epHvpa(ns, "good")
		good.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}
		Expect(k8s.Create(ctx, good)).To(Succeed())

		Eventually(deploymentReplicas(ctx, ns, "good"), framework.LongTimeout).Should(Equal(int32(2)), "the good Hvpa is served")
		Eventually(func() map[string]any {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(hvpav1alpha1.GroupVersion.WithKind("Hvpa"))
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stale"}, got)).To(Succeed())
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				if c.(map[string]any)["type"] == string(hvpav1alpha1.ConditionConfigUnsupported) {
					return c.(map[string]any)
				}
			}
			return nil
		}, framework.LongTimeout).Should(And(HaveKeyWithValue("status", "True"), HaveKeyWithValue("reason", decodeerr.Reason),
			HaveKeyWithValue("message", ContainSubstring(`spec.scalingIntervals[1].maxResources.cpu: "1e1.5" is not a quantity`))))
		Consistently(deploymentReplicas(ctx, ns, "stale"), 2*time.Second).Should(Equal(int32(1)), "the stale Hvpa does not act")
	})
})

var _ = Describe("an Hvpa's lifecycle", func() {
	ctx := context.Background()

	It("removes its HPA when spec.hpa.deploy is turned off", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "toggle", 1, "500m")
		loads.set(ns, "toggle", 100)
		Expect(k8s.Create(ctx, withHPA(epHvpa(ns, "toggle"), 80))).To(Succeed())
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "toggle"}, &autoscalingv2.HorizontalPodAutoscaler{})
		}, framework.LongTimeout).Should(Succeed())
		h := getHvpa(ctx, ns, "toggle")
		off := h.DeepCopy()
		off.Spec.HPA.Deploy = false
		// a merge patch of the one field, as `kubectl patch` does: the HPA and the controller write this object too
		Expect(k8s.Patch(ctx, off, client.MergeFrom(h))).To(Succeed())
		Eventually(func() bool {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "toggle"}, &autoscalingv2.HorizontalPodAutoscaler{}) != nil
		}, framework.LongTimeout).Should(BeTrue())
		Eventually(func() []string { return eventReasons(ctx, ns, "toggle") }, framework.LongTimeout).Should(ContainElement(HavePrefix("HPARemoved")))
	})

	It("finishes a scaling its status records but the target does not show (a stop between the two writes), without recording it again", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "interrupted", 2, "500m")
		h := epHvpa(ns, "interrupted")
		h.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}
		h.Spec.ScaleDown = &hvpav1alpha1.ScaleParams{UpdatePolicy: &hvpav1alpha1.UpdatePolicy{UpdateMode: ptr.To(hvpav1alpha1.UpdateModeOff)}}
		loads.set(ns, "interrupted", 1300) // 2 replicas is right for it
		Expect(k8s.Create(ctx, h)).To(Succeed())
		Eventually(func() int32 {
			if d := getHvpa(ctx, ns, "interrupted").Status.Desired; d != nil {
				return d.Replicas
			}
			return 0
		}, framework.LongTimeout).Should(Equal(int32(2)))
		loads.set(ns, "interrupted", -1) // no new samples: the recommendation, and so the decision, stay
		time.Sleep(2 * time.Second)
		// what a stop right after the status write leaves: status records 1 -> 2, the target is still at 1
		cur := getHvpa(ctx, ns, "interrupted")
		recorded := &hvpav1alpha1.ScalingRecord{Time: metav1.NewTime(time.Now().Truncate(time.Second)), FromReplicas: 1, ToReplicas: 2,
			Message: "replicas 1 -> 2 (recorded; the /scale write did not happen)"}
		withRecord := cur.DeepCopy()
		withRecord.Status.LastScaling = recorded
		Expect(k8s.Status().Patch(ctx, withRecord, client.MergeFrom(cur))).To(Succeed())
		time.Sleep(500 * time.Millisecond)
		d := &appsv1.Deployment{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "interrupted"}, d)).To(Succeed())
		undone := d.DeepCopy()
		undone.Spec.Replicas = ptr.To[int32](1)
		Expect(k8s.Patch(ctx, undone, client.MergeFrom(d))).To(Succeed())
		Eventually(deploymentReplicas(ctx, ns, "interrupted"), framework.LongTimeout).Should(Equal(int32(2)), "the recorded scaling is finished")
		Consistently(deploymentReplicas(ctx, ns, "interrupted"), 2*time.Second).Should(Equal(int32(2)), "and neither reversed nor repeated")
		after := getHvpa(ctx, ns, "interrupted").Status.LastScaling
		Expect(after.Time.Equal(&recorded.Time)).To(BeTrue(), "finishing a recorded scaling records no new one: %+v", after)
	})

	It("leaves requestToLimitRatio out of the intent while its feature gate is off", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		Expect(k8s.Create(ctx, wrappers.MakeDeployment(ns, "ratio").
			Container(wrappers.MakeContainer("app").Requests("500m", "1Gi").Limits("1", "2Gi").Obj()).Obj())).To(Succeed())
		h := epHvpa(ns, "ratio")
		h.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true, Template: hvpav1alpha1.VpaTemplate{ResourcePolicy: &vpav1.PodResourcePolicy{
			ContainerPolicies: []vpav1.ContainerResourcePolicy{{ContainerName: "app", RequestToLimitRatio: &vpav1.RequestToLimitRatio{
				CPU: &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioFactor, Factor: ptr.To(4.0)}}}}}}}
		loads.set(ns, "ratio", 300)
		Expect(k8s.Create(ctx, h)).To(Succeed())
		// the suite runs with every gate at its default (RequestToLimitRatio off): the pods' own 1:2 ratio
		Eventually(func() float64 {
			d := getHvpa(ctx, ns, "ratio").Status.Desired
			if d == nil || len(d.Containers) == 0 || d.Containers[0].Limits.Cpu().IsZero() {
				return 0
			}
			return d.Containers[0].Limits.Cpu().AsApproximateFloat64() / d.Containers[0].Requests.Cpu().AsApproximateFloat64()
		}, framework.LongTimeout).Should(BeNumerically("~", 2, 0.01))
	})

	It("lets the older of two Hvpas on one workload act, and the other names it", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "twice", 1, "500m")
		loads.set(ns, "twice", 3000)
		a, b := epHvpa(ns, "twice"), epHvpa(ns, "again")
		b.Spec.TargetRef.Name = "twice"
		a.Spec.VPA, b.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}, &hvpav1alpha1.VpaSpec{Deploy: true}
		Expect(k8s.Create(ctx, a)).To(Succeed())
		time.Sleep(1100 * time.Millisecond) // creation timestamps have whole seconds: "twice" is the older
		Expect(k8s.Create(ctx, b)).To(Succeed())
		Eventually(unsupportedMessage(ctx, ns, "again"), framework.LongTimeout).Should(And(HavePrefix("MultipleAutoscalers"), ContainSubstring("the oldest, Hvpa twice, serves it")))
		Eventually(deploymentReplicas(ctx, ns, "twice"), framework.LongTimeout).Should(BeNumerically(">", 1), "the older Hvpa acts on the 3 CPU load")
		c := meta.FindStatusCondition(getHvpa(ctx, ns, "twice").Status.Conditions, hvpav1alpha1.ConditionConfigUnsupported)
		Expect(c == nil || c.Status != metav1.ConditionTrue).To(BeTrue(), "the older Hvpa was marked: %v", c)
	})

	It("waits for the maintenance window, and says so", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "nightly", 1, "500m")
		h := withHPA(epHvpa(ns, "nightly"), 50)
		// a one-hour window that starts two hours from now (UTC): closed now
		begin := time.Now().UTC().Add(2 * time.Hour)
		end := begin.Add(time.Hour)
		h.Spec.MaintenanceTimeWindow = &hvpav1alpha1.MaintenanceTimeWindow{Begin: begin.Format("150405") + "+0000", End: end.Format("150405") + "+0000"}
		h.Spec.ScaleUp = &hvpav1alpha1.ScaleParams{UpdatePolicy: &hvpav1alpha1.UpdatePolicy{UpdateMode: ptr.To(hvpav1alpha1.UpdateModeMaintenanceWindow)}}
		loads.set(ns, "nightly", 450)
		Expect(k8s.Create(ctx, h)).To(Succeed())
		Eventually(func() []hvpav1alpha1.BlockedPart {
			if b := getHvpa(ctx, ns, "nightly").Status.LastBlockedScaling; b != nil {
				return b.Parts
			}
			return nil
		}, framework.LongTimeout).Should(ContainElement(And(HaveField("Part", "replicas"), HaveField("Reason", hvpav1alpha1.BlockReasonMaintenanceWindow))))
		Eventually(func() []string { return eventReasons(ctx, ns, "nightly") }, framework.LongTimeout).Should(ContainElement(ContainSubstring("(MaintenanceWindow): replicas 1 -> 2: scaleUp waits for the maintenance window")))
		Consistently(deploymentReplicas(ctx, ns, "nightly"), 2*time.Second).Should(Equal(int32(1)))
	})

	It("never writes a status decided from a stale read: no event, no scaling, and other writers' conditions stay", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "stale", 1, "500m")
		Expect(k8s.Create(ctx, epHvpa(ns, "stale"))).To(Succeed())
		stale := getHvpa(ctx, ns, "stale") // as a lagging cache would still hold it: no status yet
		Eventually(func() *hvpav1alpha1.DesiredState { return getHvpa(ctx, ns, "stale").Status.Desired }, framework.LongTimeout).ShouldNot(BeNil())
		By("another writer adds a condition of its own (retrying, as it too meets the running controller's writes)")
		auditCondition(ctx, ns, "stale")
		audited := func() bool {
			return meta.FindStatusCondition(getHvpa(ctx, ns, "stale").Status.Conditions, "ExternalAudit") != nil
		}

		By("a controller that reads the stale copy: its status write is refused, and it tells and scales nothing")
		staleReader := staleClient(stale)
		events := record.NewFakeRecorder(10)
		lagging := hvpactrl.NewReconciler(staleReader, nil, events, clock.RealClock{}, time.Minute, nil)
		res, err := lagging.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(stale)})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(BeNumerically(">", 0), "decided again soon from a fresh read")
		Expect(events.Events).To(BeEmpty(), "an event told of a status that was never written")
		Expect(audited()).To(BeTrue(), "a status decided from a stale read overwrote another writer's condition")

		By("from a fresh read its writes keep the other writer's condition")
		fresh := hvpactrl.NewReconciler(k8s, nil, events, clock.RealClock{}, time.Minute, nil)
		_, err = fresh.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(stale)})
		Expect(err).NotTo(HaveOccurred())
		Expect(audited()).To(BeTrue())
	})

	It("never finishes a scaling recorded in a stale read: the stored status has replaced it", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "pending", 1, "500m")
		Expect(k8s.Create(ctx, epHvpa(ns, "pending"))).To(Succeed())
		Eventually(func() *hvpav1alpha1.DesiredState { return getHvpa(ctx, ns, "pending").Status.Desired }, framework.LongTimeout).ShouldNot(BeNil())
		// as a lagging cache still holds it: a scaling 1 -> 2 recorded a moment ago that the deployment (at 1)
		// does not show, the one a reconcile finishes (its status unchanged, so nothing else would be written)
		stale := getHvpa(ctx, ns, "pending")
		stale.Status.LastScaling = &hvpav1alpha1.ScalingRecord{Time: metav1.Now(), FromReplicas: 1, ToReplicas: 2}
		By("the stored status moves on (here another writer's condition; in the field, the scaling that replaced it)")
		auditCondition(ctx, ns, "pending")

		staleReader := staleClient(stale)
		lagging := hvpactrl.NewReconciler(staleReader, nil, record.NewFakeRecorder(10), clock.RealClock{}, time.Minute, nil)
		res, err := lagging.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(stale)})
		Expect(err).NotTo(HaveOccurred())
		Expect(res.RequeueAfter).To(BeNumerically(">", 0), "decided again soon from a fresh read")
		Consistently(deploymentReplicas(ctx, ns, "pending"), 2*time.Second).Should(Equal(int32(1)), "a scaling from a stale status was applied")
	})

	It("continues from status after a restart without scaling again", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "restart", 1, "500m")
		h := epHvpa(ns, "restart")
		h.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}
		loads.set(ns, "restart", 1300)
		Expect(k8s.Create(ctx, h)).To(Succeed())
		Eventually(func() *hvpav1alpha1.ScalingRecord { return getHvpa(ctx, ns, "restart").Status.LastScaling }, framework.LongTimeout).ShouldNot(BeNil())
		Eventually(deploymentReplicas(ctx, ns, "restart"), framework.LongTimeout).Should(Equal(int32(2)))
		loads.set(ns, "restart", -1) // no new samples: the recommendation stays as it is
		time.Sleep(2 * time.Second)
		before := getHvpa(ctx, ns, "restart").Status.DeepCopy()
		// a second controller (a restarted process) decides from the same status: nothing new to apply
		r := hvpactrl.NewReconciler(k8s, nil, nil, clock.RealClock{}, time.Minute, nil)
		_, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "restart"}})
		Expect(err).NotTo(HaveOccurred())
		after := getHvpa(ctx, ns, "restart").Status
		Expect(after.LastScaling.Time).To(Equal(before.LastScaling.Time), "no scaling recorded by the restarted controller")
		Expect(after.Desired.Replicas).To(Equal(before.Desired.Replicas))
		Expect(after.WorkloadRecommendation).To(Equal(before.WorkloadRecommendation), "the restarted controller decides from the workload total in status")
	})
})

var _ = Describe("an Hvpa next to other HPAs", func() {
	ctx := context.Background()

	It("never takes over a user's HPA of the same name", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "mine", 1, "500m")
		framework.CreateDeployment(k8s, ns, "other", 1, "500m")
		user := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mine"}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "other"}, MaxReplicas: 3}}
		Expect(k8s.Create(ctx, user)).To(Succeed())
		Expect(k8s.Create(ctx, withHPA(epHvpa(ns, "mine"), 80))).To(Succeed())
		Eventually(unsupportedMessage(ctx, ns, "mine"), framework.LongTimeout).Should(And(HavePrefix("HPANameTaken"), ContainSubstring("is not this Hvpa's")))
		got := &autoscalingv2.HorizontalPodAutoscaler{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(user), got)).To(Succeed())
		Expect(got.Spec.ScaleTargetRef.Name).To(Equal("other"), "the user's HPA is left as it is")
		Expect(metav1.GetControllerOf(got)).To(BeNil())
	})

	It("reports an HPA template the API server refuses, and deploys the HPA once it is corrected", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "bad", 1, "500m")
		h := withHPA(epHvpa(ns, "bad"), 80)
		// the HPA API allows windows of at most an hour; the Hvpa's own validation does not read scale-up's
		h.Spec.HPA.Template.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](7200)}}
		Expect(k8s.Create(ctx, h)).To(Succeed())
		ready := conditionMessage(ctx, ns, "bad", hvpav1alpha1.ConditionReady, metav1.ConditionFalse)
		Eventually(ready, framework.LongTimeout).Should(And(HavePrefix("HPATemplateRefused: spec.hpa.template"), ContainSubstring("stabilizationWindowSeconds")))
		Expect(unsupportedMessage(ctx, ns, "bad")()).To(BeEmpty(), "still supported: the webhook and the updater keep applying the last intent")
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bad"}, &autoscalingv2.HorizontalPodAutoscaler{})).To(Satisfy(apierrors.IsNotFound))

		Eventually(func() error {
			h := getHvpa(ctx, ns, "bad")
			h.Spec.HPA.Template.Behavior.ScaleUp.StabilizationWindowSeconds = ptr.To[int32](60)
			return k8s.Update(ctx, h)
		}, framework.LongTimeout).Should(Succeed())
		Eventually(ready, framework.LongTimeout).ShouldNot(HavePrefix("HPATemplateRefused"))
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "bad"}, &autoscalingv2.HorizontalPodAutoscaler{})
		}, framework.LongTimeout).Should(Succeed())
	})

	It("does not act on a workload that an HPA scales directly", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "direct", 1, "500m")
		Expect(k8s.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "direct-hpa"}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "direct"}, MaxReplicas: 3}})).To(Succeed())
		Expect(k8s.Create(ctx, epHvpa(ns, "direct"))).To(Succeed())
		Eventually(unsupportedMessage(ctx, ns, "direct"), framework.LongTimeout).Should(And(HavePrefix("MultipleAutoscalers"), ContainSubstring("HorizontalPodAutoscaler direct-hpa")))
	})
})

// auditCondition adds a condition of another writer's to an Hvpa's status (retrying, as that writer too meets
// the running controller's writes): the stored status moves past any copy read before.
func auditCondition(ctx context.Context, ns, name string) {
	GinkgoHelper()
	Eventually(func() error {
		h := getHvpa(ctx, ns, name)
		meta.SetStatusCondition(&h.Status.Conditions, metav1.Condition{Type: "ExternalAudit", Status: metav1.ConditionTrue, Reason: "Audited", Message: "by a tool"})
		return k8s.Status().Update(ctx, h)
	}, framework.LongTimeout).Should(Succeed())
}

// staleClient reads the API server directly, except the Hvpa stale, which it returns as that copy: a cache
// that lags behind the stored object.
func staleClient(stale *hvpav1alpha1.Hvpa) client.Client {
	GinkgoHelper()
	direct, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return interceptor.NewClient(direct, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if o, ok := obj.(*hvpav1alpha1.Hvpa); ok && key == client.ObjectKeyFromObject(stale) {
			stale.DeepCopyInto(o)
			return nil
		}
		return c.Get(ctx, key, obj, opts...)
	}})
}

// unsupportedMessage is "reason: message" of an Hvpa's ConfigUnsupported condition while it is true, else "".
func unsupportedMessage(ctx context.Context, ns, name string) func() string {
	return conditionMessage(ctx, ns, name, hvpav1alpha1.ConditionConfigUnsupported, metav1.ConditionTrue)
}

// conditionMessage reads an Hvpa's condition as "Reason: message" while it has the status, "" otherwise.
func conditionMessage(ctx context.Context, ns, name, condType string, status metav1.ConditionStatus) func() string {
	return func() string {
		c := meta.FindStatusCondition(getHvpa(ctx, ns, name).Status.Conditions, condType)
		if c == nil || c.Status != status {
			return ""
		}
		return c.Reason + ": " + c.Message
	}
}
