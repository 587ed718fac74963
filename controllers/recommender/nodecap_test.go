package recommender_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
)

var _ = Describe("node-aware caps", func() {
	ctx := context.Background()

	It("caps a target that would need 12 CPU to the room of the largest schedulable node (8 allocatable, less its DaemonSets), and says so", func() {
		ns := framework.NewNamespace(k8s, "nodecap")
		framework.OnlyNodes(k8s, map[string][2]string{"node-small": {"4", "16Gi"}, "node-large": {"8", "32Gi"}})
		framework.CreateDaemonSet(k8s, ns, "agent", "200m", "256Mi")
		deployment(ctx, ns, "big", "app", "proxy")
		pods := runPods(ctx, ns, "big", 2, corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("1Gi")}, "app")
		for _, p := range pods {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 10500, MemoryBytes: 2 << 30}) // x1.15: a 12-CPU target
		}
		Expect(k8s.Create(ctx, vpaFor(ns, "big", "big", vpav1.UpdateModeOff))).To(Succeed())
		r := newRecommender(nil, nil)
		runs(r, 3)

		v := getVPA(ctx, ns, "big")
		rec := containerRec(v, "app")
		Expect(rec).NotTo(BeNil(), "status %+v", v.Status)
		Expect(rec.UncappedTarget.Cpu().MilliValue()).To(BeNumerically(">=", 12000), "the usage needs 12 CPU")
		Expect(rec.Target.Cpu().MilliValue()).To(Equal(int64(7800)), "8 allocatable on node-large less 200m of the DaemonSet")
		Expect(rec.UpperBound.Cpu().MilliValue()).To(BeNumerically("<=", 7800))
		Expect(rec.Target.Memory().Value()).To(BeNumerically("<", 8<<30), "memory fits: not capped")
		c := condition(v, vpav1.CappedToNode)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(corev1.ConditionTrue))
		Expect(c.Reason).To(Equal(vpav1.ReasonNodeAllocatable))
		Expect(c.Message).To(ContainSubstring("app cpu"), "names the container")
		Expect(c.Message).To(ContainSubstring("largest schedulable node node-large: allocatable 8, DaemonSets 200m"))
		Eventually(func() []string {
			var out []string
			for _, e := range eventsFor(ctx, ns, "big") {
				out = append(out, e.Reason)
			}
			return out
		}).Should(ContainElement(vpav1.ReasonNodeAllocatable))

		By("upstream's --container-recommendation-max-allowed-cpu=2: below the node's room, it caps where the VPA sets no maxAllowed")
		capped := newRecommender(func(o *recommenderctrl.Options) { o.MaxAllowedCPU = 2 }, nil)
		runs(capped, 2)
		rec = containerRec(getVPA(ctx, ns, "big"), "app")
		Expect(rec.Target.Cpu().MilliValue()).To(Equal(int64(2000)))
		Expect(rec.UpperBound.Cpu().MilliValue()).To(Equal(int64(2000)))
		Expect(condition(getVPA(ctx, ns, "big"), vpav1.CappedToNode).Status).To(Equal(corev1.ConditionFalse), "2 CPU fits the node: the condition says it no longer applies")
	})

	It("takes the room of the tainted dedicated pool the VPA's pods tolerate, less only the DaemonSets that run there", func() {
		ns := framework.NewNamespace(k8s, "nodecap")
		tolerate := framework.DedicatedPool(k8s, ns, "node") // node-dedicated: 16 CPU, no DaemonSet; node-general: 4 CPU less 200m
		deployment(ctx, ns, "batch", "app")
		for i := range 2 {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("batch-%d", i), Labels: map[string]string{"app": "batch", "pod-template-hash": "1"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played", Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("1Gi")}}}},
					Tolerations: []corev1.Toleration{tolerate}}}
			Expect(kubelet.Run(ctx, p)).To(Succeed())
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 10500, MemoryBytes: 2 << 30}) // a 12-CPU target
		}
		Expect(k8s.Create(ctx, vpaFor(ns, "batch", "batch", vpav1.UpdateModeOff))).To(Succeed())
		runs(newRecommender(nil, nil), 3)

		v := getVPA(ctx, ns, "batch")
		rec := containerRec(v, "app")
		Expect(rec).NotTo(BeNil(), "status %+v", v.Status)
		Expect(rec.Target.Cpu().MilliValue()).To(BeNumerically(">=", 12000), "node-dedicated holds 16 CPU and runs no DaemonSet; node-general's 3800m is not where the pods go")
		if c := condition(v, vpav1.CappedToNode); c != nil {
			Expect(c.Status).To(Equal(corev1.ConditionFalse), c.Message)
		}
	})
})
