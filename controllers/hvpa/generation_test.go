package hvpa

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
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

// status.observedGeneration says which generation was decided in full: a reconcile that fails (here the
// target cannot be read) writes what it learnt but leaves observedGeneration where it was; the next
// reconcile that succeeds (here one that reports the missing target) advances it.
func TestObservedGenerationOnlyOnSuccess(t *testing.T) {
	h := wrappers.MakeHvpa("ns", "web").HPA(true, 1, 1).Utilization(corev1.ResourceCPU, 80).ScaleDownWindow(0).Controlled(corev1.ResourceCPU).CPUPerReplica("1").Obj()
	h.Generation, h.Status.ObservedGeneration = 2, 1
	failing := true
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(h).WithStatusSubresource(h).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, hvpa := obj.(*hvpav1alpha1.Hvpa); !hvpa && failing {
				return apierrors.NewInternalError(errors.New("etcd leader changed"))
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	r := NewReconciler(c, nil, record.NewFakeRecorder(100), clocktesting.NewFakeClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)), time.Minute, nil)
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}}
	observed := func() int64 {
		got := &hvpav1alpha1.Hvpa{}
		if err := c.Get(context.Background(), req.NamespacedName, got); err != nil {
			t.Fatal(err)
		}
		return got.Status.ObservedGeneration
	}

	if _, err := r.Reconcile(context.Background(), req); err == nil {
		t.Fatal("reconcile with an unreadable target: no error")
	}
	if g := observed(); g != 1 {
		t.Errorf("after a failed reconcile observedGeneration is %d, want 1 (unchanged)", g)
	}

	failing = false // the target now reads as missing: reported in status, a successful reconcile
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if g := observed(); g != 2 {
		t.Errorf("after a successful reconcile observedGeneration is %d, want 2", g)
	}
}

// TestObservedGenerationAfterOwnSpecWrite: the controller's own write of a missing spec.replicas is a spec
// change (the API server raises metadata.generation); the status the same reconcile writes was decided on that
// spec, so it observes the raised generation, not the one read before (found in review: it stayed one behind
// until the next reconcile).
func TestObservedGenerationAfterOwnSpecWrite(t *testing.T) {
	h := wrappers.MakeHvpa("ns", "web").Controlled(corev1.ResourceCPU).CPUPerReplica("1", "1").Obj()
	h.Spec.Replicas, h.Generation = nil, 1
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(h, webDeployment()).WithStatusSubresource(h).
		WithInterceptorFuncs(interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := c.Patch(ctx, obj, patch, opts...); err != nil {
				return err
			}
			if _, hvpa := obj.(*hvpav1alpha1.Hvpa); hvpa { // the API server's generation for a spec change (the fake keeps it)
				obj.SetGeneration(obj.GetGeneration() + 1)
				return c.Update(ctx, obj)
			}
			return nil
		}}).Build()
	key := types.NamespacedName{Namespace: "ns", Name: "web"}
	if _, err := reconcilerOn(c).Reconcile(context.Background(), reconcile.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	got := &hvpav1alpha1.Hvpa{}
	if err := c.Get(context.Background(), key, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Replicas == nil || got.Generation != 2 {
		t.Fatalf("spec.replicas %v at generation %d: the controller did not write its own replicas", got.Spec.Replicas, got.Generation)
	}
	if got.Status.ObservedGeneration != 2 {
		t.Errorf("observedGeneration %d after the reconcile that wrote spec.replicas, want 2", got.Status.ObservedGeneration)
	}
	for _, cond := range got.Status.Conditions {
		if cond.ObservedGeneration != 2 {
			t.Errorf("condition %s observedGeneration %d, want 2", cond.Type, cond.ObservedGeneration)
		}
	}
}

// TestSpecRefused: only the API server's validation of an HPA's spec (Invalid, every cause a field of spec) is
// the template's to correct; an Invalid without causes (a ValidatingAdmissionPolicy's denial) or naming
// another field stays an error, retried (found in review: such a policy turned the Hvpa into InvalidSpec).
func TestSpecRefused(t *testing.T) {
	gk := schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"a spec field", apierrors.NewInvalid(gk, "web", field.ErrorList{field.Invalid(field.NewPath("spec", "behavior", "scaleUp", "stabilizationWindowSeconds"), 7200, "must be less than or equal to 3600")}), true},
		{"a policy, no cause", apierrors.NewInvalid(gk, "web", nil), false},
		{"metadata", apierrors.NewInvalid(gk, "web", field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations"), "x", "too long")}), false},
		{"a conflict", apierrors.NewConflict(schema.GroupResource{Resource: "horizontalpodautoscalers"}, "web", errors.New("changed")), false},
		{"wrapped", fmt.Errorf("writing: %w", apierrors.NewInvalid(gk, "web", field.ErrorList{field.Required(field.NewPath("spec", "metrics"), "")})), true},
	} {
		if got := specRefused(tc.err); got != tc.want {
			t.Errorf("%s: specRefused = %v, want %v", tc.name, got, tc.want)
		}
	}
}
