package hvpa

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
)

type fixedRecs map[types.NamespacedName]recommender.HvpaRecommendation

func (f fixedRecs) HvpaRecommendation(k types.NamespacedName) (recommender.HvpaRecommendation, bool) {
	r, ok := f[k]
	return r, ok
}

// HvpaRecommendationsPublished: a fixed set is a published round.
func (f fixedRecs) HvpaRecommendationsPublished() bool { return true }

func TestLowConfidenceCondition(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	key := types.NamespacedName{Namespace: "ns", Name: "h"}
	rec := func(days float64) fixedRecs {
		return fixedRecs{key: {Load: []recommender.ContainerLoad{{Container: "app", Target: recommender.Amounts{CPUMilli: 100, MemoryBytes: 1 << 20}}}, Confidence: days}}
	}
	type want struct {
		Low       bool
		Condition string // "status/reason", "" for none
	}
	cases := map[string]struct {
		recs      RecommendationSource
		threshold float64
		deploy    bool
		before    *metav1.Condition
		want      want
	}{
		"half a day: low":                       {recs: rec(0.5), deploy: true, want: want{true, "True/LowConfidence"}},
		"two days: enough":                      {recs: rec(2), deploy: true, want: want{false, "False/EnoughHistory"}},
		"exactly the threshold: enough":         {recs: rec(1), deploy: true, want: want{false, "False/EnoughHistory"}},
		"threshold 3 days":                      {recs: rec(2), threshold: 3, deploy: true, want: want{true, "True/LowConfidence"}},
		"recommender off: condition removed":    {recs: rec(0.5), before: &metav1.Condition{Type: hvpav1alpha1.ConditionLowConfidence, Status: metav1.ConditionTrue, Reason: "LowConfidence", Message: "before"}, want: want{false, ""}},
		"no word yet, no condition: low":        {recs: fixedRecs{}, deploy: true, want: want{true, "True/LowConfidence"}},
		"no recommender in process: kept False": {deploy: true, before: &metav1.Condition{Type: hvpav1alpha1.ConditionLowConfidence, Status: metav1.ConditionFalse, Reason: "EnoughHistory", Message: "before"}, want: want{false, "False/EnoughHistory"}},
		"no word yet: kept True":                {recs: fixedRecs{}, deploy: true, before: &metav1.Condition{Type: hvpav1alpha1.ConditionLowConfidence, Status: metav1.ConditionTrue, Reason: "LowConfidence", Message: "before"}, want: want{true, "True/LowConfidence"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h"}}
			if tc.deploy {
				h.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}
			}
			if tc.before != nil {
				h.Status.Conditions = []metav1.Condition{*tc.before}
			}
			r := &Reconciler{Recommendations: tc.recs, LowConfidenceDays: tc.threshold}
			got := want{Low: r.lowConfidence(h, r.embedded(h), now)}
			if c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionLowConfidence); c != nil {
				got.Condition = string(c.Status) + "/" + c.Reason
				if c.Message == "" {
					t.Errorf("condition without a message")
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
