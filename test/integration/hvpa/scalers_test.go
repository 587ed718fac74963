package hvpa_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	hvpactrl "github.com/hvpa-dev/hvpa/controllers/hvpa"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// userHPA is an HPA a user creates on the Hvpa's scale subresource (not spec.hpa.deploy): CPU utilization.
func userHPA(ns, name, hvpa string, utilization, maxReplicas int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
		ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: hvpav1alpha1.GroupVersion.String(), Kind: "Hvpa", Name: hvpa},
		MinReplicas:    ptr.To[int32](1), MaxReplicas: maxReplicas,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(utilization)}}}}}}
}

func resourceQ(s string) resource.Quantity { return resource.MustParse(s) }

func hpaSource(ctx context.Context, ns, name string) func() string {
	return func() string {
		if s := getHvpa(ctx, ns, name).Status.HPA; s != nil {
			return s.Source
		}
		return ""
	}
}

var _ = Describe("an Hvpa without spec.hpa.deploy", func() {
	ctx := context.Background()

	It("is driven by a user's HPA on its scale subresource, then by kubectl scale as a replica floor", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "web", 1, "500m")
		loads.set(ns, "web", 400) // 80% of 500m on one pod: an HPA at 50% wants 2
		// hpa: {deploy: false} without a template, the embedded recommender off: the HPA is the only input
		h := epHvpa(ns, "web")
		h.Spec.HPA = &hvpav1alpha1.HpaSpec{}
		Expect(k8s.Create(ctx, h)).To(Succeed())
		Eventually(func() *int32 { return getHvpa(ctx, ns, "web").Spec.Replicas }, framework.LongTimeout).Should(HaveValue(Equal(int32(1))))
		Expect(getHvpa(ctx, ns, "web").Annotations).To(HaveKeyWithValue(hvpactrl.AnnotationOwnReplicas, "1"), "the controller's own initial replicas: no input")

		By("a user's HPA, which the Hvpa did not create, targets the Hvpa: its desired replicas and Utilization metric make the total")
		Expect(k8s.Create(ctx, userHPA(ns, "users-hpa", "web", 50, 5))).To(Succeed())
		Eventually(func() *int32 { return getHvpa(ctx, ns, "web").Spec.Replicas }, framework.LongTimeout).Should(HaveValue(Equal(int32(2))),
			"the kube-controller-manager's HPA writes 2 through the Hvpa's scale subresource")
		Eventually(deploymentReplicas(ctx, ns, "web"), framework.LongTimeout).Should(Equal(int32(2)))
		Eventually(hpaSource(ctx, ns, "web"), framework.LongTimeout).Should(
			Equal("HorizontalPodAutoscaler users-hpa (targets this Hvpa; its Utilization metrics make totals)"))
		Expect(getHvpa(ctx, ns, "web").Status.LastScaling.Message).To(ContainSubstring("replicas 1 -> 2"))

		By("the user deletes the HPA: its last replicas are no floor, the controller records them as its own")
		Expect(k8s.Delete(ctx, userHPA(ns, "users-hpa", "web", 50, 5))).To(Succeed())
		Eventually(func() map[string]string { return getHvpa(ctx, ns, "web").Annotations }, framework.LongTimeout).Should(
			HaveKeyWithValue(hvpactrl.AnnotationOwnReplicas, "2"))
		Eventually(hpaSource(ctx, ns, "web"), framework.LongTimeout).Should(BeEmpty())

		By("kubectl scale hvpa/web --replicas=4: no HPA targets the Hvpa, so 4 is a replica floor")
		out, err := testenv.Kubectl(cluster.Env, "--namespace", ns, "scale", "hvpa/web", "--replicas=4")
		Expect(err).NotTo(HaveOccurred(), string(out))
		Eventually(deploymentReplicas(ctx, ns, "web"), framework.LongTimeout).Should(Equal(int32(4)))
		Eventually(hpaSource(ctx, ns, "web"), framework.LongTimeout).Should(ContainSubstring("a replica floor"))
		h = getHvpa(ctx, ns, "web")
		Expect(h.Status.Desired.Replicas).To(Equal(int32(4)))
		Expect(h.Status.LastScaling.Message).To(ContainSubstring("replicas 2 -> 4"))
		Expect(h.Status.Desired.Containers).To(HaveLen(1))
		Expect(h.Status.Desired.Containers[0].Requests.Cpu().String()).To(Equal("500m"), "a floor is pods of any size: the per-pod values stay")
	})

	It("follows an HPA on another metric as a replica floor, as the deployed HPA's rules say", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.CreateDeployment(k8s, ns, "floor", 1, "500m")
		loads.set(ns, "floor", 100)
		h := wrappers.MakeHvpa(ns, "floor").Interval(1, "500m", "2Gi").Interval(3, "1", "4Gi").Obj()
		Expect(k8s.Create(ctx, h)).To(Succeed())
		// an AverageValue target: 3 replicas mean "3 pods of any size"
		hpa := userHPA(ns, "floor-hpa", "floor", 50, 3)
		hpa.Spec.MinReplicas = ptr.To[int32](3)
		hpa.Spec.Metrics[0].Resource.Target = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resourceQ("10m"))}
		Expect(k8s.Create(ctx, hpa)).To(Succeed())
		Eventually(deploymentReplicas(ctx, ns, "floor"), framework.LongTimeout).Should(Equal(int32(3)))
		Eventually(hpaSource(ctx, ns, "floor"), framework.LongTimeout).Should(ContainSubstring("its replicas are a replica floor"))
		d := getHvpa(ctx, ns, "floor").Status.Desired
		Expect(d.Containers[0].Requests.Cpu().String()).To(Equal("500m"), fmt.Sprintf("desired %+v", d))
	})
})

var _ = Describe("an Hvpa on a cluster of small nodes", func() {
	ctx := context.Background()

	It("scales out instead of sizing pods beyond the largest schedulable node, and says so", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		framework.OnlyNodes(k8s, map[string][2]string{"hvpa-node-small": {"4", "16Gi"}, "hvpa-node-large": {"8", "32Gi"}})
		framework.CreateDaemonSet(k8s, ns, "agent", "200m", "256Mi")
		framework.CreateDeployment(k8s, ns, "big", 1, "4")
		loads.set(ns, "big", 12000) // one pod using 12 CPU: its per-pod interval allows 16, no node holds more than 7800m
		h := wrappers.MakeHvpa(ns, "big").Interval(1, "16", "64Gi").Interval(4, "16", "64Gi").VPA(true).Obj()
		Expect(k8s.Create(ctx, h)).To(Succeed())

		Eventually(deploymentReplicas(ctx, ns, "big"), framework.LongTimeout).Should(Equal(int32(4)), "more replicas carry the load")
		h = getHvpa(ctx, ns, "big")
		Expect(h.Status.Desired.Containers).To(HaveLen(1))
		Expect(h.Status.Desired.Containers[0].Requests.Cpu().MilliValue()).To(BeNumerically("<=", 7800), "no pod beyond node-large's 8 CPU less the DaemonSet's 200m")
		c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionCappedToNode)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Message).To(ContainSubstring("cpu per pod at most 7800m (largest schedulable node hvpa-node-large: allocatable 8, DaemonSets 200m)"))
		Expect(h.Status.EffectiveScalingIntervals[0].Up.Cpu().MilliValue()).To(Equal(int64(7800)), "the first interval's 16 CPU per pod is capped")
		Eventually(func() []string { return eventReasons(ctx, ns, "big") }, framework.LongTimeout).Should(ContainElement(HavePrefix(hvpav1alpha1.EventCappedToNode)))
	})

	It("sizes pods to the tainted dedicated pool they tolerate, less only the DaemonSets that run there", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		tolerate := framework.DedicatedPool(k8s, ns, "hvpa-node") // hvpa-node-dedicated: 16 CPU, no DaemonSet; hvpa-node-general: 4 CPU less 200m
		d := wrappers.MakeDeployment(ns, "batch").Replicas(1).Container(wrappers.MakeContainer("app").Requests("4", "1Gi").Obj()).
			Toleration(tolerate).Obj()
		Expect(k8s.Create(ctx, d)).To(Succeed())
		loads.set(ns, "batch", 10000) // one pod using 10 CPU: the dedicated node holds it, the general one 3800m
		h := wrappers.MakeHvpa(ns, "batch").Interval(1, "16", "64Gi").Interval(4, "16", "64Gi").VPA(true).Obj()
		Expect(k8s.Create(ctx, h)).To(Succeed())

		Eventually(func() int64 {
			d := getHvpa(ctx, ns, "batch").Status.Desired
			if d == nil || len(d.Containers) == 0 {
				return 0
			}
			return d.Containers[0].Requests.Cpu().MilliValue()
		}, framework.LongTimeout).Should(BeNumerically(">", 10000), "one pod for the load, sized on the 16 CPU node its pods tolerate")
		h = getHvpa(ctx, ns, "batch")
		Expect(h.Status.EffectiveScalingIntervals[0].Up.Cpu().MilliValue()).To(Equal(int64(16000)), "nothing to cap: the dedicated node holds 16 CPU and no DaemonSet runs there")
		Expect(deploymentReplicas(ctx, ns, "batch")()).To(Equal(int32(1)))
		if c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionCappedToNode); c != nil {
			Expect(c.Status).To(Equal(metav1.ConditionFalse), c.Message)
		}
	})
})
