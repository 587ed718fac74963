package autoscaling_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/framework"
)

func toUnstructured(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

func hvpaUnstructured(h *hvpav1alpha1.Hvpa) *unstructured.Unstructured {
	return asUnstructured(h, hvpav1alpha1.GroupVersion.WithKind("Hvpa"))
}

func vpaUnstructured(v *vpav1.VerticalPodAutoscaler) *unstructured.Unstructured {
	return asUnstructured(v, vpav1.GroupVersion.WithKind("VerticalPodAutoscaler"))
}

func asUnstructured(obj any, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	Expect(err).NotTo(HaveOccurred())
	u := toUnstructured(m)
	u.SetGroupVersionKind(gvk)
	return u
}

// at sets a value deep inside an unstructured object, creating maps on the way; an int in path indexes a
// list that exists.
func at(obj map[string]any, value any, path ...any) {
	cur := any(obj)
	for i, p := range path {
		last := i == len(path)-1
		switch k := p.(type) {
		case string:
			m := cur.(map[string]any)
			if last {
				m[k] = value
				return
			}
			if m[k] == nil {
				m[k] = map[string]any{}
			}
			cur = m[k]
		case int:
			cur = cur.([]any)[k]
		}
	}
}

// The API server itself refuses what the quantity pattern of the schema lets through and no controller can
// serve: a string that does not parse as a quantity (one such object would make the whole list of its kind
// undecodable for every client), quantities beyond what a resource can hold, minAllowed above maxAllowed,
// linear intervals to millions of replicas, and any maxReplicas above 100000. These hold without the admission
// webhook.
var _ = Describe("quantities and sizes beyond what controllers can serve", func() {
	ctx := context.Background()
	type set func(obj map[string]any)
	policy := func(path ...any) []any {
		return append([]any{"spec", "resourcePolicy", "containerPolicies", 0}, path...)
	}
	DescribeTable("VerticalPodAutoscaler",
		func(m set, field, msg string) {
			u := vpaUnstructured(validVPA(framework.NewNamespace(k8s, "crd")))
			m(u.Object)
			expectInvalid(k8s.Create(ctx, u), field, msg)
		},
		Entry("minAllowed cpu 1e1.5", set(func(o map[string]any) { at(o, "1e1.5", policy("minAllowed", "cpu")...) }),
			"spec.resourcePolicy.containerPolicies[0].minAllowed", "must be a Kubernetes quantity"),
		Entry("maxAllowed memory 9e308", set(func(o map[string]any) { at(o, "9e308", policy("maxAllowed", "memory")...) }),
			"spec.resourcePolicy.containerPolicies[0].maxAllowed", "memory must be at most 100T"),
		Entry("minAllowed cpu 1e19", set(func(o map[string]any) { at(o, "1e19", policy("minAllowed", "cpu")...) }),
			"spec.resourcePolicy.containerPolicies[0].minAllowed", "cpu must be at most 100G"),
		Entry("minAllowed memory 8Ei", set(func(o map[string]any) { at(o, "8Ei", policy("minAllowed", "memory")...) }),
			"spec.resourcePolicy.containerPolicies[0].minAllowed", "memory must be at most 100T"),
		Entry("minAllowed above maxAllowed", set(func(o map[string]any) {
			at(o, "4", policy("minAllowed", "cpu")...)
			at(o, "2", policy("maxAllowed", "cpu")...)
		}), "spec.resourcePolicy.containerPolicies[0].minAllowed", "minAllowed must not be above maxAllowed"),
	)
	DescribeTable("Hvpa",
		func(m set, field, msg string) {
			u := hvpaUnstructured(validHvpa(framework.NewNamespace(k8s, "crd")))
			m(u.Object)
			expectInvalid(k8s.Create(ctx, u), field, msg)
		},
		Entry("maxResources cpu 1e1.5", set(func(o map[string]any) { at(o, "1e1.5", "spec", "scalingIntervals", 0, "maxResources", "cpu") }),
			"spec.scalingIntervals[0].maxResources.cpu", "cpu must be a Kubernetes quantity"),
		Entry("maxResources memory 1e19", set(func(o map[string]any) { at(o, "1e19", "spec", "scalingIntervals", 4, "maxResources", "memory") }),
			"spec.scalingIntervals[4].maxResources.memory", "memory must be at most 100T"),
		Entry("overlap value 1e1.5", set(func(o map[string]any) { at(o, "1e1.5", "spec", "scalingIntervalsOverlap", "cpu", "value") }),
			"spec.scalingIntervalsOverlap.cpu.value", "value must be a Kubernetes quantity"),
		Entry("linear to 4,000,000 replicas", set(func(o map[string]any) {
			at(o, int64(4000000), "spec", "scalingIntervals", 3, "maxReplicas")
			at(o, "linear", "spec", "scalingIntervals", 3, "effectiveIntervalExtrapolation")
		}), "spec.scalingIntervals", "every maxReplicas must be at most 1000"),
		// issue 31: one interval to the largest int32 made the decision loop forever (the Hvpa controller and the
		// webhook ran out of memory); the API server alone refuses it, in an interval and in the HPA template
		Entry("one interval to 2147483647 replicas", set(func(o map[string]any) {
			at(o, []any{map[string]any{"maxReplicas": int64(2147483647), "maxResources": map[string]any{"cpu": "8", "memory": "32Gi"}}}, "spec", "scalingIntervals")
		}), "spec.scalingIntervals[0].maxReplicas", "should be less than or equal to 100000"),
		Entry("the last interval to 100001 replicas", set(func(o map[string]any) { at(o, int64(100001), "spec", "scalingIntervals", 4, "maxReplicas") }),
			"spec.scalingIntervals[4].maxReplicas", "should be less than or equal to 100000"),
		Entry("hpa.template.maxReplicas 2147483647", set(func(o map[string]any) { at(o, int64(2147483647), "spec", "hpa", "template", "maxReplicas") }),
			"spec.hpa.template.maxReplicas", "should be less than or equal to 100000"),
	)
	It("accepts maxReplicas 100000, in an interval and in the HPA template", func() {
		u := hvpaUnstructured(validHvpa(framework.NewNamespace(k8s, "crd")))
		at(u.Object, int64(100000), "spec", "scalingIntervals", 4, "maxReplicas")
		at(u.Object, int64(100000), "spec", "hpa", "template", "maxReplicas")
		Expect(k8s.Create(ctx, u)).To(Succeed())
	})
})
