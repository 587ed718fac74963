package workload

import (
	"context"
	"fmt"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// Target is a resolved targetRef: the workload and its pod selector.
type Target struct {
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	Selector  labels.Selector
}

// Key identifies the workload (for detecting several autoscalers on one workload).
func (t Target) Key() string {
	return t.GVK.GroupKind().String() + "/" + t.Namespace + "/" + t.Name
}

// TargetError is a targetRef that cannot be served; Reason is a PascalCase condition reason.
type TargetError struct {
	Reason, Message string
}

func (e *TargetError) Error() string { return e.Message }

// wellKnownSelectors reads the pod selector of the controllers whose selector sits in their spec.
var wellKnownSelectors = map[schema.GroupKind][]string{
	{Group: "apps", Kind: "Deployment"}:                        {"spec", "selector"},
	{Group: "apps", Kind: "StatefulSet"}:                       {"spec", "selector"},
	{Group: "apps", Kind: "ReplicaSet"}:                        {"spec", "selector"},
	{Group: "apps", Kind: "DaemonSet"}:                         {"spec", "selector"},
	{Group: "batch", Kind: "Job"}:                              {"spec", "selector"},
	{Group: "batch", Kind: "CronJob"}:                          {"spec", "jobTemplate", "spec", "template", "metadata", "labels"},
	{Group: "", Kind: "ReplicationController"}:                 {"spec", "selector"},
	{Group: "apps", Kind: "ControllerRevision"}:                nil, // never a workload
	{Group: "autoscaling.k8s.io", Kind: hvpav1alpha1.KindHvpa}: nil, // an autoscaler, not a workload
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:    nil,
}

// Resolve reads the object a targetRef names and its pod selector: from the spec of well-known
// controllers, else from the object's scale subresource. A target that is itself controlled by another
// object (e.g. a ReplicaSet of a Deployment) is refused: the autoscaler must name the top-most controller.
func (r *Resolver) Resolve(ctx context.Context, namespace string, ref *autoscalingv1.CrossVersionObjectReference) (Target, error) {
	if ref == nil || ref.Kind == "" || ref.Name == "" {
		return Target{}, &TargetError{vpav1.ReasonInvalidTargetRef, "spec.targetRef needs kind and name"}
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return Target{}, &TargetError{vpav1.ReasonInvalidTargetRef, fmt.Sprintf("spec.targetRef.apiVersion %q: %v", ref.APIVersion, err)}
	}
	gvk := Canonical(gv.WithKind(ref.Kind))
	key := client.ObjectKey{Namespace: namespace, Name: ref.Name}
	if _, typed := typedKinds[gvk]; typed {
		return r.resolveTyped(ctx, gvk, key)
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := r.Live.Get(ctx, key, obj); err != nil {
		return Target{}, readError(ref.Kind, ref.APIVersion, key, err)
	}
	if err := r.notControlled(ctx, ref.Kind, obj); err != nil {
		return Target{}, err
	}
	t := Target{GVK: gvk, Namespace: namespace, Name: ref.Name}
	path, known := wellKnownSelectors[gvk.GroupKind()]
	switch {
	case known && path == nil:
		return Target{}, &TargetError{vpav1.ReasonUnsupportedTargetKind, fmt.Sprintf("%s is not a workload: point spec.targetRef at the controller of the pods", ref.Kind)}
	case known:
		sel, err := selectorAt(obj, path)
		if err != nil {
			return Target{}, &TargetError{vpav1.ReasonInvalidSelector, fmt.Sprintf("%s %s: %v", ref.Kind, ref.Name, err)}
		}
		t.Selector = sel
	default:
		scale, err := GetScale(ctx, r.Live, gvk, namespace, ref.Name)
		if err != nil && !NoScale(err) {
			return Target{}, fmt.Errorf("reading the scale of %s %s/%s: %w", ref.Kind, namespace, ref.Name, err) // transient: retried
		}
		if err != nil {
			return Target{}, &TargetError{vpav1.ReasonNoScaleSubresource, fmt.Sprintf("%s %s has no readable scale subresource (%v): only workloads with a pod selector can be autoscaled", ref.Kind, ref.Name, err)}
		}
		sel, err := labels.Parse(scale.Status.Selector)
		if err != nil || scale.Status.Selector == "" {
			return Target{}, &TargetError{vpav1.ReasonInvalidSelector, fmt.Sprintf("%s %s: the scale subresource has no usable selector (%q)", ref.Kind, ref.Name, scale.Status.Selector)}
		}
		t.Selector = sel
	}
	return nonEmpty(t)
}

// readError is a failed read of a target as a TargetError where the user can act on it.
func readError(kind, apiVersion string, key client.ObjectKey, err error) error {
	switch {
	case apierrors.IsNotFound(err):
		return &TargetError{vpav1.ReasonTargetNotFound, fmt.Sprintf("%s %s/%s does not exist", kind, key.Namespace, key.Name)}
	case isNoMatch(err):
		return &TargetError{vpav1.ReasonUnknownTargetKind, fmt.Sprintf("the API server does not serve %s (%s): check spec.targetRef.apiVersion and kind", kind, apiVersion)}
	}
	return fmt.Errorf("reading %s %s/%s: %w", kind, key.Namespace, key.Name, err)
}

// notControlled refuses a target that another workload controls: a well-known kind, or another kind with a
// scale subresource (an operator's custom resource without one that owns a Deployment is no workload: the
// Deployment is the target, as upstream's VPA takes it).
func (r *Resolver) notControlled(ctx context.Context, kind string, obj metav1.Object) error {
	owner := metav1.GetControllerOf(obj)
	if owner == nil {
		return nil
	}
	if gvk := Canonical(schema.FromAPIVersionAndKind(owner.APIVersion, owner.Kind)); !CachedOwnerKinds[gvk] && r.Live != nil {
		ok, err := scalable(ctx, r.Live, gvk, obj.GetNamespace(), owner.Name)
		if apierrors.IsForbidden(err) {
			return &TargetError{vpav1.ReasonParentControllerTarget, fmt.Sprintf("%s %s is controlled by %s %s, whose scale subresource hvpa may not read (%v): point spec.targetRef at it, or let hvpa read it (the chart's rbac.readScaleOfAnyKind or rbac.extraTargets) to tell whether it is a workload",
				kind, obj.GetName(), owner.Kind, owner.Name, err)}
		}
		if err != nil {
			return fmt.Errorf("reading the scale of %s %s/%s, the controller of %s %s: %w", owner.Kind, obj.GetNamespace(), owner.Name, kind, obj.GetName(), err)
		}
		if !ok {
			return nil
		}
	}
	return &TargetError{vpav1.ReasonParentControllerTarget, fmt.Sprintf("%s %s is controlled by %s %s: point spec.targetRef at the top-most controller",
		kind, obj.GetName(), owner.Kind, owner.Name)}
}

// nonEmpty refuses a selector that selects every pod of the namespace.
func nonEmpty(t Target) (Target, error) {
	if t.Selector.Empty() {
		return Target{}, &TargetError{vpav1.ReasonInvalidSelector, fmt.Sprintf("%s %s selects every pod of the namespace: refusing an empty selector", t.GVK.Kind, t.Name)}
	}
	return t, nil
}

func selectorAt(obj *unstructured.Unstructured, path []string) (labels.Selector, error) {
	raw, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
	if err != nil || !found {
		return nil, fmt.Errorf("no selector at %v", path)
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("selector at %v is not an object", path)
	}
	// a LabelSelector (matchLabels / matchExpressions) or a plain label map (ReplicationController, CronJob)
	if _, ml := m["matchLabels"]; ml || m["matchExpressions"] != nil {
		ls := &metav1.LabelSelector{}
		if err := runtimeConvert(m, ls); err != nil {
			return nil, err
		}
		return metav1.LabelSelectorAsSelector(ls)
	}
	set := labels.Set{}
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("label %s is not a string", k)
		}
		set[k] = s
	}
	return labels.SelectorFromSet(set), nil
}

// RefKey is what a targetRef names within the autoscaler's namespace: group, kind and name, whatever
// the version, a well-known kind's group as Canonical serves it (a targetRef without an apiVersion, or with
// extensions/v1beta1, names the same Deployment as apps/v1): the same workload as Target.RefKey.
func RefKey(apiVersion, kind, name string) string {
	return Canonical(schema.FromAPIVersionAndKind(apiVersion, kind)).GroupKind().String() + "/" + name
}

// RefKey is the target's group, kind and name, as RefKey makes them.
func (t Target) RefKey() string { return t.GVK.GroupKind().String() + "/" + t.Name }
