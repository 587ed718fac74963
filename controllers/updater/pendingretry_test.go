package updater

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// TestPendingRetryKeepsItsBackoff: a new ask made to a pod whose resize the kubelet keeps pending (deferred
// or infeasible) keeps the pod's backoff from that ask, where a resize made deleted it, so that the next loop
// (the resize still pending, past its timeout) asked again at every move of the target (found in review); a
// resize made for any other reason clears it.
func TestPendingRetryKeepsItsBackoff(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "u1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
	for name, tc := range map[string]struct {
		reason string
		kept   bool
	}{"deferred": {ReasonDeferredTooLong, true}, "infeasible": {ReasonInfeasible, true}, "an update": {"", false}} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(pod.DeepCopy()).WithInterceptorFuncs(interceptor.Funcs{
				SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
					return nil // the API server takes the resize; the kubelet will decide
				}}).Build()
			u := New(c, c, record.NewFakeRecorder(10), clocktesting.NewFakeClock(now), nil, DefaultOptions(), NewMetrics(nil))
			u.refused[pod.UID] = Refusal{Asked: []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(900, -1)}}, Attempts: 3, At: now.Add(-time.Hour)}
			a := &Action{Kind: Resize, Reason: tc.reason, Fingerprint: "f", Message: "app cpu request 900m -> 700m",
				Sized: []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(700, -1)}}}
			s := served{ctl: Controller{Kind: "Hvpa", Namespace: "shop", Name: "web"}, obj: pod, known: map[types.UID]bool{}}
			if u.resizeInPlace(context.Background(), s, pod.DeepCopy(), a, now) {
				t.Fatalf("the resize was refused: %+v", a)
			}
			r, ok := u.refused[pod.UID]
			switch {
			case !tc.kept && ok:
				t.Errorf("refusal %+v kept after a resize made", r)
			case tc.kept && (!ok || r.Attempts != 3 || !r.At.Equal(now) || len(r.Asked) != 1 || r.Asked[0].Requests != scaling.V(700, -1)):
				t.Errorf("refusal %+v (kept %v), want 3 attempts, now, asking 700m", r, ok)
			}
		})
	}
}

// TestForgetSettledWhenApplied: a refusal is dropped once the pod runs at the size it asked (the kubelet
// applied a resize it had deferred), even when the pod has something to do now (it held the pod's next
// update by the old backoff, found in review); one the API refused (the pod still at its old size) is kept.
func TestForgetSettledWhenApplied(t *testing.T) {
	u := New(nil, nil, record.NewFakeRecorder(1), clocktesting.NewFakeClock(now), nil, DefaultOptions(), NewMetrics(nil))
	refusal := &Refusal{Asked: []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(900, -1), Limits: scaling.V(1800, -1)}}, Attempts: 6, At: now.Add(-10 * time.Minute)}
	applied, refusedByAPI := pod("applied", time.Hour, 900, 1800), pod("refused", time.Hour, 100, 200)
	applied.Refused, refusedByAPI.Refused = refusal, refusal
	u.refused[applied.UID], u.refused[refusedByAPI.UID] = *refusal, *refusal
	states := []Pod{applied, refusedByAPI}
	u.forgetSettled(states, []Action{{Pod: &states[0], Kind: Wait}, {Pod: &states[1], Kind: Wait}})
	if _, ok := u.refused[applied.UID]; ok {
		t.Error("the refusal of a pod now at the size it asked is kept")
	}
	if _, ok := u.refused[refusedByAPI.UID]; !ok {
		t.Error("the refusal of a pod still at its old size is dropped")
	}
}
