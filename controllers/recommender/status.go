package recommender

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/recommender"
)

// MergedAggregates merges, per container name, the aggregates of namespace ns whose pod labels the selector
// matches, plus the initial history (from checkpoints or Prometheus) of the object named owner.
func (r *Recommender) MergedAggregates(ns, owner string, sel labels.Selector, m *recommender.Model) map[string]*recommender.Aggregate {
	return r.state.Merged(m, ns, owner, matches(sel))
}

// Recommendation computes the recommendation of merged aggregates under a resource policy, and the lowest
// confidence (days of history) among the recommended containers.
func Recommendation(m *recommender.Model, merged map[string]*recommender.Aggregate, rp *vpav1.PodResourcePolicy) (*vpav1.RecommendedPodResources, float64) {
	recs, confidence := m.RecommendPod(merged, func(c string) recommender.Policy { return recommender.PolicyFor(rp, c) })
	return recommendedPod(recs), confidence
}

// recommendedPod is the API form of a pod's container recommendations (none: nil).
func recommendedPod(recs []recommender.ContainerRecommendation) *vpav1.RecommendedPodResources {
	if len(recs) == 0 {
		return nil
	}
	out := &vpav1.RecommendedPodResources{}
	for _, r := range recs {
		out.ContainerRecommendations = append(out.ContainerRecommendations, vpav1.RecommendedContainerResources{
			ContainerName:  r.Container,
			Target:         resourceList(r.Target),
			LowerBound:     resourceList(r.LowerBound),
			UpperBound:     resourceList(r.UpperBound),
			UncappedTarget: resourceList(r.UncappedTarget),
		})
	}
	return out
}

func resourceList(a recommender.Amounts) corev1.ResourceList {
	l := corev1.ResourceList{}
	if a.CPUMilli >= 0 {
		l[corev1.ResourceCPU] = *resource.NewMilliQuantity(a.CPUMilli, resource.DecimalSI)
	}
	if a.MemoryBytes >= 0 {
		l[corev1.ResourceMemory] = *resource.NewQuantity(a.MemoryBytes, resource.BinarySI)
	}
	return l
}

// SetCondition sets a condition, keeping lastTransitionTime when the status does not change.
func SetCondition(conds []vpav1.VerticalPodAutoscalerCondition, c vpav1.VerticalPodAutoscalerCondition, now time.Time) []vpav1.VerticalPodAutoscalerCondition {
	for i := range conds {
		if conds[i].Type == c.Type {
			if conds[i].Status == c.Status {
				c.LastTransitionTime = conds[i].LastTransitionTime
			} else {
				c.LastTransitionTime = metav1.NewTime(now)
			}
			conds[i] = c
			return conds
		}
	}
	c.LastTransitionTime = metav1.NewTime(now)
	return append(conds, c)
}

// RemoveCondition drops a condition type.
func RemoveCondition(conds []vpav1.VerticalPodAutoscalerCondition, t vpav1.VerticalPodAutoscalerConditionType) []vpav1.VerticalPodAutoscalerCondition {
	out := conds[:0]
	for _, c := range conds {
		if c.Type != t {
			out = append(out, c)
		}
	}
	return out
}

func cond(t vpav1.VerticalPodAutoscalerConditionType, status bool, reason, msg string) vpav1.VerticalPodAutoscalerCondition {
	s := corev1.ConditionFalse
	if status {
		s = corev1.ConditionTrue
	}
	return vpav1.VerticalPodAutoscalerCondition{Type: t, Status: s, Reason: reason, Message: msg}
}

// statusMergePatch is a JSON merge patch (RFC 7386) that replaces a VPA's whole status under the
// resourceVersion it was decided from: every field of VerticalPodAutoscalerStatus, a null for one unset (which
// removes it), its lists whole (a merge patch replaces lists). Written from the new status alone, where a patch
// made by comparing the status read with the new one encoded both and decoded them again (at 10,000 VPAs,
// most of the recommender's cost of a status write). TestStatusMergePatch holds it to the status type's fields.
type statusMergePatch struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Status struct {
		Recommendation     *recommendationPatch                   `json:"recommendation"`
		Conditions         []vpav1.VerticalPodAutoscalerCondition `json:"conditions"`
		ObservedGeneration *int64                                 `json:"observedGeneration"`
	} `json:"status"`
}

// recommendationPatch is RecommendedPodResources in a merge patch: no containers is a null.
type recommendationPatch struct {
	ContainerRecommendations []vpav1.RecommendedContainerResources `json:"containerRecommendations"`
}

// statusPatch is the merge patch that writes status over a VPA's status read at resourceVersion (a stale read
// is refused: 409 Conflict).
func statusPatch(resourceVersion string, status vpav1.VerticalPodAutoscalerStatus) ([]byte, error) {
	var p statusMergePatch
	p.Metadata.ResourceVersion = resourceVersion
	if status.Recommendation != nil {
		p.Status.Recommendation = &recommendationPatch{ContainerRecommendations: status.Recommendation.ContainerRecommendations}
	}
	p.Status.Conditions, p.Status.ObservedGeneration = status.Conditions, status.ObservedGeneration
	return json.Marshal(p)
}

// ownConditions are the condition types only hvpa's recommender writes: upstream's never sets, changes or
// removes them, so they would stay as hvpa left them on a VPA handed to it.
var ownConditions = []vpav1.VerticalPodAutoscalerConditionType{vpav1.LowConfidence, vpav1.FetchingHistory,
	vpav1.UsageUnavailable, vpav1.CappedToNode, vpav1.InPlaceUnavailable}

// HandOffWindow is how long after a VPA was handed to another recommender its status is still read for
// hvpa's own conditions (handOff): upstream's recommender writes back the whole status it read, so a status
// read before the conditions were taken off brings them back once.
const HandOffWindow = 10 * time.Minute

// handOff takes this recommender's own conditions (ownConditions) off the VPAs whose status it wrote and that
// another recommender serves now (their spec.recommenders changed): a LowConfidence or UsageUnavailable
// condition would stay for good under upstream's recommender, and a FetchingHistory one would keep
// upstream's from ever writing the VPA's checkpoints. Each run within HandOffWindow of the hand-off, so that
// conditions a status written back from an older read restores go again, and a failed patch is tried
// again; after it, never (another hvpa recommender that serves the VPA now sets its own). handed are all
// such VPAs of the run (listVPAs over every namespace). A hand-off while this recommender was not running
// is not seen: its conditions stay (docs/migrating-from-vpa.md).
func (r *Recommender) handOff(ctx context.Context, handed []vpav1.VerticalPodAutoscaler) {
	now := r.Clock.Now()
	next := map[types.UID]time.Time{}
	for i := range handed {
		v := &handed[i]
		until, seen := r.handing[v.UID]
		if !seen {
			until = now.Add(HandOffWindow)
		}
		if now.After(until) {
			continue
		}
		next[v.UID] = until
		conds := slices.DeleteFunc(slices.Clone(v.Status.Conditions), func(c vpav1.VerticalPodAutoscalerCondition) bool {
			return slices.Contains(ownConditions, c.Type)
		})
		if len(conds) == len(v.Status.Conditions) {
			continue
		}
		// the conditions only, under the version read: the recommendation is the new recommender's to write
		patch, err := json.Marshal(map[string]any{"metadata": map[string]string{"resourceVersion": v.ResourceVersion},
			"status": map[string]any{"conditions": conds}})
		if err == nil {
			err = r.Client.Status().Patch(ctx, identity(v), client.RawPatch(types.MergePatchType, patch))
		}
		switch {
		case err == nil:
			logf.FromContext(ctx).Info("another recommender serves this VPA now: hvpa's own conditions taken off", "vpa", klog.KObj(v), "recommenders", v.Spec.Recommenders)
		case apierrors.IsNotFound(err):
		default:
			logf.FromContext(ctx).V(1).Info("taking hvpa's own conditions off a VPA another recommender serves now; tried again at the next run", "vpa", klog.KObj(v), "error", err.Error())
		}
	}
	r.handing = next
}

// identity is the object a status patch of v is sent for (namespace and name) and decoded into (the object
// written, its resourceVersion with it).
func identity(v *vpav1.VerticalPodAutoscaler) *vpav1.VerticalPodAutoscaler {
	return &vpav1.VerticalPodAutoscaler{TypeMeta: v.TypeMeta, ObjectMeta: metav1.ObjectMeta{Namespace: v.Namespace, Name: v.Name, UID: v.UID}}
}

// statusWrite is one VPA's status patch: decided by decideStatus, sent by sendStatuses, noted by recordStatuses.
type statusWrite struct {
	s        *served
	written  *vpav1.VerticalPodAutoscaler // the VPA's identity; once sent, the object written
	patch    []byte                       // statusPatch: the new status over the status read
	firstRec bool                         // the VPA's first recommendation: its latency is observed once written
	sent     time.Time                    // when its patch ended (sendStatuses)
	err      error                        // why it failed
}

// writeStatuses decides every VPA's status and writes those that changed (sendStatuses, recordStatuses).
func (r *Recommender) writeStatuses(ctx context.Context, list []*served) {
	writes := r.decideStatuses(ctx, list)
	r.sendStatuses(ctx, writes)()
	r.recordStatuses(ctx, writes)
}

// decideStatuses decides every VPA's status, in order, under the recommender's lock: the patches of those
// that changed. A VPA whose status cannot be decided is logged and decided again at the next run.
func (r *Recommender) decideStatuses(ctx context.Context, list []*served) []*statusWrite {
	var writes []*statusWrite
	for _, s := range list {
		w, err := r.decideStatus(s)
		if err != nil {
			logf.FromContext(ctx).Error(err, "updating status", "vpa", klog.KObj(s.vpa))
		} else if w != nil {
			writes = append(writes, w)
		}
	}
	return writes
}

// sendStatuses starts the status patches of writes, Options.UpdateWorkers at a time, each under the
// resourceVersion it was decided from (conditions of other writers are kept: a decision starts from the status
// read, and a stale read is refused); it returns at once, and the function it returns waits for them (each
// write's sent and err then say how it went). The patches only read what they send: a run goes on (its
// checkpoints) meanwhile.
func (r *Recommender) sendStatuses(ctx context.Context, writes []*statusWrite) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var g errgroup.Group
		g.SetLimit(r.Opts.UpdateWorkers)
		for _, w := range writes {
			g.Go(func() error { // each writes its own write's sent and err
				if w.err = ctx.Err(); w.err != nil {
					return nil
				}
				// with the resourceVersion it was decided from: a status another writer changed since (its
				// conditions included) is never overwritten from a stale read; it is decided again at the next run
				if err := r.Client.Status().Patch(ctx, w.written, client.RawPatch(types.MergePatchType, w.patch)); err != nil {
					w.err = fmt.Errorf("patching status: %w", err)
				}
				w.sent = r.Clock.Now()
				return nil
			})
		}
		_ = g.Wait()
	}()
	return func() { <-done }
}

// recordStatuses notes the writes that succeeded, once sent: a failed patch is logged and decided again at
// the next run. A first recommendation's latency ends when its patch did.
func (r *Recommender) recordStatuses(ctx context.Context, writes []*statusWrite) {
	logger := logf.FromContext(ctx)
	for _, w := range writes {
		if w.err != nil {
			switch {
			case ctx.Err() != nil:
			case apierrors.IsConflict(w.err):
				logger.V(1).Info("status changed since it was read; decided again at the next run", "vpa", klog.KObj(w.s.vpa))
			default:
				logger.Error(w.err, "updating status", "vpa", klog.KObj(w.s.vpa))
			}
			continue
		}
		r.statusWrites++
		r.lastWrite[w.s.vpa.UID] = w.sent
		if w.s.vpa.DecodeError != "" {
			r.undecodable[w.s.vpa.UID] = w.written.ResourceVersion
		}
		if w.firstRec {
			r.firstRec[w.s.vpa.UID] = true
			r.Metrics.RecommendationLatency.Observe(w.sent.Sub(w.s.vpa.CreationTimestamp.Time).Seconds())
		}
	}
}

// decideStatus computes one VPA's recommendation and conditions: the patch to write when they changed (nil
// when the status stays), or the error that keeps it as it is.
func (r *Recommender) decideStatus(s *served) (*statusWrite, error) {
	v := s.vpa
	if v.DecodeError != "" && r.undecodable[v.UID] == v.ResourceVersion {
		return nil, nil // its condition is written: the status read back is empty (it does not decode either)
	}
	now := r.Clock.Now()
	st := v.Status.DeepCopy()
	s.rec = v.Status.Recommendation // a transient error keeps the status as it is
	var te *workload.TargetError
	first := false
	switch {
	case s.err != nil && errors.As(s.err, &te):
		st.Recommendation = nil
		st.Conditions = SetCondition(st.Conditions, cond(vpav1.ConfigUnsupported, true, te.Reason, te.Message), now)
		st.Conditions = SetCondition(st.Conditions, cond(vpav1.RecommendationProvided, false, te.Reason, "no recommendation while the configuration is unsupported"), now)
		st.Conditions = RemoveCondition(RemoveCondition(st.Conditions, vpav1.LowConfidence), vpav1.ConfigDeprecated)
		if !hasCondition(v.Status.Conditions, vpav1.ConfigUnsupported, te.Reason) {
			r.event(v, corev1.EventTypeWarning, te.Reason, te.Message)
		}
	case s.err != nil:
		return nil, s.err // transient (API errors): keep the status as it is, retry next run
	default:
		r.observedConditions(s, st, now)
		first = r.recommend(s, st, now)
	}
	sort.Slice(st.Conditions, func(i, j int) bool { return st.Conditions[i].Type < st.Conditions[j].Type })
	// the spec generation this status was decided for (a transient error returned above keeps the old one)
	st.ObservedGeneration = &v.Generation
	for i := range st.Conditions {
		st.Conditions[i].ObservedGeneration = v.Generation
	}
	s.rec = st.Recommendation
	if equality.Semantic.DeepEqual(*st, v.Status) {
		return nil, nil
	}
	patch, err := statusPatch(v.ResourceVersion, *st)
	if err != nil {
		return nil, fmt.Errorf("encoding the status patch: %w", err)
	}
	return &statusWrite{s: s, written: identity(v), patch: patch, firstRec: first}, nil
}

// observedConditions sets the conditions of what the run observed for a served VPA: its target resolved,
// whether pods match, whether usage could be read.
func (r *Recommender) observedConditions(s *served, st *vpav1.VerticalPodAutoscalerStatus, now time.Time) {
	v := s.vpa
	st.Conditions = SetCondition(st.Conditions, cond(vpav1.ConfigUnsupported, false, vpav1.ReasonTargetResolved,
		fmt.Sprintf("%s %s selects pods with %s", s.target.GVK.Kind, s.target.Name, s.target.Selector)), now)
	// no setting of the v1 API is deprecated: a ConfigDeprecated an older recommender left goes, as upstream's
	// recommender deletes it whenever it reads the target
	st.Conditions = RemoveCondition(st.Conditions, vpav1.ConfigDeprecated)
	if s.matched == 0 {
		st.Conditions = SetCondition(st.Conditions, cond(vpav1.NoPodsMatched, true, vpav1.ReasonNoPodsMatched,
			fmt.Sprintf("no pod matches %s (pending pods do not count)", s.target.Selector)), now)
		if !hasCondition(v.Status.Conditions, vpav1.NoPodsMatched, vpav1.ReasonNoPodsMatched) {
			r.event(v, corev1.EventTypeWarning, vpav1.ReasonNoPodsMatched, fmt.Sprintf("no pod of %s %s matches %s (pending pods do not count)", s.target.GVK.Kind, s.target.Name, s.target.Selector))
		}
	} else {
		st.Conditions = SetCondition(st.Conditions, cond(vpav1.NoPodsMatched, false, vpav1.ReasonPodsMatched, fmt.Sprintf("%d pods running or finished", s.matched)), now)
	}
	if !r.hist.vpas() {
		st.Conditions = SetCondition(st.Conditions, cond(vpav1.FetchingHistory, true, vpav1.ReasonHistoryNotLoaded,
			fmt.Sprintf("the usage history has not loaded yet (%v); tried again at every run: the recommendation in status is kept, and no checkpoint is written until it loads", r.hist.err)), now)
	} else {
		st.Conditions = RemoveCondition(st.Conditions, vpav1.FetchingHistory)
	}
	st.Conditions = r.inPlaceCondition(v, st.Conditions, now)
	if r.usageErr != nil {
		st.Conditions = SetCondition(st.Conditions, cond(vpav1.UsageUnavailable, true, vpav1.ReasonMetricsAPIUnavailable,
			fmt.Sprintf("current usage cannot be read (%v); the recommendation is kept from the history held", r.usageErr)), now)
	} else {
		st.Conditions = RemoveCondition(st.Conditions, vpav1.UsageUnavailable)
	}
}

// recommend puts a served VPA's recommendation into st (kept as it is while only its bounds drifted within
// the dead band) with the RecommendationProvided and LowConfidence conditions; it reports whether this is the
// VPA's first recommendation.
func (r *Recommender) recommend(s *served, st *vpav1.VerticalPodAutoscalerStatus, now time.Time) bool {
	v := s.vpa
	s.merged = r.MergedAggregates(v.Namespace, v.Name, s.target.Selector, s.model)
	if !r.hist.vpas() && v.Status.Recommendation != nil {
		// made from the whole history before this start: kept, with its conditions, until that history loads
		st.Recommendation = v.Status.Recommendation
		r.rememberTargets(v.Namespace, s.target.Selector, st.Recommendation)
		return false
	}
	policy := func(c string) recommender.Policy {
		p := r.globalMax(recommender.PolicyFor(v.Spec.ResourcePolicy, c))
		p.IntegerCPU = r.Opts.IntegerCPU && vpav1.IntegerCPU(v.Annotations, c)
		return p
	}
	recs, confidence := s.model.RecommendPod(s.merged, policy)
	adaptiveNote := ""
	if s.adaptive != nil {
		adaptiveNote = "; adaptive model, winners " + r.recommendAdaptive(s, recs, policy, now)
	}
	recs = r.fitNode(s, recs, st, now)
	rec := recommendedPod(recs)
	switch {
	case WithinDeadBand(v.Status.Recommendation, rec, r.Opts.StatusDeadBand):
		rec = v.Status.Recommendation // only the bounds drifted, within the band: nothing to write
	case confidence < r.Opts.LowConfidenceDays && r.Opts.YoungStatusDelay > 0 && !actsOnRunningPods(v) &&
		YoungHold(v.Status.Recommendation, rec, r.Opts.StatusDeadBand) && !r.youngDue(v.UID, now):
		rec = v.Status.Recommendation // a young history's bounds narrowing: written once its delay is up
	}
	st.Recommendation = rec
	r.rememberTargets(v.Namespace, s.target.Selector, rec)
	if rec == nil {
		st.Conditions = SetCondition(st.Conditions, cond(vpav1.RecommendationProvided, false, vpav1.ReasonNoUsage, "no usage samples yet for the selected pods"), now)
		return false
	}
	st.Conditions = SetCondition(st.Conditions, cond(vpav1.RecommendationProvided, true, vpav1.ReasonRecommendationProvided,
		fmt.Sprintf("recommendation for %d containers%s", len(rec.ContainerRecommendations), adaptiveNote)), now)
	low := confidence < r.Opts.LowConfidenceDays
	msg := fmt.Sprintf("confidence %.1f days of history", confidence)
	if low {
		msg += fmt.Sprintf(" (below %g): the bounds are wide and the recommendation may move", r.Opts.LowConfidenceDays)
	}
	st.Conditions = SetCondition(st.Conditions, cond(vpav1.LowConfidence, low, map[bool]string{true: vpav1.ReasonLowConfidence, false: vpav1.ReasonEnoughHistory}[low], msg), now)
	return !r.firstRec[v.UID] && !hasCondition(v.Status.Conditions, vpav1.RecommendationProvided, vpav1.ReasonRecommendationProvided)
}

// WithinDeadBand reports whether a new recommendation differs from the one in status only by bounds that
// moved by at most band (a fraction) of their value in status: same containers, same resources, the same
// target and uncapped target (any change of those is written: targets move in histogram buckets and the
// webhook and updater act on them).
func WithinDeadBand(old, cur *vpav1.RecommendedPodResources, band float64) bool {
	return eachContainer(old, cur, func(o, c vpav1.RecommendedContainerResources) bool {
		return equality.Semantic.DeepEqual(o.Target, c.Target) && equality.Semantic.DeepEqual(o.UncappedTarget, c.UncappedTarget) &&
			movedWithin(o.LowerBound, c.LowerBound, band, band) && movedWithin(o.UpperBound, c.UpperBound, band, band)
	})
}

// YoungHold reports whether a young history's new recommendation may wait for its delay (YoungStatusDelay):
// the same containers and resources, every target and uncapped target within band of the one written, every
// lower bound no more than band below the one written and every upper bound no more than band above it. Its
// bounds may have narrowed by any amount: a band that narrows late only makes the updater act less.
func YoungHold(old, cur *vpav1.RecommendedPodResources, band float64) bool {
	return eachContainer(old, cur, func(o, c vpav1.RecommendedContainerResources) bool {
		return movedWithin(o.Target, c.Target, band, band) && movedWithin(o.UncappedTarget, c.UncappedTarget, band, band) &&
			movedWithin(o.LowerBound, c.LowerBound, math.Inf(1), band) && movedWithin(o.UpperBound, c.UpperBound, band, math.Inf(1))
	})
}

// eachContainer reports whether both recommendations exist, name the same containers in the same order, and
// keep holds for each container's old and new recommendation.
func eachContainer(old, cur *vpav1.RecommendedPodResources, keep func(o, c vpav1.RecommendedContainerResources) bool) bool {
	if old == nil || cur == nil || len(old.ContainerRecommendations) != len(cur.ContainerRecommendations) {
		return false
	}
	for i, o := range old.ContainerRecommendations {
		if c := cur.ContainerRecommendations[i]; o.ContainerName != c.ContainerName || !keep(o, c) {
			return false
		}
	}
	return true
}

// actsOnRunningPods: the VPA's updateMode has the updater act on running pods (Auto, Recreate, InPlace,
// InPlaceOrRecreate), which it does when a pod's request leaves the bounds: their status is written at every
// change past the dead band, held bounds would delay those updates.
func actsOnRunningPods(v *vpav1.VerticalPodAutoscaler) bool {
	return v.EffectiveUpdateMode().ActsOnRunningPods()
}

// youngDue reports whether a young VPA's held recommendation is due: YoungStatusDelay, spread per VPA from
// half to one and a half times it (VPAs created together do not all come due at one run), has passed since
// its last status write. A VPA not written since this recommender started is first held now.
func (r *Recommender) youngDue(uid types.UID, now time.Time) bool {
	last, ok := r.lastWrite[uid]
	if !ok {
		r.lastWrite[uid] = now
		return false
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid)) // a hash.Hash never returns an error
	spread := 0.5 + float64(h.Sum64()>>11)/(1<<53)
	return now.Sub(last) >= time.Duration(spread*float64(r.Opts.YoungStatusDelay))
}

// movedWithin: the same resources, each moved from its old value up by at most up and down by at most down,
// as fractions of that value (math.Inf(1): by any amount).
func movedWithin(old, cur corev1.ResourceList, up, down float64) bool {
	if len(old) != len(cur) {
		return false
	}
	for name, o := range old {
		c, ok := cur[name]
		if !ok {
			return false
		}
		ov, cv := o.AsApproximateFloat64(), c.AsApproximateFloat64()
		if d, lim := cv-ov, math.Abs(ov); d > up*lim || -d > down*lim {
			return false
		}
	}
	return true
}

func hasCondition(conds []vpav1.VerticalPodAutoscalerCondition, t vpav1.VerticalPodAutoscalerConditionType, reason string) bool {
	for _, c := range conds {
		if c.Type == t && c.Status == corev1.ConditionTrue && c.Reason == reason {
			return true
		}
	}
	return false
}

func (r *Recommender) event(v *vpav1.VerticalPodAutoscaler, typ, reason, msg string) {
	if r.Recorder != nil {
		r.Recorder.Eventf(v, nil, typ, reason, "Recommend", "%s", msg)
	}
}

// rememberTargets keeps the target in force for every aggregate the VPA covers (for the quality metric).
func (r *Recommender) rememberTargets(ns string, sel labels.Selector, rec *vpav1.RecommendedPodResources) {
	if rec == nil {
		return
	}
	byName := map[string]recommender.Amounts{}
	for _, c := range rec.ContainerRecommendations {
		a := recommender.Amounts{CPUMilli: -1, MemoryBytes: -1}
		if q, ok := c.Target[corev1.ResourceCPU]; ok {
			a.CPUMilli = q.MilliValue()
		}
		if q, ok := c.Target[corev1.ResourceMemory]; ok {
			a.MemoryBytes = q.Value()
		}
		byName[c.ContainerName] = a
	}
	r.state.Aggregates(ns, func(k recommender.AggregateKey, a *recommender.AggregateEntry) {
		if t, ok := byName[k.Container]; ok && sel.Matches(labels.Set(a.Labels)) {
			r.lastTarget[k] = t
		}
	})
}
