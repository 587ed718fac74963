package pod

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"gomodules.xyz/jsonpatch/v2"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Annotations the webhook writes on the pods it sizes (and vpav1.AnnotationSizedResources: what it changed).
const (
	// AnnotationSizedBy names the object the pod was sized from, e.g. "VerticalPodAutoscaler/web".
	AnnotationSizedBy = vpav1.AnnotationSizedBy
	// AnnotationAlsoMatched lists the other objects that control the pod's workload (the oldest wins).
	AnnotationAlsoMatched = "autoscaling.hvpa.dev/also-matched"
	// AnnotationNotes says why values are what they are (maxAllowed, LimitRange, the limit's source).
	AnnotationNotes = "autoscaling.hvpa.dev/sizing-notes"
)

// Handler is the pod admission handler.
type Handler struct {
	// Client reads VPAs, Hvpas, LimitRanges and owner metadata, normally from the manager's cache.
	Client client.Reader
	// Live reads what the cache may not have seen yet (a just-created ReplicaSet or Deployment).
	Live    client.Client
	Gates   featuregate.FeatureGate
	Metrics *Metrics
	Clock   clock.PassiveClock
	// RecommenderName is the name hvpa's recommender serves ("": "default"): a VPA that another recommender
	// serves, or whose updateMode is Off, only observes; an Hvpa on its workload sizes the pod.
	RecommenderName string
	// MaxCPUBoost caps a startup-boosted CPU request (millicores; 0: no cap), as upstream's
	// --max-allowed-cpu-boost does.
	MaxCPUBoost float64

	// targets resolves VPA targets from the cache (Live when it has not seen one yet)
	targets *workload.Resolver
}

// NewHandler returns a pod handler.
func NewHandler(cached client.Reader, live client.Client, gates featuregate.FeatureGate, m *Metrics, clk clock.PassiveClock) *Handler {
	return &Handler{Client: cached, Live: live, Gates: gates, Metrics: m, Clock: clk, targets: workload.NewResolver(cached, live)}
}

// Handle sizes a pod being created. It never denies: every failure admits the pod as it is, a panic too (an
// answer that denies is not covered by the webhook's failurePolicy Ignore, which admits only when the call
// fails).
func (h *Handler) Handle(ctx context.Context, req admission.Request) (resp admission.Response) {
	start := h.Clock.Now()
	outcome := OutcomeError
	defer func() {
		if r := recover(); r != nil {
			logf.FromContext(ctx).Error(fmt.Errorf("panic: %v", r), "admitting the pod unsized", "namespace", req.Namespace, "stack", string(debug.Stack()))
			resp, outcome = admission.Allowed(fmt.Sprintf("hvpa could not size the pod: %v", r)), OutcomeError
		}
		h.Metrics.Observe(resourcePods, outcome, h.Clock.Since(start))
	}()
	resp, outcome = h.handle(ctx, req)
	return resp
}

func (h *Handler) handle(ctx context.Context, req admission.Request) (admission.Response, string) {
	log := logf.FromContext(ctx)
	if req.Operation != admissionv1.Create || req.Kind.Kind != "Pod" || req.SubResource != "" {
		return admission.Allowed(""), OutcomeNotApplicable
	}
	pod := &corev1.Pod{}
	if err := json.Unmarshal(req.Object.Raw, pod); err != nil {
		log.Error(err, "admitting a pod that could not be decoded unsized", "namespace", req.Namespace)
		return admission.Allowed("hvpa could not decode the pod: " + err.Error()), OutcomeError
	}
	ns := req.Namespace
	if ns == "" {
		ns = pod.Namespace
	}
	if scaling.HasPodLevelResources(&pod.Spec) {
		// pod-level resources bound the containers' sum: sizing containers alone could make the pod invalid
		return admission.Allowed(""), OutcomePodResources
	}
	choice, outcome, err := h.choose(ctx, ns, pod)
	if err != nil {
		log.Error(err, "admitting the pod unsized", "namespace", ns, "pod", podName(pod))
		return admission.Allowed("hvpa could not size the pod: " + err.Error()), OutcomeError
	}
	if choice == nil {
		return admission.Allowed(""), outcome
	}
	sized, outcome := h.size(ctx, ns, pod, choice)
	if sized == nil {
		return admission.Allowed(""), outcome
	}
	log.V(1).Info("sizing pod", "namespace", ns, "pod", podName(pod), "by", choice.String(), "resources", sized.Annotations[vpav1.AnnotationSizedResources])
	return admission.Patched("", patch(pod, sized)...), outcome
}

// patch is the JSON patch from pod to sized: each changed container's resources and the annotations, each
// replaced as a whole ("add" on an existing member replaces it), so the patch applies whatever the incoming
// object omitted. Building it directly is several times cheaper than diffing two serialized pods.
func patch(pod, sized *corev1.Pod) []jsonpatch.JsonPatchOperation {
	var ops []jsonpatch.JsonPatchOperation
	for i := range sized.Spec.Containers {
		if !equality.Semantic.DeepEqual(pod.Spec.Containers[i].Resources, sized.Spec.Containers[i].Resources) {
			ops = append(ops, jsonpatch.NewOperation("add", fmt.Sprintf("/spec/containers/%d/resources", i), sized.Spec.Containers[i].Resources))
		}
	}
	for i := range sized.Spec.InitContainers { // sidecars
		if !equality.Semantic.DeepEqual(pod.Spec.InitContainers[i].Resources, sized.Spec.InitContainers[i].Resources) {
			ops = append(ops, jsonpatch.NewOperation("add", fmt.Sprintf("/spec/initContainers/%d/resources", i), sized.Spec.InitContainers[i].Resources))
		}
	}
	return append(ops, jsonpatch.NewOperation("add", "/metadata/annotations", sized.Annotations))
}

// candidate is a VPA or Hvpa that controls the pod's workload.
type candidate struct {
	kind    string
	name    string
	created time.Time
	vpa     *vpav1.VerticalPodAutoscaler
	hvpa    *hvpav1alpha1.Hvpa
	// observer: a VPA that only watches (vpav1.Observes); it sizes a pod only when no actor matches
	observer bool
	// idle: an observer that would leave the pod as it is (updateMode Off without a startup boost); another
	// observer that sizes is chosen before it, as upstream's webhook skips such VPAs
	idle bool
}

func (c *candidate) String() string { return c.kind + "/" + c.name }

// chosen is the candidate that sizes the pod and the others that matched too.
type chosen struct {
	*candidate
	others []*candidate
}

// choose finds the objects that control the pod and picks the oldest. nil without a match.
func (h *Handler) choose(ctx context.Context, ns string, pod *corev1.Pod) (*chosen, string, error) {
	var vpas vpav1.VerticalPodAutoscalerList
	if err := h.Client.List(ctx, &vpas, client.InNamespace(ns)); err != nil {
		return nil, OutcomeError, fmt.Errorf("listing VerticalPodAutoscalers: %w", err)
	}
	// the cache's own Hvpas, not copies (read only): an Hvpa's status is what every pod admission would copy
	var hvpas hvpav1alpha1.HvpaList
	if err := h.Client.List(ctx, &hvpas, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return nil, OutcomeError, fmt.Errorf("listing Hvpas: %w", err)
	}
	if len(vpas.Items) == 0 && len(hvpas.Items) == 0 {
		return nil, OutcomeUntargeted, nil
	}
	top, ok, err := workload.TopController(ctx, h.Client, h.Live, ns, pod)
	if err != nil {
		return nil, OutcomeError, err
	}
	if !ok {
		return nil, OutcomeUntargeted, nil
	}
	podLabels := labels.Set(pod.Labels)
	var cands []*candidate
	for i := range vpas.Items {
		v := &vpas.Items[i]
		if v.Spec.TargetRef == nil || workload.RefOf(v.Spec.TargetRef.APIVersion, v.Spec.TargetRef.Kind, v.Spec.TargetRef.Name) != top {
			continue
		}
		sel, err := h.vpaSelector(ctx, v)
		if err != nil {
			logf.FromContext(ctx).V(1).Info("VPA target unresolvable, not sizing from it", "vpa", v.Name, "reason", err.Error())
			continue
		}
		if sel.Matches(podLabels) {
			cands = append(cands, h.vpaCandidate(v))
		}
	}
	for i := range hvpas.Items {
		x := &hvpas.Items[i]
		ref := x.Spec.TargetRef
		if workload.RefOf(ref.APIVersion, ref.Kind, ref.Name) != top || x.Status.Selector == "" ||
			meta.IsStatusConditionTrue(x.Status.Conditions, hvpav1alpha1.ConditionConfigUnsupported) { // it does not act
			continue
		}
		sel, err := labels.Parse(x.Status.Selector)
		if err != nil || !sel.Matches(podLabels) {
			continue
		}
		cands = append(cands, &candidate{kind: hvpav1alpha1.KindHvpa, name: x.Name, created: x.CreationTimestamp.Time, hvpa: x})
	}
	if len(cands) == 0 {
		return nil, OutcomeUntargeted, nil
	}
	return pick(cands), "", nil
}

// vpaCandidate is a VPA that matches the pod: an observer to this webhook (vpav1.Observes), and an idle one
// when it would leave the pod as it is (updateMode Off without a startup boost).
func (h *Handler) vpaCandidate(v *vpav1.VerticalPodAutoscaler) *candidate {
	return &candidate{kind: vpav1.KindVerticalPodAutoscaler, name: v.Name, created: v.CreationTimestamp.Time, vpa: v,
		observer: v.Observes(h.RecommenderName),
		idle:     !v.EffectiveUpdateMode().SizesNewPods() && !h.boosts(v)}
}

// boosts says whether the webhook gives v's pods a startup boost: v asks for one and the gate CPUStartupBoost
// is on (nil v: an Hvpa, which has none).
func (h *Handler) boosts(v *vpav1.VerticalPodAutoscaler) bool {
	return v != nil && h.Gates.Enabled(features.CPUStartupBoost) && v.HasStartupBoost()
}

// pick orders the candidates (sortCandidates) and chooses the first; the others it names are the actors
// among the rest: an observer (updateMode Off, another recommender's VPA) is no conflict.
func pick(cands []*candidate) *chosen {
	sortCandidates(cands)
	c := &chosen{candidate: cands[0]}
	for _, o := range cands[1:] {
		if !o.observer {
			c.others = append(c.others, o)
		}
	}
	return c
}

// sortCandidates orders the candidates by workload.Autoscaler's rule (the oldest, then kind, then name):
// the one that serves the workload first, as the recommender and the Hvpa controller decide it. Among
// observers, one that sizes pods comes before an idle one (upstream's webhook skips a VPA in updateMode Off).
func sortCandidates(c []*candidate) {
	sort.Slice(c, func(i, j int) bool {
		if c[i].observer && c[j].observer && c[i].idle != c[j].idle {
			return !c[i].idle
		}
		return c[i].autoscaler().Before(c[j].autoscaler())
	})
}

func (c *candidate) autoscaler() workload.Autoscaler {
	return workload.Autoscaler{Kind: c.kind, Name: c.name, Created: metav1.NewTime(c.created), Observer: c.observer}
}

// vpaSelector resolves a VPA's target selector (from the cache: no API request per pod create).
func (h *Handler) vpaSelector(ctx context.Context, v *vpav1.VerticalPodAutoscaler) (labels.Selector, error) {
	t, err := h.targets.Resolve(ctx, v.Namespace, v.Spec.TargetRef)
	if err != nil {
		return nil, err
	}
	return t.Selector, nil
}

// size returns the pod with its containers sized and annotated, or nil when nothing is to be done. A VPA's
// startup boost (feature gate CPUStartupBoost) applies on top, in every update mode, also before there is a
// recommendation (on the pod's own requests), as upstream's does.
func (h *Handler) size(ctx context.Context, ns string, pod *corev1.Pod, c *chosen) (*corev1.Pod, string) {
	var sz scaling.Sizing
	var fe field.ErrorList
	off := false
	switch {
	case c.vpa != nil:
		off = !c.vpa.EffectiveUpdateMode().SizesNewPods()
		if !off {
			sz, fe = scaling.SizingFromVPA(c.vpa)
		}
	default:
		sz, fe = scaling.SizingFromHvpa(c.hvpa)
	}
	boosts := h.boosts(c.vpa)
	switch {
	case len(fe) > 0:
		logf.FromContext(ctx).Info("policy unreadable, pod left unsized", "by", c.String(), "error", fe.ToAggregate())
		return nil, OutcomeInvalidPolicy
	case sz.Targets == nil && !boosts && off:
		return nil, OutcomeOff
	case sz.Targets == nil && !boosts:
		return nil, OutcomeNoRecommend
	}
	out := pod.DeepCopy()
	if boosts {
		unboost(out, c.vpa, h.MaxCPUBoost) // admitted again: sized and boosted from the values before the boost
	}
	// only the boost below writes the startup-boost annotation: one the pod came with is its author's, and
	// would name the CPU the updater resizes the pod to when the boost ends
	delete(out.Annotations, vpav1.AnnotationStartupBoost)
	var changes, notes []string
	if sz.Targets != nil {
		var lrs corev1.LimitRangeList
		if err := h.Client.List(ctx, &lrs, client.InNamespace(ns)); err != nil {
			logf.FromContext(ctx).Error(err, "listing LimitRanges; pod left unsized")
			return nil, OutcomeError
		}
		policies := sz.Policies
		if !h.Gates.Enabled(features.RequestToLimitRatio) {
			policies = scaling.WithoutRatios(policies)
		}
		decisions := scaling.SizePod(scaling.FromPodContainers(&pod.Spec), sz.Targets, policies, sz.Gap, scaling.FromLimitRanges(lrs.Items))
		changes, notes = Apply(out, decisions)
	}
	if boosts {
		changes = append(changes, boost(out, c.vpa, h.MaxCPUBoost)...)
	}
	annotate(out, c, changes, notes)
	if len(changes) > 0 {
		return out, OutcomeSized
	}
	return out, OutcomeUnchanged
}

// annotate writes the sizing annotations: who sized the pod, who else matched, what changed and why.
func annotate(out *corev1.Pod, c *chosen, changes, notes []string) {
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[AnnotationSizedBy] = c.String()
	if len(c.others) > 0 {
		names := make([]string, len(c.others))
		for i, o := range c.others {
			names[i] = o.String()
		}
		out.Annotations[AnnotationAlsoMatched] = strings.Join(names, ", ") + " (the oldest, " + c.String() + ", sizes the pod)"
	}
	if len(changes) > 0 {
		out.Annotations[vpav1.AnnotationSizedResources] = strings.Join(changes, "; ")
	}
	if len(notes) > 0 {
		out.Annotations[AnnotationNotes] = strings.Join(notes, "; ")
	}
}

// Apply writes sized containers (app containers and sidecars) into a pod spec and says what changed (before ->
// after) and why, per container. Only values a decision holds are written; nothing else in the pod is touched.
func Apply(pod *corev1.Pod, decisions []scaling.ContainerDecision) (changes, notes []string) {
	for _, d := range decisions {
		k := container(&pod.Spec, d.Name)
		if k == nil {
			continue
		}
		var what []string
		for _, r := range scaling.Resources {
			what = append(what, set(&k.Resources.Requests, r, d.Requests, "request")...)
			limit := set(&k.Resources.Limits, r, d.Limits, "limit")
			what = append(what, limit...)
			if len(limit) > 0 && !scaling.HasLimitNote(d.Notes, r) {
				d.Notes = append(d.Notes, scaling.Note{Resource: r, Limit: true, Text: fmt.Sprintf("%s limit keeps the original limit/request ratio", r)})
			}
		}
		if len(what) > 0 {
			changes = append(changes, d.Name+": "+strings.Join(what, ", "))
		}
		if len(d.Notes) > 0 {
			notes = append(notes, d.Name+": "+strings.Join(scaling.NoteTexts(d.Notes), ", "))
		}
	}
	return changes, notes
}

// container is the app container or sidecar of that name (names are unique across both lists), nil: none.
func container(spec *corev1.PodSpec, name string) *corev1.Container {
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			return &spec.Containers[i]
		}
	}
	for i := range spec.InitContainers {
		k := &spec.InitContainers[i]
		if k.Name == name && k.RestartPolicy != nil && *k.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			return k
		}
	}
	return nil
}

func set(l *corev1.ResourceList, r scaling.Resource, v scaling.Values, what string) []string {
	x, ok := v.Get(r)
	if !ok {
		return nil
	}
	q := scaling.Quantity(r, x)
	old, had := (*l)[r.ResourceName()]
	if had && old.Cmp(q) == 0 {
		return nil
	}
	if *l == nil {
		*l = corev1.ResourceList{}
	}
	(*l)[r.ResourceName()] = q
	before := "unset"
	if had {
		before = old.String()
	}
	return []string{fmt.Sprintf("%s %s %s -> %s", r, what, before, q.String())}
}

func podName(p *corev1.Pod) string {
	if p.Name != "" {
		return p.Name
	}
	return p.GenerateName + "*"
}
