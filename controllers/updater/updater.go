package updater

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/admissionlease"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/internal/heartbeat"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Updater brings running pods to their VPA's recommendation or their Hvpa's intent: in place through the
// pods/resize subresource, or by eviction through the Eviction API (PodDisruptionBudgets decide). It runs
// on the leader only.
type Updater struct {
	// Client reads VPAs, Hvpas, pods and LimitRanges (cached) and writes resizes, evictions.
	Client client.Client
	// Live reads the admission Lease, and targets the cache has not seen yet.
	Live client.Client
	// Targets resolves targetRefs and reads their desired replicas, from the cache for well-known kinds.
	Targets  *workload.Resolver
	Recorder record.EventRecorder
	Clock    clock.WithTicker
	Gates    featuregate.FeatureGate
	Options  Options
	Metrics  *Metrics
	// Usage reads the containers' memory usage (metrics.k8s.io) before a resize lowers a memory limit; nil:
	// never read (such resizes keep the memory limit).
	Usage UsageReader
	// Heartbeat beats as each update loop starts (nil: no liveness check).
	Heartbeat *heartbeat.Heartbeat

	// limiter and resizeLimiter hold evictions and a VPA's in-place resizes to --eviction-rate-limit and
	// --eviction-rate-burst, each its own bucket (upstream's updater; an Hvpa's resizes apply its intent and
	// are not held); loopEnd is when the running loop's waits for them end (the next loop is due).
	limiter, resizeLimiter *rate.Limiter
	loopEnd                time.Time
	// resized counts resizes per (pod UID, change) for loop detection, lastResized names each pod's newest
	// (recordResize); evicted remembers evictions per (controller, change).
	resized     map[string][]time.Time
	lastResized map[types.UID]lastResize
	evicted     map[string]eviction
	converge    map[string]convergence
	// refused is, per pod, its last resize that could not be made and no eviction replaced (retried with
	// backoff; in memory: after a restart each such pod is tried once more, then backs off again).
	refused map[types.UID]Refusal
	// savedRecords is the loop records as last read from or written to Options.LoopRecords.
	savedRecords string
}

// eviction remembers the evictions for a change: when the last was, and what loop detection knows of it
// (the pods of the workload at the first: a pod not among them is a replacement; the changes the workload was
// evicted for since).
type eviction struct {
	at time.Time
	EvictedChange
}

type convergence struct {
	targets string
	since   time.Time
	done    bool
}

var (
	_ manager.Runnable               = &Updater{}
	_ manager.LeaderElectionRunnable = &Updater{}
)

// New returns an Updater.
func New(c, live client.Client, rec record.EventRecorder, clk clock.WithTicker, gates featuregate.FeatureGate, o Options, m *Metrics) *Updater {
	limiter := func() *rate.Limiter {
		if o.EvictionRateLimit > 0 {
			return rate.NewLimiter(rate.Limit(o.EvictionRateLimit), max(1, o.EvictionBurst))
		}
		return rate.NewLimiter(rate.Inf, 0)
	}
	return &Updater{Client: c, Live: live, Targets: workload.NewResolver(c, live), Recorder: rec, Clock: clk, Gates: gates, Options: o, Metrics: m,
		limiter: limiter(), resizeLimiter: limiter(),
		resized: map[string][]time.Time{}, lastResized: map[types.UID]lastResize{}, evicted: map[string]eviction{}, converge: map[string]convergence{}, refused: map[types.UID]Refusal{}}
}

// UsageReader reads the memory working set of the containers of one namespace's pods: pod name -> container
// -> bytes.
type UsageReader interface {
	MemoryUsage(ctx context.Context, namespace string) (map[string]map[string]float64, error)
}

// NeedLeaderElection: one updater acts at a time.
func (u *Updater) NeedLeaderElection() bool { return true }

// Start runs an update loop every Interval until ctx ends.
func (u *Updater) Start(ctx context.Context) error {
	u.loadLoopRecords(ctx)
	t := u.Clock.NewTicker(u.Options.Interval)
	defer t.Stop()
	for {
		u.Heartbeat.Beat()
		if err := u.RunOnce(ctx); err != nil && ctx.Err() == nil {
			logf.FromContext(ctx).Error(err, "update loop")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// RunOnce runs one update loop over every VPA and Hvpa.
func (u *Updater) RunOnce(ctx context.Context) error {
	start := u.Clock.Now()
	defer func() { u.Metrics.Loop.Observe(u.Clock.Since(start).Seconds()) }()
	u.loopEnd = time.Now().Add(u.Options.Interval) // the rate limiters wait in real time
	now := u.Clock.Now()
	controllers, errs := u.controllers(ctx)
	admission, why := true, ""
	if l := u.Options.AdmissionLease; l.Name != "" {
		admission, why = admissionlease.Serving(ctx, u.Live, l.Namespace, l.Name, u.Options.AdmissionLeaseMaxAge, now)
	}
	candidates := map[string]int{}
	evicted := u.openEvictions(now)
	seen := map[types.UID]bool{}
	usage := map[string]map[string]map[string]float64{} // per namespace, read at most once a loop
	for _, c := range controllers {
		pods, err := u.pods(ctx, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.ctl.Key(), err))
			continue
		}
		c.ctl.Replicas = u.desiredReplicas(ctx, c)
		c.ctl.Evicted = evicted[c.ctl.Key()]
		states := u.podStates(ctx, c, pods, now)
		actions, budget := u.plan(ctx, c, pods, states, usage, now)
		c.budget, c.evictable = &budget, Evictable(&c.ctl, states, c.ctl.Options(u.Options))
		u.trackConvergence(&c.ctl, actions, now)
		c.known = map[types.UID]bool{}
		for _, p := range pods {
			c.known[p.UID], seen[p.UID] = true, true
		}
		u.forgetSettled(states, actions)
		for i := range actions {
			a := &actions[i]
			if a.Kind != Wait {
				candidates[c.ctl.Kind]++
			}
			u.act(ctx, c, &pods[indexOf(pods, a.Pod.UID)], a, admission, why, now)
		}
	}
	for uid := range u.refused {
		if !seen[uid] {
			delete(u.refused, uid)
		}
	}
	for _, kind := range []string{vpav1.KindVerticalPodAutoscaler, hvpav1alpha1.KindHvpa} {
		u.Metrics.Candidates.WithLabelValues(kind).Set(float64(candidates[kind]))
	}
	u.forget(now)
	if err := u.saveLoopRecords(ctx); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func indexOf(pods []corev1.Pod, uid types.UID) int {
	for i := range pods {
		if pods[i].UID == uid {
			return i
		}
	}
	return -1
}

// podStates reads what the planner needs from the controller's pods, with their earlier refusals.
func (u *Updater) podStates(ctx context.Context, c served, pods []corev1.Pod, now time.Time) []Pod {
	origins, templateSized := u.templateContainers(ctx, c)
	states := make([]Pod, len(pods))
	for i := range pods {
		states[i] = podState(&pods[i], now, c.ctl.Options(u.Options), c.ctl.Boosts)
		// a sizing annotation the template carries (copied from a pod) says nothing of the webhook
		states[i].SizedAtAdmission = states[i].SizedAtAdmission && !templateSized
		withOrigins(states[i].Containers, origins)
		withOrigins(states[i].InitContainers, origins)
		if r, ok := u.refused[pods[i].UID]; ok {
			states[i].Refused = &r
		}
	}
	return states
}

// plan plans the controller's pods; when a resize would lower a memory limit it reads the namespace's memory
// usage (once a loop) and plans again with it.
func (u *Updater) plan(ctx context.Context, c served, pods []corev1.Pod, states []Pod, usage map[string]map[string]map[string]float64, now time.Time) ([]Action, int) {
	o := c.ctl.Options(u.Options)
	actions, budget := PlanWithBudget(&c.ctl, states, now, o)
	if !slices.ContainsFunc(actions, func(a Action) bool { return a.NeedsUsage }) {
		return actions, budget
	}
	ns := c.ctl.Namespace
	if _, ok := usage[ns]; !ok {
		usage[ns] = map[string]map[string]float64{}
		if u.Usage != nil {
			got, err := u.Usage.MemoryUsage(ctx, ns)
			if err != nil {
				logf.FromContext(ctx).Info("reading memory usage; resizes keep the memory limits they would lower", "namespace", ns, "error", err.Error())
			} else {
				usage[ns] = got
			}
		}
	}
	for i := range states {
		states[i].MemoryUsage = usage[ns][pods[i].Name]
		if states[i].MemoryUsage == nil {
			states[i].MemoryUsage = map[string]float64{} // read: not known
		}
	}
	return PlanWithBudget(&c.ctl, states, now, o)
}

// forgetSettled drops the refusal of each pod with nothing pending and nothing to do (its resize was made),
// or with nothing pending and the size it was refused (the kubelet applied a resize it had deferred or found
// infeasible): an update the pod needs later is not held by that backoff.
func (u *Updater) forgetSettled(states []Pod, actions []Action) {
	for i := range states {
		p := &states[i]
		if p.Refused == nil || p.Resizing {
			continue
		}
		if applied := sameAsk(asked(p), p.Refused.Asked); applied || !slices.ContainsFunc(actions, func(a Action) bool { return a.Pod.UID == p.UID }) {
			delete(u.refused, p.UID)
		}
	}
}

// served is a controller with its resolved target and the object events about it go to.
type served struct {
	ctl    Controller
	target workload.Ref
	sel    labels.Selector
	obj    runtime.Object
	known  map[types.UID]bool // the workload's pods in this loop
	gvk    schema.GroupVersionKind
	// budget is the disruptions the workload may still take this loop (evictions replacing refused resizes);
	// evictable: the workload may be disrupted at all (Evictable).
	budget    *int
	evictable bool
}

// templateContainers are the requests and limits of the workload's pod template by container name (nil when
// the template cannot be read): limits follow the workload's limit/request ratio, not one an earlier resize
// with a requestToLimitRatio left on a running pod. sized: the template itself carries an admission-sizing
// annotation (vpav1.SizedAtAdmission), so its pods' say nothing.
func (u *Updater) templateContainers(ctx context.Context, c served) (containers map[string]scaling.Container, sized bool) {
	t, err := u.Targets.PodTemplate(ctx, c.gvk, c.ctl.Namespace, c.target.Name)
	if err != nil || t == nil {
		return nil, false
	}
	out := map[string]scaling.Container{}
	for _, k := range scaling.FromPodContainers(&t.Spec) { // app containers and sidecars are sized
		out[k.Name] = k
	}
	return out, vpav1.SizedAtAdmission(t.Annotations)
}

// withOrigins sets each container's Origin from its workload's template.
func withOrigins(cs []scaling.Container, origins map[string]scaling.Container) {
	for i := range cs {
		if o, ok := origins[cs[i].Name]; ok {
			cs[i].Origin = &o
		}
	}
}

// desiredReplicas reads the workload's desired replicas from its scale subresource, a DaemonSet's from the
// nodes it should run on (status.desiredNumberScheduled, as upstream v1.8.1 reads it: a pod a node lacks
// counts as disrupted); 0: unknown (a Job: the plan then counts the pods).
func (u *Updater) desiredReplicas(ctx context.Context, c served) int32 {
	switch c.gvk.Kind {
	case "DaemonSet":
		var ds appsv1.DaemonSet
		if err := u.Client.Get(ctx, client.ObjectKey{Namespace: c.ctl.Namespace, Name: c.target.Name}, &ds); err != nil {
			return 0
		}
		return ds.Status.DesiredNumberScheduled
	case "", "Job", "CronJob": // no scale subresource
		return 0
	}
	s, err := u.Targets.Scale(ctx, c.gvk, c.ctl.Namespace, c.target.Name)
	if err != nil {
		return 0
	}
	return s.Spec.Replicas
}

// controllers lists the VPAs and Hvpas whose running pods the updater may change.
func (u *Updater) controllers(ctx context.Context) ([]served, []error) {
	var errs []error
	out, err := u.vpaControllers(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	hvpas, err := u.hvpaControllers(ctx)
	if err != nil {
		errs = append(errs, err)
	}
	out = withoutObservers(append(out, hvpas...), u.Options.RecommenderName)
	for i := range out {
		c := &out[i].ctl
		var lrs corev1.LimitRangeList
		if err := u.Client.List(ctx, &lrs, client.InNamespace(c.Namespace)); err != nil {
			errs = append(errs, err)
			continue
		}
		c.LimitRange = scaling.FromLimitRanges(lrs.Items)
		if !u.Gates.Enabled(features.RequestToLimitRatio) {
			c.Policies = scaling.WithoutRatios(c.Policies)
		}
	}
	return out, errs
}

// withoutObservers drops the VPAs that only observe (vpav1.Observes: another recommender serves them) a
// workload an Hvpa acts on: the Hvpa's intent sizes its pods, and an observer is never a second actor.
func withoutObservers(all []served, recommenderName string) []served {
	hvpaTargets := map[string]bool{}
	for _, s := range all {
		if _, ok := s.obj.(*hvpav1alpha1.Hvpa); ok {
			hvpaTargets[s.ctl.Namespace+"/"+s.target.String()] = true
		}
	}
	out := all[:0]
	for _, s := range all {
		if v, ok := s.obj.(*vpav1.VerticalPodAutoscaler); ok && v.Observes(recommenderName) && hvpaTargets[s.ctl.Namespace+"/"+s.target.String()] {
			continue
		}
		out = append(out, s)
	}
	return out
}

// vpaControllers are the VPAs whose mode lets the updater act, with a recommendation and a resolvable target.
func (u *Updater) vpaControllers(ctx context.Context) ([]served, error) {
	var out []served
	var vpas vpav1.VerticalPodAutoscalerList
	if err := u.Client.List(ctx, &vpas); err != nil {
		return nil, fmt.Errorf("listing VerticalPodAutoscalers: %w", err)
	}
	for i := range vpas.Items {
		v := &vpas.Items[i]
		mode := v.EffectiveUpdateMode()
		// a VPA with a startup boost is served in every mode: its boosted pods go back once the boost is over
		// (with the CPUStartupBoost gate on: without it the webhook boosts nothing, and a boost annotation on a
		// pod is its author's)
		boosts := v.HasStartupBoost() && u.Gates.Enabled(features.CPUStartupBoost)
		acts := u.modeActs(mode) && v.Status.Recommendation != nil && !vpaUnsupported(v)
		if (!acts && !boosts) || v.Spec.TargetRef == nil {
			continue
		}
		t, err := u.Targets.Resolve(ctx, v.Namespace, v.Spec.TargetRef)
		if err != nil {
			continue // the recommender reports unresolvable targets in the VPA's conditions
		}
		sz, fe := scaling.SizingFromVPA(v)
		if len(fe) > 0 || (sz.Targets == nil && !boosts) {
			continue
		}
		c := Controller{Kind: vpav1.KindVerticalPodAutoscaler, Namespace: v.Namespace, Name: v.Name, UID: v.UID, Mode: mode, Policies: sz.Policies,
			Targets: sz.Targets, Lower: sz.Lower, Upper: sz.Upper, BoostOnly: !acts || sz.Targets == nil,
			BoostDuration: func(container string) time.Duration { return scaling.BoostDuration(v.StartupBoostFor(container)) }}
		if boosts {
			c.Boosts = func(container string) bool { return v.StartupBoostFor(container) != nil }
		}
		u.applyPolicy(&c, v.Spec.UpdatePolicy)
		out = append(out, served{ctl: c, target: workload.RefOf(v.Spec.TargetRef.APIVersion, v.Spec.TargetRef.Kind, v.Spec.TargetRef.Name), sel: t.Selector, obj: v, gvk: t.GVK})
	}
	return out, nil
}

// hvpaControllers are the Hvpas whose mode lets the updater act, with an intent and a selector.
func (u *Updater) hvpaControllers(ctx context.Context) ([]served, error) {
	var out []served
	var hvpas hvpav1alpha1.HvpaList
	// from the cache without a copy of each Hvpa (every loop would copy every Hvpa, status and all): the loop
	// only reads them (TestHvpasReadWithoutCopies): the Controller holds values converted from them, and
	// events only make a reference to the Hvpa
	if err := u.Client.List(ctx, &hvpas, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing Hvpas: %w", err)
	}
	for i := range hvpas.Items {
		h := &hvpas.Items[i]
		up, mode := h.PodUpdatePolicy(), h.PodUpdateMode()
		d := h.Status.Desired
		if !u.modeActs(mode) || d == nil || len(d.Containers) == 0 || h.Status.Selector == "" ||
			meta.IsStatusConditionTrue(h.Status.Conditions, hvpav1alpha1.ConditionConfigUnsupported) {
			continue
		}
		sel, err := labels.Parse(h.Status.Selector)
		if err != nil {
			continue
		}
		sz, fe := scaling.SizingFromHvpa(h)
		if len(fe) > 0 {
			continue
		}
		c := Controller{Kind: hvpav1alpha1.KindHvpa, Namespace: h.Namespace, Name: h.Name, UID: h.UID, Mode: mode, Exact: true, Policies: sz.Policies, Gap: sz.Gap,
			Targets: sz.Targets}
		u.applyPolicy(&c, up)
		ref := h.Spec.TargetRef
		out = append(out, served{ctl: c, target: workload.RefOf(ref.APIVersion, ref.Kind, ref.Name), sel: sel, obj: h,
			gvk: workload.Canonical(schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind))}) // targetRef.apiVersion is optional
	}
	return out, nil
}

func (u *Updater) modeActs(m vpav1.UpdateMode) bool {
	return m.UpdaterActs(u.Gates.Enabled(features.InPlace))
}

func (u *Updater) applyPolicy(c *Controller, p *vpav1.PodUpdatePolicy) {
	if p == nil {
		return
	}
	if p.MinReplicas != nil {
		c.MinReplicas = *p.MinReplicas
	}
	if p.EvictAfterOOMSeconds != nil && *p.EvictAfterOOMSeconds > 0 && u.Gates.Enabled(features.PerVPAConfig) { // upstream's rule
		c.OOMWindow = time.Duration(*p.EvictAfterOOMSeconds) * time.Second
	}
	for _, r := range p.EvictionRequirements {
		if r != nil {
			c.EvictionRequirements = append(c.EvictionRequirements, *r)
		}
	}
}

func vpaUnsupported(v *vpav1.VerticalPodAutoscaler) bool {
	for _, c := range v.Status.Conditions {
		if c.Type == vpav1.ConfigUnsupported && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// pods lists the controller's pods: selected by its selector and controlled (top-most) by its target.
func (u *Updater) pods(ctx context.Context, c served) ([]corev1.Pod, error) {
	var l corev1.PodList
	if err := u.Client.List(ctx, &l, client.InNamespace(c.ctl.Namespace), client.MatchingLabelsSelector{Selector: c.sel}); err != nil {
		return nil, err
	}
	out := l.Items[:0]
	for _, p := range l.Items {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue // finished: neither a candidate nor a replica
		}
		top, ok, err := workload.TopController(ctx, u.Client, u.Live, p.Namespace, &p)
		if err != nil || !ok || top != c.target {
			continue
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// podState reads what the planner needs from a pod; boosts is the controller's Controller.Boosts.
func podState(p *corev1.Pod, now time.Time, o Options, boosts func(string) bool) Pod {
	s := Pod{Name: p.Name, UID: p.UID, Created: p.CreationTimestamp.Time, QoS: p.Status.QOSClass, PodLevelResources: scaling.HasPodLevelResources(&p.Spec),
		SizedAtAdmission: vpav1.SizedAtAdmission(p.Annotations)}
	s.conditions(p)
	s.Unboosted, s.UnboostedErr = boosted(p, boosts)
	s.Running = p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
	s.Live = s.Running && s.ReadySince != nil
	s.InitContainers = scaling.FromInitContainers(p.Spec.InitContainers)
	s.Containers = scaling.FromContainers(p.Spec.Containers)
	for _, k := range p.Spec.Containers {
		s.container(p, k, p.Status.ContainerStatuses, now, o)
	}
	for _, k := range p.Spec.InitContainers {
		if k.RestartPolicy != nil && *k.RestartPolicy == corev1.ContainerRestartPolicyAlways { // a sidecar: sized too
			s.container(p, k, p.Status.InitContainerStatuses, now, o)
		}
	}
	if s.QoS == "" {
		s.QoS = QoS(append(slices.Clone(s.Containers), s.InitContainers...))
	}
	return s
}

// boosted reads a pod's startup boost: per container the CPU it goes back to (nil: not boosted). A pod is
// boosted while it carries vpav1.AnnotationStartupBoost, its controller boosts some of its containers
// (Controller.Boosts: a VPA's startupBoost, the CPUStartupBoost gate on) and it has not been resized since
// it was created (metadata.generation 1: the API server counts every change of the spec, a resize too). So
// the end of a boost needs no mark on the pod (which would need `patch pods`): the resize that ends it ends
// it, and the annotation stays. Without the gate, or on a pod of a controller that boosts nothing, the
// annotation is ignored: pod authors can write it. A value that does not decode still sends the boosted
// containers back (to their targets), with the error.
func boosted(p *corev1.Pod, boosts func(string) bool) (map[string]vpav1.Unboosted, error) {
	a, ok := p.Annotations[vpav1.AnnotationStartupBoost]
	if !ok || boosts == nil || p.Generation > 1 {
		return nil, nil
	}
	m, err := vpav1.DecodeUnboosted(a)
	out := map[string]vpav1.Unboosted{}
	for name, u := range m {
		if boosts(name) {
			out[name] = u
		}
	}
	if err == nil && len(out) == 0 {
		return nil, nil
	}
	return out, err
}

// conditions reads the pod's Ready and resize conditions (a resize condition about an older resize, which
// the API keeps until the kubelet answers the new one, says nothing).
func (s *Pod) conditions(p *corev1.Pod) {
	for _, c := range p.Status.Conditions {
		current := c.Status == corev1.ConditionTrue && (c.ObservedGeneration == 0 || c.ObservedGeneration == p.Generation)
		switch {
		case c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue:
			t := c.LastTransitionTime.Time
			s.ReadySince = &t
		case c.Type == corev1.PodResizePending && current:
			s.ResizePending, s.ResizePendingSince = c.Reason, c.LastTransitionTime.Time
		case c.Type == corev1.PodResizeInProgress && current:
			t := c.LastTransitionTime.Time
			s.ResizeInProgressSince = &t
			if c.Reason != "" || c.Message != "" {
				s.ResizeFailure = strings.Trim(c.Reason+": "+c.Message, ": ")
			}
		}
	}
}

// container reads what one container says about the pod: a resize policy that restarts it, a resize not
// done yet, an OOM kill soon after its start.
func (s *Pod) container(p *corev1.Pod, k corev1.Container, statuses []corev1.ContainerStatus, now time.Time, o Options) {
	for _, rp := range k.ResizePolicy {
		if rp.RestartPolicy == corev1.RestartContainer && (rp.ResourceName == corev1.ResourceCPU || rp.ResourceName == corev1.ResourceMemory) {
			s.RestartOnResize = true
		}
	}
	for _, cs := range statuses {
		if cs.Name != k.Name {
			continue
		}
		if cs.Resources != nil && !sameResources(k.Resources, *cs.Resources) {
			s.Resizing = true
		}
		// upstream's updater (v1.8.1): the kill came within the window of the container's start, and is less than
		// the window ago (an old kill in the last termination state no longer makes the pod a candidate)
		if t := vpav1.OOMKill(cs.LastTerminationState); t != nil && t.FinishedAt.Sub(t.StartedAt.Time) < o.OOMWindow &&
			now.Sub(t.FinishedAt.Time) < o.OOMWindow {
			s.OOMKilledEarly = true
		}
	}
}

// sameResources compares the cpu and memory requests and limits of a spec with what the kubelet reports.
func sameResources(spec, status corev1.ResourceRequirements) bool {
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		for _, pair := range [][2]corev1.ResourceList{{spec.Requests, status.Requests}, {spec.Limits, status.Limits}} {
			a, okA := pair[0][r]
			b, okB := pair[1][r]
			if okA != okB || (okA && a.Cmp(b) != 0) {
				return false
			}
		}
	}
	return true
}

// act carries out one action.
func (u *Updater) act(ctx context.Context, c served, pod *corev1.Pod, a *Action, admission bool, why string, now time.Time) {
	switch a.Kind {
	case Wait:
		return
	case Skip:
		u.skip(c, pod, a, now)
		return
	case Resize:
		if !u.resizeInPlace(ctx, c, pod, a, now) {
			return
		}
		if a.Kind == Skip {
			u.skip(c, pod, a, now)
			return
		}
	}
	u.evict(ctx, c, pod, a, admission, why, now)
}

// resizeInPlace makes a resize. It returns false when that is all (made, or refused by loop detection);
// true when the API refused it and a is now what follows (AfterRefusal): a Skip, or an Evict.
func (u *Updater) resizeInPlace(ctx context.Context, c served, pod *corev1.Pod, a *Action, now time.Time) bool {
	log := logf.FromContext(ctx).WithValues("pod", pod.Namespace+"/"+pod.Name, "by", c.ctl.Key())
	key := string(pod.UID) + "|" + a.Fingerprint
	if n := u.recent(u.resized[key], now); n >= 2 {
		u.Metrics.Resizes.WithLabelValues("loop").Inc()
		u.Recorder.Eventf(pod, corev1.EventTypeWarning, EventLoopDetected,
			"not resizing again: the pod was resized %d times within %s for the same change (%s) and was moved away from it each time by something other than this updater; the same recommendation will not be applied to it again", n, u.Options.LoopWindow, a.Message)
		return false
	}
	if c.ctl.Kind == vpav1.KindVerticalPodAutoscaler && !u.token(ctx, u.resizeLimiter) { // upstream's in-place limit
		u.Metrics.Resizes.WithLabelValues("rate_limited").Inc()
		return false // asked again next loop
	}
	held := u.heldPrevious(pod, key) // read before the patch, which may update pod
	err := u.resize(ctx, pod, a.Sized)
	if err == nil {
		u.recordResize(pod.UID, key, a.Sized, now, held)
		if a.Reason == ReasonInfeasible || a.Reason == ReasonDeferredTooLong {
			// a new ask to a pod whose resize the kubelet keeps pending: its backoff goes on from this ask (a
			// lower target is still asked at once) until the kubelet applies it (forgetSettled)
			u.refused[pod.UID] = Refusal{Asked: a.Sized, Attempts: max(u.refused[pod.UID].Attempts, 1), At: now}
		} else {
			delete(u.refused, pod.UID)
		}
		u.Metrics.Resizes.WithLabelValues("requested").Inc()
		msg := a.Message
		if a.Reason != "" {
			msg = a.Reason + ": " + msg
		}
		u.Recorder.Event(pod, corev1.EventTypeNormal, resizedEvent(c.ctl.Kind), msg)
		u.Recorder.Eventf(c.obj, corev1.EventTypeNormal, EventResizedInPlace, "pod %s: %s", pod.Name, msg)
		log.V(1).Info("resized in place", "change", a.Message)
		return false
	}
	u.Metrics.Resizes.WithLabelValues("refused").Inc()
	log.Info("resize refused", "error", err.Error())
	if a.Pod.oomLooping() { // neither minReplicas nor the budget holds it (limitEvictions)
		*a, _ = AfterRefusal(&c.ctl, *a, ClassifyRefusal(err), err, 1, true)
	} else {
		*a, *c.budget = AfterRefusal(&c.ctl, *a, ClassifyRefusal(err), err, *c.budget, c.evictable)
	}
	return true
}

// token waits for lim's next token, as upstream's updater waits for its rate limiters, until the running loop
// ends (the next one is due); false: none comes by then (the wait is not made at all). Without a limit, and
// once the loop has run past its end, it takes a token only if one is there.
func (u *Updater) token(ctx context.Context, lim *rate.Limiter) bool {
	end := u.loopEnd
	if end.IsZero() {
		end = time.Now().Add(u.Options.Interval)
	}
	if lim.Limit() == rate.Inf || !time.Now().Before(end) {
		return lim.Allow()
	}
	wctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	return lim.Wait(wctx) == nil
}

// skip reports an update not made, with its reason; one that counts as a refusal is recorded for the retry's
// backoff.
func (u *Updater) skip(c served, pod *corev1.Pod, a *Action, now time.Time) {
	if a.Backoff {
		prev := u.refused[pod.UID]
		u.refused[pod.UID] = Refusal{Asked: a.Sized, Attempts: prev.Attempts + 1, At: now}
	}
	u.Metrics.Skips.WithLabelValues(a.Reason).Inc()
	reason, typ := skipEvent(c.ctl.Kind, a.Reason)
	u.Recorder.Event(pod, typ, reason, a.Reason+": "+a.Message)
}

// resize PATCHes the pods/resize subresource with the sized containers' requests and limits.
func (u *Updater) resize(ctx context.Context, pod *corev1.Pod, sized []scaling.ContainerDecision) error {
	body, err := resizePatch(pod, sized)
	if err != nil {
		return err
	}
	return u.Client.SubResource("resize").Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, body))
}

// resizePatch is the strategic merge patch of pods/resize for the sized containers: app containers under
// spec.containers, sidecars under spec.initContainers (merged by name), and the pod's UID, which makes the
// patch fail on a pod recreated under the same name (a StatefulSet's) since it was read.
func resizePatch(pod *corev1.Pod, sized []scaling.ContainerDecision) ([]byte, error) {
	type res struct {
		Requests corev1.ResourceList `json:"requests,omitempty"`
		Limits   corev1.ResourceList `json:"limits,omitempty"`
	}
	type ctr struct {
		Name      string `json:"name"`
		Resources res    `json:"resources"`
	}
	var cs, sidecars []ctr
	for _, d := range sized {
		c := ctr{Name: d.Name, Resources: res{Requests: scaling.ToResourceList(d.Requests), Limits: scaling.ToResourceList(d.Limits)}}
		if d.Current.Kind == scaling.SidecarContainer {
			sidecars = append(sidecars, c)
		} else {
			cs = append(cs, c)
		}
	}
	spec := map[string]any{}
	if len(cs) > 0 {
		spec["containers"] = cs
	}
	if len(sidecars) > 0 {
		spec["initContainers"] = sidecars
	}
	return json.Marshal(map[string]any{"metadata": map[string]any{"uid": pod.UID}, "spec": spec})
}

// evict evicts a pod through the Eviction API, unless the eviction would repeat one that did not help, the
// admission webhook is not serving, the pod's replacement would be refused (a server-side dry run of it), or
// the rate limit is reached.
func (u *Updater) evict(ctx context.Context, c served, pod *corev1.Pod, a *Action, admission bool, why string, now time.Time) {
	key := c.ctl.Key() + "|" + a.Fingerprint
	g := EvictionGates{Admission: admission, NotServing: why}
	if prev, ok := u.evicted[key]; ok && now.Sub(prev.at) < u.Options.LoopWindow {
		// held by the record as it is, or as the plan read it at the loop's start (which spared the pod the
		// disruption budget's checks)
		g.Last, g.Loops = &prev.at, c.ctl.loops(a) || prev.Holds(a.Pod)
	}
	if h := g.Hold(*a); h != nil {
		u.Metrics.Evictions.WithLabelValues(h.Outcome).Inc()
		u.Recorder.Event(pod, corev1.EventTypeWarning, h.Reason, h.Message)
		return
	}
	if !u.replacementAdmitted(ctx, c, pod, a, now) {
		return
	}
	if !u.token(ctx, u.limiter) {
		u.Metrics.Evictions.WithLabelValues("rate_limited").Inc()
		return
	}
	prev, open, ok := u.recordAhead(ctx, key, c, pod, a, now)
	if !ok {
		return
	}
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name},
		DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}}
	err := u.Client.SubResource("eviction").Create(ctx, pod, ev)
	switch {
	case apierrors.IsTooManyRequests(err):
		u.Metrics.Evictions.WithLabelValues("blocked_by_pdb").Inc()
		u.Recorder.Eventf(pod, corev1.EventTypeWarning, EventEvictionBlocked, "%s; the Eviction API refused: %v", a.Message, err)
		return
	case err != nil:
		u.Metrics.Evictions.WithLabelValues("error").Inc()
		u.Recorder.Eventf(pod, corev1.EventTypeWarning, EventEvictionBlocked, "%s; eviction failed: %v", a.Message, err)
		return
	}
	if open {
		prev.at = now
		u.evicted[key] = prev
	}
	u.reportEviction(c, pod, a)
}

// replacementAdmitted dry-runs the pod's replacement and lets AfterDryRun decide; when the eviction does not
// go ahead, the share of the budget it took is freed, the outcome counted and the skip reported (and logged
// when the updater may not send the dry run at all: a permission to grant, not a policy of the workload's).
func (u *Updater) replacementAdmitted(ctx context.Context, c served, pod *corev1.Pod, a *Action, now time.Time) bool {
	if *a = AfterDryRun(*a, u.dryRunReplacement(ctx, pod, a.Sized)); a.Kind != Skip {
		return true
	}
	if c.budget != nil && c.ctl.takesBudget(a) {
		*c.budget++ // nothing disrupted: the share of the budget this eviction took (limitEvictions) is free for another
	}
	outcome := "replacement_refused"
	switch a.Reason {
	case ReasonReplacementUnsized:
		outcome = "replacement_unsized"
	case ReasonReplacementUnchecked:
		outcome = "replacement_unchecked"
		logf.FromContext(ctx).Info("not evicting: the updater may not dry-run the replacement pod; grant it create pods (used only with dryRun=All)",
			"pod", client.ObjectKeyFromObject(pod).String(), "message", a.Message)
	}
	u.Metrics.Evictions.WithLabelValues(outcome).Inc()
	u.skip(c, pod, a, now)
	return false
}

// recordAhead records the first eviction for a change before it is made. The first eviction for a change
// remembers the pods that existed then; later ones keep that set, so that the replacements of evicted pods
// stay recognisable for the whole window. Every eviction for a change notes it on the workload's other open
// records: the workload moved on to it, and a pod that holds it was sized for it (EvictedChange.Holds). The
// records are written ahead (to the ConfigMap, when there is one): a crash between the eviction and the end
// of the loop must not leave a restarted updater without a new record, or it would evict the replacement for
// the same change; notes that fail to be written are tried again at the end of the loop (lost, they hold a
// pod for a change it was not sized for until the next eviction notes it again), and do not stop an eviction
// whose record is there. An eviction the API then refuses keeps its record: the pods it knows may still be
// evicted for the change. It returns the open record for the change (open: one within the window existed),
// and false when a new record could not be written (reported; no eviction).
func (u *Updater) recordAhead(ctx context.Context, key string, c served, pod *corev1.Pod, a *Action, now time.Time) (eviction, bool, bool) {
	noted := u.noteMovedTo(c.ctl.Key(), a.Fingerprint, now)
	prev, had := u.evicted[key]
	if had && now.Sub(prev.at) < u.Options.LoopWindow {
		if len(noted) > 0 {
			if err := u.saveLoopRecords(ctx); err != nil { // the eviction goes ahead: its record is there
				logf.FromContext(ctx).Error(err, "writing the loop records ahead of an eviction; written again at the end of the loop")
			}
		}
		return prev, true, true
	}
	u.evicted[key] = eviction{at: now, EvictedChange: EvictedChange{Known: c.known}}
	err := u.saveLoopRecords(ctx)
	if _, kept := u.evicted[key]; err == nil && !kept {
		err = errors.New("the record does not fit in the loop-records ConfigMap")
	}
	if err == nil {
		return prev, false, true
	}
	// not recorded: the next loop tries again from scratch
	if had {
		u.evicted[key] = prev
	} else {
		delete(u.evicted, key)
	}
	for k, e := range noted {
		if _, kept := u.evicted[k]; kept {
			u.evicted[k] = e
		}
	}
	u.Metrics.Evictions.WithLabelValues("error").Inc()
	u.Recorder.Eventf(pod, corev1.EventTypeWarning, EventEvictionBlocked, "%s; not evicting before loop detection has recorded it: %v", a.Message, err)
	return prev, false, false
}

// noteMovedTo notes change on the other open records of the controller ctl (those within the loop window
// that do not have it yet; the newest MaxMovedTo stay) and returns them as they were.
func (u *Updater) noteMovedTo(ctl, change string, now time.Time) map[string]eviction {
	noted := map[string]eviction{}
	for k, e := range u.evicted {
		if other, fp, _ := strings.Cut(k, "|"); other == ctl && fp != change && now.Sub(e.at) < u.Options.LoopWindow && !slices.Contains(e.MovedTo, change) {
			noted[k] = e
			e.MovedTo = append(slices.Clip(e.MovedTo), change)
			e.MovedTo = e.MovedTo[max(0, len(e.MovedTo)-MaxMovedTo):]
			u.evicted[k] = e
		}
	}
	return noted
}

// reportEviction counts an eviction made and sends its events: upstream's reasons for a VPA's pod, hvpa's
// for an Hvpa's.
func (u *Updater) reportEviction(c served, pod *corev1.Pod, a *Action) {
	outcome := "evicted"
	if a.FromResize {
		outcome = "fallback"
	}
	u.Metrics.Evictions.WithLabelValues(outcome).Inc()
	msg := a.Message
	if a.Reason != "" {
		msg = a.Reason + ": " + msg
	}
	if a.FromResize && c.ctl.Kind == vpav1.KindVerticalPodAutoscaler {
		msg = "in place of a resize that could not be made: " + msg
	}
	onPod, onObject := evictedEvents(c.ctl.Kind, a.FromResize)
	u.Recorder.Event(pod, corev1.EventTypeNormal, onPod, msg)
	u.Recorder.Eventf(c.obj, corev1.EventTypeNormal, onObject, "pod %s: %s", pod.Name, msg)
}

// dryRunReplacement asks the API server to admit, as a server-side dry run (nothing is stored), the pod
// that would replace pod once evicted: pod as its controller would create it again, with the sized
// containers' requests and limits. Every admission step runs on it (LimitRanger, ResourceQuota, the
// admission webhooks including hvpa's, ValidatingAdmissionPolicies, Gatekeeper, Kyverno); a refusal means
// the replacement would be refused too. The pod is read from the API server (the cache holds pods stripped
// of what a create needs: images, volumes, ...); a failed read is no refusal (a plain error: tried again).
// A 403 that the authorizer gives the updater itself, not admission the replacement, is a
// DryRunForbiddenError.
func (u *Updater) dryRunReplacement(ctx context.Context, pod *corev1.Pod, sized []scaling.ContainerDecision) error {
	var l corev1.PodList
	if err := u.Live.List(ctx, &l, client.InNamespace(pod.Namespace), client.MatchingFields{"metadata.name": pod.Name}); err != nil {
		return errors.New("reading the pod: " + err.Error())
	}
	i := slices.IndexFunc(l.Items, func(p corev1.Pod) bool { return p.UID == pod.UID })
	if i < 0 {
		return errors.New("reading the pod: it is gone")
	}
	r := replacement(&l.Items[i], sized)
	err := u.Client.Create(ctx, r, client.DryRunAll)
	if apierrors.IsForbidden(err) && u.mayNotCreatePods(ctx, pod.Namespace) {
		return &DryRunForbiddenError{Err: err}
	}
	// with the admission Lease checked (evicted pods must come back sized), the dry run must also show that a
	// sizing webhook matched the replacement: a Lease says a webhook serves, not that the API server calls it
	// for this pod (an excluded namespace, a selector, a webhook failing open)
	if err == nil && u.Options.AdmissionLease.Name != "" && !vpav1.MatchedAtAdmission(r.Annotations) {
		return &ReplacementUnsizedError{}
	}
	return err
}

// mayNotCreatePods asks the API server's authorizer whether the updater may not create pods in namespace
// (a SelfSubjectAccessReview, which every authenticated identity may send): a 403 of the dry run is then
// the authorizer's, since admission runs only on authorized requests. Only a clear answer counts: when the
// review fails, the 403 stays the dry run's refusal.
func (u *Updater) mayNotCreatePods(ctx context.Context, namespace string) bool {
	r := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: "create", Resource: "pods"}}}
	if err := u.Client.Create(ctx, r); err != nil {
		return false
	}
	return !r.Status.Allowed
}

// replacement is the pod a controller would create in pod's place, with sized's requests and limits: no name
// (a generated one), no node, no status, and none of what the API server sets and refuses on a create when
// it differs (priority and preemption policy from the class, overhead from the runtime class, ephemeral
// containers). Owner references stay (policies match on them), without blockOwnerDeletion, which would need
// permission on the owner.
func replacement(pod *corev1.Pod, sized []scaling.ContainerDecision) *corev1.Pod {
	r := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, GenerateName: pod.Name + "-", Labels: maps.Clone(pod.Labels),
		Annotations: maps.Clone(pod.Annotations), Finalizers: slices.Clone(pod.Finalizers)}, Spec: *pod.Spec.DeepCopy()}
	// the marks the sizing webhooks left at the pod's own admission: the dry run's answer shows the new ones
	delete(r.Annotations, vpav1.AnnotationSizedBy)
	delete(r.Annotations, vpav1.AnnotationUpstreamUpdates)
	for _, o := range pod.OwnerReferences {
		o.BlockOwnerDeletion = nil
		r.OwnerReferences = append(r.OwnerReferences, o)
	}
	if pod.GenerateName != "" {
		r.GenerateName = pod.GenerateName
	}
	r.Spec.NodeName, r.Spec.Priority, r.Spec.PreemptionPolicy, r.Spec.Overhead, r.Spec.EphemeralContainers = "", nil, nil, nil, nil
	for _, d := range sized {
		for i := range r.Spec.Containers {
			k := &r.Spec.Containers[i]
			if k.Name != d.Name {
				continue
			}
			for _, pair := range []struct {
				l *corev1.ResourceList
				v scaling.Values
			}{{&k.Resources.Requests, d.Requests}, {&k.Resources.Limits, d.Limits}} {
				for name, q := range scaling.ToResourceList(pair.v) {
					if *pair.l == nil {
						*pair.l = corev1.ResourceList{}
					}
					(*pair.l)[name] = q
				}
			}
		}
	}
	return r
}

// openEvictions indexes the eviction records within the loop window: controller key -> change -> what loop
// detection knows of it.
func (u *Updater) openEvictions(now time.Time) map[string]map[string]EvictedChange {
	out := map[string]map[string]EvictedChange{}
	for key, e := range u.evicted {
		ctl, change, ok := strings.Cut(key, "|")
		if !ok || now.Sub(e.at) >= u.Options.LoopWindow {
			continue
		}
		if out[ctl] == nil {
			out[ctl] = map[string]EvictedChange{}
		}
		out[ctl][change] = e.EvictedChange
	}
	return out
}

func (u *Updater) recent(ts []time.Time, now time.Time) int {
	n := 0
	for _, t := range ts {
		if now.Sub(t) < u.Options.LoopWindow {
			n++
		}
	}
	return n
}

// forget drops loop-detection records older than the window.
func (u *Updater) forget(now time.Time) {
	for k, ts := range u.resized {
		if u.recent(ts, now) == 0 {
			delete(u.resized, k)
		}
	}
	for uid, last := range u.lastResized {
		if _, ok := u.resized[last.key]; !ok {
			delete(u.lastResized, uid)
		}
	}
	for k, e := range u.evicted {
		if now.Sub(e.at) >= u.Options.LoopWindow {
			delete(u.evicted, k)
		}
	}
}

// trackConvergence observes the time from a change of a controller's targets until a loop finds nothing
// left to do for it.
func (u *Updater) trackConvergence(c *Controller, actions []Action, now time.Time) {
	targets := fmt.Sprint(c.Targets)
	cv, ok := u.converge[c.Key()]
	if !ok || cv.targets != targets {
		cv = convergence{targets: targets, since: now, done: !ok} // the first sight of an object is no change
	}
	pending := false
	for _, a := range actions {
		pending = pending || a.Kind == Resize || a.Kind == Evict || a.Kind == Wait
	}
	if !pending && !cv.done {
		u.Metrics.Convergence.WithLabelValues(c.Kind).Observe(now.Sub(cv.since).Seconds())
		cv.done = true
	}
	u.converge[c.Key()] = cv
}
