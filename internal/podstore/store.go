package podstore

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Lister lists pods.
type Lister interface {
	// List is every pod of namespace ("": of every namespace). The pods are shared: read only.
	List(ctx context.Context, namespace string) ([]*Pod, error)
}

// Store is a Lister of every pod from an informer of its own (list and watch in protobuf), keeping only
// Pods. It is a manager.Runnable; List waits until the first list has arrived.
type Store struct {
	informer toolscache.SharedIndexInformer
}

var _ Lister = (*Store)(nil)

// NewStore returns a store reading pods with cfg (protobuf, client-go's rate limits).
func NewStore(cfg *rest.Config) (*Store, error) {
	pcfg := rest.CopyConfig(cfg)
	pcfg.ContentType = runtime.ContentTypeProtobuf
	pcfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	c, err := corev1client.NewForConfig(pcfg)
	if err != nil {
		return nil, fmt.Errorf("pod store: %w", err)
	}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return c.Pods(metav1.NamespaceAll).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return c.Pods(metav1.NamespaceAll).Watch(ctx, o)
		},
	}
	inf := toolscache.NewSharedIndexInformerWithOptions(lw, &corev1.Pod{}, toolscache.SharedIndexInformerOptions{
		Indexers:          toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc},
		ObjectDescription: "pods (recommender)",
	})
	if err := inf.SetTransform(Transform); err != nil {
		return nil, fmt.Errorf("pod store: %w", err)
	}
	return &Store{informer: inf}, nil
}

// Transform turns a corev1.Pod into a Pod (the informer's transform); anything else passes as it is (a Pod
// already transformed, a tombstone).
func Transform(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		return From(p), nil
	}
	return obj, nil
}

// Start runs the informer until ctx ends (manager.Runnable).
func (s *Store) Start(ctx context.Context) error {
	s.informer.RunWithContext(ctx)
	return nil
}

// NeedLeaderElection: every replica keeps the store, so that a new leader starts with its pods.
func (s *Store) NeedLeaderElection() bool { return false }

// HasSynced says whether the first list has arrived.
func (s *Store) HasSynced() bool { return s.informer.HasSynced() }

// List implements Lister from the store, once the first list has arrived.
func (s *Store) List(ctx context.Context, namespace string) ([]*Pod, error) {
	if !s.informer.HasSynced() && !toolscache.WaitForCacheSync(ctx.Done(), s.informer.HasSynced) {
		return nil, fmt.Errorf("listing pods: %w", errors.Join(errors.New("the pod informer has not synced"), ctx.Err()))
	}
	var objs []any
	if namespace == "" {
		objs = s.informer.GetStore().List()
	} else {
		var err error
		if objs, err = s.informer.GetIndexer().ByIndex(toolscache.NamespaceIndex, namespace); err != nil {
			return nil, fmt.Errorf("listing pods: %w", err)
		}
	}
	pods := make([]*Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*Pod); ok {
			pods = append(pods, p)
		}
	}
	return pods, nil
}

// ClientLister lists pods through a client (a copy of each, made into Pods at every call).
type ClientLister struct{ Reader client.Reader }

var _ Lister = ClientLister{}

// List implements Lister.
func (l ClientLister) List(ctx context.Context, namespace string) ([]*Pod, error) {
	var list corev1.PodList
	if err := l.Reader.List(ctx, &list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	pods := make([]*Pod, len(list.Items))
	for i := range list.Items {
		pods[i] = From(&list.Items[i])
	}
	return pods, nil
}
