package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

const autoscalerMsg = "is an autoscaler, not a workload; point targetRef at the workload it scales"

// notAWorkload are the kinds that own no pods: a VPA pointing at one never matches a pod. The VPA
// controller refuses the same kinds at run time.
var notAWorkload = map[schema.GroupKind]string{
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:              autoscalerMsg,
	{Group: "autoscaling.k8s.io", Kind: vpav1.KindVerticalPodAutoscaler}: autoscalerMsg,
	{Group: "autoscaling.k8s.io", Kind: hvpav1alpha1.KindHvpa}:           autoscalerMsg,
	{Group: "apps", Kind: "ControllerRevision"}:                          "is a revision record, not a workload; point targetRef at the controller of the pods",
}

const noScaleMsg = "has no scale subresource, so an Hvpa cannot set its replicas; target a Deployment, StatefulSet, ReplicaSet, " +
	"ReplicationController or a custom resource with a scale subresource (a VerticalPodAutoscaler can size the pods of this kind)"

// notScalable are the kinds an Hvpa cannot target: well-known kinds without a scale subresource, and the
// autoscalers (an Hvpa has /scale, but an Hvpa scaling an Hvpa is a loop). Any other kind is accepted:
// whether a custom kind serves /scale needs the API, and the controller reports it (NoScaleSubresource).
var notScalable = map[schema.GroupKind]string{
	{Group: "apps", Kind: "DaemonSet"}:                                   noScaleMsg,
	{Group: "extensions", Kind: "DaemonSet"}:                             noScaleMsg,
	{Group: "batch", Kind: "Job"}:                                        noScaleMsg,
	{Group: "batch", Kind: "CronJob"}:                                    noScaleMsg,
	{Group: "", Kind: "Pod"}:                                             noScaleMsg,
	{Group: "apps", Kind: "ControllerRevision"}:                          noScaleMsg,
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:              autoscalerMsg,
	{Group: "autoscaling.k8s.io", Kind: vpav1.KindVerticalPodAutoscaler}: autoscalerMsg,
	{Group: "autoscaling.k8s.io", Kind: hvpav1alpha1.KindHvpa}:           autoscalerMsg,
}

// targetRef checks a targetRef: kind and name set, apiVersion parsable, and the kind not one of refused.
// With apiVersion unset the kind is matched in any group.
func targetRef(apiVersion, kind, name string, refused map[schema.GroupKind]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		errs = append(errs, field.Invalid(path.Child("apiVersion"), apiVersion, "must be group/version, e.g. apps/v1 (or v1 for the core group)"))
	}
	if kind == "" {
		errs = append(errs, field.Required(path.Child("kind"), "set the kind of the workload, e.g. Deployment"))
	}
	if name == "" {
		errs = append(errs, field.Required(path.Child("name"), "set the name of the workload"))
	}
	if kind == "" || err != nil {
		return errs
	}
	for gk, why := range refused {
		if gk.Kind == kind && (apiVersion == "" || gk.Group == gv.Group) {
			errs = append(errs, field.Invalid(path.Child("kind"), kind, fmt.Sprintf("%s %s", kind, why)))
			break
		}
	}
	return errs
}
