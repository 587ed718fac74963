package recommender

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/usage"
)

// The recommender keeps one model per configuration its VPAs ask for (flags, override annotations,
// container policies), and forgets the ones no VPA asks for any more: a VPA deleted, or its annotation
// changed, leaves no model behind, so churning annotations cannot grow the recommender's memory.
func TestModelsOfGoneObjectsAreForgotten(t *testing.T) {
	ctx := context.Background()
	var objs []client.Object
	for _, name := range []string{"a", "b"} {
		objs = append(objs, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}}})
	}
	vpa := func(name, ratio string) *vpav1.VerticalPodAutoscaler {
		return &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
			Annotations: map[string]string{recommender.AnnotationOOMBumpUpRatio: ratio}},
			Spec: vpav1.VerticalPodAutoscalerSpec{TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name}}}
	}
	objs = append(objs, vpa("a", "1.5"), vpa("b", "2"))
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).WithStatusSubresource(&vpav1.VerticalPodAutoscaler{}).Build()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC))
	r, err := NewRecommender(c, usageFunc(func() []usage.ContainerUsage { return nil }), nil, nil, clk, recommender.Defaults(), DefaultOptions(), nil)
	if err != nil {
		t.Fatal(err)
	}
	run := func(want int, why string) {
		t.Helper()
		clk.Step(time.Minute)
		if err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if len(r.models) != want {
			t.Errorf("%s: %d models, want %d", why, len(r.models), want)
		}
	}
	run(3, "the flags' and two annotations'")
	if err := c.Delete(ctx, vpa("b", "2")); err != nil {
		t.Fatal(err)
	}
	run(2, "VPA b deleted")
	for _, ratio := range []string{"3", "4", "5"} {
		v := &vpav1.VerticalPodAutoscaler{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, v); err != nil {
			t.Fatal(err)
		}
		v.Annotations[recommender.AnnotationOOMBumpUpRatio] = ratio
		if err := c.Update(ctx, v); err != nil {
			t.Fatal(err)
		}
		run(2, "VPA a's annotation changed to "+ratio)
	}
	if err := c.Delete(ctx, vpa("a", "5")); err != nil {
		t.Fatal(err)
	}
	run(1, "no VPA left: the flags' model only")
}
