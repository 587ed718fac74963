package recommender

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/adaptive"
	"github.com/hvpa-dev/hvpa/usage"
)

// adaptiveKey names the adaptive state of one container of one VerticalPodAutoscaler.
type adaptiveKey struct{ ns, vpa, container string }

// adaptiveStates are the VPAs' adaptive models (recommender.hvpa.dev/model: adaptive, or --default-model),
// kept in memory across runs: their scores are lost at a restart, and upstream's target wins again until
// the model has a day of samples (adaptive.Config.Warmup).
type adaptiveStates struct {
	models map[types.NamespacedName]*adaptiveModel
	states map[adaptiveKey]*adaptive.State
}

type adaptiveModel struct {
	cfg   recommender.Config
	model *adaptive.Model
}

// modelName is the model an object asks for: its annotation, else the recommender's default.
func (r *Recommender) modelName(annotations map[string]string) (string, error) {
	v, ok := annotations[adaptive.AnnotationModel]
	if !ok {
		v = r.Opts.DefaultModel
	}
	name, err := adaptive.ParseModel(strings.TrimSpace(v))
	if err != nil {
		return "", fmt.Errorf("annotation %s: %w", adaptive.AnnotationModel, err)
	}
	return name, nil
}

// adaptiveOf is the adaptive model of VPA v when it asks for one (nil: upstream's model).
func (r *Recommender) adaptiveOf(v *vpav1.VerticalPodAutoscaler, cfg recommender.Config) (*adaptive.Model, error) {
	name, err := r.modelName(v.Annotations)
	if err != nil || name != adaptive.ModelAdaptive {
		return nil, err
	}
	return r.adaptiveFor(v, cfg)
}

// adaptiveFor is the adaptive model of VPA v with configuration cfg (made again when cfg changes).
func (r *Recommender) adaptiveFor(v *vpav1.VerticalPodAutoscaler, cfg recommender.Config) (*adaptive.Model, error) {
	if r.adaptive.models == nil {
		r.adaptive = adaptiveStates{models: map[types.NamespacedName]*adaptiveModel{}, states: map[adaptiveKey]*adaptive.State{}}
	}
	key := types.NamespacedName{Namespace: v.Namespace, Name: v.Name}
	if am, ok := r.adaptive.models[key]; ok && am.cfg == cfg {
		return am.model, nil
	}
	m, err := adaptive.NewModel(adaptive.Defaults(cfg))
	if err != nil {
		return nil, fmt.Errorf("annotation %s: %w", adaptive.AnnotationModel, err)
	}
	r.adaptive.models[key] = &adaptiveModel{cfg: cfg, model: m}
	for k := range r.adaptive.states { // its states belong to the old model
		if k.ns == v.Namespace && k.vpa == v.Name {
			delete(r.adaptive.states, k)
		}
	}
	return m, nil
}

// adaptiveState is the state of one container of an adaptive VPA.
func (r *Recommender) adaptiveState(s *served, container string) *adaptive.State {
	k := adaptiveKey{s.vpa.Namespace, s.vpa.Name, container}
	st, ok := r.adaptive.states[k]
	if !ok {
		st = s.adaptive.NewState()
		r.adaptive.states[k] = st
	}
	return st
}

// feedAdaptive gives a usage sample of a pod to the adaptive VPAs that select it.
func (r *Recommender) feedAdaptive(owners []*served, u usage.ContainerUsage) {
	for _, s := range owners {
		st := r.adaptiveState(s, u.Container)
		if u.CPUMilli >= 0 {
			st.AddCPU(u.Time, float64(u.CPUMilli)/1000)
		}
		if u.MemoryBytes >= 0 {
			st.AddMemory(u.Time, float64(u.MemoryBytes))
		}
	}
}

// oomAdaptive records an OOM kill (or a memory-pressure eviction) in the adaptive VPAs that select the pod.
func (r *Recommender) oomAdaptive(owners []*served, container string, at time.Time, request float64) {
	for _, s := range owners {
		r.adaptiveState(s, container).RecordOOM(at, request)
	}
}

// recommendAdaptive replaces the upstream recommendations of an adaptive VPA with its adaptive model's and
// returns the winners, e.g. "app: cpu p95-m5-h6, memory upstream".
func (r *Recommender) recommendAdaptive(s *served, recs []recommender.ContainerRecommendation, policy func(string) recommender.Policy, now time.Time) string {
	var won []string
	for i, c := range recs {
		p := policy(c.Container)
		// upstream's model leaves a resource out without history for it (CPU before the first CPU sample, after an
		// OOM kill): the adaptive model publishes no target of its own for it either
		p.ControlCPU = p.ControlCPU && c.Target.CPUMilli >= 0
		p.ControlMem = p.ControlMem && c.Target.MemoryBytes >= 0
		res := r.adaptiveState(s, c.Container).Recommend(now, c.Recommendation, len(recs), p)
		recs[i].Recommendation = res.Recommendation
		won = append(won, fmt.Sprintf("%s: cpu %s, memory %s", c.Container, res.CPUModel, res.MemoryModel))
		r.Metrics.setWinner(s.vpa.Namespace, s.vpa.Name, c.Container, res.CPUModel, res.MemoryModel)
	}
	sort.Strings(won)
	return strings.Join(won, "; ")
}

// forgetAdaptive drops the adaptive states of VPAs that are gone or no longer adaptive.
func (r *Recommender) forgetAdaptive(list []*served) {
	keep := map[types.NamespacedName]bool{}
	for _, s := range list {
		if s.adaptive != nil {
			keep[types.NamespacedName{Namespace: s.vpa.Namespace, Name: s.vpa.Name}] = true
		}
	}
	for k := range r.adaptive.models {
		if !keep[k] {
			delete(r.adaptive.models, k)
			r.Metrics.forgetWinners(k.Namespace, k.Name)
		}
	}
	for k := range r.adaptive.states {
		if !keep[types.NamespacedName{Namespace: k.ns, Name: k.vpa}] {
			delete(r.adaptive.states, k)
		}
	}
}

// newWinnerMetric is hvpa_recommender_adaptive_winner_info: 1 for the candidate whose target an adaptive
// VPA's container publishes, per resource.
func newWinnerMetric() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "hvpa", Subsystem: "recommender", Name: "adaptive_winner_info",
		Help: "1 for the candidate of the adaptive model (recommender.hvpa.dev/model: adaptive) whose target a VerticalPodAutoscaler's container publishes, per resource (upstream: upstream's target)."},
		[]string{"namespace", "object", "container", "resource", "candidate"})
}

func (m *Metrics) setWinner(ns, vpa, container, cpu, memory string) {
	if !m.PerObject {
		return
	}
	l := prometheus.Labels{"namespace": ns, "object": vpa, "container": container}
	m.AdaptiveWinner.DeletePartialMatch(l)
	m.AdaptiveWinner.WithLabelValues(ns, vpa, container, "cpu", cpu).Set(1)
	m.AdaptiveWinner.WithLabelValues(ns, vpa, container, "memory", memory).Set(1)
}

func (m *Metrics) forgetWinners(ns, vpa string) {
	m.AdaptiveWinner.DeletePartialMatch(prometheus.Labels{"namespace": ns, "object": vpa})
}
