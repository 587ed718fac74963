package hvpa

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// TestInPlaceCondition: InPlaceUnavailable appears on an Hvpa that resizes in place (the default
// InPlaceOrRecreate, or InPlace) while the cluster serves no pods/resize, and goes when it does.
func TestInPlaceCondition(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	withMode := func(m *vpav1.UpdateMode) *hvpav1alpha1.Hvpa {
		h := &hvpav1alpha1.Hvpa{}
		if m != nil {
			h.Spec.VPA = &hvpav1alpha1.VpaSpec{Template: hvpav1alpha1.VpaTemplate{UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: m}}}
		}
		return h
	}
	r := &Reconciler{NoInPlaceResize: true, KubernetesVersion: "v1.32.4"}
	for _, tc := range []struct {
		name string
		mode *vpav1.UpdateMode
		want string // "": no condition
	}{
		{"the default InPlaceOrRecreate", nil, "pods are evicted instead"},
		{"InPlace", ptr.To(vpav1.UpdateModeInPlace), "pods are left as they are"},
		{"Recreate", ptr.To(vpav1.UpdateModeRecreate), ""},
	} {
		h := withMode(tc.mode)
		r.inPlaceCondition(h, now)
		c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionInPlaceUnavailable)
		switch {
		case tc.want == "" && c != nil:
			t.Errorf("%s: condition %+v, want none", tc.name, c)
		case tc.want != "" && (c == nil || c.Status != "True" || c.Reason != hvpav1alpha1.ReasonNoResizeSubresource):
			t.Errorf("%s: condition %+v, want True %s", tc.name, c, hvpav1alpha1.ReasonNoResizeSubresource)
		case tc.want != "" && !strings.Contains(c.Message, "Kubernetes v1.32.4) serves no pods/resize: "+tc.want):
			t.Errorf("%s: message %q", tc.name, c.Message)
		}
	}
	h := withMode(nil)
	r.inPlaceCondition(h, now)
	(&Reconciler{}).inPlaceCondition(h, now)
	if meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionInPlaceUnavailable) != nil {
		t.Error("the condition stays on a cluster that serves pods/resize")
	}
}
