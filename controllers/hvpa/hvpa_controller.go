// Package hvpa is the Hvpa controller: it keeps an Hvpa's scale subresource current, owns the HPA that
// targets it, runs the scaling decision (package scaling) on the target's state, the HPA's desired replicas
// and the embedded recommendation, applies replicas through the target's /scale, and publishes the per-pod
// sizing intent in status.desired for the admission webhook and the updater. It never edits pods or the
// target's pod template.
package hvpa

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/hvpa-dev/hvpa/apis/autoscaling/decodeerr"
	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/hvpacycle"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/internal/heartbeat"
	"github.com/hvpa-dev/hvpa/internal/podstore"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/adaptive"
	"github.com/hvpa-dev/hvpa/scaling"
)

// RecommendationSource gives the embedded recommendation of an Hvpa (the recommender in this process), and
// whether the recommender has published its first round of them in this process.
type RecommendationSource interface {
	HvpaRecommendation(types.NamespacedName) (recommender.HvpaRecommendation, bool)
	HvpaRecommendationsPublished() bool
}

// Reconciler reconciles Hvpa objects.
type Reconciler struct {
	// Client reads the Hvpa from the cache. A reconcile that decides from a copy older than the stored one
	// (the cache behind this controller's own last write, or another writer's) writes nothing: its status
	// patch carries the resourceVersion it read and is refused (patchStatus), and it decides again.
	Client client.Client
	// Targets resolves targetRefs and reads the targets' scale, from the cache for the well-known kinds.
	Targets         *workload.Resolver
	Recommendations RecommendationSource // nil: no embedded recommender runs in this process
	// Recorder writes core/v1 events: unlike the events.k8s.io series, which keeps only the first note of
	// events with the same reason, it keeps every scaling's before -> after message.
	Recorder record.EventRecorder
	Clock    clock.PassiveClock
	// SyncPeriod is how often an Hvpa is decided again without a change to it (new recommendations, usage).
	SyncPeriod time.Duration
	Metrics    *Metrics
	// undecodable: Hvpas that do not decode, with the resourceVersion their condition was written at
	undecodableMu sync.Mutex
	undecodable   map[types.NamespacedName]string

	// RecommenderName is the name hvpa's recommender serves ("": "default"): a VPA on an Hvpa's workload that
	// another recommender serves, or whose updateMode is Off, only observes and never stops the Hvpa.
	RecommenderName string

	// Gates are the feature gates (RequestToLimitRatio: the containers' requestToLimitRatio counts only when
	// on; nil: every gate at its default).
	Gates featuregate.FeatureGate

	// Liveness, when set, sends probes through the controller's queue (its source) and Reconcile answers them.
	Liveness *Liveness

	// RecommenderInterval is the recommender's --recommender-interval (0: 1 minute): the embedded recommendation
	// in status is stale after StaleAfter, 3 intervals + 5 minutes without the recommender providing it.
	RecommenderInterval time.Duration
	// Model is the recommender's model configuration (nil: recommender.Defaults()): the override annotations
	// the recommender refuses on an Hvpa are reported against it.
	Model *recommender.Config

	// LowConfidenceDays: below this confidence (days of history) of the embedded recommendation, the Hvpa's
	// LowConfidence condition is true and scale-downs decided from it (replicas and per-pod) are blocked. 0: 1 day.
	LowConfidenceDays float64
	// Tracking overrides the load-following total's parameters (nil: scaling.DefaultTracking); the demo
	// shortens its windows with its compressed time.
	Tracking *scaling.Tracking

	// NoInPlaceResize: the cluster (KubernetesVersion) serves no pods/resize, found by discovery at start: Hvpas
	// whose updateMode resizes in place get InPlaceUnavailable.
	NoInPlaceResize   bool
	KubernetesVersion string

	nodes nodeRooms // the nodes' room, kept between reconciles (watched when set up with a manager)
}

var _ reconcile.Reconciler = (*Reconciler)(nil)

// NewReconciler returns a Reconciler.
func NewReconciler(c client.Client, recs RecommendationSource, rec record.EventRecorder, clk clock.PassiveClock, sync time.Duration, m *Metrics) *Reconciler {
	if m == nil {
		m = NewMetrics(nil)
	}
	return &Reconciler{Client: c, Targets: workload.NewResolver(c, c), Recommendations: recs, Recorder: rec, Clock: clk, SyncPeriod: sync, Metrics: m}
}

// SetupWithManager registers the controller and its field indexes: Hvpas and the HPAs they own, and the
// pods their targets select.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := SetupIndexes(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	if err := r.nodes.watch(context.Background(), mgr.GetCache()); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).For(&hvpav1alpha1.Hvpa{}).Owns(&autoscalingv2.HorizontalPodAutoscaler{}).Named("hvpa").
		// pods coming, going, starting or restarting (an OOM kill) change what the decision sees
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.hvpasOfPod), builder.WithPredicates(podChanged)).
		// an HPA the Hvpa did not create (a user's, KEDA's) that targets it: its metrics and bounds are the input's;
		// one that scales the Hvpa's workload directly, and a VPA of that workload: whether the Hvpa acts at all
		// (notServing), told at once instead of at the next sync
		Watches(&autoscalingv2.HorizontalPodAutoscaler{}, handler.EnqueueRequestsFromMapFunc(r.hvpasOfHPA), builder.WithPredicates(hpaChanged)).
		Watches(&vpav1.VerticalPodAutoscaler{}, handler.EnqueueRequestsFromMapFunc(r.hvpasOfVPA), builder.WithPredicates(predicate.GenerationChangedPredicate{}))
	for _, s := range r.channels() {
		b = b.WatchesRawSource(s)
	}
	return b.Complete(r)
}

// channels are the controller's sources that are not watches: the embedded recommendation changed (the
// recommender in this process says which Hvpa), and the liveness probes.
func (r *Reconciler) channels() []source.Source {
	var out []source.Source
	if n, ok := r.Recommendations.(interface {
		HvpaChanges() <-chan event.GenericEvent
	}); ok {
		out = append(out, source.Channel(n.HvpaChanges(), &handler.EnqueueRequestForObject{}))
	}
	if r.Liveness != nil {
		out = append(out, source.Channel(r.Liveness.probes, &handler.EnqueueRequestForObject{}))
	}
	return out
}

// hvpasOfPod maps a pod to the Hvpas of its namespace whose target selects it: the Hvpas indexed under one
// of the pod's labels (IndexHvpaPodLabel) or under IndexAnyPod, read from the cache without copying them
// (read only), then matched against their whole selector.
func (r *Reconciler) hvpasOfPod(ctx context.Context, pod client.Object) []reconcile.Request {
	podLabels := labels.Set(pod.GetLabels())
	keys := make([]string, 0, len(podLabels)+1)
	for k, v := range podLabels {
		keys = append(keys, k+"="+v)
	}
	keys = append(keys, IndexAnyPod)
	seen := map[string]bool{}
	var out []reconcile.Request
	for _, key := range keys {
		var l hvpav1alpha1.HvpaList
		if err := r.Client.List(ctx, &l, client.InNamespace(pod.GetNamespace()), client.MatchingFields{IndexHvpaPodLabel: key}, client.UnsafeDisableDeepCopy); err != nil {
			logf.FromContext(ctx).V(1).Info("listing the Hvpas of a pod", "pod", pod.GetName(), "error", err.Error())
			return nil
		}
		for i := range l.Items {
			h := &l.Items[i]
			if seen[h.Name] {
				continue
			}
			seen[h.Name] = true
			if sel, err := labels.Parse(h.Status.Selector); err == nil && sel.Matches(podLabels) {
				out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: h.Namespace, Name: h.Name}})
			}
		}
	}
	return out
}

// hvpasOfHPA maps an HPA to the Hvpa its scaleTargetRef names, if it names one, else to the Hvpas of its
// namespace whose workload it scales directly (by kind and name, as notServing compares them).
func (r *Reconciler) hvpasOfHPA(ctx context.Context, o client.Object) []reconcile.Request {
	hpa, ok := o.(*autoscalingv2.HorizontalPodAutoscaler)
	if !ok {
		return nil
	}
	ref := hpa.Spec.ScaleTargetRef
	if scaling.TargetsHvpa(hpa, ref.Name) {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: hpa.Namespace, Name: ref.Name}}}
	}
	return r.hvpasTargeting(ctx, hpa.Namespace, func(t autoscalingv2.CrossVersionObjectReference) bool {
		return t.Kind == ref.Kind && t.Name == ref.Name
	})
}

// hvpasOfVPA maps a VPA to the Hvpas of its namespace that target its workload (workload.RefKey).
func (r *Reconciler) hvpasOfVPA(ctx context.Context, o client.Object) []reconcile.Request {
	v, ok := o.(*vpav1.VerticalPodAutoscaler)
	if !ok || v.Spec.TargetRef == nil {
		return nil
	}
	key := workload.RefKey(v.Spec.TargetRef.APIVersion, v.Spec.TargetRef.Kind, v.Spec.TargetRef.Name)
	return r.hvpasTargeting(ctx, v.Namespace, func(t autoscalingv2.CrossVersionObjectReference) bool {
		return workload.RefKey(t.APIVersion, t.Kind, t.Name) == key
	})
}

// hvpasTargeting lists the Hvpas of namespace ns whose targetRef same accepts (from the cache, without copies).
func (r *Reconciler) hvpasTargeting(ctx context.Context, ns string, same func(autoscalingv2.CrossVersionObjectReference) bool) []reconcile.Request {
	var l hvpav1alpha1.HvpaList
	if err := r.Client.List(ctx, &l, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		logf.FromContext(ctx).Error(err, "listing the Hvpas of a namespace for an autoscaler's event", "namespace", ns)
		return nil
	}
	var out []reconcile.Request
	for i := range l.Items {
		if same(l.Items[i].Spec.TargetRef) {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: l.Items[i].Name}})
		}
	}
	return out
}

// hpaChanged passes an HPA's creation and deletion, and its updates that matter to an Hvpa: any of one that
// targets an Hvpa (its status is the input), a spec change of another (its scaleTargetRef).
var hpaChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		after, ok := e.ObjectNew.(*autoscalingv2.HorizontalPodAutoscaler)
		if !ok {
			return false
		}
		return scaling.TargetsHvpa(after, after.Spec.ScaleTargetRef.Name) || e.ObjectOld.GetGeneration() != after.GetGeneration()
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// podChanged passes pod creations and deletions and the updates the decision cares about: phase, deletion,
// container restarts, readiness (the HPA's reading waits for every pod to be ready, and for a start's
// readiness to age: scaling.HPAPods).
var podChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		before, ok1 := e.ObjectOld.(*corev1.Pod)
		after, ok2 := e.ObjectNew.(*corev1.Pod)
		if !ok1 || !ok2 {
			return false
		}
		return before.Status.Phase != after.Status.Phase || (before.DeletionTimestamp == nil) != (after.DeletionTimestamp == nil) ||
			restarts(before) != restarts(after) || podstore.IsReady(before) != podstore.IsReady(after)
	},
	GenericFunc: func(event.GenericEvent) bool { return false },
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, cs := range p.Status.ContainerStatuses {
		n += cs.RestartCount
	}
	return n
}

// HPAName is the name of the HPA an Hvpa owns.
func HPAName(h *hvpav1alpha1.Hvpa) string { return h.Name }

// Reconcile decides one Hvpa and applies the decision.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	if r.Liveness.answer(req.NamespacedName) {
		return reconcile.Result{}, nil
	}
	h := &hvpav1alpha1.Hvpa{}
	if err := r.Client.Get(ctx, req.NamespacedName, h); err != nil {
		if apierrors.IsNotFound(err) {
			r.Metrics.forget(req.Namespace, req.Name) // no series of a deleted Hvpa stay behind
			r.forgetUndecodable(req.NamespacedName)
		}
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	now := r.Clock.Now()
	if h.DecodeError != "" {
		return reconcile.Result{}, client.IgnoreNotFound(r.reportUndecodable(ctx, h, now))
	}
	if !h.DeletionTimestamp.IsZero() {
		// being deleted (a foreground deletion waits for the garbage collector to remove its HPA): it neither
		// scales its target nor creates its HPA again
		return reconcile.Result{}, nil
	}
	orig := h.DeepCopy()
	op := &scaleOp{}
	res, err := r.reconcile(ctx, h, now, op)
	if apierrors.IsConflict(err) {
		// its own spec write (setOwnReplicas) met a newer version: decided from a stale read, so nothing of it
		// is written or told, and the Hvpa is decided again
		logf.FromContext(ctx).V(1).Info("spec changed since it was read; deciding again")
		return reconcile.Result{RequeueAfter: conflictRetry}, nil
	}
	// the version the decision was made from: this reconcile's own spec write (setOwnReplicas, made with the
	// version read) included, which would otherwise fail the status write with a conflict and waste a round
	orig.ResourceVersion = h.ResourceVersion
	if err == nil {
		h.Status.ObservedGeneration = h.Generation // decided in full; a failed reconcile leaves the last one
	}
	perr := r.patchStatus(ctx, orig, h, op.scale != nil)
	switch {
	case apierrors.IsNotFound(perr):
		return reconcile.Result{}, nil // deleted since it was read: nothing is applied or told
	case apierrors.IsConflict(perr):
		// decided from a read a later write has overtaken (another writer's, or this controller's own that
		// the cache does not show yet): nothing is applied or told, and the Hvpa is decided again
		logf.FromContext(ctx).V(1).Info("status changed since it was read; deciding again")
		return reconcile.Result{RequeueAfter: conflictRetry}, nil
	case perr != nil && err == nil:
		err = perr
	}
	if perr != nil {
		return res, err
	}
	for _, f := range op.after {
		f()
	}
	// the scaling is applied only after the status that records it is written: a stop in between leaves a
	// recorded scaling that the next reconcile finishes (pendingScaling), never one applied but unrecorded; it
	// is told once applied, and a refusal is told instead (a warning event; the error is retried)
	if op.scale != nil {
		if serr := workload.UpdateScale(ctx, r.Client, op.gvk, h.Namespace, op.scale.Name, op.scale); apierrors.IsConflict(serr) {
			// the target changed since its scale was read (a rollout's status, a cache behind this controller's
			// own write): not a refusal; the recorded scaling is finished from a fresh read (pendingScaling)
			logf.FromContext(ctx).V(1).Info("the target changed since its scale was read; scaling again", "target", op.scale.Name)
			return reconcile.Result{RequeueAfter: conflictRetry}, err
		} else if serr != nil {
			serr = fmt.Errorf("scaling %s %s to %d: %w", op.gvk.Kind, op.scale.Name, op.scale.Spec.Replicas, serr)
			r.event(h, corev1.EventTypeWarning, hvpav1alpha1.EventScaleFailed, serr.Error()+"; retried")
			return res, cmp.Or(err, serr)
		}
		logf.FromContext(ctx).V(1).Info("scaled", "target", op.scale.Name, "to", op.scale.Spec.Replicas)
	}
	for _, f := range op.scaled {
		f()
	}
	return res, err
}

// reportUndecodable marks an Hvpa stored before the CRD's rules that does not decode (its metadata only): a
// ConfigUnsupported condition and an event with the field and the fix, written once per resourceVersion (its
// status reads back empty); the event alone when the API server refuses the status write as invalid. It
// neither scales nor requeues: the edit that fixes it brings it back.
func (r *Reconciler) reportUndecodable(ctx context.Context, h *hvpav1alpha1.Hvpa, now time.Time) error {
	key := types.NamespacedName{Namespace: h.Namespace, Name: h.Name}
	r.undecodableMu.Lock()
	seen := r.undecodable[key]
	r.undecodableMu.Unlock()
	if seen == h.ResourceVersion {
		return nil
	}
	orig := h.DeepCopy()
	op := &scaleOp{}
	r.unsupported(op, h, now, decodeerr.Reason, h.DecodeError)
	if err := r.patchStatus(ctx, orig, h, false); err != nil {
		if !apierrors.IsInvalid(err) {
			return err // transient: retried
		}
		// the API server refuses any write to this object (a CRD rule that fails on the stored value): the
		// event and the log are the report, and retrying would only repeat the refusal
		logf.FromContext(ctx).Info("Hvpa does not decode and its status cannot be written; reported by event only", "hvpa", key.String(), "error", err.Error())
	}
	for _, f := range op.after {
		f()
	}
	r.undecodableMu.Lock()
	if r.undecodable == nil {
		r.undecodable = map[types.NamespacedName]string{}
	}
	r.undecodable[key] = h.ResourceVersion // the patch's response
	r.undecodableMu.Unlock()
	logf.FromContext(ctx).Info("Hvpa does not decode; reported in its status", "hvpa", key.String(), "error", h.DecodeError)
	return nil
}

// scaleOp is what a reconcile does once its status is written: the /scale write, and the events and counters
// that tell of the status change (a refused status write, e.g. a conflict, repeats none of them).
type scaleOp struct {
	gvk   schema.GroupVersionKind
	scale *autoscalingv1.Scale
	after []func()
	// scaled are told once the scaling is applied (the status written, and the target's scale when it
	// changes replicas)
	scaled []func()
}

// later runs f once the status is written.
func (op *scaleOp) later(f func()) { op.after = append(op.after, f) }

// whenScaled runs f once the scaling is applied: not when the target's scale refuses its replicas.
func (op *scaleOp) whenScaled(f func()) { op.scaled = append(op.scaled, f) }

// conflictRetry is how soon an Hvpa whose status write met a newer version is decided again.
const conflictRetry = 100 * time.Millisecond

// pendingScalingWindow is how long after a recorded scaling a target still at its fromReplicas is taken as
// not scaled yet (the process stopped between the status write and the /scale write) and finished.
const pendingScalingWindow = 5 * time.Minute

// pendingScaling reports whether status records a scaling that the target's scale does not show yet: the
// target is still at the record's fromReplicas, shortly after it, and the spec is the one it was decided
// from (after a spec change, a new targetRef above all, the record may be of another workload: decide anew).
func pendingScaling(h *hvpav1alpha1.Hvpa, scale *autoscalingv1.Scale, now time.Time) bool {
	ls := h.Status.LastScaling
	return ls != nil && ls.FromReplicas != ls.ToReplicas && scale.Spec.Replicas == ls.FromReplicas && now.Sub(ls.Time.Time) < pendingScalingWindow &&
		h.Status.ObservedGeneration == h.Generation
}

// forgetUndecodable forgets a deleted Hvpa's undecodable report.
func (r *Reconciler) forgetUndecodable(key types.NamespacedName) {
	r.undecodableMu.Lock()
	defer r.undecodableMu.Unlock()
	delete(r.undecodable, key)
}

func (r *Reconciler) requeue() reconcile.Result { return reconcile.Result{RequeueAfter: r.SyncPeriod} }

// unsupported marks the Hvpa as not acting, with the reason and an event (once per reason).
func (r *Reconciler) unsupported(op *scaleOp, h *hvpav1alpha1.Hvpa, now time.Time, reason, msg string) {
	if c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionConfigUnsupported); c == nil || c.Status != metav1.ConditionTrue || c.Reason != reason {
		op.later(func() { r.event(h, corev1.EventTypeWarning, reason, msg) })
	}
	setCondition(h, hvpav1alpha1.ConditionConfigUnsupported, true, reason, msg, now)
	setCondition(h, hvpav1alpha1.ConditionReady, false, reason, msg, now)
	setCondition(h, hvpav1alpha1.ConditionScalingActive, false, reason, "no scaling while the configuration is unsupported", now)
	r.Metrics.setUnsupported(h, true)
}

// hpaRefused reports a spec.hpa.template the API server refuses as an HPA's spec: Ready and ScalingActive
// false with its message (an event once). Nothing new is decided until the template is corrected, but the
// Hvpa stays supported (ConfigUnsupported untouched): the webhook and the updater keep applying its last
// intent, as they would while the controller is away, instead of leaving new pods at the template's resources.
func (r *Reconciler) hpaRefused(op *scaleOp, h *hvpav1alpha1.Hvpa, now time.Time, msg string) {
	if c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionReady); c == nil || c.Reason != hvpav1alpha1.ReasonHPATemplateRefused {
		op.later(func() { r.event(h, corev1.EventTypeWarning, hvpav1alpha1.ReasonHPATemplateRefused, msg) })
	}
	setCondition(h, hvpav1alpha1.ConditionReady, false, hvpav1alpha1.ReasonHPATemplateRefused, msg, now)
	setCondition(h, hvpav1alpha1.ConditionScalingActive, false, hvpav1alpha1.ReasonHPATemplateRefused, "no new scaling until spec.hpa.template is corrected; the last intent is still applied", now)
}

// reconcile decides h in three steps, the same shape as every controller here: observe (the target, its
// scale and pods, the HPA, the embedded recommendation, into one scaling.State), decide (scaling.Decide,
// pure), apply (the status records the decision; the /scale write and the events follow once it is
// written: see Reconcile). A step that cannot go on reports why in a condition and stops.
func (r *Reconciler) reconcile(ctx context.Context, h *hvpav1alpha1.Hvpa, now time.Time, op *scaleOp) (reconcile.Result, error) {
	spec, errs := scaling.FromHvpa(h)
	if r.Tracking != nil {
		spec.Tracking = *r.Tracking
	}
	if r.Gates == nil || !r.Gates.Enabled(features.RequestToLimitRatio) {
		spec.Policies = scaling.WithoutRatios(spec.Policies) // the intent shows the limits the webhook and updater set
	}
	if len(errs) > 0 {
		r.unsupported(op, h, now, hvpav1alpha1.ReasonInvalidSpec, errs.ToAggregate().Error())
		return reconcile.Result{}, nil // a spec change triggers the next reconcile
	}

	// observe
	t, stop, err := r.resolve(ctx, h, now, op)
	if t == nil {
		return stop, err
	}
	spec.FollowHorizontal(t.horizontal) // the metrics of the HPA that writes spec.replicas, or a replica floor
	rec := r.embedded(h)                // read once: one run's load, usage and confidence
	st, seen, err := r.observe(ctx, h, t.target, t.scale, t.horizontal, rec, now)
	if err != nil {
		return reconcile.Result{}, err
	}
	r.recommendationStatus(h, spec, &st, rec, now)
	st.LowConfidence = r.lowConfidence(h, rec, now)

	// decide
	d, err := scaling.Decide(spec, st)
	if err != nil {
		r.unsupported(op, h, now, hvpav1alpha1.ReasonDecisionFailed, err.Error())
		return r.requeue(), nil
	}

	// apply
	if d.Replicas != st.Replicas {
		t.scale.Spec.Replicas = d.Replicas
		*op = scaleOp{gvk: t.target.GVK, scale: t.scale} // applied once the status recording it is written
	}
	wasCapped := meta.IsStatusConditionTrue(h.Status.Conditions, hvpav1alpha1.ConditionCappedToNode)
	r.record(op, h, d, st, now, seen.pods)
	r.nodeCapEvent(op, h, wasCapped)
	r.inPlaceCondition(h, now)
	if h.Status.HPA != nil {
		h.Status.HPA.Source = t.horizontal.Describe(h)
	}
	return r.requeueFor(h, st, seen.hpa), nil
}

// requeueFor is how soon h is decided again: after the sync period, or as soon as its pods are at work when
// that comes sooner (a pod that became ready from a start, or a replica change, within scaling.HPAReadingAge
// holds back what the HPA's readings say until then, and no event comes when it ends); never sooner than
// minRequeue.
func (r *Reconciler) requeueFor(h *hvpav1alpha1.Hvpa, st scaling.State, hp scaling.HPAPods) reconcile.Result {
	res := r.requeue()
	if st.HPA == nil {
		return res
	}
	if w := max(hp.WarmIn(), hp.ScalingAgesIn(h)); w > 0 && (res.RequeueAfter <= 0 || w < res.RequeueAfter) {
		res.RequeueAfter = max(w, minRequeue)
	}
	return res
}

// minRequeue is the shortest requeueFor asks for.
const minRequeue = time.Second

// resolved is what an Hvpa acts on: its target, the target's scale and who writes the Hvpa's spec.replicas.
type resolved struct {
	target     workload.Target
	scale      *autoscalingv1.Scale
	horizontal scaling.Horizontal
}

// resolve reads the target and its scale and keeps the Hvpa's HPA. It returns nil, with the result to end the
// reconcile with, when the Hvpa cannot act now: its target is unusable or served by another autoscaler (a
// condition says so), or a scaling its status records is still to be finished (op holds it).
func (r *Reconciler) resolve(ctx context.Context, h *hvpav1alpha1.Hvpa, now time.Time, op *scaleOp) (*resolved, reconcile.Result, error) {
	ref := h.Spec.TargetRef
	target, err := r.Targets.Resolve(ctx, h.Namespace, &autoscalingv1.CrossVersionObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name})
	if te := (*workload.TargetError)(nil); errors.As(err, &te) {
		r.unsupported(op, h, now, te.Reason, te.Message)
		return nil, r.requeue(), nil
	} else if err != nil {
		return nil, reconcile.Result{}, err
	}
	if why, err := r.notServing(ctx, h, target); err != nil {
		return nil, reconcile.Result{}, err
	} else if why != "" {
		r.unsupported(op, h, now, hvpav1alpha1.ReasonMultipleAutoscalers, why)
		return nil, r.requeue(), nil
	}
	// the target's scale: the replicas it runs (status, for the HPA) and the replicas it is set to (c)
	scale, err := r.Targets.Scale(ctx, target.GVK, h.Namespace, target.Name)
	if err != nil && !workload.NoScale(err) {
		return nil, reconcile.Result{}, fmt.Errorf("reading the scale of %s %s: %w", target.GVK.Kind, target.Name, err) // transient: retried
	}
	if err != nil {
		r.unsupported(op, h, now, hvpav1alpha1.ReasonNoScaleSubresource, fmt.Sprintf("reading the scale of %s %s: %v", target.GVK.Kind, target.Name, err))
		return nil, r.requeue(), nil
	}
	h.Status.Replicas = scale.Status.Replicas
	h.Status.Selector = target.Selector.String()
	if pendingScaling(h, scale, now) {
		logf.FromContext(ctx).Info("finishing the scaling status records but the target does not show", "from", h.Status.LastScaling.FromReplicas, "to", h.Status.LastScaling.ToReplicas)
		from, to := h.Status.LastScaling.FromReplicas, h.Status.LastScaling.ToReplicas
		scale.Spec.Replicas = to
		*op = scaleOp{gvk: target.GVK, scale: scale}
		op.whenScaled(func() {
			r.event(h, corev1.EventTypeNormal, hvpav1alpha1.EventRescaled, fmt.Sprintf("replicas %d -> %d: the scaling recorded in status, applied now", from, to))
		})
		return nil, r.requeue(), nil
	}
	if err := r.initReplicas(ctx, h, scale); err != nil {
		return nil, reconcile.Result{}, err
	}
	hpa, refused, err := r.reconcileHPA(ctx, h)
	if err != nil {
		return nil, reconcile.Result{}, err
	} else if refused != nil {
		if refused.reason == hvpav1alpha1.ReasonHPATemplateRefused {
			r.hpaRefused(op, h, now, refused.msg) // the Hvpa stays supported: its last intent is still applied
		} else {
			r.unsupported(op, h, now, refused.reason, refused.msg)
		}
		return nil, r.requeue(), nil
	}
	src, err := r.horizontal(ctx, h, hpa)
	if err != nil {
		return nil, reconcile.Result{}, err
	}
	r.Metrics.setUnsupported(h, false)
	setCondition(h, hvpav1alpha1.ConditionConfigUnsupported, false, hvpav1alpha1.ReasonSupported,
		fmt.Sprintf("%s %s selects pods with %s", target.GVK.Kind, target.Name, target.Selector), now)
	return &resolved{target: target, scale: scale, horizontal: src}, reconcile.Result{}, nil
}

// AnnotationOwnReplicas (on an Hvpa) is the spec.replicas value the Hvpa controller wrote itself: the target's
// replicas when spec.replicas was missing, or the last replicas of an HPA that stopped driving the Hvpa
// (deleted, its KEDA ScaledObject removed, spec.hpa.deploy turned off). While spec.replicas still holds it and
// no HPA targets the Hvpa, nobody has asked for replicas; any other value (kubectl scale) is a replica floor.
const AnnotationOwnReplicas = "autoscaling.hvpa.dev/own-replicas"

// ownReplicas reads AnnotationOwnReplicas (nil: none, or not a number).
func ownReplicas(h *hvpav1alpha1.Hvpa) *int32 {
	n, err := strconv.ParseInt(h.Annotations[AnnotationOwnReplicas], 10, 32)
	if err != nil {
		return nil
	}
	return ptr.To(int32(n))
}

// horizontal says who writes h's spec.replicas (scaling.HorizontalOf) from the namespace's HPAs in the cache.
// When the HPA that wrote it last is gone, its last replicas become the controller's own (no floor).
func (r *Reconciler) horizontal(ctx context.Context, h *hvpav1alpha1.Hvpa, owned *autoscalingv2.HorizontalPodAutoscaler) (scaling.Horizontal, error) {
	var hpas autoscalingv2.HorizontalPodAutoscalerList
	if err := r.Client.List(ctx, &hpas, client.InNamespace(h.Namespace)); err != nil {
		return scaling.Horizontal{}, err
	}
	src := scaling.HorizontalOf(h, owned, hpas.Items, ownReplicas(h))
	if !src.Released(h) || h.Spec.Replicas == nil {
		return src, nil
	}
	if err := r.setOwnReplicas(ctx, h, *h.Spec.Replicas); err != nil {
		return src, err
	}
	logf.FromContext(ctx).Info("the HPA that wrote spec.replicas no longer targets this Hvpa: its last replicas are no input", "replicas", *h.Spec.Replicas)
	return scaling.HorizontalOf(h, owned, hpas.Items, ownReplicas(h)), nil
}

// setOwnReplicas patches spec.replicas to n and records it as the controller's own (AnnotationOwnReplicas).
func (r *Reconciler) setOwnReplicas(ctx context.Context, h *hvpav1alpha1.Hvpa, n int32) error {
	patched := h.DeepCopy()
	patched.Spec.Replicas = ptr.To(n)
	if patched.Annotations == nil {
		patched.Annotations = map[string]string{}
	}
	patched.Annotations[AnnotationOwnReplicas] = strconv.Itoa(int(n))
	// with the version read: from a stale read it is refused (a conflict), as the status write would be
	if err := r.Client.Patch(ctx, patched, client.MergeFromWithOptions(h, client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("writing spec.replicas %d: %w", n, err)
	}
	// a spec change: the API server raised the generation, which this reconcile's status observes
	h.Spec.Replicas, h.Annotations, h.ResourceVersion, h.Generation = patched.Spec.Replicas, patched.Annotations, patched.ResourceVersion, patched.Generation
	return nil
}

// initReplicas sets spec.replicas, the HPA's input, when it is missing: the API server cannot serve /scale
// without it, and an HPA treats 0 as "scaling disabled", so it starts at the target's replicas (at least 1)
// and stays 0 only while the target is at 0.
func (r *Reconciler) initReplicas(ctx context.Context, h *hvpav1alpha1.Hvpa, scale *autoscalingv1.Scale) error {
	if h.Spec.Replicas != nil && (*h.Spec.Replicas != 0 || scale.Spec.Replicas == 0) {
		return nil
	}
	return r.setOwnReplicas(ctx, h, max(scale.Spec.Replicas, 1)) // nobody asked for these: no input
}

// recommendationStatus puts the embedded recommendation into status and st: a fresh one (its lastUpdateTime
// refreshed), or the one in status while the recommender has none (after a restart, or while it skips the
// Hvpa), which drives no scale-down once it is stale; none while the embedded recommender is off.
func (r *Reconciler) recommendationStatus(h *hvpav1alpha1.Hvpa, spec *scaling.Spec, st *scaling.State, rec *recommender.HvpaRecommendation, now time.Time) {
	if h.Spec.VPA == nil || !h.Spec.VPA.Deploy {
		h.Status.Recommendation, h.Status.WorkloadRecommendation = nil, nil
		setCondition(h, hvpav1alpha1.ConditionRecommendationProvided, false, hvpav1alpha1.ReasonNoRecommendation,
			"the embedded recommender is off (spec.vpa.deploy) or not running in this process", now)
		return
	}
	if rec != nil {
		// as old as the run that made it, not as the time it is read: the last one a recommender that stopped
		// publishing (its runs fail before) made turns stale like one in status
		made := now
		if !rec.At.IsZero() && rec.At.Before(now) {
			made = rec.At
		}
		h.Status.WorkloadRecommendation = refreshed(h.Status.WorkloadRecommendation, hvpacycle.Status(rec.Load), made, r.StaleAfter()/4)
	}
	st.Recommendation = scaling.LoadRecommendations(h.Status.WorkloadRecommendation)
	if rec != nil {
		st.Recommendation = hvpacycle.WithRecent(st.Recommendation, rec.Load)
	}
	// unknown until the recommender's first run in this process, or while the recommendation it serves has no
	// recent sample (the metrics API failing since the restart): a restart scales nothing; after that run, an
	// Hvpa it does not serve (an override annotation it refuses, say) decides from the recommendation in status
	if rec == nil {
		st.RecentUnknown = r.Recommendations == nil || !r.Recommendations.HvpaRecommendationsPublished()
	} else {
		st.RecentUnknown = !slices.ContainsFunc(rec.Load, func(l recommender.ContainerLoad) bool { return len(l.Recent) > 0 })
	}
	h.Status.WorkloadRecommendation, h.Status.Recommendation = spec.WorkloadView(h.Status.WorkloadRecommendation, st.Replicas, st.Containers)
	st.StaleRecommendation = r.stale(h.Status.WorkloadRecommendation, now)
	r.recommendationCondition(h, st.StaleRecommendation, now)
}

// recommendationCondition sets RecommendationProvided: False with the annotation's error while an override
// annotation keeps the recommender from serving the Hvpa, False RecommendationStale while the recommendation
// in status is stale, True while it is fresh.
func (r *Reconciler) recommendationCondition(h *hvpav1alpha1.Hvpa, stale bool, now time.Time) {
	wr := h.Status.WorkloadRecommendation
	if err := r.overrideError(h); err != nil {
		setCondition(h, hvpav1alpha1.ConditionRecommendationProvided, false, hvpav1alpha1.ReasonInvalidOverride,
			fmt.Sprintf("%v: the embedded recommender skips this Hvpa until the annotation is fixed; %s", err, r.inStatus(wr, stale, now)), now)
		return
	}
	switch {
	case h.Status.Recommendation != nil && stale:
		setCondition(h, hvpav1alpha1.ConditionRecommendationProvided, false, hvpav1alpha1.ReasonRecommendationStale,
			"the embedded recommender has not refreshed the recommendation: "+r.inStatus(wr, stale, now), now)
	case h.Status.Recommendation != nil:
		setCondition(h, hvpav1alpha1.ConditionRecommendationProvided, true, hvpav1alpha1.ReasonRecommendationProvided,
			fmt.Sprintf("recommendation for %d containers", len(h.Status.Recommendation.ContainerRecommendations)), now)
	default:
		msg := "no recommendation yet"
		if r.Recommendations == nil {
			msg = "the embedded recommender is off (spec.vpa.deploy) or not running in this process"
		}
		setCondition(h, hvpav1alpha1.ConditionRecommendationProvided, false, hvpav1alpha1.ReasonNoRecommendation, msg, now)
	}
}

// StaleAfter is how old the embedded recommendation in status may get (since the recommender last provided
// it) before it is stale: the recommender loop's own liveness bound, 3 recommender intervals + 5 minutes. A
// recommender that runs provides it every interval; one that skips the Hvpa (a bad override annotation, an
// invalid spec) or has stopped does not.
func (r *Reconciler) StaleAfter() time.Duration {
	interval := r.RecommenderInterval
	if interval <= 0 {
		interval = time.Minute
	}
	return heartbeat.StallAfter(interval)
}

// stale reports whether the recommendation in status is older than StaleAfter; one without lastUpdateTime
// (written before it existed, and not provided since) is of unknown age and stale too.
func (r *Reconciler) stale(wr *hvpav1alpha1.WorkloadRecommendation, now time.Time) bool {
	if wr == nil || len(wr.Containers) == 0 {
		return false
	}
	return wr.LastUpdateTime == nil || now.Sub(wr.LastUpdateTime.Time) > r.StaleAfter()
}

// inStatus says what the recommendation in status is worth now.
func (r *Reconciler) inStatus(wr *hvpav1alpha1.WorkloadRecommendation, stale bool, now time.Time) string {
	switch {
	case wr == nil || len(wr.Containers) == 0:
		return "there is no recommendation in status"
	case wr.LastUpdateTime == nil:
		return "the recommendation in status has no lastUpdateTime (written before it existed) and is taken as stale: scale-downs from it (replicas and per pod) are held; scale-ups still follow it"
	case stale:
		// no elapsed time: a message that changes at every reconcile is a status write at every reconcile, and
		// each write wakes the Hvpa again
		return fmt.Sprintf("the recommendation in status was last updated at %s, more than %s ago (3 recommender intervals + 5 minutes), and is stale: "+
			"scale-downs from it (replicas and per pod) are held; scale-ups still follow it", wr.LastUpdateTime.UTC().Format(time.RFC3339), r.StaleAfter())
	}
	return fmt.Sprintf("the recommendation in status, last updated at %s, is used until it is older than %s, then scale-downs from it are held",
		wr.LastUpdateTime.UTC().Format(time.RFC3339), r.StaleAfter())
}

// overrideError is why the embedded recommender skips h for its annotations (nil when it does not): an
// override annotation that does not parse (recommender.WithOverrides, on the recommender's model), or a model
// other than upstream, which the embedded recommender does not run for Hvpas in this version.
func (r *Reconciler) overrideError(h *hvpav1alpha1.Hvpa) error {
	base := recommender.Defaults()
	if r.Model != nil {
		base = *r.Model
	}
	if _, err := recommender.WithOverrides(base, h.Annotations); err != nil {
		return err
	}
	v := strings.TrimSpace(h.Annotations[adaptive.AnnotationModel])
	name, err := adaptive.ParseModel(v)
	if err != nil {
		return fmt.Errorf("annotation %s: %w", adaptive.AnnotationModel, err)
	}
	if name != adaptive.ModelUpstream {
		return fmt.Errorf("annotation %s: %q: an Hvpa's embedded recommender runs the %s model only in this version; remove the annotation or set it to %s",
			adaptive.AnnotationModel, v, adaptive.ModelUpstream, adaptive.ModelUpstream)
	}
	return nil
}

// refreshed is next (the recommender's recommendation now) with its lastUpdateTime: the one of prev while the
// load and its bounds are the same and prev's is less than every old, else now.
func refreshed(prev, next *hvpav1alpha1.WorkloadRecommendation, now time.Time, every time.Duration) *hvpav1alpha1.WorkloadRecommendation {
	if next == nil {
		return nil
	}
	t := metav1.NewTime(now).Rfc3339Copy()
	if prev != nil && prev.LastUpdateTime != nil && now.Sub(prev.LastUpdateTime.Time) < every && sameLoad(prev, next) {
		t = *prev.LastUpdateTime
	}
	next.LastUpdateTime = &t
	return next
}

// sameLoad compares the per-container loads and bounds of two workload recommendations.
func sameLoad(a, b *hvpav1alpha1.WorkloadRecommendation) bool {
	if len(a.Containers) != len(b.Containers) {
		return false
	}
	for i := range a.Containers {
		x, y := a.Containers[i], b.Containers[i]
		if x.Name != y.Name || !equality.Semantic.DeepEqual(x.Load, y.Load) || !equality.Semantic.DeepEqual(x.LowerBound, y.LowerBound) ||
			!equality.Semantic.DeepEqual(x.UpperBound, y.UpperBound) {
			return false
		}
	}
	return true
}

// notServing says why this Hvpa does not act on its workload ("" when it does): an HPA targets the workload
// directly, or an older VPA or Hvpa targets it too (workload.NotServing: the oldest serves it). The
// namespace's autoscalers come from the cache (its namespace index) and are compared by their targetRefs,
// with no read of their targets.
func (r *Reconciler) notServing(ctx context.Context, h *hvpav1alpha1.Hvpa, target workload.Target) (string, error) {
	same := target.RefKey()
	// the namespace's autoscalers, read from the cache without copying them (read only): Hvpas with their
	// status, VPAs with their recommendations, on every reconcile
	var hpas autoscalingv2.HorizontalPodAutoscalerList
	if err := r.Client.List(ctx, &hpas, client.InNamespace(h.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return "", err
	}
	var direct []string
	for _, a := range hpas.Items {
		if ref := a.Spec.ScaleTargetRef; ref.Kind == target.GVK.Kind && ref.Name == target.Name {
			direct = append(direct, "HorizontalPodAutoscaler "+a.Name)
		}
	}
	if len(direct) > 0 {
		sort.Strings(direct)
		return fmt.Sprintf("%s %s is also the target of %s: keep one autoscaler per workload; this Hvpa does not act",
			target.GVK.Kind, target.Name, strings.Join(direct, ", ")), nil
	}
	self := workload.Autoscaler{Kind: hvpav1alpha1.KindHvpa, Name: h.Name, Created: h.CreationTimestamp}
	all := []workload.Autoscaler{self}
	var vpas vpav1.VerticalPodAutoscalerList
	if err := r.Client.List(ctx, &vpas, client.InNamespace(h.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return "", err
	}
	for i := range vpas.Items {
		v := &vpas.Items[i]
		if ref := v.Spec.TargetRef; ref != nil && workload.RefKey(ref.APIVersion, ref.Kind, ref.Name) == same {
			all = append(all, workload.VPAAutoscaler(v, r.RecommenderName))
		}
	}
	var hvpas hvpav1alpha1.HvpaList
	if err := r.Client.List(ctx, &hvpas, client.InNamespace(h.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return "", err
	}
	for _, o := range hvpas.Items {
		if ref := o.Spec.TargetRef; o.Name != h.Name && workload.RefKey(ref.APIVersion, ref.Kind, ref.Name) == same {
			all = append(all, workload.Autoscaler{Kind: hvpav1alpha1.KindHvpa, Name: o.Name, Created: o.CreationTimestamp})
		}
	}
	return workload.NotServing(self, all, target.GVK.Kind, target.Name), nil
}

// AnnotationTemplateHash (on an HPA an Hvpa owns) records which template the HPA was written from: the HPA is
// rewritten only when the template changes (the API server fills defaults in, so comparing specs would
// rewrite it every time).
const AnnotationTemplateHash = "autoscaling.hvpa.dev/template-hash"

// hpaRefusal is why the Hvpa cannot have the HPA its spec asks for: a condition's reason and message.
type hpaRefusal struct{ reason, msg string }

// reconcileHPA creates, updates or removes the HPA the Hvpa owns (spec.hpa.deploy) and returns it (nil when
// the Hvpa deploys none). It never takes over an HPA of the same name that it does not own, and a template
// the API server refuses as an HPA's spec (a field the Hvpa's own validation does not read, such as a
// behavior's window above an hour) is the user's to correct, not an error to retry: it returns why instead.
func (r *Reconciler) reconcileHPA(ctx context.Context, h *hvpav1alpha1.Hvpa) (*autoscalingv2.HorizontalPodAutoscaler, *hpaRefusal, error) {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: h.Namespace, Name: HPAName(h)}}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(hpa), hpa)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, nil, err
	}
	exists := err == nil
	if exists && !metav1.IsControlledBy(hpa, h) {
		if h.Spec.HPA == nil || !h.Spec.HPA.Deploy {
			return nil, nil, nil
		}
		return nil, &hpaRefusal{hvpav1alpha1.ReasonHPANameTaken, fmt.Sprintf("HorizontalPodAutoscaler %s exists and is not this Hvpa's: rename or delete it, or set spec.hpa.deploy to false", hpa.Name)}, nil
	}
	if h.Spec.HPA == nil || !h.Spec.HPA.Deploy {
		if exists {
			if err := r.Client.Delete(ctx, hpa); err != nil && !apierrors.IsNotFound(err) {
				return nil, nil, err
			}
			r.event(h, corev1.EventTypeNormal, hvpav1alpha1.EventHPARemoved, "spec.hpa.deploy is off: removed HorizontalPodAutoscaler "+hpa.Name)
		}
		return nil, nil, nil
	}
	t := h.Spec.HPA.Template
	raw, _ := json.Marshal(t)
	hash := fmt.Sprintf("%x", sha256.Sum256(raw))[:16]
	if exists && hpa.Annotations[AnnotationTemplateHash] == hash {
		return hpa, nil, nil
	}
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, hpa, func() error {
		if hpa.Annotations == nil {
			hpa.Annotations = map[string]string{}
		}
		hpa.Annotations[AnnotationTemplateHash] = hash
		hpa.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: hvpav1alpha1.GroupVersion.String(), Kind: hvpav1alpha1.KindHvpa, Name: h.Name}
		hpa.Spec.MinReplicas = t.MinReplicas
		hpa.Spec.MaxReplicas = t.MaxReplicas
		hpa.Spec.Metrics = t.Metrics
		hpa.Spec.Behavior = HPABehavior(t.Behavior)
		return controllerutil.SetControllerReference(h, hpa, r.Client.Scheme())
	})
	if specRefused(err) {
		return nil, &hpaRefusal{hvpav1alpha1.ReasonHPATemplateRefused, fmt.Sprintf("spec.hpa.template: the API server refuses it as HorizontalPodAutoscaler %s's spec (its spec.X is spec.hpa.template.X): %v; correct spec.hpa.template", hpa.Name, err)}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("HorizontalPodAutoscaler %s: %w", hpa.Name, err)
	}
	switch op {
	case controllerutil.OperationResultCreated:
		r.event(h, corev1.EventTypeNormal, hvpav1alpha1.EventHPACreated, "created HorizontalPodAutoscaler "+hpa.Name+" targeting this Hvpa's scale subresource")
	case controllerutil.OperationResultUpdated:
		r.event(h, corev1.EventTypeNormal, hvpav1alpha1.EventHPAUpdated, "updated HorizontalPodAutoscaler "+hpa.Name+" from spec.hpa.template")
	}
	return hpa, nil, nil
}

// specRefused reports whether err is the API server's validation refusing an HPA's spec: Invalid, with every
// cause a field of spec (a ValidatingAdmissionPolicy's denial, also Invalid by default, names no field of it:
// it stays an error, retried).
func specRefused(err error) bool {
	var st apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &st) || st.Status().Details == nil || len(st.Status().Details.Causes) == 0 {
		return false
	}
	for _, c := range st.Status().Details.Causes {
		if !strings.HasPrefix(c.Field, "spec.") {
			return false
		}
	}
	return true
}

// embedded is the embedded recommender's latest recommendation of h; nil when spec.vpa.deploy is off, no
// recommender runs in this process, or it has none for h yet.
func (r *Reconciler) embedded(h *hvpav1alpha1.Hvpa) *recommender.HvpaRecommendation {
	if r.Recommendations == nil || h.Spec.VPA == nil || !h.Spec.VPA.Deploy {
		return nil
	}
	rec, ok := r.Recommendations.HvpaRecommendation(types.NamespacedName{Namespace: h.Namespace, Name: h.Name})
	if !ok {
		return nil
	}
	return &rec
}

// HPABehavior is the HPA behavior an Hvpa deploys: the template's, with a scale-down stabilization window of
// 0 unless the template sets one (the Hvpa's own hysteresis replaces it; docs/design/scaling.md section 2).
func HPABehavior(b *autoscalingv2.HorizontalPodAutoscalerBehavior) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	out := &autoscalingv2.HorizontalPodAutoscalerBehavior{}
	if b != nil {
		out = b.DeepCopy()
	}
	if out.ScaleDown == nil {
		out.ScaleDown = &autoscalingv2.HPAScalingRules{}
	}
	if out.ScaleDown.StabilizationWindowSeconds == nil {
		out.ScaleDown.StabilizationWindowSeconds = ptr.To[int32](0)
	}
	return out
}

// observed is what observe read besides the decision's State: the running pods counted, and the pods the
// HPA's readings are taken over (when they are at work: requeueFor).
type observed struct {
	pods int
	hpa  scaling.HPAPods
}

// observe reads the state the decision needs: current replicas and per-pod values (from the running pods,
// else the target's pod template), the HPA input (src: who writes spec.replicas), the last scaling, OOM
// kills since then, LimitRanges.
func (r *Reconciler) observe(ctx context.Context, h *hvpav1alpha1.Hvpa, target workload.Target, scale *autoscalingv1.Scale, src scaling.Horizontal,
	rec *recommender.HvpaRecommendation, now time.Time) (scaling.State, observed, error) {
	st := scaling.State{Now: now, Replicas: scale.Spec.Replicas}
	var list corev1.PodList
	if err := r.Client.List(ctx, &list, client.InNamespace(h.Namespace), client.MatchingLabelsSelector{Selector: target.Selector}); err != nil {
		return st, observed{}, err
	}
	var pods []corev1.Pod
	for _, p := range list.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			pods = append(pods, p)
		}
	}
	// the newest pod first (then by name): during a rollout that adds or removes a container, the containers
	// decided for are the new revision's from its first pod on, not the old one's until the last old pod goes
	// (which changed the intent twice, each a scaling with its event and its stabilization)
	sort.Slice(pods, func(i, j int) bool {
		if a, b := pods[i].CreationTimestamp, pods[j].CreationTimestamp; !a.Equal(&b) {
			return b.Before(&a)
		}
		return pods[i].Name < pods[j].Name
	})
	podSpec := &corev1.PodSpec{} // empty when no pod runs and the template cannot be read
	if len(pods) > 0 {
		podSpec = &pods[0].Spec // the cache keeps its containers and where it may go (app.StripPod)
	} else if t, err := r.Targets.AnyPodTemplate(ctx, target.GVK, target.Namespace, target.Name); err != nil {
		logf.FromContext(ctx).V(1).Info("reading the target's pod template; deciding without its containers", "error", err.Error())
	} else if t != nil {
		podSpec = &t.Spec
	}
	st.Containers = scaling.ContainersInForce(podSpec.Containers, h.Status.Desired)
	st.InitContainers = scaling.FromInitContainers(podSpec.InitContainers) // they count toward the LimitRange's pod bounds
	st.PodsResizing, st.IntentReplicas = r.podsFollowIntent(h) && scaling.PodsResizing(pods, st.Containers), scaling.IntentReplicas(h.Status.Desired)
	var usage *scaling.Values
	if rec != nil {
		u := scaling.V(float64(rec.Usage.CPUMilli), float64(rec.Usage.MemoryBytes))
		usage = &u
	}
	hp := scaling.HPAPodsOf(st.Replicas, pods, now)
	if rec != nil {
		hp.UsageAt = rec.UsageAt
	}
	st.HPA = scaling.HPAInputOf(h, src, hp, st.Containers, usage)
	if ls := h.Status.LastScaling; ls != nil {
		t := ls.Time.Time
		st.LastScaleTime = &t
	}
	st.OOMSinceLastScaling = scaling.OOMKilledSince(pods, st.LastScaleTime)
	lr, err := limitRange(ctx, r.Client, h.Namespace)
	if err != nil {
		return st, observed{pods: len(pods), hpa: hp}, err
	}
	st.LimitRange = lr
	if nodes := r.nodes.get(ctx, r.Client); nodes != nil {
		st.NodeRoom = nodes.RoomFor(podSpec) // per-pod maxima within the largest node its pods may go to
	}
	return st, observed{pods: len(pods), hpa: hp}, nil
}

// limitRange folds the namespace's LimitRanges into the bounds the decision respects (the tightest wins).
func limitRange(ctx context.Context, c client.Client, ns string) (*scaling.LimitRange, error) {
	var l corev1.LimitRangeList
	if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	return scaling.FromLimitRanges(l.Items), nil
}
