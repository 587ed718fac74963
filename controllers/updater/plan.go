package updater

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
	// OOMWindow: a container OOM-killed within this time of starting makes its pod a candidate (10m).
	OOMWindow time.Duration
	// DeferredTimeout: a resize the kubelet defers longer than this falls back to eviction (5m).
	DeferredTimeout time.Duration
	// InProgressTimeout: a resize in progress longer than this falls back to eviction (1h).
	InProgressTimeout time.Duration
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
	// LoopWindow: a pod resized twice for the same change within it is not touched again for it (1h).
	LoopWindow time.Duration
	// LoopRecords ("namespace/name") is the ConfigMap that keeps the loop-detection records across restarts
	// and leader changes; empty: in memory only.
	LoopRecords string
	// AdmissionLease names the Lease the admission webhook renews ("namespace/name"); with it set, nothing
	// is evicted while the Lease is older than AdmissionLeaseMaxAge (evicted pods would come back unsized).
	AdmissionLease       string
	AdmissionLeaseMaxAge time.Duration
	// NoInPlaceResize: the cluster serves no pods/resize (found by discovery at start): InPlaceOrRecreate
	// evicts at once, InPlace leaves pods as they are (UpdateSkipped, InPlaceUnavailable).
	NoInPlaceResize bool
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{Interval: time.Minute, UpdateThreshold: 0.1, MinPodAge: 12 * time.Hour, OOMWindow: 10 * time.Minute,
		DeferredTimeout: 5 * time.Minute, InProgressTimeout: time.Hour, EvictionTolerance: 0.5, MinReplicas: 2,
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
	// Replicas is the workload's desired replica count (its scale subresource); 0: unknown, the pods count.
	Replicas int32
	// Evicted: per change (an Action's Fingerprint) evicted within the loop window, the pods the workload had
	// at its first eviction. Another pod that still needs that change came back unsized: it is not evicted
	// again (the updater refuses it), so it takes no share of the eviction budget from the pods that may go.
	Evicted map[string]map[types.UID]bool
}

// loops reports whether a is an eviction the loop detection refuses (see Controller.Evicted).
func (c *Controller) loops(a *Action) bool {
	known, ok := c.Evicted[a.Fingerprint]
	return ok && a.Kind == Evict && !known[a.Pod.UID]
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
	// OOMKilledEarly: a container was OOM-killed within OOMWindow of its start.
	OOMKilledEarly bool
	// Resizing: the spec's resources differ from what the kubelet reports (a resize was asked and not done).
	Resizing bool
	// ResizePending is the reason of a PodResizePending condition (Infeasible, Deferred), since its time.
	ResizePending      string
	ResizePendingSince time.Time
	// ResizeInProgressSince is set while a PodResizeInProgress condition is.
	ResizeInProgressSince *time.Time
	// QoS is the pod's QoS class.
	QoS corev1.PodQOSClass
	// ReadySince is when the pod became Ready (nil: not Ready).
	ReadySince *time.Time
	// Unboosted: the pod is startup-boosted (vpav1.AnnotationStartupBoost); per container, the CPU it goes
	// back to. UnboostedErr: the annotation does not decode (the pod still goes back, to its targets).
	Unboosted    map[string]vpav1.Unboosted
	UnboostedErr error
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
	// Unboost: the resize ends a startup boost (the annotation goes with it); Sized may be empty (already
	// there).
	Unboost bool
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
	n := &need{sized: scaling.SizePod(p.sizedFrom(), c.Targets, c.Policies, c.Gap, c.LimitRange)}
	var f findings
	for _, d := range n.sized {
		for _, r := range scaling.Resources {
			f = f.or(n.compare(c, d, r, o))
		}
	}
	why := updateReason(c, p, n, f, now, o)
	if why == "" {
		return nil
	}
	n.why = append(n.why, why)
	return n
}

// findings are what comparing a pod's requests with its sizing found: a difference, a request outside the
// recommendation's bounds, a relative difference beyond the update threshold.
type findings struct{ differs, outside, beyond bool }

func (f findings) or(g findings) findings {
	return findings{f.differs || g.differs, f.outside || g.outside, f.beyond || g.beyond}
}

// compare compares one container's resource r with its sizing d, adding the change to n.
func (n *need) compare(c *Controller, d scaling.ContainerDecision, r scaling.Resource, o Options) findings {
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
	rel := math.Inf(1)
	if hasCur && curReq > 0 {
		rel = math.Abs(newReq-curReq) / curReq
	}
	if reqMoved {
		n.change += min(rel, 10)
		n.up = n.up || !hasCur || newReq > curReq
		n.changes = append(n.changes, fmt.Sprintf("%s %s request %s -> %s", d.Name, r, fmtOpt(r, curReq, hasCur), scaling.Format(r, newReq)))
	}
	if limMoved {
		n.changes = append(n.changes, fmt.Sprintf("%s %s limit %s -> %s", d.Name, r, fmtOpt(r, curLim, hasCurLim), scaling.Format(r, newLim)))
	}
	f := findings{differs: true, beyond: rel > o.UpdateThreshold}
	if lo, ok := c.Lower[d.Name].Get(r); ok && hasCur && curReq < lo {
		f.outside = true
	}
	if hi, ok := c.Upper[d.Name].Get(r); ok && hasCur && curReq > hi {
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
	case p.OOMKilledEarly && n.up:
		return fmt.Sprintf("a container was OOM-killed within %s of starting", o.OOMWindow)
	case f.beyond && now.Sub(p.Created) >= o.MinPodAge:
		return fmt.Sprintf("a request differs from its target by more than %.0f%% and the pod is older than %s", 100*o.UpdateThreshold, o.MinPodAge)
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
	out := unboosts(c, pods, now)
	if c.BoostOnly || c.Mode == vpav1.UpdateModeOff || c.Mode == vpav1.UpdateModeInitial {
		return out, 0
	}
	live := 0
	for i := range pods {
		if pods[i].Live {
			live++
		}
	}
	inPlace := (c.Mode == vpav1.UpdateModeInPlaceOrRecreate || c.Mode == vpav1.UpdateModeInPlace) && !o.NoInPlaceResize
	for i := range pods {
		p := &pods[i]
		if !p.Running || p.Unboosted != nil {
			continue
		}
		if c.Mode == vpav1.UpdateModeInPlace && o.NoInPlaceResize {
			if n := assess(c, p, now, o); n != nil {
				out = append(out, Action{Pod: p, Sized: n.sized, Up: n.up, Change: n.change, Fingerprint: fingerprint(n.sized), Kind: Skip, Reason: ReasonInPlaceUnavailable,
					Message: strings.Join(n.changes, ", ") + ": the cluster serves no pods/resize, and updateMode InPlace never evicts"})
			}
			continue
		}
		if p.Resizing && inPlace {
			out = append(out, resizeFollowUp(c, p, now, o))
			continue
		}
		if n := assess(c, p, now, o); n != nil {
			out = append(out, update(c, p, n, inPlace))
		}
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

// update is the action for a pod that needs n: a resize in place, an eviction, or a skip where updateMode
// InPlace meets a QoS class change (which a resize cannot make).
func update(c *Controller, p *Pod, n *need, inPlace bool) Action {
	a := Action{Pod: p, Sized: n.sized, Up: n.up, Change: n.change, Fingerprint: fingerprint(n.sized),
		Message: strings.Join(n.changes, ", ") + ": " + strings.Join(n.why, "; ")}
	before, after := QoS(append(slices.Clone(p.Containers), p.InitContainers...)), QoSAfter(append(slices.Clone(p.Containers), p.InitContainers...), n.sized)
	qosChange := inPlace && after != before
	switch {
	case c.Mode == vpav1.UpdateModeInPlace && qosChange:
		a.Kind, a.Reason = Skip, ReasonQoSChange
		a.Message += fmt.Sprintf("; the QoS class would change from %s to %s, which a resize cannot do, and updateMode InPlace never evicts", before, after)
	case inPlace && !qosChange:
		a.Kind = Resize
	default:
		a.Kind = Evict
		if qosChange {
			a.Reason = ReasonQoSChange
			a.Message += fmt.Sprintf("; the QoS class would change from %s to %s, which a resize cannot do", before, after)
		}
	}
	return a
}

// unboosts plans the boosted pods (in every mode): each waits for its boost's end, then goes back in place.
func unboosts(c *Controller, pods []Pod, now time.Time) []Action {
	var out []Action
	for i := range pods {
		if p := &pods[i]; p.Running && p.Unboosted != nil {
			out = append(out, unboost(c, p, now))
		}
	}
	return out
}

// resizeFollowUp watches a resize the kubelet has not finished: Infeasible, or Deferred / InProgress past
// their timeouts, fall back to eviction (InPlaceOrRecreate) or are reported and left (InPlace).
func resizeFollowUp(c *Controller, p *Pod, now time.Time, o Options) Action {
	a := Action{Pod: p, Kind: Wait}
	switch {
	case p.ResizePending == corev1.PodReasonInfeasible:
		a.Reason, a.Message = ReasonInfeasible, "the kubelet refused the resize as infeasible"
	case p.ResizePending == corev1.PodReasonDeferred && now.Sub(p.ResizePendingSince) > o.DeferredTimeout:
		a.Reason, a.Message = ReasonDeferredTooLong, fmt.Sprintf("the kubelet deferred the resize for %s (more than %s)", now.Sub(p.ResizePendingSince).Round(time.Second), o.DeferredTimeout)
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

// limitEvictions applies evictionRequirements, minReplicas and the eviction tolerance to the disruptions of
// one workload: evictions, and resizes that restart a container. Over-budget ones become skips with their
// reason. It returns the disruptions still allowed this loop.
func limitEvictions(c *Controller, actions []Action, live, replicas int, o Options) ([]Action, int) {
	minReplicas := o.MinReplicas
	if c.MinReplicas > 0 {
		minReplicas = c.MinReplicas
	}
	// the tolerance is a share of the replicas the workload should have; those it lacks are disrupted already
	budget := max(1, int(math.Floor(o.EvictionTolerance*float64(replicas)))) - max(0, replicas-live)
	if int32(live) < minReplicas {
		budget = 0
	}
	disrupted := max(0, replicas-live)
	for i := range actions {
		a := &actions[i]
		disrupts := a.Kind == Evict || (a.Kind == Resize && (a.Pod.RestartOnResize || !o.InPlaceSkipDisruptionBudget))
		if !disrupts || c.loops(a) {
			continue
		}
		switch {
		case a.Kind == Evict && !a.FromResize && !requirementsMet(c.EvictionRequirements, a.Sized):
			a.Kind, a.Reason = Skip, ReasonEvictionReqs
			a.Message += "; updatePolicy.evictionRequirements do not allow this change"
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

// requirementsMet follows the upstream VPA rule for evictionRequirements: a pod may be evicted when some
// container meets every requirement, and a container meets one when at least one of its listed resources
// moves in the required direction (an unchanged resource does not count).
func requirementsMet(reqs []vpav1.EvictionRequirement, sized []scaling.ContainerDecision) bool {
	if len(reqs) == 0 {
		return true
	}
	for _, d := range sized {
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

// unboost plans the end of a pod's startup boost: nothing until the pod has been Ready for the longest of its
// containers' boost durations, then an in-place resize of every boosted container's CPU back to the
// annotation's values (to the targets where the annotation does not say).
func unboost(c *Controller, p *Pod, now time.Time) Action {
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
		if !ok && p.UnboostedErr == nil {
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
			if ok && (!has || want != cur) {
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
	a.Fingerprint = fingerprint(a.Sized)
	a.Message = fmt.Sprintf("startup boost over (Ready since %s, boost %s)", p.ReadySince.UTC().Format(time.RFC3339), wait)
	if len(changes) > 0 {
		a.Message = strings.Join(changes, ", ") + ": " + a.Message
	}
	return a
}
