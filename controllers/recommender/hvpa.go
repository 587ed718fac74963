package recommender

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/hvpacycle"
	"github.com/hvpa-dev/hvpa/internal/podstore"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/adaptive"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/usage"
)

// hvpaRecs holds the latest embedded recommendations; read by the Hvpa controller.
type hvpaRecs struct {
	mu   sync.RWMutex
	recs map[types.NamespacedName]recommender.HvpaRecommendation
	// published: recs is a run's (false until the first run with the Hvpas' history loaded publishes it)
	published bool
	// changes tells the Hvpa controller which Hvpas' recommendations changed (dropped when full: the
	// controller's periodic sync still decides every Hvpa).
	changes chan event.GenericEvent
}

// HvpaChanges delivers an event for every Hvpa whose embedded recommendation changed, so that the Hvpa
// controller decides it again at once.
func (r *Recommender) HvpaChanges() <-chan event.GenericEvent { return r.hvpa.changes }

// HvpaRecommendation returns the latest embedded recommendation of an Hvpa, if the recommender made one.
func (r *Recommender) HvpaRecommendation(key types.NamespacedName) (recommender.HvpaRecommendation, bool) {
	r.hvpa.mu.RLock()
	defer r.hvpa.mu.RUnlock()
	rec, ok := r.hvpa.recs[key]
	return rec, ok
}

// HvpaRecommendationsPublished reports whether a run of this process has published the Hvpas' embedded
// recommendations: before it, an Hvpa without one is an Hvpa the recommender has not run for yet (its recent
// load is unknown); after it, one the recommender does not serve.
func (r *Recommender) HvpaRecommendationsPublished() bool {
	r.hvpa.mu.RLock()
	defer r.hvpa.mu.RUnlock()
	return r.hvpa.published
}

// hvpaOwner is the key of an Hvpa's history (checkpoints and initial aggregates).
func hvpaOwner(name string) string { return "Hvpa/" + name }

// servedHvpa is an Hvpa with the embedded recommender on.
type servedHvpa struct {
	hvpa   *hvpav1alpha1.Hvpa
	target workload.Target
	models *modelSet
	// base is spec.baseResourcesPerReplica: the per-pod part of usage that is not load (docs/design/scaling.md section 2)
	base  [scaling.NumResources]*scaling.ChangeParams
	pods  int // running pods of the target this run
	ready int // of them, the ready ones (serving)
	// killedNotReady: of them, the ones not ready after an OOM kill within the last run interval; they served
	// until then (observeOOMs)
	killedNotReady int
	// usage is this run's usage of the target's pods, summed over pods and containers (-1: none); usageAt the
	// time of the oldest sample in it
	usage   recommender.Amounts
	usageAt time.Time
}

// hvpaView is what one run needs to know about Hvpas, from one list and one target resolution per Hvpa.
type hvpaView struct {
	// served are the Hvpas with spec.vpa.deploy whose targets resolve (the Hvpa controller reports the others).
	served []*servedHvpa
	// targets maps every resolvable Hvpa's target (workload.Target.Key) to its Hvpas (conflicts with VPAs).
	targets map[string][]workload.Autoscaler
	// selectors are the pod selectors of every resolvable Hvpa in the served namespaces (--memory-saver).
	selectors map[string][]labels.Selector
	// unlisted: the Hvpas could not be listed this run (the recommendations published stay)
	unlisted bool
}

// resolveHvpas lists the Hvpas and resolves each one's target once. The list comes from the cache without
// a copy of each Hvpa (client.UnsafeDisableDeepCopy: every run would copy every Hvpa, status and all): the
// run only reads them, and what could write into one is given a copy (below).
func (r *Recommender) resolveHvpas(ctx context.Context) hvpaView {
	v := hvpaView{targets: map[string][]workload.Autoscaler{}, selectors: map[string][]labels.Selector{}}
	var l hvpav1alpha1.HvpaList
	if err := r.Client.List(ctx, &l, client.UnsafeDisableDeepCopy); err != nil {
		logf.FromContext(ctx).V(1).Info("listing Hvpas", "error", err.Error())
		v.unlisted = true
		return v
	}
	for i := range l.Items {
		h := &l.Items[i]
		ref := h.Spec.TargetRef
		t, err := r.Targets.Resolve(ctx, h.Namespace, &autoscalingv1.CrossVersionObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name})
		if err != nil {
			continue
		}
		v.targets[t.Key()] = append(v.targets[t.Key()], workload.Autoscaler{Kind: hvpav1alpha1.KindHvpa, Name: h.Name, Created: h.CreationTimestamp})
		if !r.inNamespaces(h.Namespace) { // --namespaces and --exclude-namespaces: neither served nor tracked
			continue
		}
		v.selectors[h.Namespace] = append(v.selectors[h.Namespace], t.Selector)
		if h.Spec.VPA == nil || !h.Spec.VPA.Deploy {
			continue
		}
		cfg, err := recommender.WithOverrides(r.Base, h.Annotations)
		if err != nil {
			continue
		}
		// the adaptive model serves VerticalPodAutoscalers only in this version (--default-model too): an Hvpa
		// asking for it, or for a model that does not exist, is refused like a bad override
		if name, err := adaptive.ParseModel(strings.TrimSpace(h.Annotations[adaptive.AnnotationModel])); err != nil || name != adaptive.ModelUpstream {
			continue
		}
		spec, errs := scaling.FromHvpa(h)
		if len(errs) > 0 { // the Hvpa controller reports an invalid spec
			continue
		}
		// a copy: the models keep the policy, and a bad value's error message formats its quantity, which
		// caches the string in the Quantity, a write into the cache's object
		models, err := r.modelsFor(cfg, h.Spec.VPA.Template.ResourcePolicy.DeepCopy())
		if err != nil { // the Hvpa controller reports an invalid field
			continue
		}
		v.served = append(v.served, &servedHvpa{hvpa: h, target: t, models: models, base: spec.Base, usage: recommender.Amounts{CPUMilli: -1, MemoryBytes: -1}})
	}
	return v
}

// updateHvpaRecommendations computes the embedded recommendation of every served Hvpa.
func (r *Recommender) updateHvpaRecommendations(list []*servedHvpa, now time.Time) {
	recs := map[types.NamespacedName]recommender.HvpaRecommendation{}
	for _, s := range list {
		rp := s.hvpa.Spec.VPA.Template.ResourcePolicy
		load, conf := r.state.WorkloadRecommendation(s.hvpa.Namespace, hvpaOwner(s.hvpa.Name), func(c string) recommender.Policy { return recommender.PolicyFor(rp, c) })
		if len(load) > 0 {
			recs[types.NamespacedName{Namespace: s.hvpa.Namespace, Name: s.hvpa.Name}] = recommender.HvpaRecommendation{Load: load, Confidence: max(conf, 0), Pods: s.pods, Usage: s.usage, UsageAt: s.usageAt, At: now}
		}
	}
	r.hvpa.mu.Lock()
	old := r.hvpa.recs
	r.hvpa.recs, r.hvpa.published = recs, true
	r.hvpa.mu.Unlock()
	for _, s := range list {
		key := types.NamespacedName{Namespace: s.hvpa.Namespace, Name: s.hvpa.Name}
		if before, now := old[key], recs[key]; !sameLoad(before.Load, now.Load) {
			select {
			case r.hvpa.changes <- event.GenericEvent{Object: s.hvpa}:
			default:
			}
		}
	}
}

// sameLoad reports whether two load recommendations recommend the same (target and bounds per container, and
// the recurring burst ahead and the end of one: a burst minutes away, or the fall back from one, cannot wait
// for the next sync); the recent load, which moves at every run, is not compared (the Hvpa controller reads it at each decision, at least every sync period).
func sameLoad(a, b []recommender.ContainerLoad) bool {
	return slices.EqualFunc(a, b, func(x, y recommender.ContainerLoad) bool {
		return x.Container == y.Container && x.Target == y.Target && x.LowerBound == y.LowerBound && x.UpperBound == y.UpperBound &&
			x.RecurringCPU == y.RecurringCPU && x.RecurringEvery == y.RecurringEvery &&
			x.RecurringFrom.Equal(y.RecurringFrom) && x.RecurringEnded.Equal(y.RecurringEnded) && x.RecurringBefore == y.RecurringBefore &&
			x.RecurringEndedEarliest.Equal(y.RecurringEndedEarliest) &&
			x.RecurringNext.Equal(y.RecurringNext)
	})
}

func (r *Recommender) inNamespaces(ns string) bool {
	for _, n := range r.Opts.ExcludeNamespaces {
		if n == ns {
			return false
		}
	}
	if len(r.Opts.Namespaces) == 0 {
		return true
	}
	for _, n := range r.Opts.Namespaces {
		if n == ns {
			return true
		}
	}
	return false
}

// workloadLoads sums one run's usage per Hvpa container into the workload's load (docs/design/scaling.md section 2):
// L = sum over the target's live pods of max(0, usage - base(request of that pod)).
type workloadLoads map[recommender.OwnerKey]*workloadLoad

type workloadLoad struct {
	h *servedHvpa
	hvpacycle.Load
}

func (l workloadLoads) add(h *servedHvpa, p *podstore.Pod, u usage.ContainerUsage) {
	key := recommender.OwnerKey{Namespace: h.hvpa.Namespace, Owner: hvpaOwner(h.hvpa.Name), Container: u.Container}
	ld := l[key]
	if ld == nil {
		ld = &workloadLoad{h: h, Load: hvpacycle.Load{Base: h.base}}
		l[key] = ld
	}
	cpuReq, memReq := p.Requests(u.Container)
	h.addUsage(u)
	ld.Add(u.Time, float64(u.CPUMilli), float64(u.MemoryBytes), cpuReq, memReq)
}

// record adds every sum as one sample of its workload total.
func (l workloadLoads) record(st *recommender.State, now time.Time) {
	for key, ld := range l {
		ld.Record(st.Total(ld.h.models.For(key.Container), key, now))
	}
}

// recordOOM raises the memory total of the OOM-killed container: its recent load to at least replicas x
// bump, the bump of the killed pod as upstream makes it from max(request, its window peak), in load terms
// replicas x (bump - base(request)); its history to the pods that served x that, what the workload's load was
// (hvpacycle.RecordOOM). The pods that served are the ready ones and those not ready after a kill of the last
// run interval: when every pod is killed at once, every pod served.
func (h *servedHvpa) recordOOM(st *recommender.State, container string, at time.Time, request, peak float64, now time.Time) {
	m := h.models.For(container)
	hvpacycle.RecordOOM(st.Total(m, recommender.OwnerKey{Namespace: h.hvpa.Namespace, Owner: hvpaOwner(h.hvpa.Name), Container: container}, now),
		h.base, at, h.pods, h.ready+h.killedNotReady, request, peak)
}

// addUsage adds a usage sample to the target's summed usage of this run.
func (h *servedHvpa) addUsage(u usage.ContainerUsage) {
	if h.usageAt.IsZero() || u.Time.Before(h.usageAt) {
		h.usageAt = u.Time
	}
	if u.CPUMilli >= 0 {
		h.usage.CPUMilli = max(h.usage.CPUMilli, 0) + u.CPUMilli
	}
	if u.MemoryBytes >= 0 {
		h.usage.MemoryBytes = max(h.usage.MemoryBytes, 0) + u.MemoryBytes
	}
}
