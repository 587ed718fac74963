package updater

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Options are the updater's knobs (flags of `hvpa run`).
type Options struct {
	// Interval between update loops.
	Interval time.Duration
	// RecommenderName is the name hvpa's recommender serves ("": "default"): on a workload an Hvpa targets, a
	// VPA another recommender serves only observes, and the updater acts on the Hvpa's intent alone.
	RecommenderName string
	// UpdateThreshold: a VPA pod older than MinPodAge is updated when a request differs from its target by
	// more than this fraction (--pod-update-threshold).
	UpdateThreshold float64
	// MinPodAge before a within-bounds difference is acted on (12h).
	MinPodAge time.Duration
	// OOMWindow: a container OOM-killed within this time of starting, less than this time ago, makes its pod a
	// candidate (10m; upstream's --evict-after-oom-threshold, which bounds both since v1.8.1).
	OOMWindow time.Duration
	// DeferredTimeout: a resize the kubelet defers longer than this falls back to eviction (5m).
	DeferredTimeout time.Duration
	// InProgressTimeout: a resize in progress longer than this falls back to eviction (1h).
	InProgressTimeout time.Duration
	// RetryBackoff and RetryBackoffMax space the retries of a resize that cannot be made and will not be
	// replaced by an eviction (the kubelet's Infeasible, or the API's refusal, in updateMode InPlace or on a
	// workload that may not be disrupted): RetryBackoff after the first refusal, doubling up to
	// RetryBackoffMax (1m, 1h). A target lower than the refused one is tried at once.
	RetryBackoff, RetryBackoffMax time.Duration
	// EvictionTolerance is the fraction of a workload's replicas that may be disrupted per loop (at least one).
	EvictionTolerance float64
	// MinReplicas: no evictions while fewer pods are live (a VPA's updatePolicy.minReplicas overrides).
	MinReplicas int32
	// InPlaceSkipDisruptionBudget: an in-place resize that restarts no container takes no share of
	// EvictionTolerance and needs no MinReplicas (true, the default here); false, upstream VPA's default of
	// --in-place-skip-disruption-budget, counts every in-place resize as a disruption.
	InPlaceSkipDisruptionBudget bool
	// EvictionRateLimit (evictions per second, 0: unlimited) and EvictionBurst bound evictions cluster-wide.
	EvictionRateLimit float64
	EvictionBurst     int
	// LoopWindow: a pod resized twice for the same change within it, and moved away from it by something
	// else each time, is not touched again for it (1h).
	LoopWindow time.Duration
	// LoopRecords is the ConfigMap that keeps the loop-detection records across restarts and leader
	// changes; zero: in memory only.
	LoopRecords types.NamespacedName
	// AdmissionLease is the Lease the admission webhook renews; with it set, nothing is evicted while the
	// Lease is older than AdmissionLeaseMaxAge (evicted pods would come back unsized).
	AdmissionLease       types.NamespacedName
	AdmissionLeaseMaxAge time.Duration
	// NoInPlaceResize: the cluster serves no pods/resize (found by discovery at start): InPlaceOrRecreate
	// evicts at once, InPlace leaves pods as they are (UpdateSkipped, InPlaceUnavailable).
	NoInPlaceResize bool
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{Interval: time.Minute, UpdateThreshold: 0.1, MinPodAge: 12 * time.Hour, OOMWindow: 10 * time.Minute,
		DeferredTimeout: 5 * time.Minute, InProgressTimeout: time.Hour, RetryBackoff: time.Minute, RetryBackoffMax: time.Hour,
		EvictionTolerance: 0.5, MinReplicas: 2,
		InPlaceSkipDisruptionBudget: true, EvictionBurst: 1, LoopWindow: time.Hour, AdmissionLeaseMaxAge: time.Minute}
}

// Controller is a VPA or an Hvpa as the updater sees it: how its pods are updated and what they are sized to.
type Controller struct {
	Kind, Namespace, Name string
	UID                   types.UID
	Mode                  vpav1.UpdateMode
	// Exact: the targets are an intent to apply as they are (an Hvpa's status.desired): any difference beyond
	// rounding counts, at any pod age. Otherwise they are a recommendation with bounds (a VPA).
	Exact        bool
	Targets      map[string]scaling.Values
	Lower, Upper map[string]scaling.Values
	Policies     []scaling.ContainerPolicy
	Gap          [scaling.NumResources]*scaling.ChangeParams
	LimitRange   *scaling.LimitRange
	// EvictionRequirements: every one must hold for an eviction.
	EvictionRequirements []vpav1.EvictionRequirement
	MinReplicas          int32
	// OOMWindow overrides Options.OOMWindow for this controller (a VPA's updatePolicy.evictAfterOOMSeconds);
	// 0: the option's.
	OOMWindow time.Duration
	// BoostDuration is how long a container's startup boost lasts after its pod is Ready (a VPA's
	// startupBoost; nil: 0). BoostOnly: the controller only ends startup boosts (its mode does not act on
	// pods, or it has no recommendation yet).
	BoostDuration func(container string) time.Duration
	BoostOnly     bool
	// Boosts reports whether the controller boosts a container's CPU at its start (a VPA's startupBoost, with
	// the CPUStartupBoost gate on); nil: none. Only those containers of a pod follow its startup-boost
	// annotation, which pod authors can write too.
	Boosts func(container string) bool
	// Replicas is the workload's desired replica count (its scale subresource); 0: unknown, the pods count.
	Replicas int32
	// Evicted: per change (an Action's Fingerprint) evicted within the loop window, what loop detection knows
	// of it. A pod it holds came back unsized: it is not evicted again (the updater refuses it), so it takes no
	// share of the eviction budget from the pods that may go.
	Evicted map[string]EvictedChange
}

// EvictedChange is what loop detection knows of a change a workload's pods were evicted for within the loop
// window: the pods the workload had at the first eviction for it, and the changes (fingerprints) the workload
// has been evicted for since, the newest MaxMovedTo of them.
type EvictedChange struct {
	Known   map[types.UID]bool
	MovedTo []string
}

// MaxMovedTo is how many of the changes a workload moved on to a record keeps, the newest: one forgotten only
// holds the pods sized for it, as before they were noted.
const MaxMovedTo = 8

// Holds reports whether loop detection holds a pod that still needs the change: a replacement, created after
// the first eviction for it, came back without it, so evicting it again would not help. Not a pod an
// admission webhook sized (its annotation) that holds a change the workload moved on to since, where its
// template does not: the webhook sized it for that change (an Hvpa's intent that goes to another size and
// back within the window, a VPA's target that does), and it needs the eviction like any other pod. A
// replacement that came back unsized carries no such annotation, whatever its values (its template's, ones
// the API server or a LimitRange defaulted, an older revision's, a resize's since); with the template not
// read (no Origin) no change counts either.
func (e EvictedChange) Holds(p *Pod) bool {
	if e.Known[p.UID] {
		return false
	}
	if !p.SizedAtAdmission {
		return true
	}
	containers := slices.Concat(p.Containers, p.InitContainers)
	for _, fp := range e.MovedTo {
		if sizedFor(containers, fp) {
			return false
		}
	}
	return true
}

// sizedFor reports whether containers hold the change of fingerprint fp and their template does not: each of
// its requests and limits within the planner's rounding (roughlyEqual) of the container's, and at least one
// not within it of the template's; false when fp does not parse, names a container they lack, or one whose
// template is not known.
func sizedFor(containers []scaling.Container, fp string) bool {
	sized, ok := parseFingerprint(fp)
	if !ok {
		return false
	}
	template := make([]scaling.ContainerDecision, len(sized))
	for i := range sized {
		j := slices.IndexFunc(containers, func(k scaling.Container) bool { return k.Name == sized[i].Name })
		if j < 0 || containers[j].Origin == nil {
			return false
		}
		sized[i].Current = containers[j]
		template[i] = sized[i]
		template[i].Current = *containers[j].Origin
	}
	return !changed(sized) && changed(template)
}

// loops reports whether a is an eviction the loop detection refuses (see Controller.Evicted).
func (c *Controller) loops(a *Action) bool {
	e, ok := c.Evicted[a.Fingerprint]
	return ok && a.Kind == Evict && e.Holds(a.Pod)
}

// Options are the options as they apply to this controller (its own OOM window).
func (c *Controller) Options(o Options) Options {
	if c.OOMWindow > 0 {
		o.OOMWindow = c.OOMWindow
	}
	return o
}

// Key identifies the controller.
func (c *Controller) Key() string { return c.Kind + "/" + c.Namespace + "/" + c.Name }

// Pod is a pod of a controller's workload as the updater sees it.
type Pod struct {
	Name    string
	UID     types.UID
	Created time.Time
	// Running: running and not terminating (a candidate for an update, ready or not).
	Running bool
	// Live: running, ready and not terminating (counts as available).
	Live bool
	// RestartOnResize: a container restarts when its cpu or memory is resized (resizePolicy RestartContainer),
	// so a resize disrupts the pod like an eviction does.
	RestartOnResize bool
	// InitContainers (init containers and sidecars, in spec order) count for the QoS class and toward the
	// LimitRange's pod bounds.
	InitContainers []scaling.Container
	// Containers hold the spec's requests and limits.
	Containers []scaling.Container
	// OOMKilledEarly: a container was OOM-killed within OOMWindow of its start, less than OOMWindow ago.
	OOMKilledEarly bool
	// Resizing: the spec's resources differ from what the kubelet reports (a resize was asked and not done).
	Resizing bool
	// ResizePending is the reason of a PodResizePending condition (Infeasible, Deferred), since its time.
	ResizePending      string
	ResizePendingSince time.Time
	// ResizeInProgressSince is set while a PodResizeInProgress condition is; ResizeFailure is that condition's
	// reason and message when it has one (the kubelet's Error: the resize failed; "" while it runs).
	ResizeInProgressSince *time.Time
	ResizeFailure         string
	// QoS is the pod's QoS class.
	QoS corev1.PodQOSClass
	// ReadySince is when the pod became Ready (nil: not Ready).
	ReadySince *time.Time
	// Unboosted: the pod is startup-boosted (see boosted in updater.go: the annotation
	// vpav1.AnnotationStartupBoost, the CPUStartupBoost gate, a VPA that boosts it, no resize since it was
	// created); per container, the CPU it goes back to. UnboostedErr: the annotation does not decode (the pod
	// still goes back, to its targets).
	Unboosted    map[string]vpav1.Unboosted
	UnboostedErr error
	// SizedAtAdmission: an admission webhook (hvpa's or upstream's) changed the pod's resources when it was
	// created (its annotation, vpav1.SizedAtAdmission).
	SizedAtAdmission bool
	// PodLevelResources: the pod sets pod-level resources (spec.resources), which bound its containers' sum:
	// neither the webhook nor the updater sizes it (scaling.HasPodLevelResources).
	PodLevelResources bool
	// MemoryUsage is each container's memory working set (bytes, metrics.k8s.io); nil: not read. A resize
	// that lowers a memory limit is made only with it read, and never to or below the usage (the kubelet
	// cannot shrink a cgroup below what the container uses, and would leave the resize in progress).
	MemoryUsage map[string]float64
	// Refused is the last resize of this pod that could not be made and was not replaced by an eviction
	// (nil: none): resizes are retried with backoff, a lower target at once.
	Refused *Refusal
}

// Refusal is a resize that could not be made: what it asked, how often in a row, since when.
type Refusal struct {
	// Asked: the containers' requests and limits the resize asked for.
	Asked []scaling.ContainerDecision
	// Attempts: refusals in a row; At: the last one.
	Attempts int
	At       time.Time
}

// Kind of action.
type Kind string

// The actions.
const (
	Resize Kind = "Resize"
	Evict  Kind = "Evict"
	Skip   Kind = "Skip"
	Wait   Kind = "Wait" // a resize is under way: nothing to do, nothing to report
)

// Action is what the updater does with one pod.
type Action struct {
	Pod    *Pod
	Kind   Kind
	Reason string
	// Message says why, before -> after.
	Message string
	// Sized are the containers' new requests and limits (Resize, Evict).
	Sized []scaling.ContainerDecision
	// Fingerprint identifies the change (the sized values), for loop detection.
	Fingerprint string
	// Up: some request grows. Change: the size of the change (sum of relative request changes).
	Up     bool
	Change float64
	// FromResize: an eviction replacing a resize that failed (not subject to evictionRequirements).
	FromResize bool
	// Unboost: the resize ends a startup boost.
	Unboost bool
	// Backoff: the action reports a resize that could not be made; the updater records it in the pod's
	// Refusal, so that the next attempt waits (retryDue).
	Backoff bool
	// NeedsUsage: the resize lowers a memory limit and the pod's memory usage has not been read; the updater
	// reads it and plans again.
	NeedsUsage bool
}

// need says whether a pod must be updated and how much: the sized containers and the change.
type need struct {
	sized   []scaling.ContainerDecision
	up      bool
	change  float64
	why     []string
	changes []string
}

// sizedFrom is what scaling.SizePod sizes the pod from: its containers, then its init containers and sidecars
// (sidecars are sized like containers; init containers never are; both count toward the LimitRange's pod
// bounds as the API server counts them at a resize).
func (p *Pod) sizedFrom() []scaling.Container {
	return append(slices.Clone(p.Containers), p.InitContainers...)
}

// assess compares a pod's requests with what it should be sized to.
func assess(c *Controller, p *Pod, now time.Time, o Options) *need {
	from := p.sizedFrom()
	n := &need{sized: scaling.SizePod(from, c.Targets, c.Policies, c.Gap, c.LimitRange)}
	lower, upper := c.cappedBounds(from)
	var f findings
	for _, d := range n.sized {
		for _, r := range scaling.Resources {
			f = f.or(n.compare(d, r, lower[d.Name], upper[d.Name]))
		}
	}
	n.change = resourceDiff(n.sized)
	f.beyond = n.change >= o.UpdateThreshold
	why := updateReason(c, p, n, f, now, o)
	if why == "" {
		return nil
	}
	n.why = append(n.why, why)
	return n
}

// findings are what comparing a pod's requests with its sizing found: a difference, a request outside the
// recommendation's bounds (or none where one is recommended), a change of at least the update threshold.
type findings struct{ differs, outside, beyond bool }

func (f findings) or(g findings) findings {
	return findings{f.differs || g.differs, f.outside || g.outside, f.beyond || g.beyond}
}

// cappedBounds are the recommendation's lower and upper bounds per container (nil: none), capped as the
// target is (container policies, LimitRange): upstream's updater compares a request with the bounds of its
// processed recommendation, so that a maxAllowed lowered below the pods' requests updates them at once.
func (c *Controller) cappedBounds(from []scaling.Container) (lower, upper map[string]scaling.Values) {
	capped := func(bounds map[string]scaling.Values) map[string]scaling.Values {
		if bounds == nil {
			return nil
		}
		out := map[string]scaling.Values{}
		for _, d := range scaling.SizePod(from, bounds, c.Policies, c.Gap, c.LimitRange) {
			var v scaling.Values
			for _, r := range scaling.Resources {
				if x, ok := d.Requests.Get(r); ok && d.Wanted.Has(r) {
					v.Set(r, x)
				}
			}
			out[d.Name] = v
		}
		return out
	}
	return capped(c.Lower), capped(c.Upper)
}

// resourceDiff is how much a pod changes, as upstream's updater measures it against --pod-update-threshold
// and orders pods by: per resource, the relative difference between the sum of the new requests of the
// containers sized for it and the sum of their current ones (a sum of 0 counts as one milli-unit), added up
// over the resources. A small sidecar's large change in a large pod is a small change of the pod.
func resourceDiff(sized []scaling.ContainerDecision) float64 {
	diff := 0.0
	for _, r := range scaling.Resources {
		cur, next, counted := 0.0, 0.0, false
		for _, d := range sized {
			x, ok := d.Requests.Get(r)
			if !ok || !d.Wanted.Has(r) {
				continue
			}
			counted = true
			next += x
			if y, had := d.Current.Requests.Get(r); had {
				cur += y
			}
		}
		if !counted {
			continue
		}
		unit := 1.0 // a millicore
		if r == scaling.Memory {
			unit = 1e-3 // upstream sums milli-values: a thousandth of a byte
		}
		cur = max(cur, unit)
		diff += math.Abs(next-cur) / cur
	}
	return diff
}

// compare compares one container's resource r with its sizing d (lo, hi: its capped bounds), adding the
// change to n.
func (n *need) compare(d scaling.ContainerDecision, r scaling.Resource, lo, hi scaling.Values) findings {
	newReq, ok := d.Requests.Get(r)
	if !ok {
		return findings{}
	}
	curReq, hasCur := d.Current.Requests.Get(r)
	newLim, hasNewLim := d.Limits.Get(r)
	curLim, hasCurLim := d.Current.Limits.Get(r)
	reqMoved := !hasCur || !roughlyEqual(newReq, curReq)
	limMoved := hasNewLim && (!hasCurLim || !roughlyEqual(newLim, curLim))
	if !reqMoved && !limMoved {
		return findings{}
	}
	if reqMoved {
		n.up = n.up || !hasCur || newReq > curReq
		n.changes = append(n.changes, fmt.Sprintf("%s %s request %s -> %s", d.Name, r, fmtOpt(r, curReq, hasCur), scaling.Format(r, newReq)))
	}
	if limMoved {
		n.changes = append(n.changes, fmt.Sprintf("%s %s limit %s -> %s", d.Name, r, fmtOpt(r, curLim, hasCurLim), scaling.Format(r, newLim)))
	}
	f := findings{differs: true}
	if reqMoved && !hasCur { // no request where one is recommended: outside the bounds, as upstream counts it
		f.outside = true
	}
	if lo, ok := lo.Get(r); ok && hasCur && curReq < lo {
		f.outside = true
	}
	if hi, ok := hi.Get(r); ok && hasCur && curReq > hi {
		f.outside = true
	}
	return f
}

// updateReason says why a pod that differs from its sizing is updated now ("": it is not).
func updateReason(c *Controller, p *Pod, n *need, f findings, now time.Time, o Options) string {
	switch {
	case !f.differs:
		return ""
	case c.Exact:
		return "the pod differs from the intent"
	case f.outside:
		return "a request is outside the recommendation's bounds"
	case p.OOMKilledEarly: // any difference, as upstream's updater (its resourceDiff > 0), a lower target too
		return fmt.Sprintf("a container was OOM-killed within %s of starting", o.OOMWindow)
	case f.beyond && now.Sub(p.Created) >= o.MinPodAge:
		return fmt.Sprintf("the pod's requests differ from their targets by %.0f%% (at least %.0f%%: --pod-update-threshold) and the pod is older than %s", 100*n.change, 100*o.UpdateThreshold, o.MinPodAge)
	}
	return ""
}

// roughlyEqual forgives the rounding that sizing a sized pod again can show (see scaling.SizePod).
func roughlyEqual(a, b float64) bool { return math.Abs(a-b) <= max(3, 0.02*math.Abs(b)) }

func fmtOpt(r scaling.Resource, x float64, ok bool) string {
	if !ok {
		return "unset"
	}
	return scaling.Format(r, x)
}

// Plan decides, for the pods of one controller, which to resize in place, which to evict and which to
// leave (with a reason), in the order the updater acts: scale-ups first, then larger changes. It does not
// check PodDisruptionBudgets (the Eviction API does), the admission Lease, the rate limit or loop detection
// (the updater does, at the time it acts).
func Plan(c *Controller, pods []Pod, now time.Time, o Options) []Action {
	actions, _ := PlanWithBudget(c, pods, now, o)
	return actions
}

// PlanWithBudget is Plan, and also the disruptions the workload may still take this loop after the planned
// ones (the updater spends it on evictions that replace refused resizes).
func PlanWithBudget(c *Controller, pods []Pod, now time.Time, o Options) ([]Action, int) {
	acts := !c.BoostOnly && c.Mode.ActsOnRunningPods()
	live := 0
	for i := range pods {
		if pods[i].Live {
			live++
		}
	}
	canEvict := int32(live) >= c.minReplicas(o)
	var out []Action
	for i := range pods {
		p := &pods[i]
		if !p.Running {
			continue
		}
		if p.Unboosted != nil {
			// boosted: nothing but the boost's end, unless the pod already has its unboosted CPU
			// evict: where a resize cannot end the boost (a QoS change), the pod may be evicted instead
			evict := acts && canEvict && c.Mode != vpav1.UpdateModeInPlace
			if a := unboost(c, p, now, evict); a.Kind == Wait || len(a.Sized) > 0 {
				out = append(out, a)
				continue
			}
		}
		if !acts {
			continue
		}
		if a, ok := planPod(c, p, now, o, canEvict || p.oomLooping()); ok {
			out = append(out, a)
		}
	}
	if !acts {
		return out, 0
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Up != out[j].Up {
			return out[i].Up
		}
		return out[i].Change > out[j].Change
	})
	replicas := int(c.Replicas)
	if replicas == 0 {
		replicas = len(pods)
	}
	return limitEvictions(c, out, live, replicas, o)
}

// inPlace reports whether the controller's mode resizes pods in place.
func (c *Controller) inPlace() bool {
	return c.Mode == vpav1.UpdateModeInPlaceOrRecreate || c.Mode == vpav1.UpdateModeInPlace
}

// oomLooping: the pod is not ready and a container of it was OOM-killed soon after its start, lately (an
// OOM crash loop). It serves nothing a disruption could take away, and its update (the memory the kill
// raised) is what may end the loop: minReplicas and the eviction tolerance, which count ready pods, do not
// hold it (upstream counts running pods, ready or not, so one such pod of two is updated there too).
func (p *Pod) oomLooping() bool { return p != nil && !p.Live && p.OOMKilledEarly }

// minReplicas is the live pods a workload needs before one of them may be disrupted.
func (c *Controller) minReplicas(o Options) int32 {
	if c.MinReplicas > 0 {
		return c.MinReplicas
	}
	return o.MinReplicas
}

// planPod is the action for one running pod that is not boosted (false: none). canEvict: the workload has
// the live pods minReplicas asks for, so a pod may be evicted at all.
func planPod(c *Controller, p *Pod, now time.Time, o Options, canEvict bool) (Action, bool) {
	if p.Resizing && c.inPlace() {
		return resizeFollowUp(c, p, now, o, canEvict), true
	}
	n := assess(c, p, now, o)
	if n == nil {
		return Action{}, false
	}
	if c.Mode == vpav1.UpdateModeInPlace && o.NoInPlaceResize {
		return Action{Pod: p, Sized: n.sized, Up: n.up, Change: n.change, Fingerprint: fingerprint(n.sized), Kind: Skip, Reason: ReasonInPlaceUnavailable,
			Message: strings.Join(n.changes, ", ") + ": the cluster serves no pods/resize, and updateMode InPlace never evicts"}, true
	}
	if p.PodLevelResources {
		return Action{Pod: p, Kind: Skip, Reason: ReasonPodLevelResources, Message: strings.Join(n.changes, ", ") +
			": the pod sets pod-level resources (spec.resources), which bound its containers' sum; hvpa sizes neither it nor its containers"}, true
	}
	a := update(c, p, n, c.inPlace() && !o.NoInPlaceResize) // without pods/resize, InPlaceOrRecreate evicts at once
	if a.Kind == Resize {
		if a = keepMemoryLimits(a, p); a.Kind != Resize || a.NeedsUsage {
			return a, true
		}
	}
	if a.Kind == Resize || a.Kind == Evict {
		a = retryGate(a, p, now, o)
	}
	return a, true
}

// retryGate holds an update of a pod whose last update could not be made (p.Refused) until retryDue.
func retryGate(a Action, p *Pod, now time.Time, o Options) Action {
	due, why := retryDue(p.Refused, a.Sized, now, o)
	if !due {
		return Action{Pod: p, Kind: Wait}
	}
	if why != "" {
		a.Message += "; " + why
	}
	return a
}

// retryBackoff is the wait after attempts refusals in a row: o.RetryBackoff, doubled after each further
// refusal, at most o.RetryBackoffMax (0 before the first).
func retryBackoff(attempts int, o Options) time.Duration {
	if attempts <= 0 {
		return 0
	}
	d := o.RetryBackoff
	for i := 1; i < attempts && d < o.RetryBackoffMax; i++ {
		d *= 2
	}
	return min(d, o.RetryBackoffMax)
}

// retryDue says whether an update to sized may be tried now after the refusal r (nil: none), and why: a
// target lower than the refused one in some request or limit is tried at once (it may fit where the refused
// one did not), anything else once the backoff since the last refusal has passed.
func retryDue(r *Refusal, sized []scaling.ContainerDecision, now time.Time, o Options) (bool, string) {
	if r == nil {
		return true, ""
	}
	if lowerThan(sized, r.Asked) {
		return true, "the target is lower than the one refused " + r.At.UTC().Format(time.RFC3339)
	}
	wait := retryBackoff(r.Attempts, o)
	if now.Before(r.At.Add(wait)) {
		return false, ""
	}
	return true, fmt.Sprintf("tried again %s after %d refusal(s) in a row", wait, r.Attempts)
}

// lowerThan reports whether some request or limit of sized is lower, beyond rounding, than what asked asks
// for the same container.
func lowerThan(sized, asked []scaling.ContainerDecision) bool {
	for _, d := range sized {
		for _, a := range asked {
			if a.Name != d.Name {
				continue
			}
			for _, r := range scaling.Resources {
				for _, pair := range [2][2]scaling.Values{{d.Requests, a.Requests}, {d.Limits, a.Limits}} {
					x, ok := pair[0].Get(r)
					y, had := pair[1].Get(r)
					if ok && (!had || (x < y && !roughlyEqual(x, y))) {
						return true
					}
				}
			}
		}
	}
	return false
}

// asked is the pod's spec as sized containers: what a resize pending at the kubelet asks.
func asked(p *Pod) []scaling.ContainerDecision {
	from := p.sizedFrom() // sidecars too, as the retries size them
	out := make([]scaling.ContainerDecision, len(from))
	for i, k := range from {
		out[i] = scaling.ContainerDecision{Name: k.Name, Current: k, Requests: k.Requests, Limits: k.Limits}
	}
	return out
}

// sameAsk reports whether a and b ask the same requests and limits, beyond rounding, of the containers in both.
func sameAsk(a, b []scaling.ContainerDecision) bool {
	return !lowerThan(a, b) && !lowerThan(b, a)
}

// changed reports whether sized differs, beyond rounding, from the containers' current values.
func changed(sized []scaling.ContainerDecision) bool {
	for _, d := range sized {
		for _, r := range scaling.Resources {
			for _, pair := range [2][2]scaling.Values{{d.Requests, d.Current.Requests}, {d.Limits, d.Current.Limits}} {
				x, ok := pair[0].Get(r)
				y, had := pair[1].Get(r)
				if ok && (!had || !roughlyEqual(x, y)) {
					return true
				}
			}
		}
	}
	return false
}

// keepMemoryLimits keeps, in a resize, the memory request and limit of each container whose memory limit
// would go down to or below the memory it uses (or whose usage is not known): the kubelet cannot shrink the
// cgroup below its usage and leaves such a resize in progress. Without the usage read the action asks for it
// (NeedsUsage). A resize left with nothing to change is skipped.
func keepMemoryLimits(a Action, p *Pod) Action {
	var kept []string
	sized := make([]scaling.ContainerDecision, 0, len(a.Sized))
	for _, d := range a.Sized {
		lim, ok := d.Limits.Get(scaling.Memory)
		cur, had := d.Current.Limits.Get(scaling.Memory)
		if !ok || (had && lim >= cur) {
			sized = append(sized, d)
			continue
		}
		if p.MemoryUsage == nil {
			a.NeedsUsage = true
			return a
		}
		if use, known := p.MemoryUsage[d.Name]; known && lim > use {
			sized = append(sized, d)
			continue
		}
		use, known := p.MemoryUsage[d.Name]
		usage := "not known"
		if known {
			usage = scaling.Format(scaling.Memory, use)
		}
		kept = append(kept, fmt.Sprintf("%s memory kept at its limit %s (usage %s, the new limit %s would not be above it)",
			d.Name, fmtOpt(scaling.Memory, cur, had), usage, scaling.Format(scaling.Memory, lim)))
		for _, v := range []*scaling.Values{&d.Requests, &d.Limits} {
			from := d.Current.Requests
			if v == &d.Limits {
				from = d.Current.Limits
			}
			if x, ok := from.Get(scaling.Memory); ok {
				v.Set(scaling.Memory, x)
			} else {
				v.Unset(scaling.Memory)
			}
		}
		if changed([]scaling.ContainerDecision{d}) {
			sized = append(sized, d)
		}
	}
	if len(kept) == 0 {
		return a
	}
	a.Sized, a.Fingerprint = sized, fingerprint(sized)
	a.Message += "; " + strings.Join(kept, ", ")
	if len(sized) == 0 || !changed(sized) { // the others' decisions may be as they are: nothing to ask
		a.Kind, a.Reason = Skip, ReasonMemoryInUse
	}
	return a
}

// update is the action for a pod that needs n: a resize in place, an eviction, or a skip where updateMode
// InPlace meets a QoS class change (which a resize cannot make).
func update(c *Controller, p *Pod, n *need, inPlace bool) Action {
	a := Action{Pod: p, Sized: n.sized, Up: n.up, Change: n.change, Fingerprint: fingerprint(n.sized),
		Message: strings.Join(n.changes, ", ") + ": " + strings.Join(n.why, "; ")}
	change := ""
	if inPlace {
		change = qosChange(p, n.sized)
	}
	switch {
	case c.Mode == vpav1.UpdateModeInPlace && change != "":
		a.Kind, a.Reason = Skip, ReasonQoSChange
		a.Message += "; " + change + ", and updateMode InPlace never evicts"
	case inPlace && change == "":
		a.Kind = Resize
	default:
		a.Kind = Evict
		if change != "" {
			a.Reason = ReasonQoSChange
			a.Message += "; " + change
		}
	}
	return a
}

// qosChange says how sizing p as sized would change its QoS class, which no resize can ("the QoS class would
// change from Burstable to Guaranteed, which a resize cannot do"); "" when the class stays.
func qosChange(p *Pod, sized []scaling.ContainerDecision) string {
	from := p.sizedFrom()
	before, after := QoS(from), QoSAfter(from, sized)
	if before == after {
		return ""
	}
	return fmt.Sprintf("the QoS class would change from %s to %s, which a resize cannot do", before, after)
}

// resizeFollowUp watches a resize the kubelet has not finished: Infeasible, or Deferred / InProgress past
// their timeouts, fall back to eviction (InPlaceOrRecreate) or are reported and left (InPlace). An Infeasible
// resize, or one deferred past the timeout, that no eviction will replace (InPlace, or fewer live pods than
// minReplicas) is retried (infeasibleRetry).
func resizeFollowUp(c *Controller, p *Pod, now time.Time, o Options, canEvict bool) Action {
	a := Action{Pod: p, Kind: Wait}
	const infeasible = "the kubelet refused the resize as infeasible"
	deferredTooLong := p.ResizePending == corev1.PodReasonDeferred && now.Sub(p.ResizePendingSince) > o.DeferredTimeout
	deferred := ""
	if deferredTooLong {
		deferred = fmt.Sprintf("the kubelet deferred the resize for %s (more than %s)", now.Sub(p.ResizePendingSince).Round(time.Second), o.DeferredTimeout)
	}
	noEviction := c.Mode == vpav1.UpdateModeInPlace || !canEvict
	switch {
	case p.ResizePending == corev1.PodReasonInfeasible && noEviction:
		return infeasibleRetry(c, p, now, o, ReasonInfeasible, infeasible)
	case deferredTooLong && noEviction:
		// the kubelet retries a deferred resize on its own, but only as it was asked: a lower target, which may
		// fit where the pending one does not, is asked at once, another after the backoff (upstream's updater
		// sends its current recommendation to a pod whose resize is deferred)
		return infeasibleRetry(c, p, now, o, ReasonDeferredTooLong, deferred)
	case p.ResizePending == corev1.PodReasonInfeasible:
		a.Reason, a.Message = ReasonInfeasible, infeasible
	case deferredTooLong:
		a.Reason, a.Message = ReasonDeferredTooLong, deferred
	case p.ResizePending != "" && p.ResizePending != corev1.PodReasonDeferred:
		// a reason this updater does not know: upstream's updater falls back at once too
		a.Reason, a.Message = ReasonResizeFailed, fmt.Sprintf("the kubelet reports the resize pending for a reason this updater does not know (%s)", p.ResizePending)
	case p.ResizePending != "":
		return a // deferred, not for long yet: a pending resize is read before one in progress, as upstream reads it
	case p.ResizeInProgressSince != nil && p.ResizeFailure != "":
		a.Reason, a.Message = ReasonResizeFailed, "the kubelet reports the resize failed ("+p.ResizeFailure+")"
	case p.ResizeInProgressSince != nil && now.Sub(*p.ResizeInProgressSince) > o.InProgressTimeout:
		a.Reason, a.Message = ReasonInProgressTooLong, fmt.Sprintf("the resize has been in progress for %s (more than %s)", now.Sub(*p.ResizeInProgressSince).Round(time.Second), o.InProgressTimeout)
	default:
		return a
	}
	if c.Mode == vpav1.UpdateModeInPlace {
		a.Kind = Skip
		a.Message += "; updateMode InPlace never evicts"
		return a
	}
	a.Kind, a.FromResize = Evict, true
	a.Up = true // a pod stuck on a resize goes first
	a.Message += "; evicting so that the pod is recreated with the new size"
	a.Sized = scaling.SizePod(p.sizedFrom(), c.Targets, c.Policies, c.Gap, c.LimitRange)
	a.Fingerprint = fingerprint(a.Sized)
	return a
}

// infeasibleRetry is what follows a resize the kubelet refused as Infeasible, or deferred past the timeout,
// when no eviction replaces it (reason and why say which):
// a target lower than the refused one is asked at once (it may fit where the refused one did not); another
// target once the backoff since the last refusal has passed (retryDue); with nothing new to ask, the refusal
// is reported at the same backoff (the kubelet retries pending resizes on its own, e.g. when the node
// grows). Between those, nothing.
func infeasibleRetry(c *Controller, p *Pod, now time.Time, o Options, reason, why string) Action {
	if c.Mode == vpav1.UpdateModeInPlace {
		why += "; updateMode InPlace never evicts"
	} else {
		why += fmt.Sprintf("; the workload has fewer than %d live pods (minReplicas), so no eviction replaces it", c.minReplicas(o))
	}
	// sidecars sized too, and the LimitRange's pod sums over every container
	sized := scaling.SizePod(p.sizedFrom(), c.Targets, c.Policies, c.Gap, c.LimitRange)
	due, how := retryDue(p.Refused, sized, now, o)
	switch {
	case !due:
		return Action{Pod: p, Kind: Wait}
	case changed(sized):
		n := &need{sized: sized, change: resourceDiff(sized)}
		for _, d := range sized {
			for _, r := range scaling.Resources {
				n.compare(d, r, scaling.Values{}, scaling.Values{})
			}
		}
		a := Action{Pod: p, Kind: Resize, Reason: reason, Sized: sized, Fingerprint: fingerprint(sized), Up: n.up, Change: n.change,
			Message: strings.Join(n.changes, ", ") + ": " + why + "; resizing to the current target"}
		if how != "" {
			a.Message += " (" + how + ")"
		}
		a = keepMemoryLimits(a, p) // memory kept as it is may keep the QoS class too: checked after
		if change := qosChange(p, a.Sized); a.Kind == Resize && change != "" {
			// told at the backoff, as the refusal is, not at every loop; the ask recorded is the target's (a
			// lower one is asked at once)
			a.Kind, a.Reason, a.Backoff = Skip, ReasonQoSChange, true
			a.Sized, a.Fingerprint = sized, fingerprint(sized)
			a.Message += "; " + change
		}
		return a
	}
	next := retryBackoff(refusals(p)+1, o)
	return Action{Pod: p, Kind: Skip, Reason: reason, Backoff: true, Sized: asked(p), Fingerprint: fingerprint(asked(p)),
		Message: fmt.Sprintf("%s; waiting for a lower target, or for the kubelet to accept it (reported again in %s)", why, next)}
}

// refusals is the pod's refusals in a row so far.
func refusals(p *Pod) int {
	if p.Refused == nil {
		return 0
	}
	return p.Refused.Attempts
}

// limitEvictions applies evictionRequirements to the updates of one workload (evictions and resizes, as
// upstream filters both), and minReplicas and the eviction tolerance to its disruptions: evictions, and
// resizes that restart a container, except of a pod in an OOM crash loop (oomLooping). Those not allowed
// become skips with their reason. It returns the disruptions still allowed this loop.
func limitEvictions(c *Controller, actions []Action, live, replicas int, o Options) ([]Action, int) {
	minReplicas := c.minReplicas(o)
	// the tolerance is a share of the replicas the workload should have; those it lacks are disrupted already
	budget := max(1, int(math.Floor(o.EvictionTolerance*float64(replicas)))) - max(0, replicas-live)
	if int32(live) < minReplicas {
		budget = 0
	}
	disrupted := max(0, replicas-live)
	for i := range actions {
		a := &actions[i]
		if (a.Kind == Evict || a.Kind == Resize) && !a.FromResize && !a.Unboost && !requirementsMet(c.EvictionRequirements, a.Sized) {
			a.Kind, a.Reason = Skip, ReasonEvictionReqs
			a.Message += "; updatePolicy.evictionRequirements do not allow this change"
			continue
		}
		disrupts := a.Kind == Evict || (a.Kind == Resize && (a.Pod.RestartOnResize || !o.InPlaceSkipDisruptionBudget))
		if !disrupts || !c.takesBudget(a) {
			continue
		}
		switch {
		case int32(live) < minReplicas:
			a.Kind, a.Reason = Skip, ReasonMinReplicas
			a.Message += fmt.Sprintf("; %d live replicas, disruptions need at least %d (updatePolicy.minReplicas or --min-replicas)", live, minReplicas)
		case budget <= 0:
			a.Kind, a.Reason = Skip, ReasonTolerance
			a.Message += fmt.Sprintf("; already %d of %d replicas disrupted this loop (--eviction-tolerance %.2f)", disrupted, replicas, o.EvictionTolerance)
		default:
			budget--
			disrupted++
		}
	}
	return actions, max(budget, 0)
}

// takesBudget: the disruption a makes counts against minReplicas and the workload's eviction tolerance
// (limitEvictions), and a refused replacement gives its share back: not for a pod in an OOM crash loop
// (oomLooping), nor for one loop detection holds.
func (c *Controller) takesBudget(a *Action) bool { return !a.Pod.oomLooping() && !c.loops(a) }

// requirementsMet follows the upstream VPA rule for evictionRequirements: a pod may be evicted when some
// container meets every requirement, and a container meets one when at least one of its listed resources
// moves in the required direction (an unchanged resource does not count). As upstream, only containers of
// spec.containers count (not sidecars), and one without a cpu or memory request meets them all.
func requirementsMet(reqs []vpav1.EvictionRequirement, sized []scaling.ContainerDecision) bool {
	if len(reqs) == 0 {
		return true
	}
	for _, d := range sized {
		if d.Current.Kind != scaling.AppContainer {
			continue // upstream reads spec.containers only
		}
		if !d.Current.Requests.Has(scaling.CPU) || !d.Current.Requests.Has(scaling.Memory) {
			return true // upstream admits a pod with a container that lacks a cpu or memory request
		}
		all := true
		for _, req := range reqs {
			any := false
			for _, name := range req.Resources {
				for _, r := range scaling.Resources {
					if r.ResourceName() != name {
						continue
					}
					t, ok := d.Requests.Get(r)
					cur, hasCur := d.Current.Requests.Get(r)
					if !ok || !hasCur || roughlyEqual(t, cur) {
						continue
					}
					if (req.ChangeRequirement == vpav1.TargetHigherThanRequests) == (t > cur) {
						any = true
					}
				}
			}
			all = all && any
		}
		if all {
			return true
		}
	}
	return false
}

// fingerprint names a change by the values it sets.
func fingerprint(sized []scaling.ContainerDecision) string {
	var b strings.Builder
	for _, d := range sized {
		b.WriteString(d.Name)
		for _, r := range scaling.Resources {
			if x, ok := d.Requests.Get(r); ok {
				fmt.Fprintf(&b, " %s=%.0f", r, x)
			}
			if x, ok := d.Limits.Get(r); ok {
				fmt.Fprintf(&b, " %s-limit=%.0f", r, x)
			}
		}
		b.WriteString(";")
	}
	return b.String()
}

// parseFingerprint reads a fingerprint back into the values it was made of (to whole units, as it holds
// them); false when it is not one.
func parseFingerprint(fp string) ([]scaling.ContainerDecision, bool) {
	parts := strings.Split(fp, ";")
	if len(parts) < 2 || parts[len(parts)-1] != "" {
		return nil, false
	}
	out := make([]scaling.ContainerDecision, 0, len(parts)-1)
	for _, part := range parts[:len(parts)-1] {
		fields := strings.Split(part, " ")
		if fields[0] == "" {
			return nil, false
		}
		d := scaling.ContainerDecision{Name: fields[0]}
		for _, f := range fields[1:] {
			name, num, ok := strings.Cut(f, "=")
			x, err := strconv.ParseFloat(num, 64)
			if !ok || err != nil {
				return nil, false
			}
			into := &d.Requests
			if res, isLimit := strings.CutSuffix(name, "-limit"); isLimit {
				name, into = res, &d.Limits
			}
			i := slices.IndexFunc(scaling.Resources[:], func(r scaling.Resource) bool { return r.String() == name })
			if i < 0 {
				return nil, false
			}
			into.Set(scaling.Resources[i], x)
		}
		out = append(out, d)
	}
	return out, true
}

// unboost plans the end of a pod's startup boost: nothing until the pod has been Ready for the longest of its
// containers' boost durations, then an in-place resize of every boosted container's CPU back to the
// annotation's values (to the targets where the annotation does not say). Ending a boost only ever lowers
// CPU: a value above the container's current one (not written by the webhook, which boosts up) is ignored.
// With nothing to lower the resize has no containers (the pod is then sized as any other). A resize that
// would change the pod's QoS class is refused by the API server: the pod is evicted instead (evict) or left.
func unboost(c *Controller, p *Pod, now time.Time, evict bool) Action {
	var wait time.Duration
	for name := range p.Unboosted {
		if c.BoostDuration != nil {
			wait = max(wait, c.BoostDuration(name))
		}
	}
	if p.ReadySince == nil || now.Before(p.ReadySince.Add(wait)) {
		return Action{Pod: p, Kind: Wait}
	}
	a := Action{Pod: p, Kind: Resize, Unboost: true, Reason: ReasonStartupBoostOver}
	var changes []string
	for _, k := range p.Containers {
		u, ok := p.Unboosted[k.Name]
		if (!ok && p.UnboostedErr == nil) || c.Boosts == nil || !c.Boosts(k.Name) {
			continue
		}
		d := scaling.ContainerDecision{Name: k.Name, Current: k, Requests: k.Requests, Limits: k.Limits}
		back := func(v *scaling.Values, q *resource.Quantity, target bool, what string) {
			cur, has := v.Get(scaling.CPU)
			want, ok := -1.0, false
			switch {
			case q != nil:
				want, ok = float64(q.MilliValue()), true
			case target:
				want, ok = c.Targets[k.Name].Get(scaling.CPU)
			}
			if ok && has && want < cur {
				v.Set(scaling.CPU, want)
				changes = append(changes, fmt.Sprintf("%s cpu %s %s -> %s", k.Name, what, scaling.Format(scaling.CPU, cur), scaling.Format(scaling.CPU, want)))
			}
		}
		back(&d.Requests, u.CPURequest, true, "request")
		back(&d.Limits, u.CPULimit, false, "limit")
		if d.Requests != k.Requests || d.Limits != k.Limits {
			a.Sized = append(a.Sized, d)
		}
	}
	if change := qosChange(p, a.Sized); change != "" {
		// a boost an earlier version capped at the limit made the pod Guaranteed: no resize takes it back (the
		// API server refuses a QoS change, which was retried at every loop): evicted where the mode evicts,
		// its replacement boosted within its class; else it keeps the boost
		a.Kind, a.Reason, a.Unboost, a.Fingerprint = Skip, ReasonQoSChange, false, fingerprint(a.Sized)
		if evict {
			a.Kind = Evict
		}
		a.Message = "startup boost over, but " + change
		return a
	}
	a.Fingerprint = fingerprint(a.Sized)
	a.Message = fmt.Sprintf("startup boost over (Ready since %s, boost %s)", p.ReadySince.UTC().Format(time.RFC3339), wait)
	if len(changes) > 0 {
		a.Message = strings.Join(changes, ", ") + ": " + a.Message
	}
	return a
}

// RefusalKind is what the API server's refusal of a resize (or of a replacement's dry run) says.
type RefusalKind int

// The kinds of refusal.
const (
	// RefusedTransient: a timeout, a 5xx, a conflict, a throttled or failed request: tried again next loop.
	RefusedTransient RefusalKind = iota
	// RefusedQuota: the ResourceQuota admission plugin (403 "exceeded quota"); the replacement would meet the
	// quota too: tried again next loop.
	RefusedQuota
	// RefusedCapacity: the node's allocatable cannot hold the pod's new requests (kube-apiserver's
	// PodResizeValidator, 403 with cause NodeCapacity): infeasible on this node, as the kubelet's Infeasible.
	RefusedCapacity
	// RefusedPolicy: the change itself is refused for this pod: invalid (422), forbidden by an admission
	// plugin, a ValidatingAdmissionPolicy or a webhook (403), no pods/resize (405), the pod gone (404).
	RefusedPolicy
)

func (k RefusalKind) String() string {
	switch k {
	case RefusedTransient:
		return "Transient"
	case RefusedQuota:
		return "Quota"
	case RefusedCapacity:
		return "Capacity"
	case RefusedPolicy:
		return "Policy"
	}
	return fmt.Sprintf("RefusalKind(%d)", int(k))
}

// ClassifyRefusal says what kind of refusal err is.
func ClassifyRefusal(err error) RefusalKind {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return RefusedTransient
	}
	st := status.Status()
	switch {
	case st.Reason == metav1.StatusReasonForbidden && strings.Contains(st.Message, "exceeded quota"):
		// the quota plugin answers 403 with no reason or cause of its own: its message is the only mark
		return RefusedQuota
	case st.Reason == metav1.StatusReasonForbidden && hasCause(st, "NodeCapacity"):
		return RefusedCapacity
	case apierrors.IsInvalid(err), apierrors.IsNotFound(err), apierrors.IsMethodNotSupported(err), apierrors.IsForbidden(err):
		return RefusedPolicy
	}
	return RefusedTransient
}

func hasCause(st metav1.Status, t metav1.CauseType) bool {
	if st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Type == t {
			return true
		}
	}
	return false
}

// Evictable reports whether one of pods may be disrupted at all: the workload has at least minReplicas live
// pods.
func Evictable(c *Controller, pods []Pod, o Options) bool {
	live := 0
	for i := range pods {
		if pods[i].Live {
			live++
		}
	}
	return int32(live) >= c.minReplicas(o)
}

// AfterRefusal decides what follows a resize the API server refused (err, of kind) with budget disruptions
// left to the workload this loop (evictable: the workload may be disrupted at all, see Evictable), and
// returns the budget after it: a transient or quota refusal, the end of a startup boost, or a workload
// whose eviction tolerance is used up this loop, is tried again next loop; in updateMode InPlace, on a
// workload with fewer live pods than minReplicas, or where evictionRequirements forbid an eviction, the
// resize is retried with backoff (Backoff); otherwise the pod is evicted (FromResize), which the updater
// makes only once a dry run of the replacement is admitted (AfterDryRun).
func AfterRefusal(c *Controller, a Action, kind RefusalKind, err error, budget int, evictable bool) (Action, int) {
	reason := ReasonResizeRefused
	if kind == RefusedCapacity {
		reason = ReasonInfeasible
	}
	refused := fmt.Sprintf("the API refused the resize (%v)", err)
	skip := func(r, why string, backoff bool) (Action, int) {
		a.Kind, a.Reason, a.Backoff, a.FromResize = Skip, r, backoff, false
		a.Message += "; " + refused + "; " + why
		return a, budget
	}
	switch {
	case a.Unboost || kind == RefusedTransient || kind == RefusedQuota:
		return skip(ReasonResizeRefused, "retrying next loop", false)
	case c.Mode == vpav1.UpdateModeInPlace:
		return skip(reason, "updateMode InPlace never evicts; retrying with backoff, at once for a lower target", true)
	case !evictable:
		return skip(ReasonMinReplicas, "the workload has fewer live pods than minReplicas, so no eviction replaces it; retrying with backoff, at once for a lower target", true)
	case budget <= 0:
		return skip(ReasonTolerance, "the workload may not be disrupted further this loop (--eviction-tolerance); retrying next loop", false)
	case !requirementsMet(c.EvictionRequirements, a.Sized):
		return skip(ReasonEvictionReqs, "updatePolicy.evictionRequirements do not allow an eviction; retrying with backoff", true)
	}
	a.Kind, a.FromResize, a.Reason = Evict, true, reason
	a.Message += "; " + refused
	return a, budget - 1
}

// DryRunForbiddenError is a dry run of a replacement that the API server's authorization refused the updater
// itself (its identity may not create pods, even as a dry run: RBAC without the grant the chart gives):
// it says nothing about the replacement.
type DryRunForbiddenError struct{ Err error }

func (e *DryRunForbiddenError) Error() string {
	return "the updater may not send the dry run (create pods, dryRun=All): " + e.Err.Error()
}

func (e *DryRunForbiddenError) Unwrap() error { return e.Err }

// ReplacementUnsizedError is a dry run of a replacement that the API server admitted without a sizing webhook
// matching it (vpav1.MatchedAtAdmission): the replacement would start at its template's resources.
type ReplacementUnsizedError struct{}

func (*ReplacementUnsizedError) Error() string {
	return "the API server admitted its replacement without a sizing webhook matching it (the pod webhook is not called in this namespace or for these pods, or it did not answer in time and failed open)"
}

// AfterDryRun decides whether an eviction goes ahead after the server-side dry run of its replacement (the
// pod as it would be recreated with its new resources) answered err: admitted, it does; refused, the pod is
// not evicted, as its replacement would be refused too (and the workload would lose the pod), and the update
// is retried with backoff; a transient failure of the dry run is tried again next loop. A dry run the
// updater may not send (DryRunForbiddenError) leaves the replacement unchecked: the pod is not evicted either
// (an eviction cannot be undone, a pod not evicted keeps running as it is), retried with backoff; so is one
// admitted without a sizing webhook matching the replacement (ReplacementUnsizedError).
func AfterDryRun(a Action, err error) Action {
	if err == nil {
		return a
	}
	a.Kind, a.Reason = Skip, ReasonReplacementRefused
	var forbidden *DryRunForbiddenError
	if errors.As(err, &forbidden) {
		a.Reason, a.Backoff = ReasonReplacementUnchecked, true
		a.Message += fmt.Sprintf("; not evicting: its replacement cannot be checked (%v); grant the updater create pods, which it sends only as dry runs "+
			"(the chart grants it and refuses the updater any other pod create with a ValidatingAdmissionPolicy); retrying with backoff", err)
		return a
	}
	var unsized *ReplacementUnsizedError
	if errors.As(err, &unsized) {
		a.Reason, a.Backoff = ReasonReplacementUnsized, true
		a.Message += fmt.Sprintf("; not evicting: %v, so it would start unsized; retrying with backoff", err)
		return a
	}
	if ClassifyRefusal(err) == RefusedTransient {
		a.Message += fmt.Sprintf("; not evicting: the dry run of its replacement failed (%v); retrying next loop", err)
		return a
	}
	a.Backoff = true
	a.Message += fmt.Sprintf("; not evicting: the replacement, as it would be created with the new resources, would be refused (%v); retrying with backoff", err)
	return a
}

// EvictionGates is what the updater knows, before any request, of an eviction the plan asks for.
type EvictionGates struct {
	// Last is when the last eviction for the same change was made within the loop window (nil: none), and
	// Loops whether loop detection holds the pod (EvictedChange.Holds): a replacement that came back without
	// the change.
	Last  *time.Time
	Loops bool
	// Admission says whether the admission webhook serves (its Lease is fresh); NotServing says why not.
	Admission  bool
	NotServing string
}

// Hold is an eviction held by a gate: the evictions metric's outcome and the pod's Warning event.
type Hold struct {
	Outcome, Reason, Message string
}

// Hold decides the gates: no eviction of a replacement created after an eviction for the same change (evicting
// it again would not help: the admission webhook did not size it), none while the webhook is not serving (the
// replacement would come back unsized); nil when the eviction may go ahead.
func (g EvictionGates) Hold(a Action) *Hold {
	switch {
	case g.Last != nil && g.Loops:
		return &Hold{"loop", EventLoopDetected, fmt.Sprintf("not evicting: this pod was created after an eviction for the same change (%s; the last at %s) and still needs it, so evicting it again would not help; is the admission webhook sizing pods?",
			a.Message, g.Last.Format(time.RFC3339))}
	case !g.Admission:
		return &Hold{"no_admission", EventUpdateSkipped, fmt.Sprintf("AdmissionNotServing: %s; not evicting: %s", a.Message, g.NotServing)}
	}
	return nil
}
