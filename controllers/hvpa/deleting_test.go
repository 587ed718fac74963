package hvpa

import (
	"context"
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
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// TestDeletingHvpaActsNot: an Hvpa being deleted (a foreground deletion waits for the garbage collector to
// remove its HPA, whose deletion wakes the Hvpa) neither creates its HPA again nor writes anything (found in
// review: the HPA came back at once, racing the garbage collector).
func TestDeletingHvpaActsNot(t *testing.T) {
	h := wrappers.MakeHvpa("ns", "web").HPA(true, 1, 3).Utilization(corev1.ResourceCPU, 80).Controlled(corev1.ResourceCPU).CPUPerReplica("1", "1", "1").Obj()
	h.Finalizers = []string{metav1.FinalizerDeleteDependents}
	h.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 11, 29, 11, 0, 0, 0, time.UTC)}
	dep := wrappers.MakeDeployment("ns", "web").Container(wrappers.MakeContainer("app").Obj()).Obj()
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(h, dep).WithStatusSubresource(h).Build()
	r := NewReconciler(c, nil, record.NewFakeRecorder(100), clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)), time.Minute, nil)
	key := types.NamespacedName{Namespace: "ns", Name: "web"}
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
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
			dep := wrappers.MakeDeployment("ns", "web").Container(wrappers.MakeContainer("app").Obj()).Obj()
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
			r := NewReconciler(c, nil, record.NewFakeRecorder(100), clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)), time.Minute, nil)
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
