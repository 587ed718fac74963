package validation

import (
	"context"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// VPAValidator admits VerticalPodAutoscalers through validateVPA. gates are the feature gates of the process
// (nil: all off).
func VPAValidator(gates featuregate.FeatureGate) admission.Validator[*vpav1.VerticalPodAutoscaler] {
	return validator[*vpav1.VerticalPodAutoscaler]{
		kind: vpav1.GroupVersion.WithKind(vpav1.KindVerticalPodAutoscaler).GroupKind(), gates: gates, validate: validateVPA,
		decodeError: func(v *vpav1.VerticalPodAutoscaler) string { return v.DecodeError },
	}
}

// HvpaValidator admits Hvpas through Hvpa. gates are the feature gates of the process (nil: all off).
func HvpaValidator(gates featuregate.FeatureGate) admission.Validator[*hvpav1alpha1.Hvpa] {
	return validator[*hvpav1alpha1.Hvpa]{
		kind: hvpav1alpha1.GroupVersion.WithKind(hvpav1alpha1.KindHvpa).GroupKind(), gates: gates, validate: Hvpa,
		decodeError: func(h *hvpav1alpha1.Hvpa) string { return h.DecodeError },
	}
}

// validator adapts a kind's validation to controller-runtime's typed Validator: an object that does not decode
// is refused with its decode error; an old version that did not decode is ignored (the update that fixes an
// object stored before the rules is validated as new); deletions are always allowed.
type validator[T client.Object] struct {
	kind        schema.GroupKind
	gates       featuregate.FeatureGate
	validate    func(obj, old T, gates featuregate.FeatureGate) (field.ErrorList, []string)
	decodeError func(T) string // what the lenient decoding could not read ("" when it read everything)
}

// ValidateCreate validates a new object.
func (v validator[T]) ValidateCreate(_ context.Context, obj T) (admission.Warnings, error) {
	var none T
	return v.check(obj, none)
}

// ValidateUpdate validates a changed object against its old version.
func (v validator[T]) ValidateUpdate(_ context.Context, oldObj, newObj T) (admission.Warnings, error) {
	if reflect.ValueOf(oldObj).IsNil() || v.decodeError(oldObj) != "" {
		var none T
		oldObj = none
	}
	return v.check(newObj, oldObj)
}

// ValidateDelete always allows the deletion.
func (validator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

func (v validator[T]) check(obj, old T) (admission.Warnings, error) {
	if msg := v.decodeError(obj); msg != "" {
		return nil, undecodable(v.kind, obj.GetName(), msg)
	}
	errs, warnings := v.validate(obj, old, v.gates)
	return warnings, invalid(v.kind, obj.GetName(), errs)
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
