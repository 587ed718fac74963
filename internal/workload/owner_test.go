package workload

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
