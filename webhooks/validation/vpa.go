package validation

import (
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/internal/features"
)

// VPA validates a VerticalPodAutoscaler beyond its CRD schema; old is nil on CREATE. gates says which
// feature gates are on (nil: all off). An UPDATE that leaves the spec unchanged is always accepted.
func VPA(vpa, old *vpav1.VerticalPodAutoscaler, gates featuregate.FeatureGate) field.ErrorList {
	errs, _ := validateVPA(vpa, old, gates)
	return errs
}

// validateVPA is VPA plus the warnings the admission response carries.
func validateVPA(vpa, old *vpav1.VerticalPodAutoscaler, gates featuregate.FeatureGate) (field.ErrorList, []string) {
	if old != nil && equality.Semantic.DeepEqual(old.Spec, vpa.Spec) {
		return nil, nil
	}
	sp := field.NewPath("spec")
	errs := vpaTargetRef(vpa.Spec.TargetRef, sp.Child("targetRef"))
	var warnings []string

	var oldUP *vpav1.PodUpdatePolicy
	var oldRP *vpav1.PodResourcePolicy
	if old != nil {
		oldUP, oldRP = old.Spec.UpdatePolicy, old.Spec.ResourcePolicy
	}
	perVPA := perVPAConfig(gates, oldRP, oldUP)
	e, w := updatePolicy(vpa.Spec.UpdatePolicy, oldUP, gates, perVPA, sp.Child("updatePolicy"))
	errs = append(errs, e...)
	warnings = append(warnings, w...)

	e, w = vpaUpdateMode(vpa.Spec.UpdatePolicy, oldUP, old != nil, sp.Child("updatePolicy"))
	errs = append(errs, e...)
	warnings = append(warnings, w...)

	boosts := vpaBoosts(gates, old)
	e, w = resourcePolicy(vpa.Spec.ResourcePolicy, oldRP, old != nil, gates, perVPA, boosts, sp.Child("resourcePolicy"))
	errs = append(errs, e...)
	warnings = append(warnings, w...)

	var oldBoost *vpav1.StartupBoost
	if old != nil {
		oldBoost = old.Spec.StartupBoost
	}
	e, w = boosts.check(vpa.Spec.StartupBoost, oldBoost, sp.Child("startupBoost"))
	errs = append(errs, e...)
	warnings = append(warnings, w...)

	if n := len(vpa.Spec.Recommenders); n > 1 {
		errs = append(errs, &field.Error{Type: field.ErrorTypeTooMany, Field: sp.Child("recommenders").String(), BadValue: n,
			Detail: "The current version of VPA object shouldn't specify more than one recommenders; keep only the recommender that should serve this object"})
	}
	return errs, warnings
}

// vpaUpdateMode holds a VPA's updatePolicy to upstream's webhook's rules for its updateMode: required when
// the policy is given (an object stored without one, e.g. while the webhook was down, stays updatable, with a
// warning), and Auto is deprecated (a warning, upstream's).
func vpaUpdateMode(up, old *vpav1.PodUpdatePolicy, isUpdate bool, pp *field.Path) (field.ErrorList, []string) {
	switch {
	case up == nil:
		return nil, nil
	case up.UpdateMode == nil && isUpdate && old != nil && old.UpdateMode == nil:
		return nil, []string{fmt.Sprintf("%s is kept without updateMode from the existing object; set updateMode (Off, Initial, Recreate, InPlaceOrRecreate or InPlace), which upstream VPA's webhook requires", pp)}
	case up.UpdateMode == nil:
		return field.ErrorList{field.Required(pp.Child("updateMode"), "updateMode is required if updatePolicy is used; set Off, Initial, Recreate, InPlaceOrRecreate or InPlace, or remove updatePolicy (the mode is then Recreate)")}, nil
	case *up.UpdateMode == vpav1.UpdateModeAuto:
		return nil, []string{fmt.Sprintf("%s: %q mode is deprecated and will be removed in a future API version (upstream VPA's deprecation); use an explicit mode such as Recreate, which Auto means, or InPlaceOrRecreate",
			pp.Child("updateMode"), vpav1.UpdateModeAuto)}
	}
	return nil, nil
}

// updatePolicy checks an updatePolicy (a VPA's, or an Hvpa's spec.vpa.template.updatePolicy); old is the
// existing object's, nil on CREATE; perVPA says whether the PerVPAConfig fields are allowed (perVPAConfig).
func updatePolicy(up, old *vpav1.PodUpdatePolicy, gates featuregate.FeatureGate, perVPA bool, pp *field.Path) (field.ErrorList, []string) {
	var errs field.ErrorList
	var warnings []string
	if up == nil {
		return nil, nil
	}
	if m := up.UpdateMode; m != nil {
		switch *m {
		case vpav1.UpdateModeOff, vpav1.UpdateModeInitial, vpav1.UpdateModeRecreate, vpav1.UpdateModeAuto,
			vpav1.UpdateModeInPlaceOrRecreate, vpav1.UpdateModeInPlace:
		default:
			errs = append(errs, field.NotSupported(pp.Child("updateMode"), *m, []string{
				string(vpav1.UpdateModeOff), string(vpav1.UpdateModeInitial), string(vpav1.UpdateModeRecreate),
				string(vpav1.UpdateModeAuto), string(vpav1.UpdateModeInPlaceOrRecreate), string(vpav1.UpdateModeInPlace)}))
		}
		if *m == vpav1.UpdateModeInPlace && !enabled(gates, features.InPlace) {
			if old != nil && old.UpdateMode != nil && *old.UpdateMode == vpav1.UpdateModeInPlace {
				warnings = append(warnings, fmt.Sprintf("%s InPlace is kept from the existing object, but feature gate %s is off; enable the gate or choose InPlaceOrRecreate",
					pp.Child("updateMode"), features.InPlace))
			} else {
				errs = append(errs, field.Forbidden(pp.Child("updateMode"),
					gateMessage("UpdateMode InPlace", features.InPlace)+"; otherwise use InPlaceOrRecreate"))
			}
		}
	}
	if up.EvictAfterOOMSeconds != nil && !perVPA {
		errs = append(errs, field.Forbidden(pp.Child("evictAfterOOMSeconds"), gateMessage("evictAfterOOMSeconds", features.PerVPAConfig)+"; otherwise remove it (the updater's --oom-window applies)"))
	}
	if mr := up.MinReplicas; mr != nil && *mr <= 0 {
		errs = append(errs, field.Invalid(pp.Child("minReplicas"), *mr,
			"minReplicas has to be positive; set at least 1, or remove it to use the updater's --min-replicas"))
	}
	return errs, warnings
}

// vpaTargetRef checks a VPA's targetRef: present, then as targetRef does with the kinds that own no pods.
func vpaTargetRef(ref *autoscalingv1.CrossVersionObjectReference, path *field.Path) field.ErrorList {
	if ref == nil {
		return field.ErrorList{field.Required(path, "point targetRef at the workload whose pods to size, e.g. apiVersion apps/v1, kind Deployment and its name")}
	}
	return targetRef(ref.APIVersion, ref.Kind, ref.Name, notAWorkload, path)
}
