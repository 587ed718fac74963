package hvpa

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/scaling"
)

// nodeRoom reads the Nodes and DaemonSets (from the cache) into the room of the largest node a pod of spec may
// be scheduled on (its tolerations, nodeSelector and required node affinity), which caps the intervals'
// per-pod maxima (scaling.State.NodeRoom); nil when they cannot be read (no cap, logged).
func nodeRoom(ctx context.Context, c client.Client, spec *corev1.PodSpec) *scaling.NodeRoom {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes); err != nil {
		logf.FromContext(ctx).Error(err, "listing nodes; per-pod maxima are not capped to the largest node")
		return nil
	}
	var daemonSets appsv1.DaemonSetList
	if err := c.List(ctx, &daemonSets); err != nil {
		logf.FromContext(ctx).Error(err, "listing DaemonSets; per-pod maxima are not capped to the largest node")
		return nil
	}
	return scaling.NewNodes(nodes.Items, daemonSets.Items).RoomFor(spec)
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
