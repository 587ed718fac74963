package updater

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/reference"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// refRecorder records events as client-go's recorder reads their object: a reference made from it
// (reference.GetReference), which names the kind from the scheme when the object carries none.
type refRecorder struct{ events []string }

func (r *refRecorder) Event(obj runtime.Object, typ, reason, msg string) {
	ref, err := reference.GetReference(testenv.Scheme(), obj)
	if err != nil {
		r.events = append(r.events, "no reference: "+err.Error())
		return
	}
	r.events = append(r.events, fmt.Sprintf("%s %s %s/%s: %s", typ, reason, ref.Kind, ref.Name, msg))
}

func (r *refRecorder) Eventf(obj runtime.Object, typ, reason, format string, args ...any) {
	r.Event(obj, typ, reason, fmt.Sprintf(format, args...))
}

func (r *refRecorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, typ, reason, format string, args ...any) {
	r.Event(obj, typ, reason, fmt.Sprintf(format, args...))
}

// hvpaWorld is a Deployment web (2 replicas, through ReplicaSet web-1) whose pods run at 100m/100Mi, and
// Hvpa web (updateMode Recreate) whose intent is 500m/256Mi, with container policies (bounds and a
// requestToLimitRatio), evictionRequirements and limitsRequestsGapScaleParams: every part of an Hvpa the
// updater reads.
func hvpaWorld() []client.Object {
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "d1"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "r1", Labels: labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "d1", Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	q := resource.MustParse
	mode, recreate := vpav1.UpdateModeRecreate, vpav1.TargetHigherThanRequests
	h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "h1", Annotations: map[string]string{"note": "x"}},
		Spec: hvpav1alpha1.HvpaSpec{
			TargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			VPA: &hvpav1alpha1.VpaSpec{Deploy: true, Template: hvpav1alpha1.VpaTemplate{
				UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: &mode, MinReplicas: ptr.To[int32](2),
					EvictionRequirements: []*vpav1.EvictionRequirement{{Resources: []corev1.ResourceName{corev1.ResourceCPU}, ChangeRequirement: recreate}}},
				ResourcePolicy: &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{{ContainerName: "app",
					MinAllowed: corev1.ResourceList{corev1.ResourceCPU: q("50m")}, MaxAllowed: corev1.ResourceList{corev1.ResourceCPU: q("1.50"), corev1.ResourceMemory: q("1Gi")},
					RequestToLimitRatio: &vpav1.RequestToLimitRatio{CPU: &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioQuantity, Quantity: ptr.To(q("0.1"))}}}}}}},
			LimitsRequestsGapScaleParams: &hvpav1alpha1.ResourceChangeParams{Memory: &hvpav1alpha1.ChangeParams{Percentage: ptr.To[int32](50)}},
			ScalingIntervals:             []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](4)}},
		},
		Status: hvpav1alpha1.HvpaStatus{Selector: "app=web", Desired: &hvpav1alpha1.DesiredState{Replicas: 2,
			Containers: []hvpav1alpha1.ContainerResources{{Name: "app", Requests: corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("256Mi")}}}}},
	}
	objs := []client.Object{dep, rs, h}
	for i := range 2 {
		objs = append(objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("web-1-%d", i), UID: types.UID(fmt.Sprint("p", i)), Labels: labels,
			CreationTimestamp: metav1.NewTime(now.Add(-24 * time.Hour)),
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "r1", Controller: ptr.To(true)}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("100Mi")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(now.Add(-23 * time.Hour))}}}})
	}
	return objs
}

// asUserWrote gives the Hvpa's quantities as the cache holds what a user wrote in a form that is not
// canonical ("1.50", "0.1", "0.5"): decoded with no cached string, which formatting one through a pointer
// would write into the cache's object (resource.Quantity.String). A JSON round trip, as the fake client
// makes, canonicalizes them.
func asUserWrote(h *hvpav1alpha1.Hvpa) {
	p := &h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies[0]
	p.MaxAllowed[corev1.ResourceCPU] = resource.MustParse("1.50")
	p.RequestToLimitRatio.CPU.Quantity = ptr.To(resource.MustParse("0.1"))
	h.Status.Desired.Containers[0].Requests[corev1.ResourceCPU] = resource.MustParse("0.5")
}

// TestHvpasReadWithoutCopies: every update loop lists the Hvpas from the cache without a deep copy of each
// (client.UnsafeDisableDeepCopy): before, each loop copied every Hvpa, status and all. The loop only reads
// them: after a whole loop that evicts one of the Hvpa's pods (and sends its events, which make a reference
// from the Hvpa as client-go's recorder does), the objects the list returned are exactly as they were, down to
// the strings cached in their quantities.
func TestHvpasReadWithoutCopies(t *testing.T) {
	var listed, before []*hvpav1alpha1.HvpaList
	copied := 0
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(hvpaWorld()...).
		WithIndex(&corev1.Pod{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			err := c.List(ctx, list, opts...)
			if l, ok := list.(*hvpav1alpha1.HvpaList); ok && err == nil {
				for i := range l.Items {
					asUserWrote(&l.Items[i])
				}
				if o := (&client.ListOptions{}).ApplyOptions(opts); o.UnsafeDisableDeepCopy == nil || !*o.UnsafeDisableDeepCopy {
					copied++
				}
				listed, before = append(listed, l), append(before, l.DeepCopy())
			}
			return err
		}}).Build()
	rec := &refRecorder{}
	u := New(c, c, rec, clocktesting.NewFakeClock(now), features.New(), DefaultOptions(), NewMetrics(nil))
	if err := u.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}

	if len(listed) == 0 || copied != 0 {
		t.Errorf("%d Hvpa lists, %d of them with a deep copy of every Hvpa", len(listed), copied)
	}
	evicted := 0
	for _, e := range rec.events {
		if strings.HasPrefix(e, "Normal "+EventEvicted+" Hvpa/web: ") {
			evicted++
		}
	}
	if evicted != 1 {
		t.Fatalf("the loop did not evict one pod of the Hvpa (events on the Hvpa: %d):\n%s", evicted, strings.Join(rec.events, "\n"))
	}
	for i := range listed {
		// reflect.DeepEqual sees unexported fields too, such as a quantity's cached string (cmp compares
		// quantities with their Equal method)
		if !reflect.DeepEqual(before[i], listed[i]) {
			t.Errorf("the loop wrote into the Hvpas it listed (-before +after; no difference shown: a quantity's cached string):\n%s", cmp.Diff(before[i], listed[i]))
		}
	}
}
