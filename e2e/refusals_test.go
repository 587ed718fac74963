package e2e_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// What the running binary refuses, or is refused, and says so: in the API answer or an Event, and in its
// metrics as Prometheus scraped them (the updater and webhook dashboards show these).
var _ = Describe("refusals", func() {
	ctx := context.Background()

	It("does not evict through a PodDisruptionBudget that allows no disruption, and says so", func() {
		ns := framework.NewNamespace(k8s, "guarded")
		deployment(ns, "guarded", 2, "accept", rl("100m", "100Mi"), rl("200m", "200Mi"))
		loads.SetPerPod(ns, "guarded", 600, 150<<20)
		Expect(k8s.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "guarded"},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(0)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}}})).To(Succeed())
		Eventually(func() int { return len(livePods(ns, "guarded")) }, framework.LongTimeout, framework.Interval).Should(Equal(2))
		before := uidSet(livePods(ns, "guarded"))
		vpaFor(ns, "guarded", vpav1.UpdateModeRecreate)

		By("the Eviction API refuses, the updater reports it")
		Eventually(func() bool {
			var evs corev1.EventList
			Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
			for _, e := range evs.Items {
				if e.Reason == updater.EventEvictionBlocked && e.InvolvedObject.Kind == "Pod" {
					return true
				}
			}
			return false
		}, framework.LongTimeout, framework.Interval).Should(BeTrue())
		Expect(prom.WaitForSeries(ctx, `hvpa_updater_evictions_total{outcome="blocked_by_pdb"} > 0`, framework.LongTimeout)).To(Succeed())
		Consistently(func() map[types.UID]bool { return uidSet(livePods(ns, "guarded")) }, 3*time.Second, framework.Interval).
			Should(Equal(before), "no pod evicted")
	})

	It("refuses, in its validating webhook, a VPA the schema accepts but the rules do not: two recommenders", func() {
		ns := framework.NewNamespace(k8s, "twice")
		v := wrappers.MakeVPA(ns, "twice").Mode(vpav1.UpdateModeOff).Obj()
		v.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "default"}, {Name: "other"}}
		err := k8s.Create(ctx, v)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring("spec.recommenders"), ContainSubstring("shouldn't specify more than one recommenders")))
		Expect(prom.WaitForSeries(ctx, `hvpa_webhook_admissions_total{resource="verticalpodautoscalers", outcome="rejected"} > 0`, framework.LongTimeout)).To(Succeed())
	})
})
