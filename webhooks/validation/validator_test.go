package validation

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/internal/features"
)

// causes returns the status details of an Invalid StatusError, failing the test for any other error.
func causes(t *testing.T, err error) *metav1.StatusDetails {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("want *apierrors.StatusError, got %T: %v", err, err)
	}
	if !apierrors.IsInvalid(err) {
		t.Fatalf("want reason Invalid, got %q", se.ErrStatus.Reason)
	}
	return se.ErrStatus.Details
}

func TestVPAValidator(t *testing.T) {
	ctx := context.Background()
	v := VPAValidator(features.New())

	bad := baseVPA()
	withRatio(factor(0.5), nil)(bad)
	bad.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "a"}, {Name: "b"}}
	warnings, err := v.ValidateCreate(ctx, bad)
	if warnings != nil {
		t.Errorf("warnings: %q", warnings)
	}
	d := causes(t, err)
	want := &metav1.StatusDetails{Name: "web", Group: "autoscaling.k8s.io", Kind: "VerticalPodAutoscaler", Causes: []metav1.StatusCause{
		{Type: metav1.CauseTypeForbidden, Field: p0Ratio, Message: "Forbidden: " + gateMessage("requestToLimitRatio", features.RequestToLimitRatio) + "; otherwise remove requestToLimitRatio"},
		{Type: metav1.CauseTypeFieldValueInvalid, Field: p0Ratio + ".cpu.factor", Message: "Invalid value: 0.5: must be at least 1 (a limit below the request is not allowed); use 1 for limit = request"},
		{Type: metav1.CauseTypeTooMany, Field: "spec.recommenders", Message: "Too many: 2: The current version of VPA object shouldn't specify more than one recommenders; keep only the recommender that should serve this object"},
	}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}

	if warnings, err := v.ValidateCreate(ctx, baseVPA()); err != nil || warnings != nil {
		t.Errorf("valid VPA: %q, %v", warnings, err)
	}

	// an update that keeps a gated field: allowed, with a warning
	old := baseVPA()
	withRatio(factor(2), nil)(old)
	cur := old.DeepCopy()
	cur.Spec.UpdatePolicy.UpdateMode = ptr.To(vpav1.UpdateModeInitial)
	warnings, err = v.ValidateUpdate(ctx, old, cur)
	if err != nil {
		t.Errorf("update: %v", err)
	}
	checkWarnings(t, warnings, []string{"requestToLimitRatio is ignored while feature gate RequestToLimitRatio is off"})

	if warnings, err := v.ValidateDelete(ctx, bad); err != nil || warnings != nil {
		t.Errorf("delete: %q, %v", warnings, err)
	}
}

func TestHvpaValidator(t *testing.T) {
	ctx := context.Background()
	v := HvpaValidator(nil) // nil gates: all off

	bad := baseHvpa()
	target("apps/v1", "DaemonSet")(bad)
	bad.Spec.ScaleDown = nil
	warnings, err := v.ValidateCreate(ctx, bad)
	checkWarnings(t, warnings, []string{"spec.scaleDown has updateMode Auto and no stabilizationDuration"})
	d := causes(t, err)
	if d.Kind != "Hvpa" || d.Group != "autoscaling.k8s.io" || d.Name != "kube-apiserver" {
		t.Errorf("details: %+v", d)
	}
	if len(d.Causes) != 1 || d.Causes[0].Field != "spec.targetRef.kind" || d.Causes[0].Type != metav1.CauseTypeFieldValueInvalid {
		t.Errorf("causes: %+v", d.Causes)
	}

	good := baseHvpa()
	if warnings, err := v.ValidateCreate(ctx, good); err != nil || warnings != nil {
		t.Errorf("valid Hvpa: %q, %v", warnings, err)
	}
	cur := good.DeepCopy()
	cur.Spec.ScalingIntervals[4].MaxReplicas = ptr.To[int32](6)
	if _, err := v.ValidateUpdate(ctx, good, cur); err == nil {
		t.Error("update above hpa.template.maxReplicas: want an error")
	} else if d := causes(t, err); len(d.Causes) != 1 || d.Causes[0].Field != "spec.scalingIntervals[4].maxReplicas" {
		t.Errorf("causes: %+v", d.Causes)
	}
	if warnings, err := v.ValidateUpdate(ctx, bad, bad.DeepCopy()); err != nil || warnings != nil {
		t.Errorf("unchanged spec: %q, %v", warnings, err)
	}
	if warnings, err := v.ValidateDelete(ctx, bad); err != nil || warnings != nil {
		t.Errorf("delete: %q, %v", warnings, err)
	}
}
