package scaling

import (
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// The rules that turn what a controller reads about an Hvpa's workload into State. The controller lists and
// reads; these decide what the reads mean.

// ContainersInForce are the per-pod values the decision starts from: the current intent (status.desired),
// which the webhook and the updater bring the pods to, and before any intent for a container the pods' (or
// the template's) values. Deciding from the pods instead would undo a blocked part's previous intent and
// flip-flop while pods are being resized.
func ContainersInForce(containers []corev1.Container, desired *hvpav1alpha1.DesiredState) []Container {
	out := FromContainers(containers)
	if desired == nil {
		return out
	}
	intent := make(map[string]hvpav1alpha1.ContainerResources, len(desired.Containers))
	for _, c := range desired.Containers {
		intent[c.Name] = c
	}
	for i := range out {
		if in, ok := intent[out[i].Name]; ok {
			out[i].Requests, _ = FromResourceList(in.Requests, nil)
			out[i].Limits, _ = FromResourceList(in.Limits, nil)
		}
	}
	return out
}

// IntentReplicas is the replica count the intent's per-pod values are sized for (State.IntentReplicas): below
// the replicas while a scale-in waits for its pods to be resized (ResizeFirst); 0 without such a wait.
func IntentReplicas(desired *hvpav1alpha1.DesiredState) int32 {
	if desired == nil {
		return 0
	}
	return desired.SizedForReplicas
}

// HPAPodsOf is what an HPA's averages are taken over among pods, the workload's replicas of them: those whose
// Ready condition is True, and when the newest of them became ready from a start: its Ready transition within
// HPAStartupWindow of the pod's start or its containers' last (re)start. A pod whose readiness comes and goes
// long after its start (a probe failing under load) is at work, and its transitions are not counted: they
// would hold back what the HPA reads for as long as they go on. A transition after now (the kubelet's clock
// ahead) counts as now.
func HPAPodsOf(replicas int32, pods []corev1.Pod, now time.Time) HPAPods {
	out := HPAPods{Replicas: replicas, Now: now}
	for i := range pods {
		for _, c := range pods[i].Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				out.Ready++
				at := c.LastTransitionTime.Time
				if at.After(now) {
					at = now
				}
				if at.After(out.LastReady) && readyFromStart(&pods[i], at) {
					out.LastReady = at
				}
				break
			}
		}
	}
	return out
}

// HPAStartupWindow is how long after a pod's (or its containers') start its becoming ready is taken as the
// end of that start (HPAPodsOf): a readiness probe's initial delay and a slow start fit in it.
const HPAStartupWindow = 10 * time.Minute

// readyFromStart reports whether the pod's becoming ready at is the end of a start: within HPAStartupWindow
// of the newest start among the pod's and its running containers' (true when none says).
func readyFromStart(p *corev1.Pod, at time.Time) bool {
	var started time.Time
	if p.Status.StartTime != nil {
		started = p.Status.StartTime.Time
	}
	for _, cs := range p.Status.ContainerStatuses {
		if r := cs.State.Running; r != nil && r.StartedAt.After(started) {
			started = r.StartedAt.Time
		}
	}
	return started.IsZero() || at.Sub(started) <= HPAStartupWindow
}

// ContainersRequests are containers' requests summed, per resource any of them requests (what the HPA
// counts a pod's request).
func ContainersRequests(containers []Container) Values {
	var pod Values
	for _, c := range containers {
		pod = pod.Plus(c.Requests)
	}
	return pod
}

// PodsResizing reports whether some pod does not run the requests in force yet for some container of
// inForce (State.PodsResizing): the resources the kubelet reports it runs with (status.containerStatuses),
// else its spec's.
func PodsResizing(pods []corev1.Pod, inForce []Container) bool {
	want := make(map[string]Values, len(inForce))
	for _, k := range inForce {
		want[k.Name] = k.Requests
	}
	for _, p := range pods {
		running := map[string]corev1.ResourceList{}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Resources != nil {
				running[cs.Name] = cs.Resources.Requests
			}
		}
		for _, c := range p.Spec.Containers {
			w, ok := want[c.Name]
			if !ok {
				continue
			}
			req, has := running[c.Name]
			if !has {
				req = c.Resources.Requests
			}
			got, _ := FromResourceList(req, nil)
			for _, r := range Resources {
				a, okA := w.Get(r)
				b, okB := got.Get(r)
				if okA && (!okB || math.Abs(a-b) > 0.5) {
					return true
				}
			}
		}
	}
	return false
}

// OOMKilledSince reports whether a container of pods was OOM-killed after since (nil: ever), from the
// containers' current and last termination states.
func OOMKilledSince(pods []corev1.Pod, since *time.Time) bool {
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			for _, s := range []corev1.ContainerState{cs.State, cs.LastTerminationState} {
				if t := vpav1.OOMKill(s); t != nil && (since == nil || t.FinishedAt.After(*since)) {
					return true
				}
			}
		}
	}
	return false
}

// HPAPods is what the HPA's status readings are taken over: the workload's replicas, those of its pods that
// run and are ready (the HPA averages over them), when the newest of those became ready (zero: none says),
// and now; UsageAt is when the recommender's usage reading of them was taken (its oldest sample; zero:
// now), which may be a recommender interval before now.
type HPAPods struct {
	Replicas, Ready int32
	LastReady, Now  time.Time
	UsageAt         time.Time
}

// HPAReadingAge is how long after the Hvpa changed the workload's replicas, or after a pod became ready, a
// reading may still be of the pods before: the HPA syncs every 15 s by default on metrics-server samples of
// up to 15 s, and its average over the old pods, counted over the new ones, reads high (or low) by their
// ratio; a pod that has just started may use more than it will at work (a JIT's warm-up, a cache fill).
const HPAReadingAge = time.Minute

// Warm reports whether every ready pod has been ready for HPAReadingAge, so that a reading of the pods'
// usage now is of the pods at work, not starting.
func (p HPAPods) Warm() bool { return p.warmAt(p.Now) }

// UsageWarm is Warm for the recommender's usage reading, taken at UsageAt.
func (p HPAPods) UsageWarm() bool {
	if p.UsageAt.IsZero() {
		return p.Warm()
	}
	return p.warmAt(p.UsageAt)
}

// WarmIn is how long from Now until Warm (0: warm now).
func (p HPAPods) WarmIn() time.Duration {
	if p.Warm() {
		return 0
	}
	return HPAReadingAge - p.Now.Sub(p.LastReady)
}

func (p HPAPods) warmAt(t time.Time) bool {
	return p.LastReady.IsZero() || t.Sub(p.LastReady) >= HPAReadingAge
}

// settled reports whether an HPA status reading now can be of the pods as they are: every replica ready and
// warm, and no replica change by the Hvpa within HPAReadingAge (a resize at the same count is no change of
// what the reading's average, taken against the requests in force by HPARaw, stands for; a scale-out that a
// later resize's record hides shows in its new pods' readiness; a scale-in hidden so does not, but a reading
// of the pods before it counts their load over fewer pods, low, and never raises the basis).
func (p HPAPods) settled(h *hvpav1alpha1.Hvpa) bool {
	return p.Replicas > 0 && p.Ready == p.Replicas && p.atWork(h)
}

// atWork reports whether an HPA status reading now is of the ready pods at work: every one of them warm, and
// no replica change by the Hvpa within HPAReadingAge (HPARaw averages over the ready pods, so a pod that is
// not ready, crash-looping or unschedulable, does not make the reading wrong).
func (p HPAPods) atWork(h *hvpav1alpha1.Hvpa) bool {
	if p.Ready <= 0 || !p.Warm() {
		return false
	}
	return p.ScalingAgesIn(h) == 0
}

// ScalingAgesIn is how long from Now until the Hvpa's last replica change is HPAReadingAge old (0: it is, or
// none).
func (p HPAPods) ScalingAgesIn(h *hvpav1alpha1.Hvpa) time.Duration {
	ls := h.Status.LastScaling
	if ls == nil || ls.FromReplicas == ls.ToReplicas {
		return 0
	}
	return max(0, HPAReadingAge-p.Now.Sub(ls.Time.Time))
}

// HPAInputOf is the HPA's input to the decision: spec.replicas as src (HorizontalOf) says who writes it, nil
// when no one asks for replicas. pods are the workload's pods as the HPA reads them; inForce are the per-pod
// values in force; usage the embedded recommender's last read of the workload's total usage (nil: none). The
// HPA's bounds and metrics are the template's for the HPA the Hvpa deploys, the HPA's own spec for another
// HPA; with no HPA (kubectl scale) there are no bounds.
//
// At the HPA's bounds the desired replicas carry no information, so Raw says what the metrics say
// instead, against the requests in force (the decision multiplies it by them; the running pods may not have
// been resized to them yet): from the recommender's usage (one time, every pod that reported), else from
// the HPA's status (its per-pod averages over the ready pods: the HPA's status.currentReplicas is the Hvpa's
// spec.replicas, measured at 7 with 4 pods running; right after a scale-out its average may still leave the
// new pods out, so it can read high until its next sync). RawAtWork says whether Raw is of the pods at work:
// the recommender's usage is when no pod became ready within HPAReadingAge before it (UsageWarm); an HPA
// reading is when its ready pods are warm and the replicas did not change within HPAReadingAge (atWork).
// RawCurrent says whether it is of the pods in force at work as well: the usage always is, an HPA reading when
// every replica is ready too (settled) and its utilization was taken against the requests in force
// (HPAReadingCurrent).
// Basis is HPABasis of the record in status.
func HPAInputOf(h *hvpav1alpha1.Hvpa, src Horizontal, pods HPAPods, inForce []Container, usage *Values) *HPAInput {
	if src.Kind == HorizontalNone || h.Spec.Replicas == nil {
		return nil
	}
	in := &HPAInput{Desired: *h.Spec.Replicas}
	var metrics []autoscalingv2.MetricSpec
	switch src.Kind {
	case HorizontalDeployed:
		t := h.Spec.HPA.Template
		in.Min, in.Max, metrics = ptr.Deref(t.MinReplicas, 1), t.MaxReplicas, t.Metrics
	case HorizontalHPA:
		in.Min, in.Max, metrics = ptr.Deref(src.HPA.Spec.MinReplicas, 1), src.HPA.Spec.MaxReplicas, src.HPA.Spec.Metrics
	}
	if hpa := src.HPA; hpa != nil {
		pod := ContainersRequests(inForce)
		// the HPA's averages are over the ready pods; its status.currentReplicas is the scale's spec.replicas,
		// the Hvpa's h, which differs from the pods whenever the Hvpa sizes them otherwise
		in.Raw = HPARaw(pods.Ready, metrics, hpa.Status.CurrentMetrics, pod)
		in.RawAtWork = in.Raw > 0 && pods.atWork(h)
		in.RawCurrent = in.RawAtWork && pods.settled(h) && HPAReadingCurrent(metrics, hpa.Status.CurrentMetrics, pod)
		if usage != nil {
			if raw := HPARawFromUsage(metrics, *usage, pod); raw > 0 {
				in.Raw, in.RawAtWork = raw, pods.UsageWarm()
				in.RawCurrent = in.RawAtWork
			}
		}
	}
	if rec := h.Status.HPA; rec != nil && rec.DesiredReplicas != nil && len(rec.Basis) > 0 {
		recorded := map[string]Values{}
		for _, b := range rec.Basis {
			recorded[b.Name], _ = FromResourceList(b.Requests, nil)
		}
		in.Basis = HPABasis(*rec.DesiredReplicas, recorded, in.Desired, inForce)
	}
	return in
}

// HPABasis is the basis of the HPA's desired replicas now (section 2) from the record of its last: the recorded
// basis while they are unchanged; after the HPA lowered them, the per-pod values in force, but no more per
// resource than the recorded HPA total shared over the new replicas, since a scale-down of the HPA never raises
// its total (the pods may have grown while it held the higher count, a raised basis among them, and the lower
// count it now wants was recommended on those grown pods: at the values in force it would be paid twice); nil
// (the values in force) after it raised them.
func HPABasis(recDesired int32, recorded map[string]Values, desired int32, inForce []Container) map[string]Values {
	switch {
	case len(recorded) == 0:
		return nil
	case recDesired == desired:
		return recorded
	case desired <= 0 || desired > recDesired:
		return nil
	}
	out := make(map[string]Values, len(inForce))
	for _, k := range inForce {
		b := k.Requests
		if prev, ok := recorded[k.Name]; ok {
			for _, r := range Resources {
				x, hasX := b.Get(r)
				y, hasY := prev.Get(r)
				if hasX && hasY {
					b.Set(r, min(x, y*float64(recDesired)/float64(desired)))
				}
			}
		}
		out[k.Name] = b
	}
	return out
}
