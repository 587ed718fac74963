package hvpa

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/internal/nodecap"
	"github.com/hvpa-dev/hvpa/scaling"
)

// nodeRooms keeps the nodes' room (scaling.Nodes: every node's allocatable less its DaemonSets' requests)
// between reconciles: read from the cache when first asked for and again after a Node or DaemonSet changed in
// what it reads (watch, set up with the manager). Building it reads every node against every DaemonSet, which
// every reconcile did for its one RoomFor (BenchmarkNodeRooms). Unwatched (a Reconciler not set up with a
// manager) it is read again at every ask.
type nodeRooms struct {
	mu      sync.Mutex
	watched bool
	changes atomic.Uint64 // bumped by the watch on a change that matters
	built   uint64        // changes when nodes was read
	nodes   *scaling.Nodes
}

// get returns the nodes' room; nil when the Nodes or DaemonSets cannot be read (no cap, logged).
func (n *nodeRooms) get(ctx context.Context, c client.Reader) *scaling.Nodes {
	n.mu.Lock()
	defer n.mu.Unlock()
	seen := n.changes.Load() // before the read: a change during it makes the next ask read again
	if n.watched && n.nodes != nil && n.built == seen {
		return n.nodes
	}
	nodes, err := nodecap.Read(ctx, c)
	if err != nil {
		logf.FromContext(ctx).Error(err, "reading the nodes' room; per-pod maxima are not capped to the largest node")
	}
	n.nodes, n.built = nodes, seen
	return nodes
}

// watch bumps changes at every Node or DaemonSet added or deleted, and at every update that changes what
// scaling.NewNodes reads (nodeChanged, daemonSetChanged): a node's heartbeat or a DaemonSet's status is none.
func (n *nodeRooms) watch(ctx context.Context, informers cache.Informers) error {
	for _, w := range []struct {
		obj     client.Object
		changed func(old, cur any) bool
	}{{&corev1.Node{}, nodeChanged}, {&appsv1.DaemonSet{}, daemonSetChanged}} {
		inf, err := informers.GetInformer(ctx, w.obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watching %T for the node cap: %w", w.obj, err)
		}
		bump := func() { n.changes.Add(1) }
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { bump() },
			DeleteFunc: func(any) { bump() },
			UpdateFunc: func(old, cur any) {
				if w.changed(old, cur) {
					bump()
				}
			},
		}); err != nil {
			return fmt.Errorf("watching %T for the node cap: %w", w.obj, err)
		}
	}
	n.watched = true
	return nil
}

// nodeChanged reports whether a node update changes its room or which pods may go there: its labels, cordon,
// taints or allocatable (anything else when the objects are not nodes).
func nodeChanged(old, cur any) bool {
	a, ok1 := old.(*corev1.Node)
	b, ok2 := cur.(*corev1.Node)
	if !ok1 || !ok2 {
		return true
	}
	return !equality.Semantic.DeepEqual(a.Labels, b.Labels) || a.Spec.Unschedulable != b.Spec.Unschedulable ||
		!equality.Semantic.DeepEqual(a.Spec.Taints, b.Spec.Taints) || !equality.Semantic.DeepEqual(a.Status.Allocatable, b.Status.Allocatable)
}

// daemonSetChanged reports whether a DaemonSet update changes its spec (its generation: its pods' requests
// and where they run), not only its status.
func daemonSetChanged(old, cur any) bool {
	a, ok1 := old.(*appsv1.DaemonSet)
	b, ok2 := cur.(*appsv1.DaemonSet)
	return !ok1 || !ok2 || a.Generation != b.Generation
}

// nodeCapEvent tells, once the status is written, that the per-pod maxima became capped to the largest node
// (wasCapped: CappedToNode was true before this decision).
func (r *Reconciler) nodeCapEvent(op *scaleOp, h *hvpav1alpha1.Hvpa, wasCapped bool) {
	c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionCappedToNode)
	if c == nil || c.Status != metav1.ConditionTrue || wasCapped {
		return
	}
	msg := c.Message
	op.later(func() { r.event(h, corev1.EventTypeNormal, hvpav1alpha1.EventCappedToNode, msg) })
}

// podsFollowIntent reports whether the updater brings h's running pods to its intent: it acts in h's
// updateMode (vpav1.UpdateMode.UpdaterActs: not Off or Initial, InPlace with its gate on), and where it
// resizes in place only (InPlace) the cluster serves pods/resize. Without it a scale-in does not wait for
// pods to be resized (State.PodsResizing): they never would be, and every scale-in would be held.
func (r *Reconciler) podsFollowIntent(h *hvpav1alpha1.Hvpa) bool {
	mode := h.PodUpdateMode()
	return mode.UpdaterActs(r.Gates != nil && r.Gates.Enabled(features.InPlace)) && !(mode == vpav1.UpdateModeInPlace && r.NoInPlaceResize)
}

// inPlaceCondition sets InPlaceUnavailable while the cluster serves no pods/resize and h's updateMode resizes
// in place (InPlaceOrRecreate, the default, or InPlace); it removes it otherwise.
func (r *Reconciler) inPlaceCondition(h *hvpav1alpha1.Hvpa, now time.Time) {
	mode := h.PodUpdateMode()
	if !r.NoInPlaceResize || !mode.ResizesInPlace() {
		meta.RemoveStatusCondition(&h.Status.Conditions, hvpav1alpha1.ConditionInPlaceUnavailable)
		return
	}
	what := "pods are evicted instead"
	if mode == vpav1.UpdateModeInPlace {
		what = "pods are left as they are (updateMode InPlace never evicts)"
	}
	setCondition(h, hvpav1alpha1.ConditionInPlaceUnavailable, true, hvpav1alpha1.ReasonNoResizeSubresource,
		fmt.Sprintf("the cluster (Kubernetes %s) serves no pods/resize: %s; in-place resize is on by default from Kubernetes 1.33", r.KubernetesVersion, what), now)
}
