package main

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// killsPerPhase x 4 phases are the SIGKILLs of TestFaultKillsDuringScaling, at random points.
const killsPerPhase = 5

// TestFaultKillsDuringScaling runs the chart's controller process (`hvpa run --components
// recommender,hvpa,updater`, leader election on) against the local control plane with the real
// deployment, replicaset and HPA controllers, and kills it with SIGKILL 20 times at random points while an
// Hvpa scales its Deployment out and back in twice (the load steps up and down), a VPA (InPlace) sizes
// another and a Recreate VPA evicts the pods of a third, restarting it after each kill. Throughout, an
// observer checks the invariants:
//   - every change of the Deployment's replicas is a scaling the Hvpa's status recorded (lastScaling, from ->
//     to), each record applied at most once: no scaling is repeated or made without its record;
//   - no scaling comes within the stabilization duration of the one before (4 s each way, from the records'
//     times, which have whole seconds: 3 s apart at least), which a restart that lost the last record
//     would not hold (the restart must read it from status); the second step of a resize-first scale-in,
//     which completes the decision of the first, is no new scaling;
//   - no checkpoint's sample count ever goes down (a restart loses at most the samples since the last
//     write, one --checkpoint-period, never the history written);
//   - no pod is evicted twice for one change, read from the API server's audit log of every eviction the
//     process asked for: no pod of the two workloads sized in place is evicted at all (the played kubelet
//     accepts every resize), no pod is asked to go twice, and of the Recreate workload only the pods that
//     existed before its first eviction are: its replacements come back unsized (no webhook sizes them,
//     the case of a webhook that failed open) and still need the same change, and an updater restarted
//     after any kill must remember, from its --update-loop-records ConfigMap, that evicting them again
//     would not help;
//
// and after each phase the workload settles at the load's size with every pod sized to the intent.
// HVPA_FAULT_SEED=<n> replays a run's kill points.
func TestFaultKillsDuringScaling(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	auditLog := t.TempDir() + "/audit.log"
	cl := startPlayedClusterWith(ctx, t, []testenv.Option{testenv.WithAudit(auditLog, []string{"hvpa"}, nil)}, "hvpa-system", "shop")
	c := cl.c
	kcm, err := testenv.StartControllerManager(cl.env, []string{"deployment-controller", "replicaset-controller",
		"horizontal-pod-autoscaler-controller"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kcm.Stop)
	var loads playedkubelet.Workloads
	go cl.kubelet.Loop(ctx, 100*time.Millisecond, playedkubelet.AcceptResizes, &loads, cl.metrics)

	if err := c.Create(ctx, wrappers.MakeDeployment("shop", "web").Container(wrappers.MakeContainer("app").Requests("500m", "1Gi").Obj()).Obj()); err != nil {
		t.Fatal(err)
	}
	loads.Set("shop", "web", 300, 300<<20)
	h := wrappers.MakeHvpa("shop", "web").HPA(true, 1, 5).Utilization(corev1.ResourceCPU, 50).ScaleDownWindow(0).Controlled(corev1.ResourceCPU).CPUPerReplica("500m", "1", "2", "4", "8").Overlap(30, 0).Obj()
	stabilization := &metav1.Duration{Duration: 4 * time.Second}
	h.Spec.ScaleUp = &hvpav1alpha1.ScaleParams{StabilizationDuration: stabilization}
	h.Spec.ScaleDown = &hvpav1alpha1.ScaleParams{StabilizationDuration: stabilization}
	if err := c.Create(ctx, h); err != nil {
		t.Fatal(err)
	}

	// a standalone VPA beside it, resized in place: its checkpoints carry the history a restart must keep
	if err := c.Create(ctx, wrappers.MakeDeployment("shop", "api").Replicas(2).Container(wrappers.MakeContainer("app").Requests("100m", "128Mi").Obj()).Obj()); err != nil {
		t.Fatal(err)
	}
	loads.SetPerPod("shop", "api", 300, 200<<20)
	inPlace := vpav1.UpdateModeInPlace
	cl.createVPA(ctx, t, "shop", "api", &inPlace)

	// a Recreate VPA whose six pods ask for far less than they use: all six are evicted for the change
	if err := c.Create(ctx, wrappers.MakeDeployment("shop", "cart").Replicas(cartReplicas).Container(wrappers.MakeContainer("app").Requests("10m", "32Mi").Obj()).Obj()); err != nil {
		t.Fatal(err)
	}
	loads.SetPerPod("shop", "cart", 300, 200<<20)
	var originals map[string]bool
	waitUntil(ctx, t, "the cart pods run", time.Minute, func() error {
		var err error
		originals, err = runningPods(ctx, c, "shop", "cart")
		if err == nil && len(originals) != cartReplicas {
			err = fmt.Errorf("%d of %d cart pods run", len(originals), cartReplicas)
		}
		return err
	})
	recreate := vpav1.UpdateModeRecreate
	cl.createVPA(ctx, t, "shop", "cart", &recreate)

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("HVPA_FAULT_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("HVPA_FAULT_SEED=%q: %v", s, err)
		}
	}
	t.Logf("kill points from seed %d (HVPA_FAULT_SEED=%d replays them)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	obs := &invariants{c: c, ns: "shop", name: "web", samples: map[string]int{}, cartTargets: map[string]bool{}}
	go obs.watch(ctx)

	dir := t.TempDir()
	runs := 0
	start := func() *hvpaProcess {
		runs++
		return startHvpa(t, dir, fmt.Sprintf("run-%02d", runs), "run", "--kubeconfig", cl.kubeconfig,
			"--components", "recommender,hvpa,updater", "--leader-election-namespace", "hvpa-system",
			"--leader-elect-lease-duration", "2s", "--leader-elect-renew-deadline", "1500ms", "--leader-elect-retry-period", "500ms",
			"--recommender-interval", "500ms", "--checkpoint-period", "1s", "--hvpa-sync-period", "500ms", "--updater-interval", "500ms",
			// no admission webhook runs (its Lease is not checked); one eviction a second spreads the cart's
			// six over several of the processes killed
			"--admission-lease", "-", "--update-loop-records", "hvpa-system/hvpa-update-loops", "--eviction-rate-limit", "1",
			"--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--graceful-shutdown-timeout=2s")
	}

	phases := []struct {
		name     string
		cpuMilli int64
		settled  func(replicas int32) bool
	}{
		{"up to 2.8 CPU", 2800, func(r int32) bool { return r >= 3 }},
		{"down to 0.1 CPU", 100, func(r int32) bool { return r == 1 }},
		{"up to 2.8 CPU again", 2800, func(r int32) bool { return r >= 3 }},
		{"down to 0.1 CPU again", 100, func(r int32) bool { return r == 1 }},
	}
	kills := 0
	var proc *hvpaProcess
	for i, ph := range phases {
		obs.phase(ph.name)
		loads.Set("shop", "web", ph.cpuMilli, 300<<20)
		for range killsPerPhase {
			proc = start()
			// 0.3-4 s: from before the process leads (the Lease of the one killed runs out after 2 s) to
			// the middle of its decisions
			time.Sleep(300*time.Millisecond + time.Duration(rng.Int64N(int64(3700*time.Millisecond))))
			proc.kill(t)
			kills++
			obs.check(t)
		}
		proc = start()
		took := waitUntil(ctx, t, ph.name+": the workload settles", 3*time.Minute, func() error {
			obs.check(t)
			if proc.cmd.ProcessState != nil {
				t.Fatalf("the process exited on its own: %s", proc.cmd.ProcessState)
			}
			return intentMet(ctx, c, "shop", "web", ph.settled)
		})
		t.Logf("%s: settled %s after the last of %d kills", ph.name, took.Round(100*time.Millisecond), kills)
		obs.checkEvictions(t, auditLog, originals, 0)
		if i < len(phases)-1 {
			proc.kill(t) // the next phase starts from a killed process too
			kills++
		}
	}
	// the cart's evictions go on beside the phases (one a second, a replacement ready before the next): the
	// last process, not killed, finishes them
	cartWait := waitUntil(ctx, t, "every original cart pod evicted", 2*time.Minute, func() error {
		obs.check(t)
		running, err := runningPods(ctx, c, "shop", "cart")
		if err != nil {
			return err
		}
		if left := slices.Sorted(maps.Keys(intersect(running, originals))); len(left) > 0 {
			return fmt.Errorf("not evicted yet: %v", left)
		}
		return nil
	})
	obs.check(t)
	evicted := obs.checkEvictions(t, auditLog, originals, len(originals))
	changes, records, maxSamples, twoSteps := obs.summary()
	t.Logf("%d kills; %d replica changes, each a recorded scaling (%d records seen, %d resize-first scale-ins completed in two steps); checkpoint samples up to %d; %d of the %d cart pods evicted (the last %s after the phases), each once, no replacement",
		kills, changes, records, twoSteps, maxSamples, evicted, cartReplicas, cartWait.Round(100*time.Millisecond))
	if changes < 4 || maxSamples == 0 || evicted != cartReplicas {
		t.Fatalf("the run did not exercise what it checks: %d replica changes, %d checkpoint samples, %d of %d cart pods evicted",
			changes, maxSamples, evicted, cartReplicas)
	}
}

// evictedOriginals counts the pods of originals in namespace ns whose eviction the audit events show granted.
func evictedOriginals(events []testenv.AuditEvent, ns string, originals map[string]bool) int {
	seen := map[string]bool{}
	for _, e := range events {
		r := e.ObjectRef
		if r != nil && e.Verb == "create" && r.Resource == "pods" && r.Subresource == "eviction" && r.Namespace == ns && originals[r.Name] &&
			e.ResponseStatus != nil && e.ResponseStatus.Code >= 200 && e.ResponseStatus.Code < 300 {
			seen[r.Name] = true
		}
	}
	return len(seen)
}

// cartReplicas is the Recreate workload's size in TestFaultKillsDuringScaling.
const cartReplicas = 6

func intersect(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		if b[k] {
			out[k] = true
		}
	}
	return out
}

// runningPods are the names of a Deployment's Running pods that are not terminating.
func runningPods(ctx context.Context, c client.Client, ns, app string) (map[string]bool, error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out[p.Name] = true
		}
	}
	return out, nil
}

// intentMet says why the workload is not at rest yet: the Hvpa's intent names a replica count settled
// accepts, the Deployment asks for it, and that many pods run, each with the intent's cpu request.
func intentMet(ctx context.Context, c client.Client, ns, name string, settled func(int32) bool) error {
	h := &hvpav1alpha1.Hvpa{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, h); err != nil {
		return err
	}
	d := h.Status.Desired
	if d == nil || len(d.Containers) == 0 {
		return fmt.Errorf("the Hvpa has no intent yet")
	}
	if !settled(d.Replicas) {
		return fmt.Errorf("the intent is %d replicas", d.Replicas)
	}
	dep := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dep); err != nil {
		return err
	}
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != d.Replicas {
		return fmt.Errorf("the intent is %d replicas, the Deployment asks for %v", d.Replicas, dep.Spec.Replicas)
	}
	want := d.Containers[0].Requests.Cpu().MilliValue()
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
		return err
	}
	var running []int64
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			running = append(running, p.Spec.Containers[0].Resources.Requests.Cpu().MilliValue())
		}
	}
	if len(running) != int(d.Replicas) || slices.ContainsFunc(running, func(m int64) bool { return m != want }) {
		return fmt.Errorf("the intent is %d x %dm; running %v", d.Replicas, want, running)
	}
	return nil
}

// minScalingGap is the stabilization duration of TestFaultKillsDuringScaling's Hvpa (4 s) less the second
// its records' whole-second times may lose.
const minScalingGap = 3 * time.Second

// scalingKey is a lastScaling record: when, from and to.
type scalingKey struct {
	at       time.Time
	from, to int32
}

// invariants watches the Deployment, the Hvpa's scaling records, the checkpoints and the events of a
// namespace, and says what broke.
type invariants struct {
	c        client.Client
	ns, name string

	mu        sync.Mutex
	phaseName string
	replicas  int32 // the Deployment's, last seen (0: not yet)
	changes   []string
	records   map[scalingKey]int // every lastScaling seen -> the replica changes that applied it
	// sizedFor: of the records seen, those of a resize-first scale-in's first step (the pods sized for fewer
	// replicas while the replicas stay: status.desired.sizedForReplicas) -> the replicas the second step goes to
	sizedFor map[scalingKey]int32
	twoSteps int            // resize-first scale-ins seen completed
	samples  map[string]int // checkpoint -> the highest totalSamplesCount seen
	// cartTargets: every target the cart VPA showed; one change is one target (the updater's fingerprint)
	cartTargets map[string]bool
	// cartGoing: each cart pod -> when it was first seen terminating (an eviction asked after that asks a
	// pod already going to go again)
	cartGoing map[string]time.Time
	broken    []string
}

func (o *invariants) phase(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.phaseName = name
}

// watch polls every 50 ms until ctx ends (records live in status only until the next scaling).
func (o *invariants) watch(ctx context.Context) {
	for ctx.Err() == nil {
		o.observe(ctx)
		time.Sleep(50 * time.Millisecond)
	}
}

// see takes the scaling record of h into account (o.mu held): a record not seen before is checked against the
// others' times (the stabilization) and kept, unapplied.
func (o *invariants) see(h *hvpav1alpha1.Hvpa) {
	if r := h.Status.LastScaling; r != nil {
		key := scalingKey{at: r.Time.Time, from: r.FromReplicas, to: r.ToReplicas}
		if _, seen := o.records[key]; !seen {
			for r := range o.records {
				// a resize-first scale-in (docs/design/scaling.md section 4) is one decision in two steps: its
				// replicas follow once the pods run the values sized for them, with no stabilization between
				if to, first := o.sizedFor[r]; first && key.from == r.to && key.to == to && !key.at.Before(r.at) {
					o.twoSteps++
					continue
				}
				if gap := key.at.Sub(r.at).Abs(); gap < minScalingGap {
					o.fail(fmt.Sprintf("%s: scalings %d -> %d at %s and %d -> %d at %s are %s apart, within the stabilization duration",
						o.phaseName, r.from, r.to, r.at.Format(time.TimeOnly), key.from, key.to, key.at.Format(time.TimeOnly), gap))
				}
			}
			o.records[key] = 0
			if d := h.Status.Desired; d != nil && r.FromReplicas == r.ToReplicas && d.SizedForReplicas > 0 && d.SizedForReplicas < r.ToReplicas {
				if o.sizedFor == nil {
					o.sizedFor = map[scalingKey]int32{}
				}
				o.sizedFor[key] = d.SizedForReplicas
			}
		}
	}
}

// unapplied is a record seen of a scaling from -> to that no replica change has applied yet (o.mu held).
func (o *invariants) unapplied(from, to int32) *scalingKey {
	for r, n := range o.records {
		if r.from == from && r.to == to && n == 0 {
			return &r
		}
	}
	return nil
}

func (o *invariants) observe(ctx context.Context) {
	h := &hvpav1alpha1.Hvpa{}
	dep := &appsv1.Deployment{}
	cart := &vpav1.VerticalPodAutoscaler{}
	var cps vpav1.VerticalPodAutoscalerCheckpointList
	var cartPods corev1.PodList
	// the record first: a scaling's record is written before the Deployment, so a change seen next has its
	// record seen already, unless both writes fall between the two reads (then a read of the Hvpa after the
	// change has it: see the replica change below)
	if o.c.Get(ctx, client.ObjectKey{Namespace: o.ns, Name: o.name}, h) != nil ||
		o.c.Get(ctx, client.ObjectKey{Namespace: o.ns, Name: o.name}, dep) != nil ||
		o.c.Get(ctx, client.ObjectKey{Namespace: o.ns, Name: "cart"}, cart) != nil || o.c.List(ctx, &cps, client.InNamespace(o.ns)) != nil ||
		o.c.List(ctx, &cartPods, client.InNamespace(o.ns), client.MatchingLabels{"app": "cart"}) != nil {
		return // the test is ending, or the API server is busy: the next poll sees it
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.records == nil {
		o.records = map[scalingKey]int{}
	}
	o.see(h)
	if dep.Spec.Replicas != nil {
		now := *dep.Spec.Replicas
		if o.replicas != 0 && now != o.replicas {
			change := fmt.Sprintf("%s: %d -> %d", o.phaseName, o.replicas, now)
			o.changes = append(o.changes, change)
			applied := o.unapplied(o.replicas, now)
			if fresh := (&hvpav1alpha1.Hvpa{}); applied == nil && o.c.Get(ctx, client.ObjectKeyFromObject(h), fresh) == nil {
				// the record and the change may both fall between this poll's read of the Hvpa and its read of
				// the Deployment: the record, written before the change, is in a read made after it
				o.see(fresh)
				applied = o.unapplied(o.replicas, now)
			}
			if applied == nil {
				o.fail(fmt.Sprintf("%s: no scaling record left to explain it (records: %v)", change, o.records))
			} else {
				o.records[*applied]++
			}
		}
		o.replicas = now
	}
	for _, cp := range cps.Items {
		n := cp.Status.TotalSamplesCount
		if before, ok := o.samples[cp.Name]; ok && n < before {
			o.fail(fmt.Sprintf("%s: checkpoint %s went from %d to %d samples: history was lost", o.phaseName, cp.Name, before, n))
		}
		o.samples[cp.Name] = max(o.samples[cp.Name], n)
	}
	if o.cartGoing == nil {
		o.cartGoing = map[string]time.Time{}
	}
	for _, p := range cartPods.Items {
		if _, seen := o.cartGoing[p.Name]; !seen && p.DeletionTimestamp != nil {
			o.cartGoing[p.Name] = time.Now()
		}
	}
	if r := cart.Status.Recommendation; r != nil {
		for _, cr := range r.ContainerRecommendations {
			o.cartTargets[fmt.Sprintf("%s cpu=%s memory=%s", cr.ContainerName, cr.Target.Cpu(), cr.Target.Memory())] = true
		}
	}
}

// checkEvictions reads every eviction the process asked for from the audit log and fails the test if a pod
// was evicted twice (two requests the API server granted), was asked to go after it was seen terminating,
// was sized in place (the api workload), or is a replacement of the Recreate workload (a pod not in
// originals) evicted while its VPA showed one target only; it returns how many of the originals were
// evicted. A request the API server did not grant (a kill cut it: 504) may be asked again by the next
// process: the pod was still there, not terminating, when it read it; or the pod goes anyway (the eviction was
// done before the cut), and the request it was seen terminating after counts as its eviction (cutThenGone).
// Originals left uncounted are logged with what the audit log says of them. With want > 0 (the originals known
// gone), the log is read again until it shows that many of them evicted (10 s at most): the API server writes
// an eviction's event once its response is complete, which can be after the pod is seen going (a read cut
// off mid-line is read again too).
func (o *invariants) checkEvictions(t *testing.T, auditLog string, originals map[string]bool, want int) int {
	t.Helper()
	var events []testenv.AuditEvent
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var err error
		events, err = testenv.ReadAuditLog(auditLog)
		switch {
		case err != nil && time.Now().After(deadline):
			t.Fatal(err)
		case err != nil:
			continue
		}
		if want == 0 || evictedOriginals(events, o.ns, originals) >= want || time.Now().After(deadline) {
			break
		}
	}
	asked := map[string][]evictionAsk{}
	for _, e := range events {
		if r := e.ObjectRef; r != nil && e.Verb == "create" && r.Resource == "pods" && r.Subresource == "eviction" && r.Namespace == o.ns {
			a := evictionAsk{at: e.RequestReceived.Time}
			if e.ResponseStatus != nil {
				a.code = int(e.ResponseStatus.Code)
			}
			asked[r.Name] = append(asked[r.Name], a)
		}
	}
	o.mu.Lock()
	targets := slices.Sorted(maps.Keys(o.cartTargets))
	going := maps.Clone(o.cartGoing)
	o.mu.Unlock()
	evicted := 0
	answered := map[string][]string{} // per pod, each request's time and response code
	for pod, asks := range asked {
		granted, answers := 0, make([]string, 0, len(asks))
		for _, a := range asks {
			answers = append(answers, fmt.Sprintf("%s: %d", a.at.Format(time.TimeOnly+".000"), a.code))
			if a.code >= 200 && a.code < 300 {
				granted++
			}
			if at, ok := going[pod]; ok && a.at.After(at) {
				t.Errorf("pod %s was asked to go at %s, after it was seen terminating at %s (%v)",
					pod, a.at.Format(time.TimeOnly+".000"), at.Format(time.TimeOnly+".000"), answers)
			}
		}
		answered[pod] = answers
		switch {
		case granted > 1:
			t.Errorf("pod %s was evicted %d times: %v", pod, granted, answers)
		case !strings.HasPrefix(pod, "cart-"):
			t.Errorf("pod %s evicted (%v), although every resize is accepted in place", pod, answers)
		case !originals[pod] && len(targets) == 1:
			t.Errorf("pod %s, a replacement of an evicted cart pod, evicted (%v) for the same change (%s): loop detection forgot the eviction it replaced",
				pod, answers, targets[0])
		case !originals[pod]:
			t.Logf("pod %s, a replacement, evicted (%v): the cart VPA's target moved (%v)", pod, answers, targets)
		case granted == 1:
			if len(asks) > 1 {
				t.Logf("pod %s: a request not granted, then asked again (%v)", pod, answers)
			}
			evicted++
		case cutThenGone(asks, going[pod]):
			// the API server evicted it, but the process was killed before the response was complete: the
			// event logs the cut request, and the pod was seen terminating after it
			t.Logf("pod %s went after an eviction request a kill cut (%v; seen terminating at %s)", pod, answers, going[pod].Format(time.TimeOnly+".000"))
			evicted++
		}
	}
	if want > 0 && evicted < want { // say how each original not counted left, for the failure that follows
		for pod := range originals {
			if _, ok := asked[pod]; !ok {
				at, seen := going[pod]
				t.Logf("original cart pod %s: no eviction asked for it in the audit log (seen terminating: %v %s)", pod, seen, at.Format(time.TimeOnly+".000"))
			}
		}
		for pod, answers := range answered {
			if originals[pod] {
				t.Logf("original cart pod %s: asked %v, seen terminating at %s", pod, answers, going[pod].Format(time.TimeOnly+".000"))
			}
		}
	}
	return evicted
}

// evictionAsk is one eviction request of the audit log: when the API server received it, and its response
// code (0: none logged).
type evictionAsk struct {
	at   time.Time
	code int
}

// cutThenGone reports whether a pod none of whose evictions was granted went (was seen terminating at going)
// after a request whose response was not a refusal: a process killed mid-request leaves the API server's
// eviction done and its event without a 2xx (a 429 is the disruption budget's refusal, which evicts nothing).
func cutThenGone(asks []evictionAsk, going time.Time) bool {
	if going.IsZero() {
		return false
	}
	for _, a := range asks {
		if a.at.Before(going) && a.code != http.StatusTooManyRequests {
			return true
		}
	}
	return false
}

// fail records a broken invariant, once.
func (o *invariants) fail(msg string) {
	if !slices.Contains(o.broken, msg) {
		o.broken = append(o.broken, msg)
	}
}

// check fails the test with every invariant broken so far.
func (o *invariants) check(t *testing.T) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.broken) > 0 {
		t.Fatalf("invariants broken:\n%s\nreplica changes: %v", strings.Join(o.broken, "\n"), o.changes)
	}
}

func (o *invariants) summary() (changes, records, maxSamples, twoSteps int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, n := range o.samples {
		maxSamples = max(maxSamples, n)
	}
	return len(o.changes), len(o.records), maxSamples, o.twoSteps
}

// TestCutThenGone: a pod counts as evicted by a request a kill cut only when it was seen terminating after a
// request that was not the disruption budget's refusal.
func TestCutThenGone(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)
	cut := evictionAsk{at: t0, code: http.StatusGatewayTimeout}
	refused := evictionAsk{at: t0, code: http.StatusTooManyRequests}
	for name, tc := range map[string]struct {
		asks  []evictionAsk
		going time.Time
		want  bool
	}{
		"cut, then seen terminating":           {[]evictionAsk{cut}, t0.Add(time.Second), true},
		"cut, never seen terminating":          {[]evictionAsk{cut}, time.Time{}, false},
		"cut after it was seen terminating":    {[]evictionAsk{cut}, t0.Add(-time.Second), false},
		"refused by the budget, then gone":     {[]evictionAsk{refused}, t0.Add(time.Second), false},
		"no response logged, then terminating": {[]evictionAsk{{at: t0}}, t0.Add(time.Second), true},
	} {
		if got := cutThenGone(tc.asks, tc.going); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
