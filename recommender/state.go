package recommender

import (
	"sort"
	"time"
)

// AggregateKey names one aggregate of the per-pod model: the history of one container name across the pods
// of one group of a namespace. In the cluster the group is the pods' labels (LabelKey); in a trace it is the
// workload.
type AggregateKey struct{ Namespace, Container, Group string }

// ContainerKey names one container of one pod.
type ContainerKey struct{ Namespace, Pod, Container string }

// OwnerKey names one container of one object (a VerticalPodAutoscaler or an Hvpa): its checkpoint, the
// history it starts from, and, for an Hvpa, its workload total.
type OwnerKey struct{ Namespace, Owner, Container string }

// PodContainer is the state of one pod container: it feeds the aggregate named Aggregate.
type PodContainer struct {
	State     *Container
	Aggregate AggregateKey
	LastSeen  time.Time
	// Labels are the pod labels whose group Aggregate is (Relabel compares the pod's labels with them).
	Labels map[string]string
}

// AggregateEntry is one aggregate of the per-pod model and the labels of the pods that feed it.
type AggregateEntry struct {
	Aggregate *Aggregate
	Labels    map[string]string
}

// WorkloadTotal is the replica-aware history of one container of one workload (docs/design/scaling.md section 2): at
// every sample the LOAD of the whole workload, sum over its live pods of max(0, usage - base), goes through
// the same machinery as a pod container (decaying CPU histogram, memory peaks per window, OOM bump), kept
// in one aggregate fed by one virtual container. A horizontal change does not move the load, so the total
// it recommends never feeds back into itself.
type WorkloadTotal struct {
	Aggregate *Aggregate
	feed      *Container
	model     *Model
	// recent is the load of the last RecentWindow, and byMinute the CPU load of the last minutes and the times
	// of the bursts of the last days, where recurring bursts show (checkpointed with the history: Minutes)
	recent   recentLoad
	byMinute *minuteLoad
}

// State is the recommender's whole memory, as pure data: pod containers and the aggregates they feed,
// the initial history of objects (checkpoints or Prometheus), the workload totals of Hvpas, the OOM kills
// already recorded, and expiry. The cluster loop (controllers/recommender) and `hvpa simulate` both drive it, so
// the simulator runs the cluster's bookkeeping.
type State struct {
	aggs       map[AggregateKey]*AggregateEntry
	containers map[ContainerKey]*PodContainer
	// byName indexes containers by namespace and container name (Feeding): a checkpoint's lookup reads the
	// few containers of its name, not every container of the cluster
	byName  map[nameKey]map[ContainerKey]*PodContainer
	initial map[OwnerKey]*Aggregate
	totals  map[owner]map[string]*WorkloadTotal // by owner, then container name
	oomSeen map[string]time.Time
	byNS    map[string][]AggregateKey // index of aggs, rebuilt when aggregates come or go
	byGroup map[group][]AggregateKey  // the same, by namespace and group
}

type owner struct{ ns, name string }

type nameKey struct{ ns, container string }

type group struct{ ns, name string }

// NewState returns an empty state.
func NewState() *State {
	return &State{aggs: map[AggregateKey]*AggregateEntry{}, containers: map[ContainerKey]*PodContainer{},
		byName: map[nameKey]map[ContainerKey]*PodContainer{}, initial: map[OwnerKey]*Aggregate{}, totals: map[owner]map[string]*WorkloadTotal{}, oomSeen: map[string]time.Time{}}
}

// Seen returns the state of a pod container the state holds, marking it as seen at now; ok is false for one it
// does not hold (Container creates it). A run's hot path asks this first: a new container's group (its pod
// labels' key) is built only when it is created.
func (s *State) Seen(key ContainerKey, now time.Time) (*PodContainer, bool) {
	pc, ok := s.containers[key]
	if ok {
		pc.LastSeen = now
	}
	return pc, ok
}

// Container returns the state of a pod container, creating it (and the aggregate of its group) as needed;
// now marks it as seen. labels are kept with a new aggregate for selectors.
func (s *State) Container(m *Model, key ContainerKey, group string, labels map[string]string, now time.Time) *PodContainer {
	if pc, ok := s.containers[key]; ok {
		pc.LastSeen = now
		return pc
	}
	ak := AggregateKey{key.Namespace, key.Container, group}
	a := s.aggregate(m, ak, labels, now)
	pc := &PodContainer{State: m.NewContainer(a.Aggregate), Aggregate: ak, LastSeen: now, Labels: labels}
	s.containers[key] = pc
	nk := nameKey{key.Namespace, key.Container}
	if s.byName[nk] == nil {
		s.byName[nk] = map[ContainerKey]*PodContainer{}
	}
	s.byName[nk][key] = pc
	return pc
}

// aggregate returns the aggregate of key, creating it (with the labels of its group) as needed; a new one's
// LastUpdate is now until a sample comes (an aggregate that never gets a sample expires too; zero: at once).
func (s *State) aggregate(m *Model, key AggregateKey, labels map[string]string, now time.Time) *AggregateEntry {
	a, ok := s.aggs[key]
	if !ok {
		a = &AggregateEntry{Aggregate: m.NewAggregate(), Labels: labels}
		a.Aggregate.LastUpdate = now
		s.aggs[key] = a
		s.byNS, s.byGroup = nil, nil
	}
	return a
}

// Relabel moves a pod container whose pod now has other labels (group, labels) to the aggregate of its new
// group, as upstream relinks the containers of a relabelled pod: its later samples feed that aggregate (a pod
// that left a VPA's selector no longer counts for it), what it fed stays where it went, and its memory
// window's peak starts over in the new aggregate (the old one keeps the peak it had). A container of the same
// group only takes the labels.
func (s *State) Relabel(m *Model, pc *PodContainer, group string, labels map[string]string, now time.Time) {
	pc.Labels = labels
	if pc.Aggregate.Group == group {
		return
	}
	pc.Aggregate.Group = group
	pc.State.moveTo(s.aggregate(m, pc.Aggregate, labels, now).Aggregate)
}

// forget drops one pod container and its index entry.
func (s *State) forget(key ContainerKey) {
	delete(s.containers, key)
	nk := nameKey{key.Namespace, key.Container}
	if byKey := s.byName[nk]; byKey != nil {
		delete(byKey, key)
		if len(byKey) == 0 {
			delete(s.byName, nk)
		}
	}
}

// Aggregate returns one aggregate of the per-pod model.
func (s *State) Aggregate(key AggregateKey) (*AggregateEntry, bool) {
	a, ok := s.aggs[key]
	return a, ok
}

// NumAggregates is the number of aggregates of the per-pod model.
func (s *State) NumAggregates() int { return len(s.aggs) }

// Aggregates calls fn for every aggregate of namespace ns.
func (s *State) Aggregates(ns string, fn func(AggregateKey, *AggregateEntry)) {
	s.index()
	for _, k := range s.byNS[ns] {
		if a := s.aggs[k]; a != nil {
			fn(k, a)
		}
	}
}

// index rebuilds the indexes of the aggregates by namespace and by group when aggregates came or went.
func (s *State) index() {
	if s.byNS != nil {
		return
	}
	s.byNS, s.byGroup = map[string][]AggregateKey{}, map[group][]AggregateKey{}
	for k := range s.aggs {
		s.byNS[k.Namespace] = append(s.byNS[k.Namespace], k)
		g := group{k.Namespace, k.Group}
		s.byGroup[g] = append(s.byGroup[g], k)
	}
	order := func(keys []AggregateKey) { // a stable order: merging is floating-point addition
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].Container != keys[j].Container {
				return keys[i].Container < keys[j].Container
			}
			return keys[i].Group < keys[j].Group
		})
	}
	for _, keys := range s.byNS {
		order(keys)
	}
	for _, keys := range s.byGroup {
		order(keys)
	}
}

// MergedGroup is Merged for the aggregates of one group (a workload of a trace), without a look at the rest
// of the namespace.
func (s *State) MergedGroup(m *Model, ns, groupName, owner string) map[string]*Aggregate {
	s.index()
	return s.merge(m, ns, owner, s.byGroup[group{ns, groupName}], nil)
}

// SetInitial sets the history an object starts from (a checkpoint).
func (s *State) SetInitial(key OwnerKey, a *Aggregate) { s.initial[key] = a }

// DropInitial forgets an object's initial history (its checkpoint was deleted).
func (s *State) DropInitial(key OwnerKey) { delete(s.initial, key) }

// Merged merges, per container name, the aggregates of namespace ns whose group match accepts, plus the
// initial history of owner.
func (s *State) Merged(m *Model, ns, owner string, match func(group string, labels map[string]string) bool) map[string]*Aggregate {
	s.index()
	return s.merge(m, ns, owner, s.byNS[ns], match)
}

// merge merges, per container name, the aggregates of keys that match accepts (nil: all) and the initial
// history of owner.
func (s *State) merge(m *Model, ns, owner string, keys []AggregateKey, match func(string, map[string]string) bool) map[string]*Aggregate {
	out := map[string]*Aggregate{}
	get := func(name string) *Aggregate {
		a, ok := out[name]
		if !ok {
			a = m.NewAggregate()
			out[name] = a
		}
		return a
	}
	for _, k := range keys {
		if a := s.aggs[k]; a != nil && (match == nil || match(k.Group, a.Labels)) {
			get(k.Container).Merge(a.Aggregate)
		}
	}
	for k, a := range s.initial {
		if k.Namespace == ns && k.Owner == owner {
			get(k.Container).Merge(a)
		}
	}
	return out
}

// Feeding returns the pod containers of namespace ns and container name whose aggregates match accepts and
// whose pods run (running; nil: any): the containers whose samples a merged aggregate holds and will hold
// again after a restart (a checkpoint leaves their open windows out). A pod that is gone sends no sample
// after a restart: its last window's peak stays in the checkpoint, as upstream's writer keeps it (it leaves
// out the open windows of the pods in its cluster state only).
func (s *State) Feeding(ns, container string, match func(group string, labels map[string]string) bool, running func(pod string) bool) []*Container {
	var out []*Container
	for k, pc := range s.byName[nameKey{ns, container}] {
		if a := s.aggs[pc.Aggregate]; a != nil && match(pc.Aggregate.Group, a.Labels) && (running == nil || running(k.Pod)) {
			out = append(out, pc.State)
		}
	}
	return out
}

// FirstOOM reports whether the OOM kill named key is new, and remembers it (at now) if so.
func (s *State) FirstOOM(key string, now time.Time) bool {
	if _, seen := s.oomSeen[key]; seen {
		return false
	}
	s.oomSeen[key] = now
	return true
}

// Total returns the workload total of one container of an Hvpa, creating it as needed.
func (s *State) Total(m *Model, key OwnerKey, now time.Time) *WorkloadTotal {
	o := owner{key.Namespace, key.Owner}
	if t, ok := s.totals[o][key.Container]; ok {
		return t
	}
	a := m.NewAggregate()
	a.LastUpdate = now
	t := &WorkloadTotal{Aggregate: a, feed: m.NewContainer(a), model: m}
	s.setTotal(key, t)
	return t
}

func (s *State) setTotal(key OwnerKey, t *WorkloadTotal) {
	o := owner{key.Namespace, key.Owner}
	if s.totals[o] == nil {
		s.totals[o] = map[string]*WorkloadTotal{}
	}
	s.totals[o][key.Container] = t
}

// LoadTotal replaces a workload total's history by restored history (a checkpoint); the samples of this
// process stay: its recent load, which no checkpoint holds, and its minutes and bursts, which LoadMinutes
// merges with a checkpoint's.
func (s *State) LoadTotal(m *Model, key OwnerKey, a *Aggregate) {
	t := &WorkloadTotal{Aggregate: a, feed: m.NewContainer(a), model: m}
	if old, ok := s.totals[owner{key.Namespace, key.Owner}][key.Container]; ok {
		t.recent, t.byMinute = old.recent, old.byMinute
	}
	s.setTotal(key, t)
}

// Totals calls fn for every workload total of an owner, by container name.
func (s *State) Totals(ns, name string, fn func(container string, t *WorkloadTotal)) {
	totals := s.totals[owner{ns, name}]
	if len(totals) == 1 { // the common case: no sorting, no allocation
		for n, t := range totals {
			fn(n, t)
		}
		return
	}
	names := make([]string, 0, len(totals))
	for n := range totals {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fn(n, totals[n])
	}
}

// DropTotals forgets the workload totals of an owner (it is gone).
func (s *State) DropTotals(ns, name string) { delete(s.totals, owner{ns, name}) }

// AddLoad records one sample of the workload's load at t: CPU cores and memory bytes summed over its live
// pods, each above its pod's base (a negative value: none). It reports whether the CPU sample was taken (a
// sample not newer than the last one is rejected, as for a pod container). The minutes the recurring bursts
// are read from take the load too: AddLoadUsage for a load with a base.
func (t *WorkloadTotal) AddLoad(at time.Time, cpuCores, memoryBytes float64) bool {
	return t.AddLoadUsage(at, cpuCores, memoryBytes, cpuCores)
}

// AddLoadUsage is AddLoad with the pods' whole CPU usage (cores, summed; the base included), which the minutes
// the recurring bursts are read from take instead of the load: the load above a base that is a share of the
// requests moves when the pods are resized (a fall from a burst's large pods to small ones reads as a rise of
// the load, and was taken for a burst of its own).
func (t *WorkloadTotal) AddLoadUsage(at time.Time, cpuCores, memoryBytes, cpuUsageCores float64) bool {
	sample := LoadSample{At: at, CPUMilli: -1, MemoryBytes: memoryBytes}
	if cpuCores >= 0 {
		sample.CPUMilli = cpuCores * 1000
	}
	newer := t.recent.add(sample)
	ok := false
	if cpuCores >= 0 {
		if newer { // a late sample is none of the minutes' either
			if t.byMinute == nil {
				t.byMinute = &minuteLoad{}
			}
			t.byMinute.add(at, cpuUsageCores*1000)
		}
		ok = t.model.AddCPU(t.feed, at, cpuCores)
	}
	if memoryBytes >= 0 {
		t.model.AddMemory(t.feed, at, memoryBytes)
	}
	return ok
}

// recurring is the CPU load of a recurring burst ahead and its period, as of the last recent sample (0: none).
func (t *WorkloadTotal) recurring() (float64, time.Duration) {
	if t.byMinute == nil || len(t.recent.samples) == 0 {
		return 0, 0
	}
	return t.byMinute.recurring(t.recent.last())
}

// recurringEnded is the recurring burst ahead last as of the last recent sample: the first minute it was
// ahead (zero: none), the first of the minutes since it ended (zero: not ended) and the peak usage before it
// (-1: none).
func (t *WorkloadTotal) recurringEnded() (from, end time.Time, before float64) {
	if t.byMinute == nil || len(t.recent.samples) == 0 {
		return time.Time{}, time.Time{}, -1
	}
	return t.byMinute.ended(t.recent.last())
}

// RecordPodOOM records an OOM kill of one of the workload's pods at at: the pod used used bytes (max(its
// request, its window peak), as upstream makes it), its base is base bytes (the per-pod part that is not
// load), the workload runs pods replicas and serving of them were serving when it was killed. The
// recent load (the next decisions) rises to at least pods x need, need = Config.OOMBump(used) - base, as if
// every pod needed the killed pod's bump: a pod may again carry alone what it carried, while its siblings
// start or wait in back-off. The memory history (its peaks, for days) records serving x need: what the
// workload's load was, spread over the pods that served it (min(serving, pods), at least 1), and so does the
// memory rise (how fast the load grew: the kill of a pod serving alone is no growth of the others' share). A
// later smaller peak lowers neither. A kill from before the recent load's last run (one a new process reads
// from its pods, however old) goes to the history only.
func (t *WorkloadTotal) RecordPodOOM(at time.Time, pods, serving int, used, base float64) {
	pods = max(pods, 1)
	serving = min(max(serving, 1), pods)
	need := max(0, t.model.Config.OOMBump(used)-base)
	t.recent.oom(at, float64(pods)*need, float64(serving)*need)
	t.model.addPeak(t.feed, at, float64(serving)*need, true)
}

// OpenWindowPeak is the memory load of the total's open window (usage or OOM), in bytes.
func (t *WorkloadTotal) OpenWindowPeak() float64 {
	peak, _ := t.feed.OpenWindowPeak()
	return peak
}

// Checkpoint encodes the total at now (its open memory window left out, as for pod containers).
func (t *WorkloadTotal) Checkpoint(now time.Time) AggregateCheckpoint {
	return t.model.SaveAggregate(t.Aggregate, []*Container{t.feed}, now)
}

// Minutes is the CPU load of the total's last minutes and the times of its bursts, which a checkpoint keeps
// with its history; false when it holds none.
func (t *WorkloadTotal) Minutes() (MinutesCheckpoint, bool) {
	if t.byMinute == nil {
		return MinutesCheckpoint{}, false
	}
	return t.byMinute.save()
}

// LoadMinutes adds a checkpoint's minutes and bursts (up to now) to the workload total of key, creating it as
// needed: after a restart a recurring burst is anticipated at once, not RecurTimes periods later. A minute
// this process has sampled too keeps the larger load; bursts join this process'.
func (s *State) LoadMinutes(m *Model, key OwnerKey, c MinutesCheckpoint, now time.Time) {
	t := s.Total(m, key, now)
	if t.byMinute == nil {
		t.byMinute = &minuteLoad{}
	}
	t.byMinute.load(c, now)
}

// Estimate is the load estimate of the total (target, bounds), with no pod minimum: the minimum applies to
// the per-pod values made from it.
func (t *WorkloadTotal) Estimate() (Estimates, bool) {
	if t.Aggregate.IsEmpty() {
		return Estimates{}, false
	}
	return t.model.estimate(t.Aggregate, 0, 0), true
}

// Collect forgets pod containers not seen for one memory aggregation interval, aggregates and totals
// without a sample for the memory history, and remembered OOM kills older than that (m: the base model).
func (s *State) Collect(m *Model, now time.Time) {
	for k, pc := range s.containers {
		if now.Sub(pc.LastSeen) > m.Config.MemoryAggregationInterval {
			s.forget(k)
		}
	}
	for k, a := range s.aggs {
		if m.Expired(a.Aggregate, now) {
			delete(s.aggs, k)
			s.byNS, s.byGroup = nil, nil
		}
	}
	for o, totals := range s.totals {
		for n, t := range totals {
			if t.model.Expired(t.Aggregate, now) {
				delete(totals, n)
			}
		}
		if len(totals) == 0 {
			delete(s.totals, o)
		}
	}
	for k, seen := range s.oomSeen {
		if now.Sub(seen) > m.Config.MemoryHistory() {
			delete(s.oomSeen, k)
		}
	}
}

// ForgetContainer drops one pod container (e.g. a simulator that knows the pod is gone).
func (s *State) ForgetContainer(key ContainerKey) { s.forget(key) }

// LabelKey is the canonical form of a pod's labels: the group of its aggregates in the cluster.
func LabelKey(l map[string]string) string {
	keys := make([]string, 0, len(l))
	n := 0
	for k, v := range l {
		keys = append(keys, k)
		n += len(k) + len(v) + 2
	}
	sort.Strings(keys)
	b := make([]byte, 0, n)
	for _, k := range keys {
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, l[k]...)
		b = append(b, ',')
	}
	return string(b)
}

// HistoryContainer returns a new pod container that feeds the aggregate of a group (created as needed) and
// is not kept: for history read once, such as a pod container's samples from Prometheus.
func (s *State) HistoryContainer(m *Model, key AggregateKey, labels map[string]string) *Container {
	return m.NewContainer(s.aggregate(m, key, labels, time.Time{}).Aggregate) // its samples date it
}

// ContainerLoad is what the workload total of one container recommends: the load of the whole workload
// (usage above the per-pod base, summed over its pods), uncapped, in whole millicores and bytes (-1: the
// resource is not controlled). The Hvpa's total for c replicas is Target + c x base (package scaling).
type ContainerLoad struct {
	Container                      string
	Target, LowerBound, UpperBound Amounts
	// Recent is the load of the last RecentWindow, oldest first (the current load the Hvpa's total follows).
	Recent []LoadSample
	// MemoryRise is the largest factor (a fraction) by which the memory load rose within RiseWindow, decaying
	// with RiseHalfLife, as of the last recent sample.
	MemoryRise float64
	// RecurringCPU is the CPU usage (millicores, the pods' whole usage summed: AddLoadUsage) of a burst that
	// came at this time of each of the last RecurTimes periods of RecurringEvery and starts within RecurLead, as of the last recent sample (0: none).
	RecurringCPU   float64
	RecurringEvery time.Duration
	// RecurringFrom and RecurringEnded: a recurring burst was ahead from RecurringFrom (the first minute it
	// was; zero: none) and has ended at RecurringEnded (zero: not yet), as of the last recent sample: the usage
	// of each sampled one of the RecurEnd minutes from then on (two at least) was at most halfway from the one before it to its level
	// (section 2a). RecurringBefore is
	// the peak CPU usage (millicores, as RecurringCPU) of the RecurBeforeWindow before RecurringFrom (-1:
	// none).
	RecurringFrom, RecurringEnded time.Time
	RecurringBefore               float64
	// RecurringEndedEarliest is the earliest minute the burst may have ended: RecurringEnded, or the first
	// minute after the last one sampled before it (a restart, a gap in the metrics); zero: not ended.
	RecurringEndedEarliest time.Time
	// RecurringNext is the first minute, within RecurNextWithin of the last recent sample, at which a
	// recurring burst is ahead (zero: none).
	RecurringNext time.Time
	// PodMin is the container's share of the pod minimum (Config.PodMinShare over the containers recommended,
	// as RecommendPod counts them): the least its total gives a pod's container, as upstream's recommender
	// floors a VPA's.
	PodMin Amounts
}

// WorkloadRecommendation is the load recommendation of every container of an owner with a workload total
// and samples, by container name, and the lowest confidence (days of history) among them (-1: none).
// Containers whose policy is Off are left out.
func (s *State) WorkloadRecommendation(ns, name string, policy func(container string) Policy) ([]ContainerLoad, float64) {
	var out []ContainerLoad
	confidence := -1.0
	s.Totals(ns, name, func(container string, t *WorkloadTotal) {
		p := policy(container)
		e, ok := t.Estimate()
		if p.Off || !ok {
			return
		}
		if c := t.Aggregate.Confidence(); confidence < 0 || c < confidence {
			confidence = c
		}
		amounts := func(x Estimate) Amounts {
			a := Amounts{CPUMilli: -1, MemoryBytes: -1}
			if p.ControlCPU && t.Aggregate.HasCPU() { // an OOM kill before the first CPU sample: memory only
				a.CPUMilli = roundUpTo(x.CPUMilli, t.model.Config.RoundCPUMillicores)
			}
			if p.ControlMem {
				a.MemoryBytes = roundUpTo(x.MemoryBytes, t.model.Config.RoundMemoryBytes)
			}
			return a
		}
		out = append(out, ContainerLoad{Container: container, Target: amounts(e.Target), LowerBound: amounts(e.LowerBound), UpperBound: amounts(e.UpperBound),
			Recent: t.recent.snapshot(), MemoryRise: t.recent.riseAsOf(t.recent.last())})
		out[len(out)-1].RecurringCPU, out[len(out)-1].RecurringEvery = t.recurring()
		out[len(out)-1].RecurringFrom, out[len(out)-1].RecurringEnded, out[len(out)-1].RecurringBefore = t.recurringEnded()
		if !out[len(out)-1].RecurringEnded.IsZero() {
			out[len(out)-1].RecurringEndedEarliest = t.byMinute.earliestEnd()
		}
		if t.byMinute != nil && len(t.recent.samples) > 0 {
			out[len(out)-1].RecurringNext = t.byMinute.next(t.recent.last())
		}
	})
	// the pod minimum is split over the containers recommended (scaled: not Off, with history), as
	// RecommendPod splits a VPA's
	totals := s.totals[owner{ns, name}]
	for i := range out {
		out[i].PodMin = totals[out[i].Container].model.Config.PodMinShare(len(out))
	}
	return out, confidence
}

// MustAggregate returns the aggregate of key, which the caller knows exists (it just made a container of it).
func (s *State) MustAggregate(key AggregateKey) *Aggregate { return s.aggs[key].Aggregate }

// HasContainer reports whether the state still holds a pod container.
func (s *State) HasContainer(key ContainerKey) bool {
	_, ok := s.containers[key]
	return ok
}
