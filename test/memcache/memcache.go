// Package memcache is controller-runtime's informer cache over objects held in memory: the cache's own
// readers (a deep copy per object read unless client.UnsafeDisableDeepCopy, field indexes, metadata-only
// informers) without an API server, for benchmarks of code that reads the manager's cache. Informers list the
// objects given to New once and then watch nothing.
package memcache

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// clusterScoped are the kinds of the scheme that are not namespaced (the others are taken as namespaced).
var clusterScoped = map[string]bool{"Node": true, "Namespace": true, "PersistentVolume": true, "ClusterRole": true, "ClusterRoleBinding": true}

// New returns a started cache of objs, their kinds in scheme. index, when set, adds field indexes before the
// informers start. The cache stops when tb ends.
func New(tb testing.TB, scheme *runtime.Scheme, index func(cache.Cache) error, objs ...client.Object) cache.Cache {
	tb.Helper()
	mapper := meta.NewDefaultRESTMapper(nil)
	for gvk := range scheme.AllKnownTypes() {
		scope := meta.RESTScopeNamespace
		if clusterScoped[gvk.Kind] {
			scope = meta.RESTScopeRoot
		}
		mapper.Add(gvk, scope)
	}
	byKind := map[schema.GroupVersionKind][]client.Object{}
	for _, o := range objs {
		gvk, err := apiutil.GVKForObject(o, scheme)
		if err != nil {
			tb.Fatal(err)
		}
		byKind[gvk] = append(byKind[gvk], o)
	}
	c, err := cache.New(&rest.Config{Host: "http://127.0.0.1:1"}, cache.Options{Scheme: scheme, Mapper: mapper,
		NewInformer: func(_ toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, idx toolscache.Indexers) toolscache.SharedIndexInformer {
			return toolscache.NewSharedIndexInformer(&lister{scheme: scheme, obj: obj, byKind: byKind}, obj, resync, idx)
		}})
	if err != nil {
		tb.Fatal(err)
	}
	if index != nil {
		if err := index(c); err != nil {
			tb.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		tb.Fatal("the in-memory cache did not sync")
	}
	return c
}

// lister lists the objects of one kind (typed, or as metadata) and watches nothing.
type lister struct {
	scheme *runtime.Scheme
	obj    runtime.Object
	byKind map[schema.GroupVersionKind][]client.Object
}

// IsWatchListSemanticsUnSupported: the reflector lists, then watches (no streaming list).
func (*lister) IsWatchListSemanticsUnSupported() bool { return true }

func (l *lister) List(metav1.ListOptions) (runtime.Object, error) {
	if pm, ok := l.obj.(*metav1.PartialObjectMetadata); ok {
		gvk := pm.GroupVersionKind()
		out := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
		for _, o := range l.byKind[gvk] {
			om, ok := o.DeepCopyObject().(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
			if !ok {
				return nil, fmt.Errorf("%T has no ObjectMeta", o)
			}
			m := metav1.PartialObjectMetadata{ObjectMeta: *om}
			m.SetGroupVersionKind(gvk)
			out.Items = append(out.Items, m)
		}
		return out, nil
	}
	gvk, err := apiutil.GVKForObject(l.obj, l.scheme)
	if err != nil {
		return nil, err
	}
	list, err := l.scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, fmt.Errorf("no list kind for %s: %w", strings.TrimSuffix(gvk.Kind, "List"), err)
	}
	items := make([]runtime.Object, 0, len(l.byKind[gvk]))
	for _, o := range l.byKind[gvk] {
		items = append(items, o.DeepCopyObject())
	}
	if err := meta.SetList(list, items); err != nil {
		return nil, err
	}
	list.(metav1.ListInterface).SetResourceVersion("1")
	return list, nil
}

func (*lister) Watch(metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }
