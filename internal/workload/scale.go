package workload

import (
	"context"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// scaleTarget is an object whose scale subresource is read or written; the client is unstructured for it
// (any kind), so the Scale travels as unstructured too (the unstructured client does not decode typed
// subresource bodies).
func scaleTarget(gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(ns)
	obj.SetName(name)
	return obj
}

// GetScale reads the scale subresource of any object.
func GetScale(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns, name string) (*autoscalingv1.Scale, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	if err := c.SubResource("scale").Get(ctx, scaleTarget(gvk, ns, name), u); err != nil {
		return nil, err
	}
	s := &autoscalingv1.Scale{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, s); err != nil {
		return nil, err
	}
	return s, nil
}

// UpdateScale writes spec.replicas through the scale subresource of any object; s is the Scale read before
// (its resourceVersion guards against a concurrent change).
func UpdateScale(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns, name string, s *autoscalingv1.Scale) error {
	s.APIVersion, s.Kind = autoscalingv1.SchemeGroupVersion.String(), "Scale"
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(s)
	if err != nil {
		return err
	}
	return c.SubResource("scale").Update(ctx, scaleTarget(gvk, ns, name), client.WithSubResourceBody(&unstructured.Unstructured{Object: m}))
}
