package scaling

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// Source of a total.
type Source string

// The sources of a total.
const (
	SourceVPA Source = "VPA"
	SourceHPA Source = "HPA"
)

// Total is the total of one container and resource, where it came from, and the replicas it asks for.
type Total struct {
	Container string
	Resource  Resource
	Total     float64
	Source    Source
	// Replicas is the replica count this total asks for (section 3), before the max over all totals.
	Replicas int32
	// Interval is the index of the effective interval chosen for this total.
	Interval int
	// Saturated is true when the total is above the top interval's upper boundary, or the recent load asks
	// for more than it (Beyond).
	Saturated bool
	// Beyond is the total the recent load asks for when the container policy's maxAllowed holds a total that
	// follows it (section 2a) at the top interval's upper boundary or below: the load is beyond what the
	// intervals can give (0: it is not).
	Beyond float64
	// Ahead is true when the total rose ahead of a recurring burst (section 2a): the estimate it rose to is
	// the burst's, not the recent load's. AheadEvery is the burst's period (Recommendation.RecurringEvery).
	Ahead      bool
	AheadEvery time.Duration
	// Whole is true when the total is the pods' whole usage rather than a load plus the pods' base (the fall
	// back from a recurring burst, section 2a): section 4 spreads it over the replicas as it is.
	Whole bool
}

// ContainerDecision is the decided per-pod requests and limits of one scaled container.
type ContainerDecision struct {
	Name    string
	Current Container
	// Wanted is the per-pod requests for the desired replicas, before gating.
	Wanted Values
	// Requests and Limits are what is to be applied after gating (the sizing intent).
	Requests Values
	Limits   Values
	// Notes say what capped or shaped a value (maxAllowed, interval maximum, LimitRange, ratio source).
	Notes []Note
	// RequestsOnly: the container's limits are never changed.
	RequestsOnly bool
}

// BlockedPart is one part of a change that is not applied, with its reason.
type BlockedPart struct {
	Part      string
	Direction hvpav1alpha1.Direction
	Reason    hvpav1alpha1.BlockReason
	Message   string
}

// Condition is a condition the decision sets on the Hvpa.
type Condition struct {
	Type    string                 `json:"type"`
	Status  metav1.ConditionStatus `json:"status"`
	Reason  string                 `json:"reason"`
	Message string                 `json:"message"`
}

// HPARecord is the HPA input to keep in status: desired replicas and the per-pod basis in force when they
// last changed.
type HPARecord struct {
	Desired int32
	Basis   map[string]Values
}

// Decision is the outcome of Decide: everything needed to apply and to explain it.
type Decision struct {
	Intervals       []EffectiveInterval
	Totals          []Total
	HPAFloor        int32
	CurrentReplicas int32
	// DesiredReplicas is the replica count the totals ask for, clamped to [min, max], before gating.
	DesiredReplicas int32
	// Replicas is the replica count to apply after gating.
	Replicas int32
	// SizedFor is the replicas the per-pod values are sized for: Replicas, or fewer while a scale-in waits
	// for its pods to be resized (ResizeFirst); the next decision takes it as State.IntentReplicas.
	SizedFor   int32
	Containers []ContainerDecision
	Blocked    []BlockedPart
	Conditions []Condition
	HPA        *HPARecord
	// Urgent is true when an OOM (or CPU starvation) since the last scaling let scale-up parts skip
	// stabilization and minChange.
	Urgent bool
	// Changed is true when replicas or any request or limit is to change.
	Changed bool
	// NodeCaps say which per-pod maxima were lowered to the largest schedulable node's room (CappedToNode).
	NodeCaps []string
	// NodeKnown: the decision knew the nodes' room (State.NodeRoom), so CappedToNode is set either way.
	NodeKnown bool
}

// Decide computes the Hvpa decision (docs/design/scaling.md sections 2 to 6) for a spec and the observed state.
func Decide(spec *Spec, st State) (Decision, error) {
	if st.Replicas < 0 {
		return Decision{}, fmt.Errorf("replicas: %d is negative", st.Replicas)
	}
	if len(spec.Intervals) == 0 {
		return Decision{}, fmt.Errorf("scalingIntervals: at least one interval is needed")
	}
	intervals, nodeCaps := nodeCappedIntervals(spec, st) // per-pod maxima no larger than the largest node holds
	iv, err := EffectiveIntervals(intervals, spec.MinReplicas, spec.Overlap)
	if err != nil {
		return Decision{}, err
	}
	actual := st.Replicas
	if st.IntentReplicas > 0 && st.IntentReplicas < actual {
		// a scale-in waits for its pods to be resized (ResizeFirst): decide from the replicas they are sized for
		st.Replicas = st.IntentReplicas
	}
	st.returning = returningFrom(st)
	st.burstSoon, st.burstSince = burstSoon(st), burstUnderWay(st)
	d := Decision{
		Intervals:       iv,
		NodeCaps:        nodeCaps,
		NodeKnown:       st.NodeRoom != nil,
		CurrentReplicas: actual,
		Urgent:          st.OOMSinceLastScaling,
	}
	// Section 2: totals, and the HPA record.
	hpa := hpaInput(spec, st)
	if st.HPA != nil {
		d.HPA = &HPARecord{Desired: st.HPA.Desired, Basis: hpa.basis}
		if !spec.HPAUtilization || !controlsMeasured(spec, st.Containers) {
			// an HPA on other metrics, or on the utilization of resources no total here scales (a memory-only
			// Hvpa beside an HPA on CPU): its desired replicas are a floor, as no total carries its signal
			d.HPAFloor = st.HPA.Desired
		}
	}
	d.Totals = totals(spec, st, hpa, d.Intervals, actual, d.HPAFloor)
	// Section 3: desired replicas. Section 5 for replicas: a blocked change keeps the current count.
	limited := desiredReplicas(spec, st, &d)
	gateReplicas(spec, st, &d)
	d.SizedFor = resizeFirst(spec, st, &d, actual)
	// Section 4 for the desired replicas (Wanted) and for the replicas the pods are sized for; section 5 per
	// (k, R); section 6 for the limits.
	decideContainers(spec, st, &d, d.SizedFor)

	d.Changed = d.Replicas != actual
	for _, cd := range d.Containers {
		if cd.Requests != cd.Current.Requests || cd.Limits != cd.Current.Limits {
			d.Changed = true
		}
	}
	d.Conditions = conditions(d, actual, limited)
	return d, nil
}

// controlsMeasured says whether every resource the HPA measures is scaled by a container's policy: a total
// of each carries the HPA's signal (section 2); one measured and scaled by none (an HPA on CPU and memory
// beside a memory-only Hvpa) carries it nowhere.
func controlsMeasured(spec *Spec, cs []Container) bool {
	measures := spec.hpaMeasures()
	for _, r := range Resources {
		if measures[r] && !slices.ContainsFunc(cs, func(k Container) bool {
			pol := spec.PolicyFor(k.Name)
			return !pol.Off && pol.Controlled[r]
		}) {
			return false
		}
	}
	return true
}

// hpaView is what the HPA's desired replicas say about the totals (section 2).
type hpaView struct {
	// basis: the per-pod requests the HPA's desired replicas were computed against
	basis map[string]Values
	// replicas multiplies the basis into the HPA total: h, or h_raw while pinned at a bound; -1: no total
	replicas float64
	// measures: the resources the HPA gives a total for
	measures [NumResources]bool
}

func hpaInput(spec *Spec, st State) hpaView {
	v := hpaView{measures: [NumResources]bool{true, true}}
	if st.HPA == nil {
		return v
	}
	v.replicas, v.basis = float64(st.HPA.Desired), st.HPA.Basis
	switch {
	case spec.HPAUtilization && st.HPA.Pinned():
		// at minReplicas or maxReplicas h carries no information: h_raw x the per-pod value in force, for the
		// resources its metrics measure (for the others the clamped h says nothing either)
		v.replicas, v.basis, v.measures = st.HPA.Raw, nil, spec.hpaMeasures()
		switch c := float64(st.Replicas); {
		case !st.HPA.RawAtWork:
			// a reading of pods not at work yet (one just became ready from a start: a start-up burst, a
			// restart's; or averaged over the pods before a scaling) is no measurement, as no reading is
			// below: no HPA total until the pods are at work (the raised basis below waits for them too)
			v.replicas, v.basis = -1, nil
		case math.Abs(v.replicas-c) <= RawPrecision*c:
			// the HPA reads the pods at its target, to the precision of its status: the total in force, not a
			// rounding's change of it (2998/3000 of 3 x 1867m once moved the intent to 3 x 1866m, 99/100 of
			// 200m to 198m and back, which the updater rightly left alone, so the pods never met it)
			v.replicas = c
		}
	case spec.HPAUtilization && st.HPA.AtBound():
		// at a bound without a current reading of its metrics (a new HPA, or metrics unavailable) the HPA says
		// nothing: h x basis would take the clamp for a measurement (stability first)
		v.replicas, v.basis = -1, nil
	}
	if v.replicas > 0 && v.basis != nil {
		v.basis = rebased(spec, st, v.basis)
	}
	if v.basis == nil {
		v.basis = make(map[string]Values, len(st.Containers))
		for _, k := range st.Containers {
			v.basis[k.Name] = k.Requests
		}
	}
	return v
}

// rebased is the HPA's basis raised to what the HPA reads on the pods in force (section 2): while its reading
// of them (RawCurrent) is above its tolerance of the c pods running, h_up = min(h, ceil(h_raw)) pods of the
// per-pod values in force are what it asks for now, and each measured resource's basis is at least h_up/h of
// its value in force, so that h x basis is at least that. The HPA's window holds h as the largest
// recommendation of the window, each counted in the pods of its time: once the pods grew after h changed, h
// counts pods the HPA no longer has, and the HPA, comparing counts, sees nothing to do (a first reading that
// missed a starting pod asked for 5 of 1000m; on the 3 x 1667m they gave it recommends 4, which the window
// holds at 5: 5 CPU at 100% of an 80% target, for the whole window). The raised basis is recorded with h, so
// it holds until h changes: within the tolerance nothing moves it, and a later reading cannot take it back.
// It is at most h pods (an HPA whose scale-up policies hold h below its recommendation grants no more) and
// rises only while the pods in force are used above the tolerance, so it cannot ratchet.
func rebased(spec *Spec, st State, basis map[string]Values) map[string]Values {
	in, c := st.HPA, float64(st.Replicas)
	if !spec.HPAUtilization || in.Raw <= 0 || !in.RawCurrent || c <= 0 || in.Raw <= c*(1+HPATolerance) {
		return basis
	}
	h := float64(in.Desired)
	up := min(h, math.Ceil(in.Raw-1e-9)) / h // a ratio that lands on a whole number is no step up
	measures := spec.hpaMeasures()
	out := make(map[string]Values, len(basis))
	for name, b := range basis {
		out[name] = b
	}
	for _, k := range st.Containers {
		b, ok := out[k.Name]
		if !ok {
			continue
		}
		for _, r := range Resources {
			p, hasP := k.Requests.Get(r)
			x, hasB := b.Get(r)
			if measures[r] && hasP && hasB && up*p > x {
				b.Set(r, up*p)
			}
		}
		out[k.Name] = b
	}
	return out
}

// totals are the controlled (container, resource) totals (section 2): the recommendation's, raised to the
// HPA's where that is larger, each with the replicas it asks for (section 3). Totals that follow the recent
// load move together: when one of them leaves its band, every one goes to its target (a resize of the pods
// takes them all), otherwise each stays in force.
func totals(spec *Spec, st State, hpa hpaView, intervals []EffectiveInterval, actual, floor int32) []Total {
	c := st.Replicas
	// a pod has a few containers: the recommendation of each is found by a scan (a map of them was a tenth of
	// a decision's bytes), the last of its name (as the map kept)
	out := make([]Total, 0, len(st.Containers)*int(NumResources))
	var follow []following
	for _, k := range st.Containers {
		pol := spec.PolicyFor(k.Name)
		i := -1
		for j := range st.Recommendation {
			if st.Recommendation[j].Name == k.Name {
				i = j
			}
		}
		for _, r := range Resources {
			if pol.Off || !pol.Controlled[r] {
				continue
			}
			t := Total{Container: k.Name, Resource: r, Total: -1}
			if i >= 0 {
				var f following
				t.Total, t.Source, f = vpaTotal(spec, st, &st.Recommendation[i], k, r, c, actual, intervals)
				if t.Source == SourceLoad {
					f.index = len(out)
					follow = append(follow, f)
				}
			}
			out = append(out, t)
		}
	}
	hpaSignal(spec, st, out, follow)
	if floor < c { // an HPA floor that holds the replicas leaves nothing for a fall to do
		freeFall(spec, st, intervals, out, follow)
	}
	moveTogether(out, follow)
	kept := out[:0]
	for i, t := range out {
		k := containerNamed(st.Containers, t.Container)
		r := t.Resource
		if st.HPA != nil && spec.HPAUtilization && hpa.replicas >= 0 && hpa.measures[r] && t.Source != SourceLoad {
			if b, ok := hpa.basis[k.Name].Get(r); ok {
				if th := hpa.replicas * b; th > t.Total {
					t.Total, t.Source = th, SourceHPA
				}
			}
		}
		if t.Total < 0 {
			continue
		}
		lo, _ := spec.PolicyFor(k.Name).MinAllowed.Get(r)
		t.Replicas, t.Interval, t.Saturated = selectReplicas(intervals, c, t.Total, r, lo, spec.Overlap[r])
		beyondTop(&t, follow, i)
		kept = append(kept, t)
	}
	return kept
}

// beyondTop marks total t (out[i]) saturated when it follows the recent load and that load asks for more
// than the top interval gives (following.beyond).
func beyondTop(t *Total, follow []following, i int) {
	if j := slices.IndexFunc(follow, func(f following) bool { return f.index == i }); j >= 0 && follow[j].beyond > 0 {
		t.Beyond, t.Saturated = follow[j].beyond, true
	}
}

// moveTogether moves every total that follows the recent load to its target when one of them leaves its
// band (a resize of the pods takes them all), but those whose own direction is held now.
func moveTogether(out []Total, follow []following) {
	if !slices.ContainsFunc(follow, func(f following) bool { return f.move }) {
		return
	}
	for _, f := range follow {
		if !f.hold {
			out[f.index].Total = f.target
			out[f.index].Ahead, out[f.index].AheadEvery, out[f.index].Whole = f.ahead, f.every, f.whole
		}
	}
}

// RawPrecision is how close to c an h_raw at a bound counts as c: the HPA's averageValue is in whole
// millicores (a third of 100m reads 33m, 1% low), and the updater leaves a pod within 2% of the intent alone,
// so a total that moves by less would move the intent and never the pods.
const RawPrecision = 0.02

// HPATolerance is the HPA controller's default tolerance: a usage ratio within 10% of its target keeps the
// replicas.
const HPATolerance = 0.1

// hpaSignal applies an HPA on Utilization metrics to the totals that follow the recent load (section 2a):
// while the HPA asks for more replicas than the workload has (its usage is above target + tolerance) and
// reads its metrics (Raw), the totals of the resources it measures move now, if by at least MinStep (to their
// levels, which keep the recent mean usage within half the HPA's tolerance above its target: follow).
func hpaSignal(spec *Spec, st State, out []Total, follow []following) {
	in := st.HPA
	if in == nil || !spec.HPAUtilization || in.Raw <= 0 {
		return
	}
	if in.Desired <= st.Replicas {
		return
	}
	measures := spec.hpaMeasures()
	for i := range follow {
		if f := &follow[i]; measures[out[f.index].Resource] && !f.hold && f.target >= f.cur*(1+spec.Tracking.MinStep) {
			f.move = true
		}
	}
}

// containerNamed is the container of cs with that name (there is one: the totals come from cs).
func containerNamed(cs []Container, name string) Container {
	for _, k := range cs {
		if k.Name == name {
			return k
		}
	}
	return Container{Name: name}
}

// following is a total that follows the recent load: its total in force (the Total while it holds), its
// target, and whether it left its band (then every following total moves to its target).
type following struct {
	index       int
	target, cur float64
	move, hold  bool
	ahead       bool          // a rise that a recurring burst ahead makes (the recent load alone would not)
	every       time.Duration // the burst's period, when ahead
	whole       bool          // the target is the pods' whole usage (tracked.whole)
	fall        float64       // >0: the level unclamped by minAllowed, which asks for fewer replicas (freeFall)
	beyond      float64       // >0: the level unclamped by maxAllowed, above the top interval (Total.Beyond)
}

// follow decides whether a total that follows the recent load leaves its band (section 2a): its trigger
// total (the trigger load plus the base, at least c x podMin, within the container policy's bounds for c
// pods) is above the total in force and its level total at least MinStep above it, or its level total more
// than Band (SettledBand once the pods have not changed for SettledAfter) below it, and its policy lets it
// change now. A move sets the level total.
func (s *Spec) follow(st State, k Container, r Resource, c int32, pCur, podMin float64, tl tracked, iv []EffectiveInterval) following {
	b := newPodBounds(s.PolicyFor(k.Name), r, c, podMin)
	cur := float64(c) * pCur
	young := r == Memory && (st.LowConfidence || st.StaleRecommendation)
	// size is the total a move sets from a level and trigger (held by within), and whether the trigger asks
	// for a rise
	size := func(level, trigger float64, within func(float64) float64) (float64, bool) {
		if target := s.HPATargets[r]; st.HPA != nil && s.HPAUtilization && target > 0 {
			// an HPA on the resource's utilization: the recent mean stays within half the HPA's tolerance above
			// its target (where the HPA leaves the replicas alone)
			level, trigger = max(level, tl.mean/(target*(1+HPATolerance/2))), max(trigger, tl.mean/(target*(1+HPATolerance)))
		}
		if young {
			// memory does not fall below the long history's target before the history knows the workload's
			// peaks (an OOM kill costs more than a day of memory): the LowConfidence floor of section 2a
			level = max(level, tl.long)
		}
		t := within(s.VPATotal(r, level, c, pCur))
		if young && tl.jumps(s.Tracking) {
			t = max(t, cur) // a memory that jumps does not fall at all while the history is young
		}
		t, under := s.memoryUnder(r, tl, c, pCur, t, within)
		return t, within(s.VPATotal(r, trigger, c, pCur)) > cur && (t >= cur*(1+s.Tracking.MinStep) || under)
	}
	within := b.clamp(c, c)
	t, up := size(tl.level, tl.trigger, within)
	ahead := false
	if tl.ahead && up { // a rise the recent load alone would not make: ahead of the burst
		_, upNow := size(tl.nowLevel, tl.nowTrigger, within)
		ahead = !upNow
	}
	band := s.band(st, r)
	move := up || t < cur*(1-band)
	if move && !up && r == CPU && t >= cur*(1-s.Tracking.Band) {
		// a fall that only the settled band allows lands at the peak of SettledWindow plus headroom, if that
		// is still below the band: from the last minutes' estimate, the next hour's noise took it back up
		ts, _ := size(tl.settledLevel, tl.trigger, within)
		t = min(ts, cur) // no higher than in force: when another total moves, this one waits with it
		move = t < cur*(1-band)
	}
	// the policy's bounds hold per pod and the replicas follow the total (section 2a amendment): a total they
	// clamp for c pods, which no move of c pods' requests can pass, is taken unclamped for the replicas the
	// intervals allow when it then selects other replicas. Held at c x maxAllowed it never left an interval
	// whose per-pod maximum is maxAllowed (the default): more replicas, it moves. Held at c x minAllowed it
	// never fell below section 1's minAllowed down boundary: fewer replicas are a candidate (fall), which
	// moves only when every total asks for fewer replicas (freeFall; a sidecar at its minAllowed does not
	// move the others at every decision). No minAllowed floor unclamped: section 1's down boundaries hold it,
	// and one pod at minAllowed is the first interval's down boundary when minAllowed fills its pod.
	t, move, fall := s.unclamped(st, iv, r, b, cur, t, move, func(within func(float64) float64) float64 {
		tf, _ := size(tl.level, tl.trigger, within)
		return tf
	})
	_, _, hold := gate(s, st, direction(t, cur), &r, t, cur) // a change its policy holds now moves nothing (nor the others with it)
	return following{target: t, cur: cur, move: move && !hold, hold: hold, ahead: ahead, whole: tl.whole, fall: fall,
		beyond: beyond(iv, r, b, t, func(within func(float64) float64) float64 {
			tu, _ := size(tl.level, tl.trigger, within)
			return tu
		})}
}

// beyond is what the recent load asks for (sized by size) when the container policy's maxAllowed holds a
// load-following total t at the top interval and the load asks for more than the top's up boundary: said in
// ScalingLimited as a recommendation total above the top interval is (section 3); 0 otherwise.
func beyond(iv []EffectiveInterval, r Resource, b podBounds, t float64, size func(within func(float64) float64) float64) float64 {
	if !b.hasHi || len(iv) == 0 {
		return 0
	}
	top := iv[len(iv)-1]
	if t < top.Up[r] && b.c < top.Replicas {
		return 0
	}
	if tu := size(b.clamp(b.c, math.MaxInt32)); tu > top.Up[r] {
		return tu
	}
	return 0
}

// memoryUnder is a memory total t (held by within) and whether it is above the total in force, which is
// below the memory window's peak usage (section 2a, Move): the pods use more than their requests (with
// limits at the requests, an OOM kill ahead), so it rises even when the level the long history caps is less
// than MinStep above, by MinStep still (a memory that creeps up moves seldom).
func (s *Spec) memoryUnder(r Resource, tl tracked, c int32, pCur, t float64, within func(float64) float64) (float64, bool) {
	cur := float64(c) * pCur
	if r != Memory || s.VPATotal(r, tl.peak, c, pCur) <= cur || t <= cur {
		return t, false
	}
	return within(max(t, cur*(1+s.Tracking.MinStep))), true
}

// unclamped is follow's total t and move, when t is held by the policy's bounds for the c pods running and
// does not move, against the same total unclamped for the intervals' replicas (sized by size): that total
// when it selects more replicas (a move), a fall candidate when fewer (freeFall) unless its policy holds
// that fall now, else t as it was.
func (s *Spec) unclamped(st State, iv []EffectiveInterval, r Resource, b podBounds, cur, t float64, move bool,
	size func(within func(float64) float64) float64) (target float64, moves bool, fall float64) {
	if len(iv) == 0 || move || !b.binds(t) {
		return t, move, 0
	}
	c := b.c
	tf := size(b.clamp(0, iv[len(iv)-1].Replicas))
	if tf == t {
		return t, false, 0
	}
	switch n, _, _ := selectReplicas(iv, c, tf, r, b.lo, s.Overlap[r]); {
	case n > c:
		return tf, true, 0
	case n < c:
		if _, _, held := gate(s, st, direction(tf, cur), &r, tf, cur); !held {
			return t, false, tf
		}
	}
	return t, false, 0
}

// podBounds are what holds a load-following total per pod: the recommender's pod minimum and the container
// policy's minAllowed and maxAllowed (as upstream's).
type podBounds struct {
	c            int32
	podMin       float64
	lo, hi       float64
	hasLo, hasHi bool
}

func newPodBounds(pol ContainerPolicy, r Resource, c int32, podMin float64) podBounds {
	b := podBounds{c: c, podMin: podMin}
	b.lo, b.hasLo = pol.MinAllowed.Get(r)
	b.hi, b.hasHi = pol.MaxAllowed.Get(r)
	return b
}

// clamp holds a total to the pod minimum for the c pods running, then to the policy's bounds for fewest to
// most pods.
func (b podBounds) clamp(fewest, most int32) func(float64) float64 {
	return func(t float64) float64 {
		t = max(t, float64(b.c)*b.podMin)
		if b.hasLo {
			t = max(t, float64(fewest)*b.lo)
		}
		if b.hasHi {
			t = min(t, float64(most)*b.hi)
		}
		return t
	}
}

// binds says whether the bounds for the c pods running hold t at one of their ends.
func (b podBounds) binds(t float64) bool {
	within := b.clamp(b.c, b.c)
	return t == within(math.Inf(1)) || t == within(0)
}

// freeFall moves the totals that follow the load when none moves by its band and every total asks for fewer
// replicas than run, some of them only unclamped by minAllowed (follow's fall): each such one to its
// unclamped level, the others to their targets. A total that asks for c replicas or more, or that its policy
// holds, keeps them all.
func freeFall(spec *Spec, st State, iv []EffectiveInterval, out []Total, follow []following) {
	c := st.Replicas
	// a total that stays (its target the total in force) is not held by its policy: a minChange holds no
	// change of 0
	if len(iv) == 0 || !slices.ContainsFunc(follow, func(f following) bool { return f.fall > 0 }) ||
		slices.ContainsFunc(follow, func(f following) bool { return f.move || (f.hold && f.target != f.cur) }) {
		return
	}
	for i, t := range out {
		total := t.Total
		if j := slices.IndexFunc(follow, func(f following) bool { return f.index == i }); j >= 0 {
			total = follow[j].target
			if follow[j].fall > 0 {
				total = follow[j].fall
			}
		}
		if total < 0 {
			continue
		}
		lo, _ := spec.PolicyFor(t.Container).MinAllowed.Get(t.Resource)
		if n, _, _ := selectReplicas(iv, c, total, t.Resource, lo, spec.Overlap[t.Resource]); n >= c {
			return
		}
	}
	for i := range follow {
		if follow[i].fall > 0 {
			follow[i].target = follow[i].fall
		}
		follow[i].move, follow[i].hold = true, false // a hold here was of no change (above)
	}
}

// RecurReturnSlack: a scaling this long before the first minute a recurring burst was ahead, or within the
// first minute of its end, still counts as a rise for it (the decision reads the recommender's run of a
// minute a little late or early: a rise in the end's first minute read the burst's last sample).
const RecurReturnSlack = time.Minute

// RecurReturnWithin: the fall back from a recurring burst is made within this of its end, or by the rules of
// any fall (a fall back that its band, minChange or updateMode holds does not waive the stabilization of
// every scale-down for hours).
const RecurReturnWithin = 10 * time.Minute

// returns reports whether the decision falls back from the recurring burst of rec (section 2a): the burst has
// ended less than RecurReturnWithin ago, no burst is ahead now (a burst in two parts: the second is), and the
// last scaling rose for it: it came no sooner than RecurReturnSlack before the burst was first ahead, and
// before RecurReturnSlack after the earliest its end may have been. The fall back, made at least RecurEnd
// after the end, is not (nor one made in minutes the recommender did not sample, before the end it noted).
func returns(st State, rec *Recommendation) bool {
	end := rec.RecurringEnded
	if e := rec.RecurringEndedEarliest; !e.IsZero() && e.Before(end) {
		end = e
	}
	return !rec.RecurringEnded.IsZero() && rec.RecurringCPU == 0 && st.Now.Before(rec.RecurringEnded.Add(RecurReturnWithin)) && st.LastScaleTime != nil &&
		!st.LastScaleTime.Before(rec.RecurringFrom.Add(-RecurReturnSlack)) && st.LastScaleTime.Before(end.Add(RecurReturnSlack))
}

// RecurLead is the embedded recommender's (recommender.RecurLead): a recurring burst comes within it of the
// times it was seen ahead.
const RecurLead = 4 * time.Minute

// RecurQuiet: a scale-down waits while a recurring burst is ahead again within RecurQuiet (section 5): the rise
// ahead of it would take it back within minutes.
const RecurQuiet = 15 * time.Minute

// burstSoon is when a recurring burst of a recommendation's is ahead, if within RecurQuiet (zero: none).
func burstSoon(st State) time.Time {
	for i := range st.Recommendation {
		// RecurringNext is as of the recommender's last run: a burst ahead from then stays so for RecurLead
		if next := st.Recommendation[i].RecurringNext; st.Now.Before(next.Add(RecurLead)) && !next.After(st.Now.Add(RecurQuiet)) {
			return next
		}
	}
	return time.Time{}
}

// RecurUnderWay: a scale-down waits while a recurring burst is under way, up to RecurUnderWay after the first
// minute it was ahead (section 5): its end comes first (a fall during it lands on the burst's samples, and
// the scaling it makes holds the fall back from the burst for a stabilization).
const RecurUnderWay = time.Hour

// burstUnderWay is the first minute a recurring burst of a recommendation's was ahead, while it is under way
// (ahead since, not ended, for less than RecurUnderWay; zero: none).
func burstUnderWay(st State) time.Time {
	for i := range st.Recommendation {
		rec := &st.Recommendation[i]
		if from := rec.RecurringFrom; !from.IsZero() && rec.RecurringEnded.IsZero() && !st.Now.Before(from) && st.Now.Sub(from) < RecurUnderWay {
			return from
		}
	}
	return time.Time{}
}

// burstHold is why a change of direction dir waits for a recurring burst (section 5): a scale-down while one
// is under way or due within RecurQuiet.
func burstHold(st State, dir hvpav1alpha1.Direction) (string, bool) {
	switch {
	case dir != hvpav1alpha1.DirectionDown:
		return "", false
	case !st.burstSince.IsZero():
		return fmt.Sprintf("a recurring burst is under way since %s: scale%s waits for its end", st.burstSince.UTC().Format("15:04"), dir), true
	case !st.burstSoon.IsZero():
		return fmt.Sprintf("a recurring burst is ahead at %s, within %s: scale%s waits for it", st.burstSoon.UTC().Format("15:04"), RecurQuiet, dir), true
	}
	return "", false
}

// returningFrom reports whether the last scaling rose for a recurring burst of any recommendation's that has
// ended since.
func returningFrom(st State) bool {
	for i := range st.Recommendation {
		if returns(st, &st.Recommendation[i]) {
			return true
		}
	}
	return false
}

// after is the samples of recent (oldest first) from t on.
func after(recent []LoadSample, t time.Time) []LoadSample {
	return recent[sampleAt(recent, t):]
}

// sampleAt is the index of the first sample of recent (oldest first) at or after t.
func sampleAt(recent []LoadSample, t time.Time) int {
	i, _ := slices.BinarySearchFunc(recent, t, func(s LoadSample, t time.Time) int { return s.At.Compare(t) })
	return i
}

// withoutBurst is recent without the samples of a recurring burst: from the first minute it was ahead to its
// end. It is recent itself when there are none; otherwise a copy into buf (the decision's, reused).
func withoutBurst(recent []LoadSample, from, end time.Time, buf []LoadSample) []LoadSample {
	i, j := sampleAt(recent, from), sampleAt(recent, end)
	switch {
	case i >= j:
		return recent
	case i == 0:
		return recent[j:]
	}
	return append(append(buf[:0], recent[:i]...), recent[j:]...)
}

// returnLoad is the CPU load of the fall back from a recurring burst that has ended (section 2a), as the
// pods' whole usage: the samples since its end (recent) were taken on c pods of pCur, which carry the burst's
// large base, so the load above it reads low, and section 4's base budgeting of a scale-in would take that
// large base off the total again (measured: the fall landed 5-10% below the usage and rose again within
// minutes). Its level is the peak usage since the end, at least the peak load of the minutes before the burst
// (before, taken on pods about their usage's size: a few minutes since the end are not the range of the
// load's noise, and a fall within it rises again), plus headroom; with an HPA on CPU utilization, the mean
// usage since the end at half the HPA's tolerance above its target at least. In the load terms of follow
// (which adds c x base(pCur) back), its mean is none: the HPA's floor is in the level.
func (s *Spec) returnLoad(tl tracked, recent []LoadSample, before float64, c int32, pCur float64, hpa bool) tracked {
	n, peak, sum := 0, 0.0, 0.0
	for i := range recent {
		if v, has := recent[i].Load.Get(CPU); has {
			peak, sum, n = max(peak, v), sum+v, n+1
		}
	}
	if n == 0 || c <= 0 {
		return tl
	}
	inForce := float64(c) * s.Base[CPU].Base(pCur)
	usage := max(peak+inForce, before) // before -1: none
	level, trigger := usage*(1+s.Tracking.Headroom), usage*(1+s.Tracking.Trigger)
	if target := s.HPATargets[CPU]; hpa && s.HPAUtilization && target > 0 {
		level = max(level, (sum/float64(n)+inForce)/(target*(1+HPATolerance/2)))
	}
	tl.level, tl.trigger, tl.mean = level-inForce, trigger-inForce, 0
	tl.settledLevel, tl.ahead, tl.whole = tl.level, false, true
	return tl
}

// jumpOfBurst reports whether a memory whose window's peak came at peakAt (trackedLoad) jumped with the
// recurring burst of rec: from the first minute it was ahead to its end (while it is under way, any time
// since), RecurReturnSlack either side. A young memory's jump is then the burst's, whose peak the long history
// holds and which comes back at its time (section 2a, Confidence); a jump at another time (a memory spike of a
// load that also has a recurring CPU burst) is not.
func jumpOfBurst(peakAt time.Time, rec *Recommendation) bool {
	if rec.RecurringFrom.IsZero() || peakAt.Before(rec.RecurringFrom.Add(-RecurReturnSlack)) {
		return false
	}
	return rec.RecurringEnded.IsZero() || peakAt.Before(rec.RecurringEnded.Add(RecurReturnSlack))
}

// band is how far below the total in force of resource r a following total's level must be to move it down:
// Band, SettledBand once the pods have not changed for SettledAfter, MemorySettledBand for memory then.
func (s *Spec) band(st State, r Resource) float64 {
	band := s.Tracking.Band
	if st.LastScaleTime != nil && s.Tracking.SettledAfter > 0 && st.Now.Sub(*st.LastScaleTime) >= s.Tracking.SettledAfter {
		band = min(band, s.Tracking.SettledBand)
		if r == Memory && s.Tracking.MemorySettledBand > 0 {
			band = min(band, s.Tracking.MemorySettledBand)
		}
	}
	return band
}

// vpaTotal is the recommendation's total for resource r of container k at c replicas: from the workload's
// load (an Hvpa's embedded recommender; following the recent load when there is enough of it; at least c x
// the recommender's pod minimum share), else actual (the pods running) x the per-pod uncapped target (or
// target, which the per-pod model floors itself); -1: none.
func vpaTotal(spec *Spec, st State, rec *Recommendation, k Container, r Resource, c, actual int32, iv []EffectiveInterval) (float64, Source, following) {
	if load, has := rec.Load.Get(r); has {
		pCur, _ := k.Requests.Get(r)
		if st.RecentUnknown && len(rec.Recent) == 0 && pCur > 0 {
			t := float64(c) * pCur // the recent load comes back with the recommender's next run
			return t, SourceLoad, following{target: t, cur: t, hold: true}
		}
		podMin, _ := rec.PodMin.Get(r)
		recent := rec.Recent
		var buf [recentBuf]LoadSample // an hour of samples, on the stack (a longer recent load grows it on the heap)
		if r == CPU && !rec.RecurringEnded.IsZero() {
			// a recurring burst that has ended is no part of the load now
			recent = withoutBurst(recent, rec.RecurringFrom, rec.RecurringEnded, buf[:0])
		}
		recurring := 0.0
		if r == CPU && rec.RecurringCPU > 0 && c > 0 { // a usage: its load above the base of pods of its size
			recurring = max(0, rec.RecurringCPU-float64(c)*spec.Base[CPU].Base(rec.RecurringCPU/float64(c)))
		}
		if tl, ok := trackedLoad(spec.Tracking, recent, r, rec.MemoryRise, load, recurring); ok {
			tl.recurs = r == Memory && jumpOfBurst(tl.peakAt, rec)
			if r == CPU && st.returning && returns(st, rec) {
				tl = spec.returnLoad(tl, after(rec.Recent, rec.RecurringEnded), rec.RecurringBefore, c, pCur, st.HPA != nil)
			}
			f := spec.follow(st, k, r, c, pCur, podMin, tl, iv)
			if f.ahead {
				f.every = rec.RecurringEvery
			}
			return float64(c) * pCur, SourceLoad, f
		}
		return max(spec.VPATotal(r, load, c, pCur), float64(c)*podMin), SourceVPA, following{}
	}
	u, has := rec.UncappedTarget.Get(r)
	if !has {
		u, has = rec.Target.Get(r)
	}
	if !has {
		return -1, "", following{}
	}
	return float64(actual) * u, SourceVPA, following{} // a per-pod target is the mean over the pods running
}

// desiredReplicas sets d.DesiredReplicas (section 3) and the parts blocked on the way (a saturated total,
// maxReplicas, a LowConfidence hold); it returns what limited the scaling, for ScalingLimited.
func desiredReplicas(spec *Spec, st State, d *Decision) []string {
	c := st.Replicas
	limited := []string{}
	switch {
	case c == 0:
		d.DesiredReplicas = 0
	case len(d.Totals) == 0 && d.HPAFloor == 0:
		d.DesiredReplicas = c
	default:
		hold, why, waitFor, held := st.vpaHold()
		want, free := d.HPAFloor, d.HPAFloor // free: without the hold
		for _, t := range d.Totals {
			free = max(free, t.Replicas)
			if held && (t.Source == SourceVPA || t.Source == SourceLoad) {
				want = max(want, t.Replicas, min(c, spec.MaxReplicas)) // a total from the embedded recommender (its long history or the recent load) may not ask for fewer than c replicas
			} else {
				want = max(want, t.Replicas)
			}
			if t.Saturated {
				limited = append(limited, fmt.Sprintf("%s/%s total %s is above the top interval's %s", t.Container, t.Resource,
					Format(t.Resource, max(t.Total, t.Beyond)), Format(t.Resource, d.Intervals[len(d.Intervals)-1].Up[t.Resource])))
				d.Blocked = append(d.Blocked, BlockedPart{Part: t.Container + "/" + t.Resource.String(), Direction: hvpav1alpha1.DirectionUp,
					Reason: hvpav1alpha1.BlockReasonSaturated, Message: limited[len(limited)-1]})
			}
		}
		d.DesiredReplicas = want
		if free = min(max(free, spec.MinReplicas), spec.MaxReplicas); free < min(max(want, spec.MinReplicas), spec.MaxReplicas) {
			d.Blocked = append(d.Blocked, BlockedPart{Part: "replicas", Direction: hvpav1alpha1.DirectionDown, Reason: hold,
				Message: fmt.Sprintf("replicas %d -> %d: %s; replica scale-downs from it wait for %s", c, free, why, waitFor)})
		}
	}
	if c > 0 {
		if d.DesiredReplicas > spec.MaxReplicas {
			limited = append(limited, fmt.Sprintf("%d replicas wanted, maxReplicas is %d", d.DesiredReplicas, spec.MaxReplicas))
			d.Blocked = append(d.Blocked, BlockedPart{Part: "replicas", Direction: hvpav1alpha1.DirectionUp, Reason: hvpav1alpha1.BlockReasonSaturated,
				Message: limited[len(limited)-1]})
			d.DesiredReplicas = spec.MaxReplicas
		}
		d.DesiredReplicas = max(d.DesiredReplicas, spec.MinReplicas)
	}
	return limited
}

// gateReplicas sets d.Replicas, the replicas to apply: the desired ones, or the current ones while a gate
// (section 5) blocks the change.
func gateReplicas(spec *Spec, st State, d *Decision) {
	c := st.Replicas
	d.Replicas = d.DesiredReplicas
	if d.Replicas == c {
		return
	}
	dir := direction(float64(d.Replicas), float64(c))
	if reason, msg, blocked := gate(spec, st, dir, nil, 0, 0); blocked {
		d.Blocked = append(d.Blocked, BlockedPart{Part: "replicas", Direction: dir, Reason: reason,
			Message: fmt.Sprintf("replicas %d -> %d: %s", c, d.DesiredReplicas, msg)})
		d.Replicas = c
	}
}

// decideContainers sets d.Containers: per container the values wanted at the desired replicas, and those to
// apply at d.Replicas (section 4), each change gated (section 5), limits following (section 6), and the
// pod's LimitRange bounds over them all (with its init containers and sidecars).
func decideContainers(spec *Spec, st State, d *Decision, sizeFor int32) {
	c := st.Replicas
	wanted := perPodValues(spec, d.Intervals, d.Totals, st.Containers, c, d.DesiredReplicas, st.OOMSinceLastScaling)
	applied := wanted
	if sizeFor != d.DesiredReplicas {
		applied = perPodValues(spec, d.Intervals, d.Totals, st.Containers, c, sizeFor, st.OOMSinceLastScaling)
	}
	for _, k := range st.Containers {
		pol := spec.PolicyFor(k.Name)
		w, ok := valuesOf(applied, k.Name)
		switch {
		case ok:
			want, _ := valuesOf(wanted, k.Name)
			d.Containers = append(d.Containers, decideContainer(spec, st, d, k, want.values, w))
		case !pol.Off && (pol.Controlled[CPU] || pol.Controlled[Memory]):
			// a controlled container without a total this time (no recommendation yet, or an HPA without a
			// reading at its bound) keeps the values in force: no information is no change
			d.Containers = append(d.Containers, ContainerDecision{Name: k.Name, Current: k, Wanted: k.Requests, Requests: k.Requests, Limits: k.Limits,
				RequestsOnly: pol.ControlledValues == RequestsOnly})
		}
	}
	if st.LimitRange != nil {
		var fixed []Container // the pod's containers the decision does not scale count as they are
		for _, k := range st.Containers {
			if !slices.ContainsFunc(d.Containers, func(cd ContainerDecision) bool { return cd.Name == k.Name }) {
				fixed = append(fixed, k)
			}
		}
		fixed = append(fixed, st.InitContainers...) // and so do its init containers and sidecars
		podNotes := ApplyPodLimitRange(d.Containers, fixed, *st.LimitRange)
		if len(podNotes) > 0 && len(d.Containers) > 0 {
			d.Containers[0].Notes = append(d.Containers[0].Notes, podNotes...)
		}
	}
}

// resizeFirst holds a replica scale-in from the actual replicas (section 4) until the pods that stay run the
// per-pod values it needs: while some pod still runs other values than those in force, or the scale-in's
// values are above them for some (container, resource), d.Replicas stays at the actual replicas and the pods
// are sized for the scale-in's replicas first (their per-pod changes are gated as usual; the next decision
// decides from those replicas, State.IntentReplicas). It returns the replicas the pods are sized for.
func resizeFirst(spec *Spec, st State, d *Decision, actual int32) int32 {
	c := st.Replicas
	if d.Replicas >= actual {
		return d.Replicas
	}
	grows := false
	for _, pv := range perPodValues(spec, d.Intervals, d.Totals, st.Containers, c, d.Replicas, st.OOMSinceLastScaling) {
		inForce := containerNamed(st.Containers, pv.name).Requests
		for _, r := range Resources {
			p, ok := pv.values.Get(r)
			cur, hasCur := inForce.Get(r)
			grows = grows || (ok && hasCur && p > cur)
		}
	}
	if !grows && !st.PodsResizing {
		return d.Replicas
	}
	msg := "the pods that stay are resized to the per-pod values the scale-in needs first"
	if !grows {
		msg = "pods of the target are still being resized to the values in force"
	}
	d.Blocked = append(d.Blocked, BlockedPart{Part: "replicas", Direction: hvpav1alpha1.DirectionDown, Reason: hvpav1alpha1.BlockReasonResizeFirst,
		Message: fmt.Sprintf("replicas %d -> %d: %s", actual, d.Replicas, msg)})
	sizeFor := d.Replicas
	d.Replicas = actual
	return sizeFor
}

// decideContainer gates each per-pod change of container k to the values w (section 5; a blocked one is
// recorded in d.Blocked and keeps the value in force) and sizes the limits of the changes applied.
func decideContainer(spec *Spec, st State, d *Decision, k Container, wanted Values, w podValues) ContainerDecision {
	c := st.Replicas
	pol := spec.PolicyFor(k.Name)
	cd := ContainerDecision{Name: k.Name, Current: k, Wanted: wanted, Requests: k.Requests, Notes: w.notes,
		RequestsOnly: pol.ControlledValues == RequestsOnly}
	var changed [NumResources]bool
	for _, r := range Resources {
		pNew, ok := w.values.Get(r)
		if !ok {
			continue
		}
		pCur, hasCur := k.Requests.Get(r)
		if hasCur && pNew == pCur {
			continue
		}
		tNew, tCur := float64(d.Replicas)*pNew, float64(c)*pCur
		dir := direction(tNew, tCur)
		if tNew == tCur {
			dir = direction(pNew, pCur)
		}
		reason, msg, blocked := gate(spec, st, dir, &r, tNew, tCur)
		if hold, why, waitFor, held := st.vpaHold(); !blocked && dir == hvpav1alpha1.DirectionDown && held && d.sourceOf(k.Name, r) == SourceVPA {
			reason, msg, blocked = hold, why+"; scale-downs from it wait for "+waitFor, true
		}
		if blocked {
			d.Blocked = append(d.Blocked, BlockedPart{Part: k.Name + "/" + r.String(), Direction: dir, Reason: reason,
				Message: fmt.Sprintf("%s %s per pod %s -> %s (total %s -> %s): %s", k.Name, r, Format(r, pCur), Format(r, pNew),
					Format(r, tCur), Format(r, tNew), msg)})
			continue
		}
		cd.Requests.Set(r, pNew)
		changed[r] = true
	}
	// Section 6: limits follow the applied request changes (and only those).
	var notes []Note
	cd.Requests, cd.Limits, notes = Limits(pol, spec.LimitsGap, k, cd.Requests, changed, st.LimitRange)
	cd.Notes = append(cd.Notes, notes...)
	return cd
}

// sourceOf is the source of the total of container k's resource r ("" when none).
func (d *Decision) sourceOf(k string, r Resource) Source {
	for _, t := range d.Totals {
		if t.Container == k && t.Resource == r {
			return t.Source
		}
	}
	return ""
}

// selectReplicas implements section 3 for one total: the replicas it asks for, the chosen interval, and
// whether it is saturated (above the top interval). The down boundaries hold the container policy's
// minAllowed per pod lo (downWith, section 1) under the resource's overlap.
func selectReplicas(iv []EffectiveInterval, c int32, t float64, r Resource, lo float64, overlap *ChangeParams) (int32, int, bool) {
	down := func(j int) float64 { return downWith(iv, j, r, lo, overlap) }
	jc := -1
	for j := range iv {
		if iv[j].Replicas == c {
			jc = j
			break
		}
	}
	firstFit := func() (int32, int, bool) {
		for j := range iv {
			if t <= iv[j].Up[r] {
				return iv[j].Replicas, j, false
			}
		}
		last := len(iv) - 1
		return iv[last].Replicas, last, true
	}
	if jc < 0 {
		return firstFit() // c is not an effective interval's replica count: scale up from 0
	}
	switch {
	case t > iv[jc].Up[r]:
		return firstFit()
	case t < down(jc):
		for j := jc - 1; j >= 0; j-- {
			if t >= down(j) {
				return iv[j].Replicas, j, false
			}
		}
		return iv[0].Replicas, 0, false
	}
	return c, jc, false
}

// downWith is interval j's down boundary for resource r under a container policy's minAllowed per pod lo (0:
// none; section 1 amendment): j's pods hold at least replicas x lo, so below that total less the overlap the
// workload is better served by fewer pods at minAllowed. The boundary never rises above the previous
// interval's up boundary, so down(j) <= up(j-1) still holds and a slow descent lands like one jump.
func downWith(iv []EffectiveInterval, j int, r Resource, lo float64, overlap *ChangeParams) float64 {
	d := iv[j].Down[r]
	if lo <= 0 || j == 0 {
		return d
	}
	m := float64(iv[j].Replicas) * lo
	if overlap != nil {
		m -= overlap.Base(m)
	}
	return max(d, min(m, iv[j-1].Up[r]))
}

// podValues are the per-pod values of a container's scaled resources and the notes on what shaped them.
type podValues struct {
	name   string
	values Values
	notes  []Note
}

// valuesOf is the per-pod values of the container with that name in pvs.
func valuesOf(pvs []podValues, name string) (podValues, bool) {
	for _, pv := range pvs {
		if pv.name == name {
			return pv, true
		}
	}
	return podValues{}, false
}

// intervalFor is the effective interval that holds replica count n: the one with n replicas, else the first
// with more, else the last.
func intervalFor(iv []EffectiveInterval, n int32) EffectiveInterval {
	for _, e := range iv {
		if e.Replicas >= n {
			return e
		}
	}
	return iv[len(iv)-1]
}

// perPodValues implements section 4: the per-pod values of each scaled (container, resource) for n replicas.
// After an OOM kill since the last scaling (oom), a scale-out does not spread the embedded recommender's
// bumped memory total over the new pods: the kill says what one pod needed, so each pod gets at least T / c.
func perPodValues(spec *Spec, iv []EffectiveInterval, totals []Total, current []Container, c, n int32, oom bool) []podValues {
	if n == 0 {
		return nil
	}
	var out []podValues // one per container with a total, in the order of its first total
	in := intervalFor(iv, n)
	for _, t := range totals {
		pol := spec.PolicyFor(t.Container)
		r := t.Resource
		pCur, _ := containerNamed(current, t.Container).Requests.Get(r)
		var p float64
		switch n {
		case c:
			p = t.Total / float64(c)
		default:
			base := spec.Base[r]
			baseCur := base.Base(pCur) * float64(c)
			naive := t.Total / float64(n)
			adj := naive
			if pCur*float64(c) > baseCur && !t.Whole {
				adj = (t.Total - baseCur + base.Base(naive)*float64(n)) / float64(n)
			}
			if n > c {
				p = max(pCur, adj)
				if oom && r == Memory && t.Source == SourceVPA {
					p = max(p, t.Total/float64(c))
				}
			} else {
				p = adj
			}
		}
		i := slices.IndexFunc(out, func(pv podValues) bool { return pv.name == t.Container })
		if i < 0 {
			i, out = len(out), append(out, podValues{name: t.Container})
		}
		pv := &out[i]
		if pinned, ok := in.Pinned.Get(r); ok {
			p = pinned
		}
		if lo, ok := pol.MinAllowed.Get(r); ok && p < lo {
			p = lo
			pv.notes = append(pv.notes, shaped(r, "%s raised to minAllowed %s", r, Format(r, lo)))
		}
		capped := false
		if hi, ok := pol.MaxAllowed.Get(r); ok && p > hi {
			p, capped = hi, true
			pv.notes = append(pv.notes, cappedNote(r, "%s capped to maxAllowed %s", r, Format(r, hi)))
		}
		if hi := in.PerPodMax(r); p > hi {
			p, capped = hi, true
			pv.notes = append(pv.notes, cappedNote(r, "%s capped to the per-pod maximum %s of the %d-replica interval", r, Format(r, hi), in.Replicas))
		}
		if capped {
			p = RoundDown(p) // a capped value stays within its cap
		} else {
			p = RoundUp(p)
		}
		pv.values.Set(r, p)
	}
	return out
}

// gate implements section 5 for one part: whether the policy of its direction blocks it now, and why.
// r and the totals are given for (container, resource) parts (minChange is on totals); nil for replicas.
func gate(spec *Spec, st State, dir hvpav1alpha1.Direction, r *Resource, tNew, tCur float64) (hvpav1alpha1.BlockReason, string, bool) {
	pol := spec.ScaleUp
	if dir == hvpav1alpha1.DirectionDown {
		pol = spec.ScaleDown
	}
	switch pol.Mode {
	case UpdateModeOff:
		return hvpav1alpha1.BlockReasonUpdatePolicy, fmt.Sprintf("scale%s updateMode is Off", dir), true
	case UpdateModeMaintenanceWindow:
		if spec.Window == nil || !spec.Window.Contains(st.Now) {
			return hvpav1alpha1.BlockReasonMaintenanceWindow, fmt.Sprintf("scale%s waits for the maintenance window", dir), true
		}
	}
	urgent := st.OOMSinceLastScaling && dir == hvpav1alpha1.DirectionUp
	if msg, held := burstHold(st, dir); held {
		return hvpav1alpha1.BlockReasonStabilizationWindow, msg, true
	}
	// the fall back from a recurring burst that has ended ends the scaling that rose for it (section 5)
	back := st.returning && dir == hvpav1alpha1.DirectionDown
	if !urgent && !back && pol.Stabilization > 0 && st.LastScaleTime != nil {
		if since := st.Now.Sub(*st.LastScaleTime); since < pol.Stabilization {
			return hvpav1alpha1.BlockReasonStabilizationWindow,
				fmt.Sprintf("last scaling was %s ago, scale%s stabilization is %s", since.Round(1e9), dir, pol.Stabilization), true
		}
	}
	if !urgent && r != nil && pol.MinChange[*r] != nil {
		th := pol.MinChange[*r].Threshold(tCur)
		if math.Abs(tNew-tCur) < th {
			return hvpav1alpha1.BlockReasonMinChange, fmt.Sprintf("change %s is below scale%s minChange %s",
				Format(*r, math.Abs(tNew-tCur)), dir, Format(*r, th)), true
		}
	}
	return "", "", false
}

func direction(after, before float64) hvpav1alpha1.Direction {
	if after < before {
		return hvpav1alpha1.DirectionDown
	}
	return hvpav1alpha1.DirectionUp
}

func conditions(d Decision, c int32, limited []string) []Condition {
	var out []Condition
	switch {
	case c == 0:
		out = append(out, Condition{hvpav1alpha1.ConditionScalingActive, metav1.ConditionFalse, hvpav1alpha1.ReasonScalingDisabled, "the target has 0 replicas; hvpa does not scale up from zero"})
	case len(d.Totals) == 0 && d.HPAFloor == 0:
		out = append(out, Condition{hvpav1alpha1.ConditionScalingActive, metav1.ConditionFalse, hvpav1alpha1.ReasonNoRecommendation, "no recommendation and no HPA input for any scaled container"})
	default:
		out = append(out, Condition{hvpav1alpha1.ConditionScalingActive, metav1.ConditionTrue, hvpav1alpha1.ReasonValidRecommendation, fmt.Sprintf("%d totals considered", len(d.Totals))})
	}
	for _, cd := range d.Containers {
		for _, n := range cd.Notes {
			if n.Kind == Capped {
				limited = append(limited, cd.Name+": "+n.Text)
			}
		}
	}
	if len(d.NodeCaps) > 0 {
		out = append(out, Condition{hvpav1alpha1.ConditionCappedToNode, metav1.ConditionTrue, hvpav1alpha1.ReasonNodeAllocatable,
			"pods are sized to fit the largest schedulable node, more replicas carry the rest: " + strings.Join(d.NodeCaps, "; ")})
	} else if d.NodeKnown {
		out = append(out, Condition{hvpav1alpha1.ConditionCappedToNode, metav1.ConditionFalse, hvpav1alpha1.ReasonFitsLargestNode, "the intervals' per-pod maxima fit the largest schedulable node"})
	}
	if len(limited) > 0 {
		sort.Strings(limited[1:])
		out = append(out, Condition{hvpav1alpha1.ConditionScalingLimited, metav1.ConditionTrue, hvpav1alpha1.ReasonLimited, strings.Join(limited, "; ")})
	} else {
		out = append(out, Condition{hvpav1alpha1.ConditionScalingLimited, metav1.ConditionFalse, hvpav1alpha1.ReasonWithinBounds, "the desired scaling is within every bound"})
	}
	return out
}

// RoundDown rounds an amount down to a whole base unit, forgiving float noise.
func RoundDown(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.Floor(x + math.Max(1e-9, math.Abs(x)*1e-14))
}

// RoundUp rounds an amount up to a whole base unit (millicore or byte), forgiving float noise.
func RoundUp(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	if r := math.Ceil(x - math.Max(1e-9, math.Abs(x)*1e-14)); r != 0 {
		return r
	}
	return 0 // never -0
}

// Format renders an amount of r the way Kubernetes quantities read (millicores as "825m", bytes with binary
// suffixes when exact).
func Format(r Resource, x float64) string {
	if math.IsInf(x, 1) {
		return "unbounded"
	}
	if r == CPU {
		m := RoundUp(x)
		if math.Mod(m, 1000) == 0 {
			return fmt.Sprintf("%.0f", m/1000)
		}
		return fmt.Sprintf("%.0fm", m)
	}
	b := RoundUp(x)
	for _, u := range []struct {
		s string
		f float64
	}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
		if b >= u.f && math.Mod(b, u.f) == 0 {
			return fmt.Sprintf("%.0f%s", b/u.f, u.s)
		}
	}
	if b >= 1<<30 {
		return fmt.Sprintf("%.2fGi", b/(1<<30))
	}
	if b >= 1<<20 {
		return fmt.Sprintf("%.2fMi", b/(1<<20))
	}
	return fmt.Sprintf("%.0f", b)
}
