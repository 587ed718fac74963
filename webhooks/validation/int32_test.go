package validation

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/features"
)

// TestHvpaAdmissionAtInt32Bounds: a forged AdmissionReview (its object never went through the CRD's schema)
// with any int32 maxReplicas, in an interval or in the HPA template, with or without an extrapolation, is
// answered with a refusal that names the field (issue 31: one interval to 2147483647 replicas made the webhook
// loop and run out of memory). The test ending is the termination check; no time is measured.
func TestHvpaAdmissionAtInt32Bounds(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := hvpav1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	hook := admission.WithValidator[*hvpav1alpha1.Hvpa](scheme, HvpaValidator(features.New()))
	lin := ptr.To(hvpav1alpha1.ExtrapolationLinear)
	cases := map[string]struct {
		mutate func(h *hvpav1alpha1.Hvpa)
		field  string // "": allowed
		detail string
	}{
		"one interval to 2147483647 (issue 31)": {mutate: func(h *hvpav1alpha1.Hvpa) {
			h.Spec.HPA = nil
			h.Spec.ScalingIntervals = []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](math.MaxInt32), MaxResources: res("8", "32Gi")}}
		}, field: "spec.scalingIntervals[0].maxReplicas", detail: "must be at most 100000"},
		"hpa.template.maxReplicas 2147483647, the last interval's default": {mutate: func(h *hvpav1alpha1.Hvpa) {
			h.Spec.HPA.Template.MaxReplicas = math.MaxInt32
		}, field: "spec.hpa.template.maxReplicas", detail: "must be at most 100000"},
		"linear to 2147483647": {mutate: func(h *hvpav1alpha1.Hvpa) {
			h.Spec.HPA.Template.MaxReplicas = math.MaxInt32
			h.Spec.ScalingIntervals[4].MaxReplicas, h.Spec.ScalingIntervals[4].EffectiveIntervalExtrapolation = ptr.To[int32](math.MaxInt32), lin
		}, field: "spec.scalingIntervals[4].maxReplicas", detail: "must be at most 100000"},
		"linear to 100000, within the replica bound": {mutate: func(h *hvpav1alpha1.Hvpa) {
			h.Spec.HPA.Template.MaxReplicas = 100000
			h.Spec.ScalingIntervals[4].EffectiveIntervalExtrapolation = lin
		}, field: "spec.scalingIntervals[4].effectiveIntervalExtrapolation", detail: "more than 1000 up to 100000 replicas"},
		"-2147483648": {mutate: func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervals[0].MaxReplicas = ptr.To[int32](math.MinInt32)
		}, field: "spec.scalingIntervals[0].maxReplicas", detail: "must be at least 1"},
		"100000 without an extrapolation": {mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.HPA.Template.MaxReplicas = 100000 }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := baseHvpa()
			tc.mutate(h)
			raw, err := json.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			resp := hook.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				UID: "forged", Operation: admissionv1.Create, Name: h.Name, Namespace: h.Namespace, Object: runtime.RawExtension{Raw: raw}}})
			if tc.field == "" {
				if !resp.Allowed {
					t.Fatalf("refused: %+v", resp.Result)
				}
				return
			}
			if resp.Allowed || resp.Result == nil || resp.Result.Details == nil {
				t.Fatalf("allowed: %+v", resp)
			}
			for _, c := range resp.Result.Details.Causes {
				if c.Field == tc.field && strings.Contains(c.Message, tc.detail) {
					if len(resp.Result.Message) > 4000 {
						t.Errorf("a %d-byte answer", len(resp.Result.Message))
					}
					return
				}
			}
			t.Fatalf("no cause on %s with %q: %+v", tc.field, tc.detail, resp.Result.Details.Causes)
		})
	}
}
