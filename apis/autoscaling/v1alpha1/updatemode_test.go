package v1alpha1_test

import (
	"testing"

	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// TestPodUpdateMode: an Hvpa's per-pod resources are applied in place or by recreation unless its VPA
// template says otherwise.
func TestPodUpdateMode(t *testing.T) {
	for name, tc := range map[string]struct {
		vpa  *hvpav1alpha1.VpaSpec
		want vpav1.UpdateMode
	}{
		"no vpa section":     {nil, vpav1.UpdateModeInPlaceOrRecreate},
		"no update policy":   {&hvpav1alpha1.VpaSpec{}, vpav1.UpdateModeInPlaceOrRecreate},
		"no mode in policy":  {withMode(nil), vpav1.UpdateModeInPlaceOrRecreate},
		"the template's one": {withMode(ptr.To(vpav1.UpdateModeInitial)), vpav1.UpdateModeInitial},
	} {
		h := &hvpav1alpha1.Hvpa{Spec: hvpav1alpha1.HvpaSpec{VPA: tc.vpa}}
		if got := h.PodUpdateMode(); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
}

func withMode(m *vpav1.UpdateMode) *hvpav1alpha1.VpaSpec {
	s := &hvpav1alpha1.VpaSpec{}
	s.Template.UpdatePolicy = &vpav1.PodUpdatePolicy{UpdateMode: m}
	return s
}
