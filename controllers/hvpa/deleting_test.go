package hvpa

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// webAt is when the tests of this file decide.
var webAt = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// webDeployment is the target of the tests of this file: Deployment web with one container, app.
func webDeployment() *appsv1.Deployment {
	return wrappers.MakeDeployment("ns", "web").Container(wrappers.MakeContainer("app").Obj()).Obj()
}

// reconcileOnce reconciles h, on Deployment web, once (failing t on an error) and returns the API it wrote to.
func reconcileOnce(t *testing.T, h *hvpav1alpha1.Hvpa) (client.Client, types.NamespacedName) {
	t.Helper()
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(h, webDeployment()).WithStatusSubresource(h).Build()
	key := types.NamespacedName{Namespace: h.Namespace, Name: h.Name}
	if _, err := reconcilerOn(c).Reconcile(context.Background(), reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	return c, key
}

// reconcilerOn is a reconciler on c deciding at webAt.
func reconcilerOn(c client.Client) *Reconciler {
	return NewReconciler(c, nil, record.NewFakeRecorder(100), clocktesting.NewFakeClock(webAt), time.Minute, nil)
}

// TestDeletingHvpaActsNot: an Hvpa being deleted (a foreground deletion waits for the garbage collector to
// remove its HPA, whose deletion wakes the Hvpa) neither creates its HPA again nor writes anything (found in
// review: the HPA came back at once, racing the garbage collector).
func TestDeletingHvpaActsNot(t *testing.T) {
	h := wrappers.MakeHvpa("ns", "web").HPA(true, 1, 3).Utilization(corev1.ResourceCPU, 80).Controlled(corev1.ResourceCPU).CPUPerReplica("1", "1", "1").Obj()
	h.Finalizers = []string{metav1.FinalizerDeleteDependents}
	h.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)}
	c, key := reconcileOnce(t, h)
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: HPAName(h)}, &autoscalingv2.HorizontalPodAutoscaler{}); !apierrors.IsNotFound(err) {
		t.Errorf("the HPA of a deleting Hvpa: %v, want none created", err)
	}
	got := &hvpav1alpha1.Hvpa{}
	if err := c.Get(context.Background(), key, got); err != nil {
		t.Fatal(err)
	}
	if got.Status.ObservedGeneration != 0 || len(got.Status.Conditions) != 0 {
		t.Errorf("status written for a deleting Hvpa: %+v", got.Status)
	}
}

// TestTransientScaleErrorIsRetried: a timeout, 429 or 5xx reading the target's scale is retried (the reconcile
// returns it), not reported as a configuration (ConfigUnsupported NoScaleSubresource, which also has the
// webhook and the updater skip the Hvpa); a scale that is not served is (found in review).
func TestTransientScaleErrorIsRetried(t *testing.T) {
	for name, tc := range map[string]struct {
		err       error
		reported  bool
		wantError bool
	}{
		"503":       {apierrors.NewServiceUnavailable("etcd leader changed"), false, true},
		"timeout":   {apierrors.NewTimeoutError("slow", 1), false, true},
		"429":       {apierrors.NewTooManyRequests("later", 1), false, true},
		"not found": {apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web"), true, false},
	} {
		t.Run(name, func(t *testing.T) {
			h := wrappers.MakeHvpa("ns", "web").Controlled(corev1.ResourceCPU).CPUPerReplica("1", "1").Obj()
			dep := webDeployment()
			deploymentReads := 0
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(h, dep).WithStatusSubresource(h).
				WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if _, ok := obj.(*appsv1.Deployment); ok {
						// the first resolves the target; the scale's read fails from the cache and from the API server
						if deploymentReads++; deploymentReads > 1 {
							return tc.err
						}
					}
					return c.Get(ctx, key, obj, opts...)
				}}).Build()
			r := reconcilerOn(c)
			key := types.NamespacedName{Namespace: "ns", Name: "web"}
			_, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key})
			if (err != nil) != tc.wantError {
				t.Errorf("reconcile error %v, want an error: %v", err, tc.wantError)
			}
			got := &hvpav1alpha1.Hvpa{}
			if err := c.Get(context.Background(), key, got); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(got.Status.Conditions, hvpav1alpha1.ConditionConfigUnsupported)
			if reported := cond != nil && cond.Status == metav1.ConditionTrue && cond.Reason == hvpav1alpha1.ReasonNoScaleSubresource; reported != tc.reported {
				t.Errorf("ConfigUnsupported %+v, want reported: %v", cond, tc.reported)
			}
		})
	}
}

// TestRefusedScaleIsTold: a scaling whose /scale write is refused (a policy webhook, a kind missing from the
// chart's RBAC) is told by a ScaleFailed warning and retried, not by a Rescaled event; once the write goes
// through, Rescaled says so (found in review: Rescaled went out before the write, and a refusal was in the
// controller's log only).
func TestRefusedScaleIsTold(t *testing.T) {
	now := webAt
	h := wrappers.MakeHvpa("ns", "web").Controlled(corev1.ResourceCPU).CPUPerReplica("1", "1").Obj()
	h.Status.LastScaling = &hvpav1alpha1.ScalingRecord{Time: metav1.NewTime(now.Add(-10 * time.Second)), FromReplicas: 1, ToReplicas: 2}
	dep := webDeployment()
	dep.Spec.Replicas = ptr.To[int32](1)
	refused, conflict := true, false
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(h, dep).WithStatusSubresource(h).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			switch {
			case sub == "scale" && conflict:
				return apierrors.NewConflict(schema.GroupResource{Group: "apps", Resource: "deployments"}, "web", errors.New("the object has been modified"))
			case sub == "scale" && refused:
				return apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments/scale"}, "web", errors.New("denied by policy"))
			case sub == "scale":
				return nil // applied (the fake client does not serve a Deployment's scale)
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		}}).Build()
	events := record.NewFakeRecorder(100)
	r := NewReconciler(c, nil, events, clocktesting.NewFakeClock(now), time.Minute, nil)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}}
	drain := func() []string {
		var out []string
		for len(events.Events) > 0 {
			out = append(out, <-events.Events)
		}
		return out
	}
	if _, err := r.Reconcile(context.Background(), req); err == nil {
		t.Error("a refused scaling: no error to retry")
	}
	got := drain()
	if !slices.ContainsFunc(got, func(e string) bool {
		return strings.HasPrefix(e, "Warning ScaleFailed") && strings.Contains(e, "denied by policy")
	}) ||
		slices.ContainsFunc(got, func(e string) bool { return strings.Contains(e, "Rescaled") }) {
		t.Errorf("events %q, want a ScaleFailed warning with the error and no Rescaled", got)
	}
	// the target changed since its scale was read: no refusal to tell, the scaling is tried again soon
	conflict = true
	if res, err := r.Reconcile(context.Background(), req); err != nil || res.RequeueAfter != conflictRetry {
		t.Errorf("a conflict on /scale: %v, requeue after %v; want no error and a retry after %v", err, res.RequeueAfter, conflictRetry)
	}
	if got := drain(); slices.ContainsFunc(got, func(e string) bool { return strings.Contains(e, "ScaleFailed") || strings.Contains(e, "Rescaled") }) {
		t.Errorf("events %q after a conflict, want none", got)
	}
	refused, conflict = false, false
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := drain(); !slices.ContainsFunc(got, func(e string) bool { return strings.HasPrefix(e, "Normal Rescaled replicas 1 -> 2") }) {
		t.Errorf("events %q, want Rescaled once applied", got)
	}
}

// TestOwnSpecWriteNoConflict: the first reconcile of an Hvpa without spec.replicas writes them (setOwnReplicas)
// and then its status in the same round: the status write carries the version after its own spec write, not
// the one read before it (found in review: a guaranteed conflict and a wasted round for every new Hvpa).
func TestOwnSpecWriteNoConflict(t *testing.T) {
	h := wrappers.MakeHvpa("ns", "web").Controlled(corev1.ResourceCPU).CPUPerReplica("1", "1").Obj()
	h.Generation = 1
	c, key := reconcileOnce(t, h)
	got := &hvpav1alpha1.Hvpa{}
	if err := c.Get(context.Background(), key, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Replicas == nil || got.Status.ObservedGeneration == 0 {
		t.Errorf("after one reconcile: spec.replicas %v, status.observedGeneration %d; want both written", got.Spec.Replicas, got.Status.ObservedGeneration)
	}
}
