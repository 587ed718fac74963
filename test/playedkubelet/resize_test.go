package playedkubelet_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

var rl = wrappers.Resources

func burstablePod(ns, name string) *corev1.Pod {
	return wrappers.MakePod(ns, name).Container(wrappers.MakeContainer("app").Requests("100m", "100Mi").Limits("200m", "200Mi").Obj()).Obj()
}

// resizePatch is the strategic merge patch of the resize subresource setting container app's resources.
func resizePatch(req, lim corev1.ResourceList) client.Patch {
	q := func(l corev1.ResourceList) string {
		cpu, mem := l[corev1.ResourceCPU], l[corev1.ResourceMemory]
		return fmt.Sprintf(`{"cpu":%q,"memory":%q}`, cpu.String(), mem.String())
	}
	return client.RawPatch(types.StrategicMergePatchType, []byte(fmt.Sprintf(
		`{"spec":{"containers":[{"name":"app","resources":{"requests":%s,"limits":%s}}]}}`, q(req), q(lim))))
}

func namespace(t *testing.T, ctx context.Context, c client.Client, name string) string {
	t.Helper()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func get(t *testing.T, ctx context.Context, c client.Client, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func answers(n int, err error) func(t *testing.T, want int) {
	return func(t *testing.T, want int) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Fatalf("answered %d pods, want %d", n, want)
		}
	}
}

func always(a playedkubelet.ResizeAnswer) func(*corev1.Pod) playedkubelet.ResizeAnswer {
	return func(*corev1.Pod) playedkubelet.ResizeAnswer { return a }
}

func sameQ(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

// refused asserts that err is the API server's refusal with the HTTP code, that the updater classifies it as
// kind, and that its message says each of says.
func refused(t *testing.T, what string, err error, code int32, kind updater.RefusalKind, says ...string) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("%s: %v, want the API server's refusal (%d)", what, err, code)
	}
	if status.Status().Code != code || updater.ClassifyRefusal(err) != kind {
		t.Fatalf("%s: %d, classified %v: %v; want %d, %v", what, status.Status().Code, updater.ClassifyRefusal(err), err, code, kind)
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("%s: %q does not say %q", what, err.Error(), s)
		}
	}
}

// accepted asserts that err is nil and the pod's cpu request is now cpu.
func accepted(t *testing.T, ctx context.Context, c client.Client, what string, p *corev1.Pod, err error, cpu string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v, want it accepted", what, err)
	}
	if q := get(t, ctx, c, p).Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; q.Cmp(resource.MustParse(cpu)) != 0 {
		t.Fatalf("%s: accepted, cpu request %s, want %s", what, q.String(), cpu)
	}
}

func TestResizeAndTermination(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local control plane")
	}
	env, cfg, c, err := testenv.StartWithClient()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	}()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k, err := playedkubelet.New(ctx, c, "node-1")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("answers", func(t *testing.T) {
		ns := namespace(t, ctx, c, "answers")
		pod := burstablePod(ns, "web")
		if err := k.Run(ctx, pod); err != nil {
			t.Fatal(err)
		}
		get(t, ctx, c, pod)
		if pod.Status.QOSClass != corev1.PodQOSBurstable {
			t.Fatalf("qosClass %s", pod.Status.QOSClass)
		}
		gen := pod.Generation
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeAccept)))(t, 0) // nothing to resize yet

		// the resize: requests cpu 150m, limits cpu 300m
		if err := c.SubResource("resize").Patch(ctx, pod, resizePatch(rl("150m", "100Mi"), rl("300m", "200Mi"))); err != nil {
			t.Fatalf("resize refused: %v", err)
		}
		get(t, ctx, c, pod)
		if q := pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; q.Cmp(resource.MustParse("150m")) != 0 {
			t.Fatalf("spec not resized: %v", pod.Spec.Containers[0].Resources)
		}
		// the API server counts the resize as a change of the spec (the updater's end of a startup boost relies
		// on it); status.observedGeneration is the kubelet's, not written yet
		if gen != 1 || pod.Generation != 2 || pod.Status.ObservedGeneration != 0 {
			t.Fatalf("resize accepted: generation %d -> %d, status.observedGeneration %d; want 1 -> 2, 0", gen, pod.Generation, pod.Status.ObservedGeneration)
		}

		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeIgnore)))(t, 0)
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeAccept)))(t, 1)
		get(t, ctx, c, pod)
		st := pod.Status.ContainerStatuses[0]
		if !sameQ(st.Resources.Requests, pod.Spec.Containers[0].Resources.Requests) || !sameQ(st.Resources.Limits, pod.Spec.Containers[0].Resources.Limits) ||
			!sameQ(st.AllocatedResources, pod.Spec.Containers[0].Resources.Requests) {
			t.Fatalf("status %v / allocated %v, spec %v", st.Resources, st.AllocatedResources, pod.Spec.Containers[0].Resources)
		}
		if st.RestartCount != 0 || pod.Status.QOSClass != corev1.PodQOSBurstable || pod.Status.ObservedGeneration != pod.Generation {
			t.Fatalf("restartCount %d, qosClass %s, observedGeneration %d of %d", st.RestartCount, pod.Status.QOSClass, pod.Status.ObservedGeneration, pod.Generation)
		}
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeAccept)))(t, 0) // done

		// infeasible
		if err := c.SubResource("resize").Patch(ctx, pod, resizePatch(rl("180m", "100Mi"), rl("300m", "200Mi"))); err != nil {
			t.Fatal(err)
		}
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeInfeasible)))(t, 1)
		get(t, ctx, c, pod)
		cond := playedkubelet.ResizeCondition(pod, corev1.PodResizePending)
		if cond == nil || cond.Status != corev1.ConditionTrue || cond.Reason != corev1.PodReasonInfeasible {
			t.Fatalf("PodResizePending %+v", cond)
		}
		// a new resize does not clear the condition: only its observedGeneration tells it is about an older one
		if err := c.SubResource("resize").Patch(ctx, pod, resizePatch(rl("180m", "100Mi"), rl("310m", "200Mi"))); err != nil {
			t.Fatal(err)
		}
		get(t, ctx, c, pod)
		if cond := playedkubelet.ResizeCondition(pod, corev1.PodResizePending); cond == nil || cond.Reason != corev1.PodReasonInfeasible ||
			cond.ObservedGeneration != pod.Generation-1 {
			t.Fatalf("after a new resize (generation %d): PodResizePending %+v; want the Infeasible of generation %d kept", pod.Generation, cond, pod.Generation-1)
		}

		// deferred, twice: the transition time stays
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeDeferred)))(t, 1)
		first := playedkubelet.ResizeCondition(get(t, ctx, c, pod), corev1.PodResizePending).DeepCopy()
		if first.Reason != corev1.PodReasonDeferred {
			t.Fatalf("PodResizePending %+v", first)
		}
		time.Sleep(1100 * time.Millisecond) // transition times have second precision
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeDeferred)))(t, 1)
		second := playedkubelet.ResizeCondition(get(t, ctx, c, pod), corev1.PodResizePending)
		if second.Reason != corev1.PodReasonDeferred || !second.LastTransitionTime.Equal(&first.LastTransitionTime) || second.LastProbeTime.Equal(&first.LastProbeTime) {
			t.Fatalf("second Deferred %+v, first %+v", second, first)
		}

		// in progress: allocated, not actuated; then accepted
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeInProgress)))(t, 1)
		get(t, ctx, c, pod)
		if playedkubelet.ResizeCondition(pod, corev1.PodResizePending) != nil || playedkubelet.ResizeCondition(pod, corev1.PodResizeInProgress) == nil {
			t.Fatalf("conditions %+v", pod.Status.Conditions)
		}
		if st := pod.Status.ContainerStatuses[0]; !sameQ(st.AllocatedResources, rl("180m", "100Mi")) || sameQ(st.Resources.Requests, rl("180m", "100Mi")) {
			t.Fatalf("in progress: allocated %v, resources %v", st.AllocatedResources, st.Resources)
		}
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeAccept)))(t, 1)
		get(t, ctx, c, pod)
		if playedkubelet.ResizeCondition(pod, corev1.PodResizePending) != nil || playedkubelet.ResizeCondition(pod, corev1.PodResizeInProgress) != nil {
			t.Fatalf("conditions left after Accept: %+v", pod.Status.Conditions)
		}
		if pod.Status.ContainerStatuses[0].RestartCount != 0 {
			t.Fatal("restarted")
		}

		// only the pods answer picks
		other := burstablePod(ns, "other")
		if err := k.Run(ctx, other); err != nil {
			t.Fatal(err)
		}
		for _, p := range []*corev1.Pod{pod, other} {
			if err := c.SubResource("resize").Patch(ctx, p, resizePatch(rl("120m", "100Mi"), rl("300m", "200Mi"))); err != nil {
				t.Fatal(err)
			}
		}
		answers(k.AnswerResizes(ctx, ns, func(p *corev1.Pod) playedkubelet.ResizeAnswer {
			if p.Name == "other" {
				return playedkubelet.ResizeAccept
			}
			return playedkubelet.ResizeIgnore
		}))(t, 1)
		answers(k.AnswerResizes(ctx, "elsewhere", always(playedkubelet.ResizeAccept)))(t, 0)
		answers(k.AnswerResizes(ctx, "", always(playedkubelet.ResizeAccept)))(t, 1)
	})

	t.Run("RestartContainer", func(t *testing.T) {
		ns := namespace(t, ctx, c, "restart")
		pod := burstablePod(ns, "web")
		pod.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}}
		if err := k.Run(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if err := c.SubResource("resize").Patch(ctx, pod, resizePatch(rl("150m", "100Mi"), rl("300m", "200Mi"))); err != nil {
			t.Fatal(err)
		}
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeAccept)))(t, 1)
		if n := get(t, ctx, c, pod).Status.ContainerStatuses[0].RestartCount; n != 0 {
			t.Fatalf("a cpu resize restarted the container (memory is RestartContainer): restartCount %d", n)
		}
		if err := c.SubResource("resize").Patch(ctx, pod, resizePatch(rl("150m", "150Mi"), rl("300m", "300Mi"))); err != nil {
			t.Fatal(err)
		}
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeAccept)))(t, 1)
		st := get(t, ctx, c, pod).Status.ContainerStatuses[0]
		if st.RestartCount != 1 || st.LastTerminationState.Terminated == nil || st.State.Running == nil {
			t.Fatalf("memory resize: %+v", st)
		}
	})

	t.Run("API server", func(t *testing.T) {
		ns := namespace(t, ctx, c, "apiserver")
		pod := burstablePod(ns, "web")
		if err := k.Run(ctx, pod); err != nil {
			t.Fatal(err)
		}

		// the typed clientset: UpdateResize and Patch(..., "resize")
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("110m")
		if _, err := cs.CoreV1().Pods(ns).UpdateResize(ctx, "web", p, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("clientset UpdateResize: %v", err)
		}
		if _, err := cs.CoreV1().Pods(ns).Patch(ctx, "web", types.StrategicMergePatchType,
			[]byte(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"120m"}}}]}}`), metav1.PatchOptions{}, "resize"); err != nil {
			t.Fatalf("clientset Patch resize: %v", err)
		}
		// controller-runtime: a merge patch from the object, and Update of the subresource
		before := get(t, ctx, c, pod).DeepCopy()
		pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("130m")
		if err := c.SubResource("resize").Patch(ctx, pod, client.MergeFrom(before)); err != nil {
			t.Fatalf("controller-runtime MergeFrom resize: %v", err)
		}
		pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("140m")
		if err := c.SubResource("resize").Update(ctx, pod); err != nil {
			t.Fatalf("controller-runtime Update resize: %v", err)
		}
		if q := get(t, ctx, c, pod).Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; q.Cmp(resource.MustParse("140m")) != 0 {
			t.Fatalf("cpu request %s", q.String())
		}
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeAccept)))(t, 1)

		// a plain update of the pod's resources is refused (only the resize subresource may)
		get(t, ctx, c, pod)
		pod.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("160m")
		refused(t, "a plain Update of spec resources", c.Update(ctx, pod), http.StatusUnprocessableEntity, updater.RefusedPolicy, "pod updates may not change fields other than")

		// Burstable -> Guaranteed: limits == requests everywhere
		get(t, ctx, c, pod)
		refused(t, "a QoS-changing resize (Burstable -> Guaranteed)", c.SubResource("resize").Patch(ctx, pod, resizePatch(rl("200m", "200Mi"), rl("200m", "200Mi"))),
			http.StatusUnprocessableEntity, updater.RefusedPolicy, "Pod QOS Class may not change as a result of resizing")
		// Burstable -> BestEffort: remove all requests and limits
		refused(t, "a QoS-changing resize (Burstable -> BestEffort)", c.SubResource("resize").Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType,
			[]byte(`{"spec":{"containers":[{"name":"app","resources":{"requests":null,"limits":null}}]}}`))),
			http.StatusUnprocessableEntity, updater.RefusedPolicy, "Pod QOS Class may not change", "resource requests cannot be removed", "resource limits cannot be removed")
		// removing a limit (same QoS)
		refused(t, "a resize removing the memory limit", c.SubResource("resize").Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType,
			[]byte(`{"spec":{"containers":[{"name":"app","resources":{"limits":{"memory":null}}}]}}`))),
			http.StatusUnprocessableEntity, updater.RefusedPolicy, "spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed")
		// a resize bigger than the node: kube-apiserver's PodResizeValidator (v1.36) refuses it at once, 403 with
		// a cause of type NodeCapacity, and the spec stays
		err = c.SubResource("resize").Patch(ctx, pod, resizePatch(rl("100", "100Mi"), rl("200", "200Mi")))
		refused(t, "a resize beyond the node's allocatable (64 CPU)", err, http.StatusForbidden, updater.RefusedCapacity,
			"node didn't have enough allocatable resources: cpu, requested: 100000, allocatable: 64000")
		if q := get(t, ctx, c, pod).Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; q.Cmp(resource.MustParse("140m")) != 0 {
			t.Fatalf("a refused resize changed the spec: cpu request %s", q.String())
		}
		// a Guaranteed pod -> Burstable
		g := burstablePod(ns, "guaranteed")
		g.Spec.Containers[0].Resources.Limits = rl("100m", "100Mi")
		if err := k.Run(ctx, g); err != nil {
			t.Fatal(err)
		}
		refused(t, "a QoS-changing resize (Guaranteed -> Burstable)", c.SubResource("resize").Patch(ctx, g, resizePatch(rl("100m", "100Mi"), rl("200m", "200Mi"))),
			http.StatusUnprocessableEntity, updater.RefusedPolicy, `Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing`)
		accepted(t, ctx, c, "a Guaranteed resize keeping limits == requests", g, c.SubResource("resize").Patch(ctx, g, resizePatch(rl("150m", "150Mi"), rl("150m", "150Mi"))), "150m")

		// a pod not bound to any node: accepted (no node to check it against)
		u := burstablePod(ns, "unbound")
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		accepted(t, ctx, c, "a resize of an unbound pod", u, c.SubResource("resize").Patch(ctx, u, resizePatch(rl("150m", "100Mi"), rl("300m", "200Mi"))), "150m")
		// a pod bound but never reported running (no status resources): accepted
		b := burstablePod(ns, "bound")
		b.Spec.NodeName = k.Node
		if err := c.Create(ctx, b); err != nil {
			t.Fatal(err)
		}
		accepted(t, ctx, c, "a resize of a bound pod without container statuses", b, c.SubResource("resize").Patch(ctx, b, resizePatch(rl("150m", "100Mi"), rl("300m", "200Mi"))), "150m")
		// a pod on a node that does not exist: refused (403), not as NodeCapacity
		gone := burstablePod(ns, "nonode")
		gone.Spec.NodeName = "no-such-node"
		if err := c.Create(ctx, gone); err != nil {
			t.Fatal(err)
		}
		if err := k.MarkRunning(ctx, gone); err != nil {
			t.Fatal(err)
		}
		refused(t, "a resize of a running pod on a missing node", c.SubResource("resize").Patch(ctx, gone, resizePatch(rl("150m", "100Mi"), rl("300m", "200Mi"))),
			http.StatusForbidden, updater.RefusedPolicy, `node "no-such-node" not found`)

		// allocatable is checked against the pod alone, not the sum of the node's pods: 2 x 40 CPU on 64 pass
		big := []*corev1.Pod{burstablePod(ns, "big-1"), burstablePod(ns, "big-2")}
		for _, p := range big {
			if err := k.Run(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range big {
			accepted(t, ctx, c, "a resize of "+p.Name+" to 40 CPU on a 64 CPU node", p, c.SubResource("resize").Patch(ctx, p, resizePatch(rl("40", "100Mi"), rl("40", "200Mi"))), "40")
		}
	})

	t.Run("FinishTerminating", func(t *testing.T) {
		ns := namespace(t, ctx, c, "terminating")
		pod := burstablePod(ns, "web")
		if err := k.Run(ctx, pod); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, pod); err != nil {
			t.Fatal(err)
		}
		get(t, ctx, c, pod)
		if pod.DeletionTimestamp == nil {
			t.Fatal("no deletionTimestamp")
		}
		if g := pod.DeletionGracePeriodSeconds; g == nil || *g != 30 {
			t.Fatalf("deleted bound pod: grace %v, want the default 30s", g)
		}
		// the API server accepts a resize of a terminating pod; the kubelet never answers it
		accepted(t, ctx, c, "a resize of a terminating pod", pod, c.SubResource("resize").Patch(ctx, pod, resizePatch(rl("150m", "100Mi"), rl("300m", "200Mi"))), "150m")
		answers(k.AnswerResizes(ctx, ns, always(playedkubelet.ResizeAccept)))(t, 0)
		answers(k.FinishTerminating(ctx, ns))(t, 1)
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); !apierrors.IsNotFound(err) {
			t.Fatalf("pod still there: %v", err)
		}
		answers(k.FinishTerminating(ctx, ns))(t, 0)
	})

	t.Run("eviction", func(t *testing.T) {
		ns := namespace(t, ctx, c, "eviction")
		pod := burstablePod(ns, "web")
		if err := k.Run(ctx, pod); err != nil {
			t.Fatal(err)
		}
		ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name}}
		if err := c.SubResource("eviction").Create(ctx, pod, ev); err != nil {
			t.Fatalf("eviction: %v", err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			t.Fatalf("after eviction: %v", err)
		}
		if pod.DeletionTimestamp == nil {
			t.Fatal("evicted pod has no deletionTimestamp")
		}
		// evicted like a delete with the default grace period, still Running until the kubelet stops it, and
		// marked DisruptionTarget by the Eviction API
		var conds []string
		for _, c := range pod.Status.Conditions {
			conds = append(conds, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
		}
		want := []string{"Ready=True()", "ContainersReady=True()", "DisruptionTarget=True(EvictionByEvictionAPI)"}
		if g := pod.DeletionGracePeriodSeconds; g == nil || *g != 30 || pod.Status.Phase != corev1.PodRunning || !slices.Equal(conds, want) {
			t.Fatalf("evicted bound pod: grace %v, phase %s, conditions %v; want 30s, Running, %v", g, pod.Status.Phase, conds, want)
		}
		// evicting a terminating pod again is accepted (no second DisruptionTarget, no error to handle)
		if err := c.SubResource("eviction").Create(ctx, pod, ev); err != nil {
			t.Fatalf("a second eviction of the terminating pod: %v", err)
		}
		// an unbound pod is deleted at once
		u := burstablePod(ns, "unbound")
		if err := c.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
		if err := c.SubResource("eviction").Create(ctx, u, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: u.Name}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(u), u); !apierrors.IsNotFound(err) {
			t.Fatalf("evicted unbound pod: Get %v, want NotFound (deleted at once)", err)
		}

		answers(k.FinishTerminating(ctx, ns))(t, 1)
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); !apierrors.IsNotFound(err) {
			t.Fatalf("pod still there: %v", err)
		}
	})
}
