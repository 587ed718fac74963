package autoscaling_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

func q(s string) resource.Quantity { return resource.MustParse(s) }

func res(cpu, memory string) *hvpav1alpha1.ScaledResources {
	return &hvpav1alpha1.ScaledResources{CPU: ptr.To(q(cpu)), Memory: ptr.To(q(memory))}
}

// validHvpa is the EP-0001 kube-apiserver Hvpa in short form; every rejection case changes one thing.
func validHvpa(ns string) *hvpav1alpha1.Hvpa {
	return &hvpav1alpha1.Hvpa{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "hvpa-"},
		Spec: hvpav1alpha1.HvpaSpec{
			TargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			HPA: &hvpav1alpha1.HpaSpec{Deploy: true, Template: hvpav1alpha1.HpaTemplate{
				MinReplicas: ptr.To[int32](1), MaxReplicas: 5,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}}}},
			}},
			VPA: &hvpav1alpha1.VpaSpec{Deploy: true},
			ScalingIntervals: []hvpav1alpha1.ScalingInterval{
				{MaxReplicas: ptr.To[int32](1), MaxResources: res("500m", "2Gi")},
				{MaxReplicas: ptr.To[int32](2), MaxResources: res("1", "4Gi")},
				{MaxReplicas: ptr.To[int32](3), MaxResources: res("2", "8Gi")},
				{MaxReplicas: ptr.To[int32](4), MaxResources: res("4", "16Gi")},
				{MaxResources: res("8", "32Gi")},
			},
			ScalingIntervalsOverlap: &hvpav1alpha1.ResourceChangeParams{
				CPU: &hvpav1alpha1.ChangeParams{Value: ptr.To(q("250m")), Percentage: ptr.To[int32](30)},
			},
			ScaleDown: &hvpav1alpha1.ScaleParams{
				UpdatePolicy:          &hvpav1alpha1.UpdatePolicy{UpdateMode: ptr.To(hvpav1alpha1.UpdateModeMaintenanceWindow)},
				StabilizationDuration: &metav1.Duration{Duration: 15 * 60e9},
			},
			MaintenanceTimeWindow: &hvpav1alpha1.MaintenanceTimeWindow{Begin: "220000+0000", End: "060000+0000"},
		},
	}
}

func validVPA(ns string) *vpav1.VerticalPodAutoscaler {
	return &vpav1.VerticalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "vpa-"},
		Spec: vpav1.VerticalPodAutoscalerSpec{
			TargetRef:    &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: ptr.To(vpav1.UpdateModeInPlaceOrRecreate)},
			ResourcePolicy: &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{{
				ContainerName:       "app",
				ControlledResources: &[]corev1.ResourceName{"cpu", "memory"},
				ControlledValues:    ptr.To(vpav1.ContainerControlledValuesRequestsAndLimits),
				RequestToLimitRatio: &vpav1.RequestToLimitRatio{
					CPU:    &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioFactor, Factor: ptr.To(2.0)},
					Memory: &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioQuantity, Quantity: ptr.To(q("200Mi"))},
				},
			}}},
		},
	}
}

// expectInvalid asserts err is an Invalid error with a cause on exactly field whose message contains msg.
func expectInvalid(err error, field, msg string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred(), "the API server accepted an object that must be rejected at %s", field)
	Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want an Invalid error, got %v", err)
	var status apierrors.APIStatus
	Expect(errors.As(err, &status)).To(BeTrue())
	details := status.Status().Details
	Expect(details).NotTo(BeNil(), "no details in %v", err)
	var found []string
	for _, c := range details.Causes {
		found = append(found, c.Field+": "+c.Message)
		if c.Field == field && strings.Contains(c.Message, msg) {
			return
		}
	}
	Fail("no cause at " + field + " containing " + `"` + msg + `"` + "; causes:\n  " + strings.Join(found, "\n  "))
}

var _ = Describe("CRDs", func() {
	ctx := context.Background()

	It("are installed, established and carry the api-approved annotation of a protected group", func() {
		for _, name := range []string{"hvpas.autoscaling.k8s.io", "hvpacheckpoints.autoscaling.k8s.io", "verticalpodautoscalers.autoscaling.k8s.io", "verticalpodautoscalercheckpoints.autoscaling.k8s.io"} {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
			Expect(crd.Annotations).To(HaveKey("api-approved.kubernetes.io"), name)
			established := false
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					established = true
				}
			}
			Expect(established).To(BeTrue(), "%s is not Established", name)
		}
	})
})

var _ = Describe("Hvpa", func() {
	ctx := context.Background()

	It("round-trips a valid object", func() {
		ns := framework.NewNamespace(k8s, "crd")
		in := validHvpa(ns)
		Expect(k8s.Create(ctx, in)).To(Succeed())
		out := &hvpav1alpha1.Hvpa{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(in), out)).To(Succeed())
		want := validHvpa(ns).Spec
		// The schema defaults updateMode to Auto where an updatePolicy is given without one; none is here.
		Expect(equality.Semantic.DeepEqual(out.Spec, want)).To(BeTrue(), "spec changed on the way through the API server:\n got %+v\nwant %+v", out.Spec, want)
	})

	It("defaults an empty updatePolicy to updateMode Auto", func() {
		ns := framework.NewNamespace(k8s, "crd")
		in := validHvpa(ns)
		in.Spec.ScaleUp = &hvpav1alpha1.ScaleParams{UpdatePolicy: &hvpav1alpha1.UpdatePolicy{}}
		Expect(k8s.Create(ctx, in)).To(Succeed())
		Expect(in.Spec.ScaleUp.UpdatePolicy.UpdateMode).To(HaveValue(Equal(hvpav1alpha1.UpdateModeAuto)))
	})

	It("serves the scale subresource: HPA's writes move spec.replicas, reads show status.replicas and status.selector", func() {
		ns := framework.NewNamespace(k8s, "crd")
		h := validHvpa(ns)
		// The Hvpa controller initializes spec.replicas from the target when it is unset: the API server
		// cannot serve /scale without it.
		h.Spec.Replicas = ptr.To[int32](3)
		Expect(k8s.Create(ctx, h)).To(Succeed())
		h.Status.Replicas = 3
		h.Status.Selector = "app=web"
		Expect(k8s.Status().Update(ctx, h)).To(Succeed())

		scale := &autoscalingv1.Scale{}
		Expect(k8s.SubResource("scale").Get(ctx, h, scale)).To(Succeed())
		Expect(scale.Spec.Replicas).To(Equal(int32(3)))
		Expect(scale.Status.Replicas).To(Equal(int32(3)))
		Expect(scale.Status.Selector).To(Equal("app=web"))

		scale.Spec.Replicas = 4
		Expect(k8s.SubResource("scale").Update(ctx, h, client.WithSubResourceBody(scale))).To(Succeed())
		out := &hvpav1alpha1.Hvpa{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(h), out)).To(Succeed())
		Expect(out.Spec.Replicas).To(HaveValue(Equal(int32(4))))
		Expect(out.Status.Replicas).To(Equal(int32(3)), "a scale write must not touch status")
	})

	It("refuses a change of targetRef, naming the field and what to do instead, and accepts other changes", func() {
		ns := framework.NewNamespace(k8s, "crd")
		h := validHvpa(ns)
		Expect(k8s.Create(ctx, h)).To(Succeed())
		h.Spec.Replicas = ptr.To[int32](2)
		Expect(k8s.Update(ctx, h)).To(Succeed(), "a change of another field")
		moved := h.DeepCopy()
		moved.Spec.TargetRef.Name = "other"
		err := k8s.Update(ctx, moved)
		Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(And(ContainSubstring("spec.targetRef"), ContainSubstring("create an Hvpa for the other workload")))
	})

	It("accepts hpa: {deploy: false} without a template (no deployed HPA: spec.replicas as anyone writes it is the input)", func() {
		ns := framework.NewNamespace(k8s, "crd")
		h := validHvpa(ns)
		h.Spec.HPA = &hvpav1alpha1.HpaSpec{}
		h.Spec.ScalingIntervals[4].MaxReplicas = ptr.To[int32](5)
		Expect(k8s.Create(ctx, h)).To(Succeed())
		out := &hvpav1alpha1.Hvpa{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(h), out)).To(Succeed())
		Expect(out.Spec.HPA).NotTo(BeNil())
		Expect(out.Spec.HPA.Template).To(Equal(hvpav1alpha1.HpaTemplate{}))
	})

	It("is documented for kubectl explain", func() {
		out, err := testenv.Kubectl(env, "explain", "hvpa.spec.scalingIntervals")
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("kubectl explain hvpa.spec.scalingIntervals:\n%s\n", out)
		text := strings.Join(strings.Fields(string(out)), " ")
		Expect(text).To(ContainSubstring("FIELD: scalingIntervals <[]Object>"))
		Expect(text).To(ContainSubstring("in increasing order of maxReplicas"))
		for _, field := range []string{"maxReplicas <integer>", "maxResources <Object>", "effectiveIntervalExtrapolation <string>"} {
			Expect(text).To(ContainSubstring(field))
		}
	})

	It("refuses resources other than cpu and memory under strict field validation (kubectl's default)", func() {
		ns := framework.NewNamespace(k8s, "crd")
		for path, set := range map[string]func(spec map[string]any){
			"spec.scalingIntervals[0].maxResources.nvidia.com/gpu": func(spec map[string]any) {
				spec["scalingIntervals"].([]any)[0].(map[string]any)["maxResources"].(map[string]any)["nvidia.com/gpu"] = "1"
			},
			"spec.scalingIntervalsOverlap.ephemeral-storage": func(spec map[string]any) {
				spec["scalingIntervalsOverlap"].(map[string]any)["ephemeral-storage"] = map[string]any{"percentage": int64(10)}
			},
		} {
			u := hvpaUnstructured(validHvpa(ns))
			set(u.Object["spec"].(map[string]any))
			err := k8s.Create(ctx, u, client.FieldValidation("Strict"))
			Expect(err).To(HaveOccurred(), path)
			Expect(err.Error()).To(ContainSubstring(`unknown field "` + path + `"`))
		}
	})

	type mutate func(h *hvpav1alpha1.Hvpa)
	DescribeTable("rejects invalid objects with a message naming the field",
		func(m mutate, field, msg string) {
			h := validHvpa(framework.NewNamespace(k8s, "crd"))
			m(h)
			expectInvalid(k8s.Create(ctx, h), field, msg)
		},
		Entry("decreasing maxReplicas", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervals[1].MaxReplicas, h.Spec.ScalingIntervals[2].MaxReplicas = ptr.To[int32](3), ptr.To[int32](2)
		}, "spec.scalingIntervals", "maxReplicas must strictly increase"),
		Entry("duplicate maxReplicas", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervals[2].MaxReplicas = ptr.To[int32](2)
		}, "spec.scalingIntervals", "maxReplicas must strictly increase"),
		Entry("maxReplicas missing before the last interval", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervals[1].MaxReplicas = nil
		}, "spec.scalingIntervals", "only the last interval may omit maxReplicas"),
		Entry("decreasing maxResources", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervals[3].MaxResources.Memory = ptr.To(q("6Gi"))
		}, "spec.scalingIntervals", "maxResources must not decrease"),
		Entry("no interval list", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervals = []hvpav1alpha1.ScalingInterval{}
		}, "spec.scalingIntervals", "should have at least 1 items"),
		Entry("last maxReplicas missing without an HPA template", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.HPA = nil
		}, "spec.scalingIntervals", "set maxReplicas on the last interval"),
		Entry("unknown extrapolation", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervals[0].EffectiveIntervalExtrapolation = ptr.To(hvpav1alpha1.Extrapolation("quadratic"))
		}, "spec.scalingIntervals[0].effectiveIntervalExtrapolation", `supported values: "linear", "horizontalOnly"`),
		Entry("negative maxResources", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervals[0].MaxResources.CPU = ptr.To(q("-1"))
		}, "spec.scalingIntervals[0].maxResources.cpu", "cpu must not be negative"),
		Entry("overlap percentage above 100", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervalsOverlap.CPU = &hvpav1alpha1.ChangeParams{Percentage: ptr.To[int32](150)}
		}, "spec.scalingIntervalsOverlap.cpu.percentage", "less than or equal to 100"),
		Entry("negative base percentage", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.BaseResourcesPerReplica = &hvpav1alpha1.ResourceChangeParams{Memory: &hvpav1alpha1.ChangeParams{Percentage: ptr.To[int32](-5)}}
		}, "spec.baseResourcesPerReplica.memory.percentage", "greater than or equal to 0"),
		Entry("negative overlap value", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervalsOverlap.CPU = &hvpav1alpha1.ChangeParams{Value: ptr.To(q("-100m"))}
		}, "spec.scalingIntervalsOverlap.cpu.value", "value must not be negative"),
		Entry("empty change params", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScaleDown.MinChange = &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{}}
		}, "spec.scaleDown.minChange.cpu", "set value, percentage, or both"),
		Entry("unknown updateMode", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScaleDown.UpdatePolicy.UpdateMode = ptr.To(hvpav1alpha1.UpdateMode("Sometimes"))
		}, "spec.scaleDown.updatePolicy.updateMode", `supported values: "Auto", "Off", "MaintenanceWindow"`),
		Entry("MaintenanceWindow without a window", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.MaintenanceTimeWindow = nil
		}, "spec.maintenanceTimeWindow", "updateMode MaintenanceWindow needs spec.maintenanceTimeWindow"),
		Entry("maintenance window begin not HHMMSS+ZZZZ", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.MaintenanceTimeWindow.Begin = "22:00"
		}, "spec.maintenanceTimeWindow.begin", "HHMMSS+ZZZZ"),
		Entry("maintenance window end out of range", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.MaintenanceTimeWindow.End = "250000+0000"
		}, "spec.maintenanceTimeWindow.end", "HHMMSS+ZZZZ"),
		Entry("HPA minReplicas above maxReplicas", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.HPA.Template.MinReplicas = ptr.To[int32](6)
		}, "spec.hpa.template.minReplicas", "must not be greater than hpa.template.maxReplicas"),
		Entry("HPA maxReplicas zero", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.HPA.Template.MaxReplicas = 0
		}, "spec.hpa.template.maxReplicas", "greater than or equal to 1"),
		Entry("hpa.deploy without a template", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.HPA.Template = hvpav1alpha1.HpaTemplate{}
			h.Spec.ScalingIntervals[4].MaxReplicas = ptr.To[int32](5)
		}, "spec.hpa.template", "hpa.deploy needs hpa.template"),
		Entry("negative replicas", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.Replicas = ptr.To[int32](-1)
		}, "spec.replicas", "greater than or equal to 0"),
		Entry("requestToLimitRatio Factor below 1 in the VPA template", func(h *hvpav1alpha1.Hvpa) {
			h.Spec.VPA.Template.ResourcePolicy = &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{{ContainerName: "app",
				RequestToLimitRatio: &vpav1.RequestToLimitRatio{CPU: &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioFactor, Factor: ptr.To(0.5)}}}}}
		}, "spec.vpa.template.resourcePolicy.containerPolicies[0].requestToLimitRatio.cpu.factor", "factor must be at least 1"),
	)
})

var _ = Describe("VerticalPodAutoscaler", func() {
	ctx := context.Background()

	It("round-trips a valid object with requestToLimitRatio", func() {
		ns := framework.NewNamespace(k8s, "crd")
		in := validVPA(ns)
		Expect(k8s.Create(ctx, in)).To(Succeed())
		out := &vpav1.VerticalPodAutoscaler{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(in), out)).To(Succeed())
		Expect(equality.Semantic.DeepEqual(out.Spec, validVPA(ns).Spec)).To(BeTrue(), "got %+v", out.Spec)

		out.Status.Recommendation = &vpav1.RecommendedPodResources{ContainerRecommendations: []vpav1.RecommendedContainerResources{{
			ContainerName: "app", Target: corev1.ResourceList{"cpu": q("250m"), "memory": q("256Mi")},
			UncappedTarget: corev1.ResourceList{"cpu": q("250m"), "memory": q("256Mi")},
		}}}
		out.Status.Conditions = []vpav1.VerticalPodAutoscalerCondition{{Type: vpav1.RecommendationProvided, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		Expect(k8s.Status().Update(ctx, out)).To(Succeed())
		again := &vpav1.VerticalPodAutoscaler{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(in), again)).To(Succeed())
		Expect(again.Status.Recommendation.ContainerRecommendations[0].Target.Cpu().String()).To(Equal("250m"))
	})

	// The manifests go to the API server as they are written (unstructured, fieldValidation=Strict): a field
	// the CRD does not know is an error, not silently dropped by a Go struct on the way.
	It("accepts the upstream documentation examples unchanged, with strict field validation", func() {
		ns := framework.NewNamespace(k8s, "crd")
		data, err := os.ReadFile("testdata/upstream-vpa-examples.yaml")
		Expect(err).NotTo(HaveOccurred())
		dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		n := 0
		for {
			obj := map[string]any{}
			if err := dec.Decode(&obj); errors.Is(err, io.EOF) {
				break
			} else {
				Expect(err).NotTo(HaveOccurred())
			}
			u := &unstructured.Unstructured{Object: obj}
			want, _, _ := unstructured.NestedMap(obj, "spec")
			u.SetNamespace(ns)
			Expect(k8s.Create(ctx, u, client.FieldValidation("Strict"))).To(Succeed(), "upstream example %s", u.GetName())
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(u.GroupVersionKind())
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(u), got)).To(Succeed())
			spec, _, _ := unstructured.NestedMap(got.Object, "spec")
			Expect(asJSON(spec)).To(MatchJSON(asJSON(want)), "upstream example %s changed on the way", u.GetName())
			n++
		}
		Expect(n).To(Equal(10))
	})

	It("refuses an unknown field under strict field validation, naming it", func() {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
			"metadata": map[string]any{"name": "typo", "namespace": framework.NewNamespace(k8s, "crd")},
			"spec": map[string]any{"targetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "x"},
				"updatePolicy": map[string]any{"updateMode": "Off", "evictAfterOOMSecond": int64(5)}},
		}}
		err := k8s.Create(ctx, u, client.FieldValidation("Strict"))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring(`unknown field "spec.updatePolicy.evictAfterOOMSecond"`))
	})

	It("keeps upstream's unserved v1beta2 entries", func() {
		for _, name := range []string{"verticalpodautoscalers.autoscaling.k8s.io", "verticalpodautoscalercheckpoints.autoscaling.k8s.io"} {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(k8s.Get(ctx, client.ObjectKey{Name: name}, crd)).To(Succeed())
			var versions []string
			for _, v := range crd.Spec.Versions {
				versions = append(versions, fmt.Sprintf("%s served=%v storage=%v", v.Name, v.Served, v.Storage))
			}
			Expect(versions).To(Equal([]string{"v1 served=true storage=true", "v1beta2 served=false storage=false"}), name)
		}
	})

	type mutate func(v *vpav1.VerticalPodAutoscaler)
	policy := func(v *vpav1.VerticalPodAutoscaler) *vpav1.ContainerResourcePolicy {
		return &v.Spec.ResourcePolicy.ContainerPolicies[0]
	}
	DescribeTable("rejects invalid objects with a message naming the field",
		func(m mutate, field, msg string) {
			v := validVPA(framework.NewNamespace(k8s, "crd"))
			m(v)
			expectInvalid(k8s.Create(ctx, v), field, msg)
		},
		Entry("no targetRef", func(v *vpav1.VerticalPodAutoscaler) { v.Spec.TargetRef = nil }, "spec.targetRef", "Required value"),
		Entry("unknown updateMode", func(v *vpav1.VerticalPodAutoscaler) {
			v.Spec.UpdatePolicy.UpdateMode = ptr.To(vpav1.UpdateMode("Sometimes"))
		}, "spec.updatePolicy.updateMode", `supported values: "Off", "Initial", "Recreate", "Auto", "InPlaceOrRecreate", "InPlace"`),
		Entry("minReplicas zero", func(v *vpav1.VerticalPodAutoscaler) {
			v.Spec.UpdatePolicy.MinReplicas = ptr.To[int32](0)
		}, "spec.updatePolicy.minReplicas", "greater than or equal to 1"),
		Entry("unknown eviction change requirement", func(v *vpav1.VerticalPodAutoscaler) {
			v.Spec.UpdatePolicy.EvictionRequirements = []*vpav1.EvictionRequirement{{Resources: []corev1.ResourceName{"cpu"}, ChangeRequirement: "TargetDifferent"}}
		}, "spec.updatePolicy.evictionRequirements[0].changeRequirement", "TargetHigherThanRequests"),
		Entry("unknown container mode", func(v *vpav1.VerticalPodAutoscaler) {
			policy(v).Mode = ptr.To(vpav1.ContainerScalingMode("Manual"))
		}, "spec.resourcePolicy.containerPolicies[0].mode", `supported values: "Auto", "Off"`),
		Entry("unknown controlledValues", func(v *vpav1.VerticalPodAutoscaler) {
			policy(v).ControlledValues = ptr.To(vpav1.ContainerControlledValues("LimitsOnly"))
		}, "spec.resourcePolicy.containerPolicies[0].controlledValues", `supported values: "RequestsAndLimits", "RequestsOnly"`),
		Entry("ratio without type", func(v *vpav1.VerticalPodAutoscaler) {
			policy(v).RequestToLimitRatio.CPU.Type = ""
		}, "spec.resourcePolicy.containerPolicies[0].requestToLimitRatio.cpu.type", `supported values: "Factor", "Quantity"`),
		Entry("Factor below 1", func(v *vpav1.VerticalPodAutoscaler) {
			policy(v).RequestToLimitRatio.CPU.Factor = ptr.To(0.9)
		}, "spec.resourcePolicy.containerPolicies[0].requestToLimitRatio.cpu.factor", "factor must be at least 1"),
		Entry("Factor without factor", func(v *vpav1.VerticalPodAutoscaler) {
			policy(v).RequestToLimitRatio.CPU.Factor = nil
		}, "spec.resourcePolicy.containerPolicies[0].requestToLimitRatio.cpu", "type Factor needs factor"),
		Entry("Factor with a quantity", func(v *vpav1.VerticalPodAutoscaler) {
			policy(v).RequestToLimitRatio.CPU.Quantity = ptr.To(q("100m"))
		}, "spec.resourcePolicy.containerPolicies[0].requestToLimitRatio.cpu", "type Factor needs factor"),
		Entry("Quantity without quantity", func(v *vpav1.VerticalPodAutoscaler) {
			policy(v).RequestToLimitRatio.Memory.Quantity = nil
		}, "spec.resourcePolicy.containerPolicies[0].requestToLimitRatio.memory", "type Quantity needs quantity"),
		Entry("Quantity with a factor", func(v *vpav1.VerticalPodAutoscaler) {
			policy(v).RequestToLimitRatio.Memory.Factor = ptr.To(2.0)
		}, "spec.resourcePolicy.containerPolicies[0].requestToLimitRatio.memory", "type Quantity needs quantity"),
		Entry("ratio with controlledValues RequestsOnly", func(v *vpav1.VerticalPodAutoscaler) {
			policy(v).ControlledValues = ptr.To(vpav1.ContainerControlledValuesRequestsOnly)
		}, "spec.resourcePolicy.containerPolicies[0].requestToLimitRatio", "needs controlledValues RequestsAndLimits"),
		Entry("ratio for a resource that is not controlled", func(v *vpav1.VerticalPodAutoscaler) {
			policy(v).ControlledResources = &[]corev1.ResourceName{"cpu"}
		}, "spec.resourcePolicy.containerPolicies[0].requestToLimitRatio", "not in controlledResources"),
	)
})

var _ = Describe("VerticalPodAutoscalerCheckpoint", func() {
	ctx := context.Background()

	It("round-trips bucket weights keyed by bucket index", func() {
		ns := framework.NewNamespace(k8s, "crd")
		now := metav1.Now().Rfc3339Copy()
		in := &vpav1.VerticalPodAutoscalerCheckpoint{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-app"},
			Spec:       vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: "web", ContainerName: "app"},
		}
		Expect(k8s.Create(ctx, in)).To(Succeed())
		in.Status = vpav1.VerticalPodAutoscalerCheckpointStatus{
			LastUpdateTime: now, Version: "v3",
			CPUHistogram:     vpav1.HistogramCheckpoint{ReferenceTimestamp: now, BucketWeights: map[int]uint32{1: 10000, 2: 50, 17: 3}, TotalWeight: 12.5},
			MemoryHistogram:  vpav1.HistogramCheckpoint{ReferenceTimestamp: now, BucketWeights: map[int]uint32{40: 10000}, TotalWeight: 1},
			FirstSampleStart: now, LastSampleStart: now, TotalSamplesCount: 1440,
		}
		Expect(k8s.Update(ctx, in)).To(Succeed()) // no status subresource, as upstream's CRD
		out := &vpav1.VerticalPodAutoscalerCheckpoint{}
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(in), out)).To(Succeed())
		Expect(equality.Semantic.DeepEqual(out.Status, in.Status)).To(BeTrue(), "got %+v", out.Status)
	})
})

var _ = Describe("the example manifests", func() {
	ctx := context.Background()

	It("examples/hvpa-kube-apiserver.yaml is accepted", func() {
		ns := framework.NewNamespace(k8s, "crd")
		data, err := os.ReadFile("../../examples/hvpa-kube-apiserver.yaml")
		Expect(err).NotTo(HaveOccurred())
		dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		var kinds []string
		for {
			u := map[string]any{}
			if err := dec.Decode(&u); errors.Is(err, io.EOF) {
				break
			} else {
				Expect(err).NotTo(HaveOccurred())
			}
			obj := toUnstructured(u)
			obj.SetNamespace(ns)
			Expect(k8s.Create(ctx, obj)).To(Succeed(), "%s %s", obj.GetKind(), obj.GetName())
			kinds = append(kinds, obj.GetKind())
		}
		Expect(kinds).To(Equal([]string{"Deployment", "Hvpa"}))
	})
})

func asJSON(v any) string {
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}
