package workload

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// DefaultCacheWait is how long a cached read may wait for its informer's first sync before the kind is read
// live instead (an informer that cannot list, e.g. RBAC without list and watch, never syncs).
const DefaultCacheWait = 10 * time.Second

// Resolver resolves targetRefs. The well-known workload kinds (apps/v1 Deployment, StatefulSet, ReplicaSet,
// DaemonSet; batch/v1 Job, CronJob; v1 ReplicationController) are read as typed objects from Cached, an
// informer-backed reader, so a loop over a thousand autoscalers makes no API request for its targets. A
// target the cache has not seen yet (NotFound: created a moment ago) is read again from Live. Other kinds
// are read from Live as unstructured objects, with their scale subresource.
type Resolver struct {
	Cached client.Reader
	Live   client.Client
	// CacheWait bounds a cached read's wait for its informer's first sync (DefaultCacheWait); a kind whose
	// informer does not sync in time is read live from then on, so a missing permission slows the loop
	// once instead of stalling it.
	CacheWait time.Duration

	mu   sync.Mutex
	live map[schema.GroupVersionKind]bool // typed kinds read live after their informer did not sync
}

// NewResolver returns a resolver reading well-known kinds from cached and the rest from live.
func NewResolver(cached client.Reader, live client.Client) *Resolver {
	return &Resolver{Cached: cached, Live: live, CacheWait: DefaultCacheWait}
}

// typedKind reads the pod selector and pod template of one well-known workload kind from its typed object.
type typedKind struct {
	object   func() client.Object
	selector func(client.Object) (labels.Selector, error)
	template func(client.Object) *corev1.PodTemplateSpec
}

var typedKinds = map[schema.GroupVersionKind]typedKind{
	appsv1.SchemeGroupVersion.WithKind("Deployment"): {func() client.Object { return &appsv1.Deployment{} },
		func(o client.Object) (labels.Selector, error) {
			return labelSelector(o.(*appsv1.Deployment).Spec.Selector)
		},
		func(o client.Object) *corev1.PodTemplateSpec { return &o.(*appsv1.Deployment).Spec.Template }},
	appsv1.SchemeGroupVersion.WithKind("StatefulSet"): {func() client.Object { return &appsv1.StatefulSet{} },
		func(o client.Object) (labels.Selector, error) {
			return labelSelector(o.(*appsv1.StatefulSet).Spec.Selector)
		},
		func(o client.Object) *corev1.PodTemplateSpec { return &o.(*appsv1.StatefulSet).Spec.Template }},
	appsv1.SchemeGroupVersion.WithKind("ReplicaSet"): {func() client.Object { return &appsv1.ReplicaSet{} },
		func(o client.Object) (labels.Selector, error) {
			return labelSelector(o.(*appsv1.ReplicaSet).Spec.Selector)
		},
		func(o client.Object) *corev1.PodTemplateSpec { return &o.(*appsv1.ReplicaSet).Spec.Template }},
	appsv1.SchemeGroupVersion.WithKind("DaemonSet"): {func() client.Object { return &appsv1.DaemonSet{} },
		func(o client.Object) (labels.Selector, error) {
			return labelSelector(o.(*appsv1.DaemonSet).Spec.Selector)
		},
		func(o client.Object) *corev1.PodTemplateSpec { return &o.(*appsv1.DaemonSet).Spec.Template }},
	batchv1.SchemeGroupVersion.WithKind("Job"): {func() client.Object { return &batchv1.Job{} },
		func(o client.Object) (labels.Selector, error) { return labelSelector(o.(*batchv1.Job).Spec.Selector) },
		func(o client.Object) *corev1.PodTemplateSpec { return &o.(*batchv1.Job).Spec.Template }},
	batchv1.SchemeGroupVersion.WithKind("CronJob"): {func() client.Object { return &batchv1.CronJob{} },
		func(o client.Object) (labels.Selector, error) {
			return labelSet(o.(*batchv1.CronJob).Spec.JobTemplate.Spec.Template.Labels, "spec.jobTemplate.spec.template.metadata.labels")
		},
		func(o client.Object) *corev1.PodTemplateSpec {
			return &o.(*batchv1.CronJob).Spec.JobTemplate.Spec.Template
		}},
	corev1.SchemeGroupVersion.WithKind("ReplicationController"): {func() client.Object { return &corev1.ReplicationController{} },
		func(o client.Object) (labels.Selector, error) {
			return labelSet(o.(*corev1.ReplicationController).Spec.Selector, "spec.selector")
		},
		func(o client.Object) *corev1.PodTemplateSpec { return o.(*corev1.ReplicationController).Spec.Template }},
}

func labelSelector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if ls == nil {
		return nil, errors.New("no selector at spec.selector")
	}
	return metav1.LabelSelectorAsSelector(ls)
}

func labelSet(set map[string]string, path string) (labels.Selector, error) {
	if set == nil {
		return nil, fmt.Errorf("no selector at %s", path)
	}
	return labels.SelectorFromSet(set), nil
}

// PodTemplate is the pod template of a well-known workload kind (Deployment, StatefulSet, ReplicaSet,
// DaemonSet, Job, CronJob, ReplicationController), read like its target; nil for other kinds, whose pods
// their operator may size from elsewhere than a template (the updater takes no limit ratio from one).
func (r *Resolver) PodTemplate(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*corev1.PodTemplateSpec, error) {
	kind, ok := typedKinds[gvk]
	if !ok {
		return nil, nil
	}
	obj := kind.object()
	if err := r.get(ctx, gvk, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return nil, err
	}
	return kind.template(obj), nil
}

// AnyPodTemplate is PodTemplate, and for any other kind its spec.template as far as it converts, read live
// (unstructuredTemplate); nil when it has none. The Hvpa controller reads the containers and scheduling
// constraints of it while no pod runs.
func (r *Resolver) AnyPodTemplate(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*corev1.PodTemplateSpec, error) {
	if _, ok := typedKinds[gvk]; ok {
		return r.PodTemplate(ctx, gvk, ns, name)
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	if err := r.Live.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj); err != nil {
		return nil, err
	}
	return unstructuredTemplate(obj), nil
}

// unstructuredTemplate reads spec.template of a kind hvpa does not know (an Argo Rollout, an OpenKruise
// CloneSet): its labels and annotations, its containers and init containers (each one that converts) and
// where its pods may go (nodeSelector, tolerations, affinity, each when it converts); nil without one.
func unstructuredTemplate(obj *unstructured.Unstructured) *corev1.PodTemplateSpec {
	tmpl, ok, _ := unstructured.NestedMap(obj.Object, "spec", "template")
	if !ok {
		return nil
	}
	out := &corev1.PodTemplateSpec{}
	out.Labels, _, _ = unstructured.NestedStringMap(tmpl, "metadata", "labels")
	out.Annotations, _, _ = unstructured.NestedStringMap(tmpl, "metadata", "annotations")
	field := func(name string) []any {
		raw, _, _ := unstructured.NestedSlice(tmpl, "spec", name)
		return raw
	}
	spec := &out.Spec
	spec.Containers, spec.InitContainers = convertEach[corev1.Container](field("containers")), convertEach[corev1.Container](field("initContainers"))
	spec.Tolerations = convertEach[corev1.Toleration](field("tolerations"))
	spec.NodeSelector, _, _ = unstructured.NestedStringMap(tmpl, "spec", "nodeSelector")
	if m, ok, _ := unstructured.NestedMap(tmpl, "spec", "affinity"); ok {
		var a corev1.Affinity
		if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &a) == nil {
			spec.Affinity = &a
		}
	}
	return out
}

// convertEach converts every entry of an unstructured list that converts to a T (the others are left out).
func convertEach[T any](raw []any) []T {
	var out []T
	for _, x := range raw {
		var v T
		if m, ok := x.(map[string]any); ok && runtime.DefaultUnstructuredConverter.FromUnstructured(m, &v) == nil {
			out = append(out, v)
		}
	}
	return out
}

// resolveTyped resolves a well-known kind from the cache (Live when the cache has not seen it).
func (r *Resolver) resolveTyped(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey) (Target, error) {
	kind := typedKinds[gvk]
	obj := kind.object()
	if err := r.get(ctx, gvk, key, obj, client.UnsafeDisableDeepCopy); err != nil { // only read: shared with the cache
		return Target{}, readError(gvk.Kind, gvk.GroupVersion().String(), key, err)
	}
	if err := r.notControlled(ctx, gvk.Kind, obj); err != nil {
		return Target{}, err
	}
	sel, err := kind.selector(obj)
	if err != nil {
		return Target{}, &TargetError{vpav1.ReasonInvalidSelector, fmt.Sprintf("%s %s: %v", gvk.Kind, key.Name, err)}
	}
	return nonEmpty(Target{GVK: gvk, Namespace: key.Namespace, Name: key.Name, Selector: sel})
}

// get reads a typed object: from the cache, bounded by CacheWait for the informer's first sync, and from
// Live when the cache has not seen it or its informer did not sync in time. cacheOpts go to the cache's read:
// client.UnsafeDisableDeepCopy where the object is only read (a Deployment's deep copy per VPA per run was a
// tenth of the recommender's run at 10,000 VPAs); never where a part of it is returned.
func (r *Resolver) get(ctx context.Context, gvk schema.GroupVersionKind, key client.ObjectKey, obj client.Object, cacheOpts ...client.GetOption) error {
	if r.Cached == nil || r.readLive(gvk) {
		return r.Live.Get(ctx, key, obj)
	}
	wait := r.CacheWait
	if wait <= 0 {
		wait = DefaultCacheWait
	}
	cctx, cancel := context.WithTimeout(ctx, wait)
	err := r.Cached.Get(cctx, key, obj, cacheOpts...)
	cancel()
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, context.DeadlineExceeded) || cctx.Err() != nil:
		logf.FromContext(ctx).Info("the cache of this kind did not sync in time (list and watch permission?); reading it live from now on",
			"kind", gvk.String(), "waited", wait.String())
		r.mu.Lock()
		if r.live == nil {
			r.live = map[schema.GroupVersionKind]bool{}
		}
		r.live[gvk] = true
		r.mu.Unlock()
	case !apierrors.IsNotFound(err):
		return err
	}
	return r.Live.Get(ctx, key, obj)
}

func (r *Resolver) readLive(gvk schema.GroupVersionKind) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[gvk]
}

// scaled reads spec.replicas and status.replicas of the kinds whose scale subresource serves exactly those
// fields and the pod selector (typedKinds reads the selector).
var scaled = map[schema.GroupVersionKind]func(client.Object) (spec *int32, status int32){
	appsv1.SchemeGroupVersion.WithKind("Deployment"): func(o client.Object) (*int32, int32) {
		d := o.(*appsv1.Deployment)
		return d.Spec.Replicas, d.Status.Replicas
	},
	appsv1.SchemeGroupVersion.WithKind("StatefulSet"): func(o client.Object) (*int32, int32) {
		s := o.(*appsv1.StatefulSet)
		return s.Spec.Replicas, s.Status.Replicas
	},
	appsv1.SchemeGroupVersion.WithKind("ReplicaSet"): func(o client.Object) (*int32, int32) {
		s := o.(*appsv1.ReplicaSet)
		return s.Spec.Replicas, s.Status.Replicas
	},
	corev1.SchemeGroupVersion.WithKind("ReplicationController"): func(o client.Object) (*int32, int32) {
		c := o.(*corev1.ReplicationController)
		return c.Spec.Replicas, c.Status.Replicas
	},
}

// Scale is the scale of a workload: for Deployments, StatefulSets, ReplicaSets and ReplicationControllers
// made from the cached object as the API server's scale subresource makes it (spec.replicas defaulting to
// 1, its resourceVersion, so that UpdateScale with it is refused on a stale cache); for other kinds read
// live from the scale subresource.
func (r *Resolver) Scale(ctx context.Context, gvk schema.GroupVersionKind, ns, name string) (*autoscalingv1.Scale, error) {
	read, ok := scaled[gvk]
	if !ok {
		return GetScale(ctx, r.Live, gvk, ns, name)
	}
	kind := typedKinds[gvk]
	obj := kind.object()
	if err := r.get(ctx, gvk, client.ObjectKey{Namespace: ns, Name: name}, obj, client.UnsafeDisableDeepCopy); err != nil { // only read
		return nil, err
	}
	sel, err := kind.selector(obj)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: %w", gvk.Kind, ns, name, err)
	}
	spec, status := read(obj)
	s := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: obj.GetUID(), ResourceVersion: obj.GetResourceVersion(),
		CreationTimestamp: obj.GetCreationTimestamp()}}
	s.Spec.Replicas = 1
	if spec != nil {
		s.Spec.Replicas = *spec
	}
	s.Status.Replicas, s.Status.Selector = status, sel.String()
	return s, nil
}

// KindGVK is the group, version and kind of a well-known workload kind named by its kind alone (as
// kube-state-metrics names owners, e.g. "Deployment").
func KindGVK(kind string) (schema.GroupVersionKind, bool) {
	for gvk := range typedKinds {
		if gvk.Kind == kind {
			return gvk, true
		}
	}
	return schema.GroupVersionKind{}, false
}
