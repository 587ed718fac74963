package vpa

import (
	"context"
	"sync"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/recommender"
)

// HvpaRecommendation is the embedded recommendation of one Hvpa (spec.vpa.deploy), computed by the
// recommender from the same model and usage as standalone VPAs.
type HvpaRecommendation struct {
	Recommendation *vpav1.RecommendedPodResources
	// Confidence is the days of history behind it.
	Confidence float64
}

// hvpaRecs holds the latest embedded recommendations; read by the Hvpa controller.
type hvpaRecs struct {
	mu   sync.RWMutex
	recs map[types.NamespacedName]HvpaRecommendation
	// changes tells the Hvpa controller which Hvpas' recommendations changed (dropped when full: the
	// controller's periodic sync still decides every Hvpa).
	changes chan event.GenericEvent
}

// HvpaChanges delivers an event for every Hvpa whose embedded recommendation changed, so that the Hvpa
// controller decides it again at once.
func (r *Recommender) HvpaChanges() <-chan event.GenericEvent { return r.hvpa.changes }

// HvpaRecommendation returns the latest embedded recommendation of an Hvpa, if the recommender made one.
func (r *Recommender) HvpaRecommendation(key types.NamespacedName) (HvpaRecommendation, bool) {
	r.hvpa.mu.RLock()
	defer r.hvpa.mu.RUnlock()
	rec, ok := r.hvpa.recs[key]
	return rec, ok
}

// hvpaOwner is the key of an Hvpa's history (checkpoints and initial aggregates).
func hvpaOwner(name string) string { return "Hvpa/" + name }

// servedHvpa is an Hvpa with the embedded recommender on.
type servedHvpa struct {
	hvpa   *hvpav1alpha1.Hvpa
	target workload.Target
	model  *recommender.Model
}

// hvpaView is what one run needs to know about Hvpas, from one list and one target resolution per Hvpa.
type hvpaView struct {
	// served are the Hvpas with spec.vpa.deploy whose targets resolve (the Hvpa controller reports the others).
	served []*servedHvpa
	// targets maps every resolvable Hvpa's target (workload.Target.Key) to the Hvpas' names (conflicts with VPAs).
	targets map[string][]string
	// selectors are every resolvable Hvpa's pod selectors per namespace (--memory-saver).
	selectors map[string][]labels.Selector
}

// resolveHvpas lists the Hvpas and resolves each one's target once.
func (r *Recommender) resolveHvpas(ctx context.Context) hvpaView {
	v := hvpaView{targets: map[string][]string{}, selectors: map[string][]labels.Selector{}}
	var l hvpav1alpha1.HvpaList
	if err := r.Client.List(ctx, &l); err != nil {
		log.FromContext(ctx).V(1).Info("listing Hvpas", "error", err.Error())
		return v
	}
	for i := range l.Items {
		h := &l.Items[i]
		ref := h.Spec.TargetRef
		t, err := workload.ResolveTarget(ctx, r.Client, h.Namespace, &autoscalingv1.CrossVersionObjectReference{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name})
		if err != nil {
			continue
		}
		v.targets[t.Key()] = append(v.targets[t.Key()], h.Name)
		v.selectors[h.Namespace] = append(v.selectors[h.Namespace], t.Selector)
		if h.Spec.VPA == nil || !h.Spec.VPA.Deploy || !r.inNamespaces(h.Namespace) {
			continue
		}
		cfg, err := recommender.WithOverrides(r.Base, h.Annotations)
		if err != nil {
			continue
		}
		v.served = append(v.served, &servedHvpa{hvpa: h, target: t, model: r.model(cfg)})
	}
	return v
}

// updateHvpaRecommendations computes the embedded recommendation of every served Hvpa.
func (r *Recommender) updateHvpaRecommendations(list []*servedHvpa) {
	recs := map[types.NamespacedName]HvpaRecommendation{}
	for _, s := range list {
		merged := r.MergedAggregates(s.hvpa.Namespace, hvpaOwner(s.hvpa.Name), s.target.Selector, s.model)
		rec, conf := Recommendation(s.model, merged, s.hvpa.Spec.VPA.Template.ResourcePolicy)
		if rec != nil {
			recs[types.NamespacedName{Namespace: s.hvpa.Namespace, Name: s.hvpa.Name}] = HvpaRecommendation{Recommendation: rec, Confidence: conf}
		}
	}
	r.hvpa.mu.Lock()
	old := r.hvpa.recs
	r.hvpa.recs = recs
	r.hvpa.mu.Unlock()
	for _, s := range list {
		key := types.NamespacedName{Namespace: s.hvpa.Namespace, Name: s.hvpa.Name}
		if before, now := old[key], recs[key]; !equality.Semantic.DeepEqual(before.Recommendation, now.Recommendation) {
			select {
			case r.hvpa.changes <- event.GenericEvent{Object: s.hvpa}:
			default:
			}
		}
	}
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
