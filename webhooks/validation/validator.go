package validation

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// VPAValidator admits VerticalPodAutoscalers through VPA. Gates are the feature gates of the process
// (nil: all off).
type VPAValidator struct{ Gates featuregate.FeatureGate }

var _ admission.Validator[*vpav1.VerticalPodAutoscaler] = VPAValidator{}

// ValidateCreate validates a new VerticalPodAutoscaler.
func (v VPAValidator) ValidateCreate(_ context.Context, obj *vpav1.VerticalPodAutoscaler) (admission.Warnings, error) {
	if obj.DecodeError != "" {
		return nil, undecodable(vpav1.GroupVersion.WithKind("VerticalPodAutoscaler").GroupKind(), obj.Name, obj.DecodeError)
	}
	errs, warnings := validateVPA(obj, nil, v.Gates)
	return warnings, invalid(vpav1.GroupVersion.WithKind("VerticalPodAutoscaler").GroupKind(), obj.Name, errs)
}

// ValidateUpdate validates a changed VerticalPodAutoscaler against its old version.
func (v VPAValidator) ValidateUpdate(_ context.Context, oldObj, newObj *vpav1.VerticalPodAutoscaler) (admission.Warnings, error) {
	if newObj.DecodeError != "" {
		return nil, undecodable(vpav1.GroupVersion.WithKind("VerticalPodAutoscaler").GroupKind(), newObj.Name, newObj.DecodeError)
	}
	if oldObj != nil && oldObj.DecodeError != "" {
		oldObj = nil // the fix of an object stored before the rules: validated as new
	}
	errs, warnings := validateVPA(newObj, oldObj, v.Gates)
	return warnings, invalid(vpav1.GroupVersion.WithKind("VerticalPodAutoscaler").GroupKind(), newObj.Name, errs)
}

// ValidateDelete always allows the deletion.
func (VPAValidator) ValidateDelete(context.Context, *vpav1.VerticalPodAutoscaler) (admission.Warnings, error) {
	return nil, nil
}

// HvpaValidator admits Hvpas through Hvpa. Gates are the feature gates of the process (nil: all off).
type HvpaValidator struct{ Gates featuregate.FeatureGate }

var _ admission.Validator[*hvpav1alpha1.Hvpa] = HvpaValidator{}

// ValidateCreate validates a new Hvpa.
func (v HvpaValidator) ValidateCreate(_ context.Context, obj *hvpav1alpha1.Hvpa) (admission.Warnings, error) {
	if obj.DecodeError != "" {
		return nil, undecodable(hvpav1alpha1.GroupVersion.WithKind("Hvpa").GroupKind(), obj.Name, obj.DecodeError)
	}
	errs, warnings := Hvpa(obj, nil, v.Gates)
	return warnings, invalid(hvpav1alpha1.GroupVersion.WithKind("Hvpa").GroupKind(), obj.Name, errs)
}

// ValidateUpdate validates a changed Hvpa against its old version.
func (v HvpaValidator) ValidateUpdate(_ context.Context, oldObj, newObj *hvpav1alpha1.Hvpa) (admission.Warnings, error) {
	if newObj.DecodeError != "" {
		return nil, undecodable(hvpav1alpha1.GroupVersion.WithKind("Hvpa").GroupKind(), newObj.Name, newObj.DecodeError)
	}
	if oldObj != nil && oldObj.DecodeError != "" {
		oldObj = nil // the fix of an object stored before the rules: validated as new
	}
	errs, warnings := Hvpa(newObj, oldObj, v.Gates)
	return warnings, invalid(hvpav1alpha1.GroupVersion.WithKind("Hvpa").GroupKind(), newObj.Name, errs)
}

// ValidateDelete always allows the deletion.
func (HvpaValidator) ValidateDelete(context.Context, *hvpav1alpha1.Hvpa) (admission.Warnings, error) {
	return nil, nil
}

// undecodable refuses an object that does not decode (decodeerr: its message names the field).
func undecodable(gk schema.GroupKind, name, msg string) error {
	return apierrors.NewInvalid(gk, name, field.ErrorList{field.Invalid(field.NewPath("spec"), "", msg)})
}

// invalid returns an Invalid StatusError carrying errs as causes (each with its field path), or nil.
func invalid(gk schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gk, name, errs)
}
