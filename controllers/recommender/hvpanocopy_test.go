package recommender_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// embeddedHvpa is an Hvpa with the embedded recommender on (spec.vpa.deploy) for Deployment target, with a
// container policy that sets the model's oomBumpUpRatio to ratio.
func embeddedHvpa(ns, name, target string, ratio resource.Quantity) *hvpav1alpha1.Hvpa {
	return &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: map[string]string{"note": "x"}},
		Spec: hvpav1alpha1.HvpaSpec{
			TargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: target},
			VPA: &hvpav1alpha1.VpaSpec{Deploy: true, Template: hvpav1alpha1.VpaTemplate{ResourcePolicy: &vpav1.PodResourcePolicy{
				ContainerPolicies: []vpav1.ContainerResourcePolicy{{ContainerName: "app", OOMBumpUpRatio: &ratio,
					MaxAllowed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}}}},
			ScalingIntervals: []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](4)}},
		}}
}

// TestHvpasReadWithoutCopies: every run of the recommender (and its checkpoint garbage collection, which
// reads their names) lists the Hvpas from the cache without a deep copy of each (client.UnsafeDisableDeepCopy):
// before, each run copied every Hvpa, status and all. The run only reads them: after two runs that recommend
// for one Hvpa and refuse another's oomBumpUpRatio (an error message that formats the quantity, which would
// cache its string in the cache's object), the objects the lists returned are exactly as they were.
func TestHvpasReadWithoutCopies(t *testing.T) {
	objs, played := fleet(2, 1, 2, func(int, int) (int64, int64) { return 300, 200 << 20 })
	var world []client.Object
	for _, o := range objs {
		if _, isVPA := o.(*vpav1.VerticalPodAutoscaler); !isVPA { // the Hvpas serve these workloads
			world = append(world, o)
		}
	}
	world = append(world, embeddedHvpa("ns", "good", "app-0", resource.MustParse("1.5")), embeddedHvpa("ns", "bad-ratio", "app-1", resource.MustParse("20")))
	var listed, before []*hvpav1alpha1.HvpaList
	copied := 0
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(world...).
		WithStatusSubresource(&vpav1.VerticalPodAutoscaler{}).
		WithInterceptorFuncs(interceptor.Funcs{Patch: checkpointPatch(nil), List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			err := c.List(ctx, list, opts...)
			if l, ok := list.(*hvpav1alpha1.HvpaList); ok && err == nil {
				if o := (&client.ListOptions{}).ApplyOptions(opts); o.UnsafeDisableDeepCopy == nil || !*o.UnsafeDisableDeepCopy {
					copied++
				}
				for i := range l.Items {
					// as the cache holds what a user wrote in a form that is not canonical: decoded with no cached
					// string (a JSON round trip, as the fake client makes, canonicalizes it)
					if l.Items[i].Name == "bad-ratio" {
						l.Items[i].Spec.VPA.Template.ResourcePolicy.ContainerPolicies[0].OOMBumpUpRatio = ptr.To(resource.MustParse("20.0"))
					}
				}
				listed, before = append(listed, l), append(before, l.DeepCopy())
			}
			return err
		}}).Build()
	opts := recommenderctrl.DefaultOptions()
	opts.PerVPAConfig = true // the policy's oomBumpUpRatio is read (and refused) with the gate on only
	r, err := recommenderctrl.NewRecommender(c, played, nil, nil, clock.RealClock{}, recommender.Defaults(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := r.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}

	if len(listed) == 0 || copied != 0 {
		t.Errorf("%d Hvpa lists, %d of them with a deep copy of every Hvpa", len(listed), copied)
	}
	if rec, ok := r.HvpaRecommendation(types.NamespacedName{Namespace: "ns", Name: "good"}); !ok || len(rec.Load) == 0 {
		t.Fatalf("no recommendation for Hvpa good: %+v", rec)
	}
	if _, ok := r.HvpaRecommendation(types.NamespacedName{Namespace: "ns", Name: "bad-ratio"}); ok {
		t.Fatal("a recommendation for Hvpa bad-ratio, whose oomBumpUpRatio 20 is refused")
	}
	for i := range listed {
		// reflect.DeepEqual sees unexported fields too, such as a quantity's cached string (cmp compares
		// quantities with their Equal method)
		if !reflect.DeepEqual(before[i], listed[i]) {
			t.Errorf("the run wrote into the Hvpas it listed (-before +after; no difference shown: a quantity's cached string):\n%s", cmp.Diff(before[i], listed[i]))
		}
	}
}

// TestHvpaRecommendationsPublished: before its first run the recommender has published no Hvpa
// recommendation (an Hvpa's recent load is unknown, and the Hvpa controller keeps its totals); a run
// publishes them; a run that cannot list the Hvpas keeps those published (an empty round would leave every
// Hvpa without its recent load for a run).
func TestHvpaRecommendationsPublished(t *testing.T) {
	objs, played := fleet(2, 1, 2, func(int, int) (int64, int64) { return 300, 200 << 20 })
	var world []client.Object
	for _, o := range objs {
		if _, isVPA := o.(*vpav1.VerticalPodAutoscaler); !isVPA {
			world = append(world, o)
		}
	}
	world = append(world, embeddedHvpa("ns", "good", "app-0", resource.MustParse("1.5")))
	failList := false
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(world...).
		WithStatusSubresource(&vpav1.VerticalPodAutoscaler{}).
		WithInterceptorFuncs(interceptor.Funcs{Patch: checkpointPatch(nil), List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*hvpav1alpha1.HvpaList); ok && failList {
				return context.DeadlineExceeded
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	opts := recommenderctrl.DefaultOptions()
	opts.PerVPAConfig = true // the policy's oomBumpUpRatio is read (and refused) with the gate on only
	r, err := recommenderctrl.NewRecommender(c, played, nil, nil, clock.RealClock{}, recommender.Defaults(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: "ns", Name: "good"}
	if r.HvpaRecommendationsPublished() {
		t.Fatal("published before the first run")
	}
	for range 2 {
		if err := r.RunOnce(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := r.HvpaRecommendation(key); !ok || !r.HvpaRecommendationsPublished() {
		t.Fatalf("after two runs: published %v, a recommendation for %s %v", r.HvpaRecommendationsPublished(), key, ok)
	}
	failList = true
	_ = r.RunOnce(context.Background()) // the run may fail on other lists of Hvpas; what it published is the point
	if _, ok := r.HvpaRecommendation(key); !ok {
		t.Errorf("a run that could not list the Hvpas dropped %s's recommendation", key)
	}
}
