package webhooks_test

import (
	"context"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// warnings collects the admission warnings the API server passes on to a client.
type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

var _ = Describe("Object validation through the API server", func() {
	ctx := context.Background()

	It("refuses a VPA with minAllowed above maxAllowed, naming the field and the fix", func() {
		// the API server's own rule (CEL in the CRD) answers before the webhook is asked
		err := k8s.Create(ctx, badVPA("refused"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring("spec.resourcePolicy.containerPolicies[0].minAllowed"),
			ContainSubstring("minAllowed must not be above maxAllowed for any resource; lower minAllowed or raise maxAllowed")))
	})

	It("keeps requestToLimitRatio on an existing VPA through unrelated updates after the gate is turned off", func() {
		ns := framework.NewNamespace(k8s, "ratchet")
		Expect(gates.SetFromMap(map[string]bool{"RequestToLimitRatio": true})).To(Succeed())
		v := vpaFor(ns, "web", "web", vpav1.UpdateModeInitial, vpav1.ContainerResourcePolicy{ContainerName: "app",
			RequestToLimitRatio: &vpav1.RequestToLimitRatio{CPU: &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioFactor, Factor: ptr.To(2.0)}}})
		Expect(k8s.Create(ctx, v)).To(Succeed())
		Expect(gates.SetFromMap(map[string]bool{"RequestToLimitRatio": false})).To(Succeed())

		v.Spec.UpdatePolicy.UpdateMode = ptr.To(vpav1.UpdateModeRecreate) // unrelated to the ratio
		Expect(k8s.Update(ctx, v)).To(Succeed())
		v.Spec.ResourcePolicy.ContainerPolicies[0].RequestToLimitRatio.CPU.Factor = ptr.To(3.0) // the ratio itself
		err := k8s.Update(ctx, v)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring("spec.resourcePolicy.containerPolicies[0].requestToLimitRatio"),
			ContainSubstring("feature gate RequestToLimitRatio")))
	})

	It("refuses an Hvpa whose intervals go past the HPA's maxReplicas and warns about an HPA scale-down window", func() {
		ns := framework.NewNamespace(k8s, "hvpa-validation")
		seen := &warnings{}
		wcfg := rest.CopyConfig(cfg)
		wcfg.WarningHandler = seen
		wc, err := client.New(wcfg, client.Options{Scheme: testenv.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		h := wrappers.MakeHvpa(ns, "web").HPA(true, 0, 3).ScaleDownWindow(300).Interval(2, "1", "").Interval(5, "2", "").Obj()
		err = wc.Create(ctx, h)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring("spec.scalingIntervals[1].maxReplicas"), ContainSubstring("is above hpa.template.maxReplicas 3")))

		h.Spec.ScalingIntervals[1].MaxReplicas = ptr.To[int32](3)
		Expect(wc.Create(ctx, h)).To(Succeed())
		Expect(seen.all()).To(ContainElement(ContainSubstring("spec.hpa.template.behavior.scaleDown.stabilizationWindowSeconds is 300")))
	})
})
