package recommender

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// jsonFields are the JSON names of a struct type's fields.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		out = append(out, strings.Split(t.Field(i).Tag.Get("json"), ",")[0])
	}
	return out
}

// TestStatusMergePatch: the status patch, written from the new status alone, turns any status into the new
// one as the API server applies a merge patch (RFC 7386): what the new status lacks is removed, lists are
// replaced whole, the spec and the rest of the object are untouched, and it carries the resourceVersion read
// (a stale read is refused). It names every field of the status types: one added to them must be added to it.
func TestStatusMergePatch(t *testing.T) {
	if got, want := jsonFields(reflect.TypeFor[statusMergePatch]().Field(1).Type), jsonFields(reflect.TypeFor[vpav1.VerticalPodAutoscalerStatus]()); !reflect.DeepEqual(got, want) {
		t.Fatalf("the patch writes status fields %v, the status has %v", got, want)
	}
	if got, want := jsonFields(reflect.TypeFor[recommendationPatch]()), jsonFields(reflect.TypeFor[vpav1.RecommendedPodResources]()); !reflect.DeepEqual(got, want) {
		t.Fatalf("the patch writes recommendation fields %v, the recommendation has %v", got, want)
	}
	rec := func(containers ...string) *vpav1.RecommendedPodResources {
		r := &vpav1.RecommendedPodResources{}
		for _, c := range containers {
			l := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")}
			r.ContainerRecommendations = append(r.ContainerRecommendations, vpav1.RecommendedContainerResources{ContainerName: c, Target: l, LowerBound: l, UpperBound: l, UncappedTarget: l})
		}
		return r
	}
	at := metav1.NewTime(metav1.Now().Rfc3339Copy().Time)
	conds := func(types ...vpav1.VerticalPodAutoscalerConditionType) []vpav1.VerticalPodAutoscalerCondition {
		var out []vpav1.VerticalPodAutoscalerCondition
		for _, c := range types {
			out = append(out, vpav1.VerticalPodAutoscalerCondition{Type: c, Status: corev1.ConditionTrue, Reason: "R", Message: "m", LastTransitionTime: at, ObservedGeneration: 2})
		}
		return out
	}
	full := vpav1.VerticalPodAutoscalerStatus{Recommendation: rec("app", "sidecar"), Conditions: conds(vpav1.RecommendationProvided, vpav1.LowConfidence, vpav1.NoPodsMatched),
		ObservedGeneration: ptr.To[int64](2)}
	for _, tc := range []struct {
		name     string
		old, new vpav1.VerticalPodAutoscalerStatus
	}{
		{"first status", vpav1.VerticalPodAutoscalerStatus{}, full},
		{"a container less, a condition less", full, vpav1.VerticalPodAutoscalerStatus{Recommendation: rec("app"), Conditions: conds(vpav1.RecommendationProvided, vpav1.LowConfidence), ObservedGeneration: ptr.To[int64](3)}},
		{"recommendation removed (configuration unsupported)", full, vpav1.VerticalPodAutoscalerStatus{Conditions: conds(vpav1.ConfigUnsupported), ObservedGeneration: ptr.To[int64](2)}},
		{"a recommendation of no container", full, vpav1.VerticalPodAutoscalerStatus{Recommendation: rec(), Conditions: full.Conditions, ObservedGeneration: full.ObservedGeneration}},
		{"everything removed", full, vpav1.VerticalPodAutoscalerStatus{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: "41", Labels: map[string]string{"a": "b"}},
				Spec:   vpav1.VerticalPodAutoscalerSpec{UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: ptr.To(vpav1.UpdateModeOff)}},
				Status: tc.old}
			doc, err := json.Marshal(stored)
			if err != nil {
				t.Fatal(err)
			}
			patch, err := statusPatch("41", tc.new)
			if err != nil {
				t.Fatal(err)
			}
			merged, err := jsonpatch.MergePatch(doc, patch)
			if err != nil {
				t.Fatal(err)
			}
			var got vpav1.VerticalPodAutoscaler
			if err := json.Unmarshal(merged, &got); err != nil {
				t.Fatal(err)
			}
			want := stored
			want.Status = tc.new
			if want.Status.Recommendation != nil && len(want.Status.Recommendation.ContainerRecommendations) == 0 {
				want.Status.Recommendation = &vpav1.RecommendedPodResources{} // stored as {}
			}
			if !equality.Semantic.DeepEqual(got, want) {
				t.Errorf("patch %s over the stored status gives (-want +got):\n%s", patch, cmp.Diff(want, got))
			}
		})
	}
}
