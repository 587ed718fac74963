package closedloop

import (
	"slices"
	"strconv"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

// The actuation model, the same for every policy (Options.Actuation): a workload is a set of pods. A new pod
// costs its requests at once and serves after the start-up delay; the demand of a step is split evenly over
// the serving pods; a container whose share of memory reaches its memory limit is OOM-killed and serves
// again after the restart delay (doubled per kill, the kubelet's back-off); an in-place resize applies one
// updater period after it was decided, and a resized container waiting in back-off restarts then; an
// evicted pod is replaced by a new one (sized at admission). The autoscalers read the usage of the last
// metrics window (Actuation.MetricResolution long): per pod, its CPU averaged over the window and its peak
// working set; the recommenders sample the usage of each trace row the same way.

// maxRestartDelay and backoffReset are the kubelet's CrashLoopBackOff bounds: the delay doubles up to five
// minutes and starts again after ten minutes of running.
const (
	maxRestartDelay = 300
	backoffReset    = 600
)

// pod is one pod of a simulated workload.
type pod struct {
	name    string
	seq     int   // creation order in its workload
	created int64 // unix seconds
	readyAt int64 // serving from (created + start-up delay)
	spec    []scaling.Container
	// resizeAt > 0: an in-place resize to resizeTo applies then
	resizeAt int64
	resizeTo []scaling.Container
	ctr      []podContainer
	keys     []recommender.ContainerKey // the recommender's pod containers (per-pod models), by container
	// what the HPA reads, kept as the pod changes: its requests and last window's usage summed over its
	// containers, and whether it has a metric
	requests, usage scaling.Values
	hasMetric       bool
}

// podContainer is the state of one container of a pod.
type podContainer struct {
	restartAt int64 // > now: killed, serving again then
	startedAt int64 // the container's last start
	crashes   int   // kills in a row (the back-off doubles per kill)
	// its last termination, as the kubelet reports it: when it was OOM-killed (0: never) and how long it had run
	// then (upstream's updater reads a quick OOM from them: vpaCtl.quickOOM)
	killedAt, ranFor int64
	// the open trace row and metrics window
	row, window usageSum
	// the last closed ones: what the recommenders are fed (sample) and what the autoscalers read (read)
	sample, read reading
}

// usageSum gathers a container's usage over the steps it served in a window.
type usageSum struct {
	cpuSum float64
	steps  int
	memMax float64
}

// reading is a container's usage over a closed window: CPU averaged over the steps it served, its peak
// working set, and whether it served at all (a container that did not has no metric).
type reading struct {
	cpu, mem float64
	has      bool
}

// close ends the window: its reading, and the sum starts again.
func (u *usageSum) close() reading {
	r := reading{has: u.steps > 0}
	if r.has {
		r.cpu, r.mem = u.cpuSum/float64(u.steps), u.memMax
	}
	*u = usageSum{}
	return r
}

// starting reports whether the pod has not started yet (phase Pending for the HPA and the updater).
func (p *pod) starting(t int64) bool { return t < p.readyAt }

// serving reports whether the pod serves at t: started and no container restarting.
func (p *pod) serving(t int64) bool {
	if t < p.readyAt {
		return false
	}
	for i := range p.ctr {
		if p.ctr[i].restartAt > t {
			return false
		}
	}
	return true
}

// readySince is when the pod last became ready, as its Ready condition's transition says: its start, or its
// containers' last restart; zero while it does not serve at t.
func (p *pod) readySince(t int64) int64 {
	if !p.serving(t) {
		return 0
	}
	since := p.readyAt
	for i := range p.ctr {
		since = max(since, p.ctr[i].restartAt)
	}
	return since
}

// readiness is what the HPA's averages are taken over at now (scaling.HPAPodsOf): the workload's replicas, its
// serving pods and when the newest of them became ready.
func (w *workload) readiness(now time.Time) scaling.HPAPods {
	t := now.Unix()
	out := scaling.HPAPods{Replicas: w.desired, Now: now}
	var last int64
	for _, p := range w.pods {
		if s := p.readySince(t); s > 0 {
			out.Ready++
			last = max(last, s)
		}
	}
	if last > 0 {
		out.LastReady = time.Unix(last, 0)
	}
	return out
}

// setSpec sizes the pod's containers.
func (p *pod) setSpec(spec []scaling.Container) {
	p.spec = spec
	var cpu, mem float64
	for _, k := range spec {
		cpu += reqOf(k, scaling.CPU)
		mem += reqOf(k, scaling.Memory)
	}
	p.requests = scaling.V(cpu, mem)
}

// newPod adds a pod created at t with the given sizing (admission) and returns it.
func (w *workload) newPod(t int64, spec []scaling.Container) *pod {
	w.podSeq++
	p := &pod{name: w.key.name + "-" + strconv.Itoa(w.podSeq), seq: w.podSeq, created: t, readyAt: t + w.run.startup, ctr: make([]podContainer, len(spec))}
	p.setSpec(slices.Clone(spec))
	for i := range p.ctr {
		p.ctr[i].startedAt = p.readyAt
	}
	w.pods = append(w.pods, p)
	return p
}

// scaleTo brings the pods to n, as a ReplicaSet does: new pods sized by the policy's admission, and on a
// scale-down the pods not serving first (starting, then restarting), then the newest.
func (w *workload) scaleTo(t int64, n int32) {
	if n != w.desired {
		w.replicaChanges++
	}
	w.desired = n
	for int32(len(w.pods)) < n {
		w.newPod(t, w.admit())
	}
	if int32(len(w.pods)) <= n {
		return
	}
	rank := func(p *pod) int {
		switch {
		case p.starting(t):
			return 0
		case !p.serving(t):
			return 1
		}
		return 2
	}
	slices.SortStableFunc(w.pods, func(a, b *pod) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return b.seq - a.seq
	})
	w.pods = slices.Delete(w.pods, 0, len(w.pods)-int(n))
	slices.SortFunc(w.pods, func(a, b *pod) int { return a.seq - b.seq })
}

// evict deletes pod i and creates its replacement (the workload controller's), sized at admission.
func (w *workload) evict(t int64, i int) {
	w.pods = slices.Delete(w.pods, i, i+1)
	w.newPod(t, w.admit())
	w.evictions++
}

// resize makes pod p's containers spec after one updater period (a later resize replaces a pending one).
func (w *workload) resize(t int64, p *pod, spec []scaling.Container) {
	w.podResizes++
	if w.run.resizeDelay == 0 {
		w.resized(t, p, spec)
		return
	}
	p.resizeAt, p.resizeTo = t+w.run.resizeDelay, spec
}

// actuate applies the in-place resizes due at t.
func (w *workload) actuate(t int64) {
	for _, p := range w.pods {
		if p.resizeAt > 0 && p.resizeAt <= t {
			w.resized(t, p, p.resizeTo)
			p.resizeAt, p.resizeTo = 0, nil
		}
	}
}

// resized applies an in-place resize at t. The kubelet starts the CrashLoopBackOff of a container whose
// resources change anew (kubernetes/kubernetes#125757; keyed by its resources since #131681): one waiting in
// back-off restarts now with the new resources, and its next kill waits the first delay again (unless
// Actuation.ResizeKeepsBackoff).
func (w *workload) resized(t int64, p *pod, spec []scaling.Container) {
	if !w.run.sim.opts.Actuation.ResizeKeepsBackoff {
		for i := range p.ctr {
			if i >= len(spec) || i >= len(p.spec) || (spec[i].Requests == p.spec[i].Requests && spec[i].Limits == p.spec[i].Limits) {
				continue
			}
			c := &p.ctr[i]
			c.crashes = 0
			if c.restartAt > t {
				c.restartAt, c.startedAt = t, max(t, p.readyAt)
			}
		}
	}
	p.setSpec(spec)
}

// serve splits the step's demand over the serving pods, kills the containers whose share of memory reaches
// their limit, and adds the step to the outcome.
func (w *workload) serve(t int64) {
	n := 0
	for _, p := range w.pods {
		if p.serving(t) {
			n++
		}
	}
	for ci, name := range w.names {
		u := w.demand[name]
		if u == nil {
			continue
		}
		var cpuShare, memShare float64
		if n > 0 {
			cpuShare, memShare = u.cpu/float64(n), u.mem/float64(n)
		}
		for _, p := range w.pods {
			w.serveContainer(t, p, ci, u, cpuShare, memShare, n)
		}
	}
	w.account(t)
}

// serveContainer gives container ci of pod p its share of the step (serving pods serve it): usage for the
// metrics window, and an OOM kill when the memory share reaches its limit.
func (w *workload) serveContainer(t int64, p *pod, ci int, u *usage, cpuShare, memShare float64, serving int) {
	c := &p.ctr[ci]
	if !p.serving(t) { // starting or restarting: no usage, and no metric for the time it does not run
		return
	}
	c.row.steps++
	c.window.steps++
	if u.hasCPU {
		c.row.cpuSum += cpuShare
		c.window.cpuSum += cpuShare
	}
	if !u.hasMem {
		return
	}
	limit, hasLimit := p.spec[ci].Limits.Get(scaling.Memory)
	if hasLimit && limit > 0 && memShare >= limit {
		memShare = limit // the working set stops at the limit: the container is killed there
		w.kill(t, p, ci, limit, serving)
	}
	c.row.memMax = max(c.row.memMax, memShare)
	c.window.memMax = max(c.window.memMax, memShare)
}

// kill OOM-kills container ci of pod p at t, when serving pods (p among them) served the step: it restarts
// after the back-off and its policy hears of it.
func (w *workload) kill(t int64, p *pod, ci int, peak float64, serving int) {
	c := &p.ctr[ci]
	if t-c.startedAt >= backoffReset {
		c.crashes = 0
	}
	delay := w.run.restart << min(c.crashes, 10)
	delay = min(delay, max(maxRestartDelay, w.run.restart))
	delay = (delay + w.run.step - 1) / w.run.step * w.run.step // rounded up to the step
	if delay == 0 {
		delay = 1 // Instant: serving again at the next step
	}
	c.killedAt, c.ranFor = t, t-c.startedAt
	c.crashes++
	c.restartAt, c.startedAt = t+delay, t+delay
	w.ooms++
	w.restarts++ // it restarts; a pod deleted before that still counted its kill's restart as under way
	w.oomSince, w.oomTick = true, true
	w.pendingOOMs = append(w.pendingOOMs, oomEvent{at: t, pod: p, container: ci, request: reqOf(p.spec[ci], scaling.Memory), peak: peak, serving: serving})
}

func reqOf(k scaling.Container, r scaling.Resource) float64 {
	x, _ := k.Requests.Get(r)
	return x
}

// oomEvent is a kill the recommenders hear of when the trace row's window closes (begin, feed).
type oomEvent struct {
	at            int64
	pod           *pod
	container     int
	request, peak float64
	serving       int // the pods serving in the step of the kill (the killed one among them)
}

// closeRow ends the trace row's window: every container that served in it gets its usage as the sample the
// recommenders are fed.
func (w *workload) closeRow() {
	for _, p := range w.pods {
		for ci := range p.ctr {
			c := &p.ctr[ci]
			c.sample = c.row.close()
		}
	}
}

// closeMetrics ends the metrics window: every pod that served in it gets its usage (CPU averaged over the
// steps it served, peak working set) as what the autoscalers read until the next window closes; a pod that
// did not serve in it has no metric.
func (w *workload) closeMetrics() {
	for _, p := range w.pods {
		var cpu, mem float64
		p.hasMetric = false
		for ci := range p.ctr {
			c := &p.ctr[ci]
			c.read = c.window.close()
			if c.read.has {
				cpu, mem, p.hasMetric = cpu+c.read.cpu, mem+c.read.mem, true
			}
		}
		p.usage = scaling.V(cpu, mem)
	}
}

// usageOf is the workload's usage of r in the last metrics window, summed over its pods and containers, and
// whether any pod reported it.
func (w *workload) usageOf(r scaling.Resource) (float64, bool) {
	sum, seen := 0.0, false
	for _, p := range w.pods {
		for ci := range p.ctr {
			if c := &p.ctr[ci]; c.read.has {
				seen = true
				if r == scaling.CPU {
					sum += c.read.cpu
				} else {
					sum += c.read.mem
				}
			}
		}
	}
	return sum, seen
}
