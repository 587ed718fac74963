package workload

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// maxOwnerDepth bounds the walk up the controller chain (a cycle of owner references must not hang a caller).
const maxOwnerDepth = 8

// cacheWait bounds a cache read in the owner walk before it falls back to the API server.
const cacheWait = time.Second

// Ref names a workload by group, kind and name (the version does not matter for identity).
type Ref struct {
	Group, Kind, Name string
}

func (r Ref) String() string {
	if r.Group == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "." + r.Group + "/" + r.Name
}

// RefOf makes a Ref from an apiVersion, a kind and a name (a targetRef's or an ownerReference's fields). A
// well-known workload kind named without its group, or with a legacy one, is that kind (Canonical).
func RefOf(apiVersion, kind, name string) Ref {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return Ref{Kind: kind, Name: name}
	}
	return Ref{Group: Canonical(gv.WithKind(kind)).Group, Kind: kind, Name: name}
}

// Canonical is the served group, version and kind of a well-known workload kind (Deployment, StatefulSet,
// ReplicaSet, DaemonSet, Job, CronJob, ReplicationController) named with an empty apiVersion, or a group or
// version no longer served (extensions/v1beta1, apps/v1beta2, batch/v1beta1): upstream's VPA matches these
// kinds by kind and name alone, and a targetRef's apiVersion is optional. Any other gvk is returned as it is
// (a kind of that name in another group is another kind).
func Canonical(gvk schema.GroupVersionKind) schema.GroupVersionKind {
	served, ok := servedKinds[gvk.Kind]
	if ok && (gvk.Group == served.Group || gvk.Group == "" || (gvk.Group == "extensions" && served.Group == "apps")) {
		return served
	}
	return gvk
}

// servedKinds are the well-known workload kinds (typedKinds) by kind name.
var servedKinds = func() map[string]schema.GroupVersionKind {
	out := map[string]schema.GroupVersionKind{}
	for gvk := range typedKinds {
		out[gvk.Kind] = gvk
	}
	return out
}()

// TopController follows an object's controller ownerReferences up to the top-most controller (a pod's
// Deployment through its ReplicaSet, a CronJob through its Job), reading only metadata. cached serves the
// reads of the well-known workload kinds (CachedOwnerKinds); live (may be nil) answers when the cache has not
// seen a just-created owner yet, and reads every other kind: an ownerReference is written by whoever creates
// the object, so the kinds it names must never start an informer (a watch of every object of any kind the
// caller may read, kept in memory). Without live, the walk ends at an owner of another kind. An owner of
// another kind counts only with a scale subresource (scalable): at one without (an operator's custom
// resource that owns a Deployment), the walk ends below it, as upstream's VPA finds the top-most well-known
// or scalable controller. An owner that cannot be read ends the walk there. ok is false when the object has
// no controller that counts.
func TopController(ctx context.Context, cached client.Reader, live client.Client, namespace string, obj metav1.Object) (Ref, bool, error) {
	owner := metav1.GetControllerOfNoCopy(obj)
	if owner == nil {
		return Ref{}, false, nil
	}
	var top Ref
	found := false
	for range maxOwnerDepth {
		// a well-known kind named with a group or version no longer served (an old ownerReference) is read as
		// the served kind
		gvk := Canonical(schema.FromAPIVersionAndKind(owner.APIVersion, owner.Kind))
		if !CachedOwnerKinds[gvk] && live == nil {
			return RefOf(owner.APIVersion, owner.Kind, owner.Name), true, nil
		}
		if gvk.Group == "" && gvk.Kind == "Node" {
			return top, found, nil // a mirror pod's node: no workload, and never asked for (upstream skips it too)
		}
		if !CachedOwnerKinds[gvk] {
			// a kind not well known is a workload only with a scale subresource (upstream's rule: the top-most
			// well-known or scalable controller); at one without, the walk ends below it
			if ok, err := scalable(ctx, live, gvk, namespace, owner.Name); err != nil {
				return top, found, fmt.Errorf("reading the scale of %s %s/%s: %w", owner.Kind, namespace, owner.Name, err)
			} else if !ok {
				return top, found, nil
			}
		}
		top, found = RefOf(owner.APIVersion, owner.Kind, owner.Name), true
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		err := readOwner(ctx, cached, live, gvk, client.ObjectKey{Namespace: namespace, Name: owner.Name}, m)
		switch {
		case apierrors.IsNotFound(err), isNoMatch(err):
			return top, true, nil // a kind the API does not serve, or gone: the walk ends at what is known
		case apierrors.IsForbidden(err) && !CachedOwnerKinds[gvk]:
			// a scalable kind whose objects hvpa may not read (only their scale: the chart's
			// rbac.readScaleOfAnyKind): the walk ends at it, as upstream's, which reads no further than the scale
			return top, true, nil
		case err != nil:
			return top, true, fmt.Errorf("reading %s %s/%s: %w", owner.Kind, namespace, owner.Name, err)
		}
		next := metav1.GetControllerOfNoCopy(m)
		if next == nil {
			return top, true, nil
		}
		owner = next
	}
	return top, true, fmt.Errorf("%s %s/%s: controller chain deeper than %d", top.Kind, namespace, top.Name, maxOwnerDepth)
}

// CachedOwnerKinds are the owner kinds TopController reads from the cache: the well-known workload kinds
// (apps/v1 Deployment, StatefulSet, ReplicaSet, DaemonSet; batch/v1 Job, CronJob; v1 ReplicationController),
// a fixed set of informers. Any other kind is read live.
var CachedOwnerKinds = func() map[schema.GroupVersionKind]bool {
	out := map[schema.GroupVersionKind]bool{}
	for gvk := range typedKinds {
		out[gvk] = true
	}
	return out
}()

// readOwner reads an owner's metadata: a well-known kind from the cache (from live when the cache has not
// seen it yet, or its informer does not sync within cacheWait), any other kind from live only.
func readOwner(ctx context.Context, cached, live client.Reader, gvk schema.GroupVersionKind, key client.ObjectKey, m *metav1.PartialObjectMetadata) error {
	if !CachedOwnerKinds[gvk] {
		return live.Get(ctx, key, m)
	}
	// a cache read of a kind not yet cached starts an informer and waits for its sync; bound that wait
	// (a kind the caller may not list never syncs) and ask the API server instead
	cctx, cancel := context.WithTimeout(ctx, cacheWait)
	err := cached.Get(cctx, key, m)
	timedOut := err != nil && ctx.Err() == nil && cctx.Err() != nil // read before cancel, which always sets it
	cancel()
	if live != nil && (apierrors.IsNotFound(err) || timedOut) {
		err = live.Get(ctx, key, m)
	}
	return err
}
