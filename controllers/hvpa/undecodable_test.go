package hvpa

import (
	"context"
	"errors"
	"strings"
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

	"github.com/hvpa-dev/hvpa/apis/autoscaling/decodeerr"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// An Hvpa that does not decode is reported once per resourceVersion. When the API server refuses its status
// write as invalid (a CRD rule that fails on the stored value), the event is the report: the reconcile
// succeeds and is not retried; any other refusal is transient and retried.
func TestUndecodableReport(t *testing.T) {
	const msg = `cannot read the stored object: spec.scalingIntervals[1].maxResources.cpu: "1e1.5" is not a quantity`
	invalid := apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling.k8s.io", Kind: "Hvpa"}, "web",
		field.ErrorList{field.Invalid(field.NewPath("spec", "scalingIntervals"), "array", "no such key")})
	for _, tc := range []struct {
		name      string
		refusal   error
		wantErr   bool
		wantEvent bool
		patches   int // status patches tried over two reconciles of one resourceVersion
	}{
		{name: "written", refusal: nil, wantEvent: true, patches: 1},
		{name: "refused as invalid: the event reports it, no retry", refusal: invalid, wantEvent: true, patches: 1},
		{name: "refused for a while: retried", refusal: apierrors.NewInternalError(errors.New("etcd leader changed")), wantErr: true, patches: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := wrappers.MakeHvpa("ns", "web").HPA(true, 1, 1).Utilization(corev1.ResourceCPU, 80).Controlled(corev1.ResourceCPU).CPUPerReplica("1").Obj()
			patches := 0
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(h).WithStatusSubresource(h).
				WithInterceptorFuncs(interceptor.Funcs{
					Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
						if err := c.Get(ctx, key, obj, opts...); err != nil {
							return err
						}
						if got, ok := obj.(*hvpav1alpha1.Hvpa); ok { // read as the cache reads a stored object that does not decode
							*got = hvpav1alpha1.Hvpa{TypeMeta: got.TypeMeta, ObjectMeta: got.ObjectMeta, DecodeError: msg}
						}
						return nil
					},
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
						patches++
						if tc.refusal != nil {
							return tc.refusal
						}
						return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
					},
				}).Build()
			events := record.NewFakeRecorder(100)
			r := NewReconciler(c, nil, events, clocktesting.NewFakeClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)), time.Minute, nil)
			req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}}
			for range 2 {
				_, err := r.Reconcile(context.Background(), req)
				if (err != nil) != tc.wantErr {
					t.Fatalf("reconcile error %v, want one: %t", err, tc.wantErr)
				}
			}
			if patches != tc.patches {
				t.Errorf("%d status writes tried, want %d", patches, tc.patches)
			}
			var got []string
			for len(events.Events) > 0 {
				got = append(got, <-events.Events)
			}
			if hasEvent := len(got) > 0 && strings.Contains(got[0], decodeerr.Reason) && strings.Contains(got[0], "1e1.5"); hasEvent != tc.wantEvent || len(got) > 1 {
				t.Errorf("events %q, want one naming the field: %t", got, tc.wantEvent)
			}
		})
	}
}
