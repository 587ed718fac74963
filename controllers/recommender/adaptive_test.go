package recommender_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/recommender/adaptive"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
)

var _ = Describe("the adaptive model (recommender.hvpa.dev/model)", func() {
	ctx := context.Background()

	It("serves the VPAs that ask for it (or all, with --default-model), says which candidates won, and refuses a model it does not know", func() {
		ns := framework.NewNamespace(k8s, "adaptive")
		for _, name := range []string{"plain", "chosen", "typo"} {
			deployment(ctx, ns, name, "app")
			for _, p := range runPods(ctx, ns, name, 2, nil, "app") {
				played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 300, MemoryBytes: 200 * mi})
			}
			v := vpaFor(ns, name, name, vpav1.UpdateModeOff)
			switch name {
			case "chosen":
				v.Annotations = map[string]string{adaptive.AnnotationModel: "adaptive"}
			case "typo":
				v.Annotations = map[string]string{adaptive.AnnotationModel: "adaptiv"}
			}
			Expect(k8s.Create(ctx, v)).To(Succeed())
		}
		r := newRecommender(func(o *recommenderctrl.Options) { o.Namespaces = []string{ns} }, nil)
		runs(r, 3)

		// within its first day the adaptive model publishes upstream's target: the same numbers as the plain VPA's
		plain, chosen := containerRec(getVPA(ctx, ns, "plain"), "app"), containerRec(getVPA(ctx, ns, "chosen"), "app")
		Expect(plain).NotTo(BeNil())
		Expect(chosen).NotTo(BeNil())
		Expect(chosen.Target).To(Equal(plain.Target))
		provided := condition(getVPA(ctx, ns, "chosen"), vpav1.RecommendationProvided)
		Expect(provided.Message).To(ContainSubstring("adaptive model, winners app: cpu upstream, memory upstream"))
		Expect(condition(getVPA(ctx, ns, "plain"), vpav1.RecommendationProvided).Message).NotTo(ContainSubstring("adaptive"))
		Expect(testutil.ToFloat64(r.Metrics.AdaptiveWinner.WithLabelValues(ns, "chosen", "app", "cpu", "upstream"))).To(Equal(1.0))

		typo := condition(getVPA(ctx, ns, "typo"), vpav1.ConfigUnsupported)
		Expect(typo).NotTo(BeNil())
		Expect(typo.Status).To(Equal(corev1.ConditionTrue))
		Expect(typo.Reason).To(Equal(vpav1.ReasonInvalidOverride))
		Expect(typo.Message).To(And(ContainSubstring(adaptive.AnnotationModel), ContainSubstring(`"adaptiv"`)))

		By("--default-model adaptive: every VPA without the annotation")
		all := newRecommender(func(o *recommenderctrl.Options) { o.Namespaces = []string{ns}; o.DefaultModel = adaptive.ModelAdaptive }, nil)
		runs(all, 1)
		Expect(condition(getVPA(ctx, ns, "plain"), vpav1.RecommendationProvided).Message).To(ContainSubstring("adaptive model"))
	})
})
