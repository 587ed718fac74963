package workload

import (
	"context"
	"errors"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// recordingReader is a cache that records the kinds it is asked for (a cache read of a new kind starts an
// informer for it) and answers from its client.
type recordingReader struct {
	client.Reader
	kinds map[schema.GroupVersionKind]int
}

func (r *recordingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	r.kinds[obj.GetObjectKind().GroupVersionKind()]++
	return r.Reader.Get(ctx, key, obj, opts...)
}

func controlledBy(apiVersion, kind, name string) []metav1.OwnerReference {
	return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: "u-" + types.UID(name), Controller: ptr.To(true)}}
}

// TestTopControllerStartsNoInformerForArbitraryKinds: the kinds an ownerReference names are chosen by whoever
// creates the pod; only the well-known workload kinds are read from the cache (informers), any other kind is
// read live, and without a live reader the walk ends at it.
func TestTopControllerStartsNoInformerForArbitraryKinds(t *testing.T) {
	ctx := context.Background()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", OwnerReferences: controlledBy("apps/v1", "Deployment", "web")}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	thingKind := schema.GroupVersionKind{Group: "evil.example.com", Version: "v1", Kind: "Thing"}
	thing := metav1.ObjectMeta{Namespace: "ns", Name: "x", OwnerReferences: controlledBy("apps/v1", "Deployment", "web")}
	objs := []client.Object{rs, dep}
	cached := &recordingReader{Reader: fake.NewClientBuilder().WithObjects(objs...).Build(), kinds: map[schema.GroupVersionKind]int{}}
	liveReads := map[schema.GroupVersionKind]int{}
	live := interceptor.NewClient(fake.NewClientBuilder().WithObjects(objs...).Build(), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gvk := obj.GetObjectKind().GroupVersionKind()
			liveReads[gvk]++
			if gvk.Kind == "Thing" { // the fake client has no scheme for it: answer as the API server would
				obj.(*metav1.PartialObjectMetadata).ObjectMeta = *thing.DeepCopy()
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
		SubResourceGet: func(ctx context.Context, c client.Client, sub string, obj, into client.Object, opts ...client.SubResourceGetOption) error {
			if sub == "scale" && obj.GetObjectKind().GroupVersionKind().Kind == "Thing" { // a custom resource with a scale subresource
				into.(*unstructured.Unstructured).Object = map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
					"metadata": map[string]any{"name": obj.GetName(), "namespace": obj.GetNamespace()}, "spec": map[string]any{"replicas": int64(1)}}
				return nil
			}
			return apierrors.NewNotFound(schema.GroupResource{Resource: "scale"}, obj.GetName())
		}})

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1-a", OwnerReferences: controlledBy("apps/v1", "ReplicaSet", "web-1")}}
	top, ok, err := TopController(ctx, cached, live, "ns", pod)
	if err != nil || !ok || top != (Ref{Group: "apps", Kind: "Deployment", Name: "web"}) {
		t.Fatalf("a Deployment's pod: %v %v %v", top, ok, err)
	}
	if len(liveReads) != 0 {
		t.Errorf("a Deployment's pod read live: %v", liveReads)
	}

	odd := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "odd", OwnerReferences: controlledBy("evil.example.com/v1", "Thing", "x")}}
	top, ok, err = TopController(ctx, cached, live, "ns", odd)
	if err != nil || !ok || top != (Ref{Group: "apps", Kind: "Deployment", Name: "web"}) {
		t.Errorf("a pod of a Thing of a Deployment: %v %v %v", top, ok, err)
	}
	for gvk := range cached.kinds {
		if !CachedOwnerKinds[gvk] {
			t.Errorf("the cache was asked for %s, a kind a pod's ownerReference named: an informer for it", gvk)
		}
	}
	if liveReads[thingKind] != 1 {
		t.Errorf("the Thing was read live %d times, want once", liveReads[thingKind])
	}

	top, ok, err = TopController(ctx, cached, nil, "ns", odd)
	if err != nil || !ok || top != (Ref{Group: "evil.example.com", Kind: "Thing", Name: "x"}) {
		t.Errorf("without a live reader: %v %v %v, want the walk to end at the Thing", top, ok, err)
	}
}

// TestTopControllerStopsBelowAnUnscalableOwner: a Deployment an operator's custom resource controls is the
// top-most controller when that resource has no scale subresource (upstream's rule: the top-most well-known or
// scalable controller), and the resource is when it has one; a VPA on the Deployment resolves in the first
// case and is refused (ParentControllerTarget) in the second (found in review: such a Deployment could not
// be autoscaled at all).
func TestTopControllerStopsBelowAnUnscalableOwner(t *testing.T) {
	ctx := context.Background()
	for _, scalable := range []bool{false, true} {
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", OwnerReferences: controlledBy("apps/v1", "Deployment", "web")}}
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", OwnerReferences: controlledBy("example.com/v1", "Foo", "foo")},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
		base := fake.NewClientBuilder().WithObjects(rs, dep).Build()
		live := interceptor.NewClient(base, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if obj.GetObjectKind().GroupVersionKind().Kind == "Foo" {
					obj.(*metav1.PartialObjectMetadata).ObjectMeta = metav1.ObjectMeta{Namespace: "ns", Name: "foo"}
					return nil
				}
				return c.Get(ctx, key, obj, opts...)
			},
			SubResourceGet: func(ctx context.Context, c client.Client, sub string, obj, into client.Object, opts ...client.SubResourceGetOption) error {
				if sub == "scale" && scalable && obj.GetName() == "foo" {
					into.(*unstructured.Unstructured).Object = map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
						"metadata": map[string]any{"name": "foo", "namespace": "ns"}, "spec": map[string]any{"replicas": int64(1)}}
					return nil
				}
				return apierrors.NewNotFound(schema.GroupResource{Group: "example.com", Resource: "foos/scale"}, obj.GetName())
			}})
		scaleProbe.Lock()
		clear(scaleProbe.answers) // the answers of the other case
		scaleProbe.Unlock()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1-a", OwnerReferences: controlledBy("apps/v1", "ReplicaSet", "web-1")}}
		top, ok, err := TopController(ctx, base, live, "ns", pod)
		want := Ref{Group: "apps", Kind: "Deployment", Name: "web"}
		if scalable {
			want = Ref{Group: "example.com", Kind: "Foo", Name: "foo"}
		}
		if err != nil || !ok || top != want {
			t.Errorf("Foo scalable %v: top %v %v %v, want %v", scalable, top, ok, err, want)
		}
		_, err = NewResolver(base, live).Resolve(ctx, "ns", &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"})
		var te *TargetError
		if refused := errors.As(err, &te) && te.Reason == "ParentControllerTarget"; refused != scalable || (!scalable && err != nil) {
			t.Errorf("Foo scalable %v: resolving the Deployment: %v", scalable, err)
		}
	}
}

// TestTopControllerOldRefsAndNodes: an ownerReference to a well-known kind in a group no longer served
// (extensions/v1beta1) is followed as the served kind, and a mirror pod's Node is no workload and never asked
// for (found in the review of this change).
func TestTopControllerOldRefsAndNodes(t *testing.T) {
	ctx := context.Background()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", OwnerReferences: controlledBy("extensions/v1beta1", "Deployment", "web")}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	base := fake.NewClientBuilder().WithObjects(rs, dep).Build()
	calls := 0
	live := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			calls++
			return c.Get(ctx, key, obj, opts...)
		},
		SubResourceGet: func(ctx context.Context, c client.Client, sub string, obj, into client.Object, opts ...client.SubResourceGetOption) error {
			calls++
			return apierrors.NewNotFound(schema.GroupResource{Resource: sub}, obj.GetName())
		}})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1-a", OwnerReferences: controlledBy("apps/v1", "ReplicaSet", "web-1")}}
	if top, ok, err := TopController(ctx, base, live, "ns", pod); err != nil || !ok || top != (Ref{Group: "apps", Kind: "Deployment", Name: "web"}) {
		t.Errorf("a ReplicaSet whose owner is named extensions/v1beta1: %v %v %v, want Deployment.apps/web", top, ok, err)
	}
	calls = 0
	mirror := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "etcd-node-1", OwnerReferences: controlledBy("v1", "Node", "node-1")}}
	if _, ok, err := TopController(ctx, base, live, "kube-system", mirror); err != nil || ok || calls != 0 {
		t.Errorf("a mirror pod: ok %v err %v after %d API calls, want no controller and no call", ok, err, calls)
	}
}

// TestTopControllerWithOnlyTheScale: with read access to the scale of any kind and not to the objects (the
// chart's rbac.readScaleOfAnyKind, upstream's system:vpa-target-reader), a scalable owner is the top-most
// controller and the walk ends there (a refused read of its metadata was an error: the pod's VPA was not found);
// a refused read of the scale is an error, asked of the API server once per object and TTL, not once per pod.
func TestTopControllerWithOnlyTheScale(t *testing.T) {
	ctx := context.Background()
	for _, scaleReadable := range []bool{true, false} {
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", OwnerReferences: controlledBy("apps/v1", "Deployment", "web")}}
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", OwnerReferences: controlledBy("example.com/v1", "Foo", "foo")}}
		base := fake.NewClientBuilder().WithObjects(rs, dep).Build()
		scaleReads := 0
		forbidden := func(res string) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "example.com", Resource: res}, "foo", errors.New("RBAC: not allowed"))
		}
		live := interceptor.NewClient(base, interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if obj.GetObjectKind().GroupVersionKind().Kind == "Foo" {
					return forbidden("foos")
				}
				return c.Get(ctx, key, obj, opts...)
			},
			SubResourceGet: func(ctx context.Context, c client.Client, sub string, obj, into client.Object, opts ...client.SubResourceGetOption) error {
				scaleReads++
				if !scaleReadable {
					return forbidden("foos/scale")
				}
				into.(*unstructured.Unstructured).Object = map[string]any{"apiVersion": "autoscaling/v1", "kind": "Scale",
					"metadata": map[string]any{"name": "foo", "namespace": "ns"}, "spec": map[string]any{"replicas": int64(1)}}
				return nil
			}})
		scaleProbe.Lock()
		clear(scaleProbe.answers)
		scaleProbe.Unlock()
		for i := range 3 { // three pods of the same owner
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("web-1-%d", i), OwnerReferences: controlledBy("apps/v1", "ReplicaSet", "web-1")}}
			top, ok, err := TopController(ctx, base, live, "ns", pod)
			if scaleReadable {
				if want := (Ref{Group: "example.com", Kind: "Foo", Name: "foo"}); err != nil || !ok || top != want {
					t.Errorf("scale readable, object not: top %v %v %v, want %v", top, ok, err, want)
				}
			} else if !apierrors.IsForbidden(err) {
				t.Errorf("scale refused: %v %v %v, want the Forbidden error", top, ok, err)
			}
		}
		if scaleReads != 1 {
			t.Errorf("scale readable %v: %d reads of the scale for three pods, want 1", scaleReadable, scaleReads)
		}
	}
}
