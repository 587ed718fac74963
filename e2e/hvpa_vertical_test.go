package e2e_test

import (
	"context"
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// The other Hvpa of the suite scales with its HPA only; this one has its vertical part (the recommender serves
// it), so its decisions use the recommender's cpu and memory totals, and its young history holds a replica
// scale-down. The metrics of both are what the overview dashboard shows (dashboards_test.go checks its
// queries against the run).
var _ = Describe("an Hvpa with its vertical part", func() {
	It("is served by the recommender, decides from cpu and memory totals, and holds a scale-down from a young recommendation", func() {
		ctx := context.Background()
		ns := framework.NewNamespace(k8s, "vertical")
		deployment(ns, "young", 3, "accept", rl("500m", "1Gi"), nil)
		// 150m and 300Mi per pod: far below the 3-replica interval's lower boundary, the totals ask for 1 replica
		loads.Set(ns, "young", 150, 300<<20)
		h := wrappers.MakeHvpa(ns, "young").Interval(1, "500m", "2Gi").Interval(2, "1", "4Gi").Interval(3, "2", "8Gi").
			Interval(4, "4", "16Gi").Overlap(30, 30).VPA(true).Obj()
		Expect(k8s.Create(ctx, h)).To(Succeed())

		By("the replica scale-down waits for a day of history (LowConfidence), in status")
		Eventually(func() []hvpav1alpha1.BlockedPart {
			var got hvpav1alpha1.Hvpa
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(h), &got)).To(Succeed())
			if got.Status.LastBlockedScaling == nil {
				return nil
			}
			return got.Status.LastBlockedScaling.Parts
		}, framework.LongTimeout, framework.Interval).Should(ContainElement(And(HaveField("Part", "replicas"),
			HaveField("Direction", hvpav1alpha1.DirectionDown), HaveField("Reason", hvpav1alpha1.BlockReasonLowConfidence))))
		Expect(livePods(ns, "young")).To(HaveLen(3))

		By("Prometheus has the series of the Hvpa's recommendation and usage, its memory totals and the blocked scaling")
		// the namespace is hvpa's own label, of the Hvpa (the ServiceMonitor's honorLabels)
		for _, q := range []string{
			`hvpa_recommender_target_cpu_cores{namespace=%q, kind="Hvpa", object="young", container="app"}`,
			`hvpa_recommender_target_memory_bytes{namespace=%q, kind="Hvpa", object="young", container="app"}`,
			`hvpa_recommender_usage_cpu_cores{namespace=%q, kind="Hvpa", object="young", container="app"}`,
			`hvpa_recommender_usage_memory_bytes{namespace=%q, kind="Hvpa", object="young", container="app"}`,
			`hvpa_controller_workload_memory_bytes{namespace=%q, hvpa="young", container="app"}`,
			`hvpa_controller_per_pod_request_memory_bytes{namespace=%q, hvpa="young", container="app"} > 0`,
			`hvpa_controller_blocked_scalings_total{namespace=%q, hvpa="young", reason="LowConfidence"} > 0`,
		} {
			Expect(prom.WaitForSeries(ctx, fmt.Sprintf(q, ns), framework.LongTimeout)).To(Succeed())
		}
	})
})
