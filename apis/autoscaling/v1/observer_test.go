package v1

import "testing"

// A VPA is served by the recommender any entry of spec.recommenders names, as upstream's recommender reads
// them; with none, by the default recommender only.
func TestRecommendedBy(t *testing.T) {
	named := func(names ...string) *VerticalPodAutoscaler {
		v := &VerticalPodAutoscaler{}
		for _, n := range names {
			v.Spec.Recommenders = append(v.Spec.Recommenders, VerticalPodAutoscalerRecommenderSelector{Name: n})
		}
		return v
	}
	for _, tc := range []struct {
		v           *VerticalPodAutoscaler
		recommender string
		want        bool
	}{
		{named(), "", true},
		{named(), DefaultRecommender, true},
		{named(), "fast", false},
		{named("fast"), "fast", true},
		{named("fast"), "", false},
		{named("other", "fast"), "fast", true},
		{named("other", DefaultRecommender), "", true},
		{named("other", "more"), "fast", false},
	} {
		if got := tc.v.RecommendedBy(tc.recommender); got != tc.want {
			t.Errorf("recommenders %v, recommender %q: %v, want %v", tc.v.Spec.Recommenders, tc.recommender, got, tc.want)
		}
	}
}
