package hvpa

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/hvpacycle"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// TestStaleRecommendation: the embedded recommendation in status carries when the recommender last provided
// it (refreshed when it changes and at least every quarter of the bound, so that a steady one does not patch
// status on every reconcile); older than 3 recommender intervals + 5 minutes it is stale: RecommendationProvided
// False with reason RecommendationStale, and the decision holds scale-downs from it. A bad override annotation,
// which makes the recommender skip the Hvpa, is reported (reason InvalidOverride) instead of being ignored
// with RecommendationProvided True (issue 31, item 11).
func TestStaleRecommendation(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	key := types.NamespacedName{Namespace: "ns", Name: "web"}
	load := func(cpu int64) []recommender.ContainerLoad {
		return []recommender.ContainerLoad{{Container: "app", Target: recommender.Amounts{CPUMilli: cpu, MemoryBytes: 1 << 30},
			LowerBound: recommender.Amounts{CPUMilli: cpu, MemoryBytes: 1 << 30}, UpperBound: recommender.Amounts{CPUMilli: cpu, MemoryBytes: 1 << 30}}}
	}
	inStatus := func(cpu int64, ago time.Duration) *hvpav1alpha1.WorkloadRecommendation {
		wr := hvpacycle.Status(load(cpu))
		if ago >= 0 {
			wr.LastUpdateTime = &metav1.Time{Time: now.Add(-ago)}
		}
		return wr
	}
	type want struct {
		Condition string // status/reason of RecommendationProvided
		Stale     bool
		Updated   time.Duration // how long before now status.workloadRecommendation.lastUpdateTime is
	}
	cases := map[string]struct {
		annotations map[string]string
		interval    time.Duration
		fresh       []recommender.ContainerLoad // the recommender's this run; nil: none
		madeAgo     time.Duration               // how long ago the run that made fresh ran (0: now)
		before      *hvpav1alpha1.WorkloadRecommendation
		want        want
		message     string
	}{
		"fresh, the first":                       {fresh: load(900), want: want{"True/RecommendationProvided", false, 0}},
		"fresh, unchanged since 1m: kept":        {fresh: load(900), before: inStatus(900, time.Minute), want: want{"True/RecommendationProvided", false, time.Minute}},
		"fresh, unchanged since 2m: refreshed":   {fresh: load(900), before: inStatus(900, 2*time.Minute), want: want{"True/RecommendationProvided", false, 0}},
		"fresh, changed since 30s":               {fresh: load(1200), before: inStatus(900, 30*time.Second), want: want{"True/RecommendationProvided", false, 0}},
		"none this run, 8m old: still used":      {before: inStatus(900, 8*time.Minute), want: want{"True/RecommendationProvided", false, 8 * time.Minute}},
		"none this run, 8m1s old: stale":         {before: inStatus(900, 8*time.Minute+time.Second), want: want{"False/RecommendationStale", true, 8*time.Minute + time.Second}, message: "2026-11-26T11:51:59Z, more than 8m0s ago"},
		"none this run, no lastUpdateTime":       {before: inStatus(900, -1), want: want{"False/RecommendationStale", true, -1}, message: "has no lastUpdateTime"},
		"a 10m interval: 34m old is still fresh": {interval: 10 * time.Minute, before: inStatus(900, 34*time.Minute), want: want{"True/RecommendationProvided", false, 34 * time.Minute}},
		"bad override, 5m old": {annotations: map[string]string{recommender.AnnotationOOMBumpUpRatio: "Inf"}, before: inStatus(900, 5*time.Minute),
			want: want{"False/InvalidOverride", false, 5 * time.Minute}, message: `annotation recommender.hvpa.dev/oom-bump-up-ratio: "Inf" is not a number in [1, 10] (e.g. 1.5): the embedded recommender skips this Hvpa until the annotation is fixed; the recommendation in status, last updated at 2026-11-26T11:55:00Z, is used until it is older than 8m0s`},
		"bad override, 9m old: stale": {annotations: map[string]string{recommender.AnnotationOOMBumpUpRatio: "Inf"}, before: inStatus(900, 9*time.Minute),
			want: want{"False/InvalidOverride", true, 9 * time.Minute}, message: "is stale: scale-downs from it (replicas and per pod) are held"},
		"an unknown annotation under the prefix": {annotations: map[string]string{"recommender.hvpa.dev/safety-margn": "0.2"}, before: inStatus(900, time.Minute),
			want: want{"False/InvalidOverride", false, time.Minute}, message: "annotation recommender.hvpa.dev/safety-margn is not an override"},
		"the adaptive model": {annotations: map[string]string{"recommender.hvpa.dev/model": "adaptive"}, before: inStatus(900, time.Minute),
			want: want{"False/InvalidOverride", false, time.Minute}, message: `annotation recommender.hvpa.dev/model: "adaptive": an Hvpa's embedded recommender runs the upstream model only`},
		// found in review: the recommender's last one, read again and again while its runs fail before they
		// publish, was refreshed at every read and never turned stale
		"the recommender's last, made 9m ago: stale": {fresh: load(900), madeAgo: 9 * time.Minute, before: inStatus(900, 9*time.Minute),
			want: want{"False/RecommendationStale", true, 9 * time.Minute}, message: "is stale"},
		"the recommender's last, made 2m ago, unchanged: refreshed to then": {fresh: load(900), madeAgo: 2 * time.Minute, before: inStatus(900, 5*time.Minute),
			want: want{"True/RecommendationProvided", false, 2 * time.Minute}},
		"a good override": {annotations: map[string]string{recommender.AnnotationSafetyMargin: "0.25"}, fresh: load(900), want: want{"True/RecommendationProvided", false, 0}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := wrappers.MakeHvpa("ns", "web").Obj()
			h.Annotations = tc.annotations
			h.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}
			h.Spec.ScalingIntervals = []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](5)}}
			h.Status.WorkloadRecommendation = tc.before
			spec, errs := scaling.FromHvpa(h)
			if len(errs) > 0 {
				t.Fatal(errs.ToAggregate())
			}
			recs := fixedRecs{}
			if tc.fresh != nil {
				recs[key] = recommender.HvpaRecommendation{Load: tc.fresh, Confidence: 3, At: now.Add(-tc.madeAgo)}
			}
			r := &Reconciler{Recommendations: recs, RecommenderInterval: tc.interval}
			st := scaling.State{Now: now, Replicas: 2, Containers: []scaling.Container{{Name: "app", Requests: scaling.V(500, 1<<29)}}}
			r.recommendationStatus(h, spec, &st, r.embedded(h), now)
			c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionRecommendationProvided)
			got := want{Condition: string(c.Status) + "/" + c.Reason, Stale: st.StaleRecommendation, Updated: -1}
			if wr := h.Status.WorkloadRecommendation; wr != nil && wr.LastUpdateTime != nil {
				got.Updated = now.Sub(wr.LastUpdateTime.Time)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nmessage: %s", diff, c.Message)
			}
			if !strings.Contains(c.Message, tc.message) {
				t.Errorf("message %q does not say %q", c.Message, tc.message)
			}
			if len(st.Recommendation) != 1 {
				t.Errorf("the decision gets %d recommendations, want the one in status", len(st.Recommendation))
			}
			// a minute later (no new recommendation) the condition says the same: a message that changed at
			// every reconcile would write status at every reconcile, each write waking the Hvpa again
			if tc.fresh == nil {
				h2 := h.DeepCopy()
				h2.Status.Conditions = nil
				st2 := scaling.State{Now: now.Add(time.Minute), Replicas: 2, Containers: st.Containers}
				r.recommendationStatus(h2, spec, &st2, r.embedded(h2), now.Add(time.Minute))
				if c2 := meta.FindStatusCondition(h2.Status.Conditions, hvpav1alpha1.ConditionRecommendationProvided); c2.Message != c.Message && c2.Reason == c.Reason {
					t.Errorf("the message changed in a minute:\n%s\n%s", c.Message, c2.Message)
				}
			}
		})
	}
}

// unpublished is a recommender that has not run in this process yet.
type unpublished struct{}

func (unpublished) HvpaRecommendation(types.NamespacedName) (recommender.HvpaRecommendation, bool) {
	return recommender.HvpaRecommendation{}, false
}
func (unpublished) HvpaRecommendationsPublished() bool { return false }

// TestRecentUnknownUntilTheFirstRun: the recent load of an Hvpa without an embedded recommendation is unknown
// (the totals in force are kept: a restart scales nothing) only until the recommender's first run in this
// process, or while the recommendation it serves has no recent sample (restored from checkpoints, no usage
// since: a restart scales nothing); an Hvpa it then does not serve (a bad override annotation makes it skip
// the Hvpa) decides from the recommendation in status, scale-ups included, as its condition says
// (docs/design/scaling.md section 2a).
func TestRecentUnknownUntilTheFirstRun(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	load := []recommender.ContainerLoad{{Container: "app", Target: recommender.Amounts{CPUMilli: 900, MemoryBytes: 1 << 30}}}
	recent := []recommender.ContainerLoad{{Container: "app", Target: recommender.Amounts{CPUMilli: 900, MemoryBytes: 1 << 30},
		Recent: []recommender.LoadSample{{At: now.Add(-time.Minute), CPUMilli: 800, MemoryBytes: 1 << 29}}}}
	for name, tc := range map[string]struct {
		recs RecommendationSource
		want bool
	}{
		"before the recommender's first run":  {recs: unpublished{}, want: true},
		"after it, an Hvpa it does not serve": {recs: fixedRecs{}, want: false},
		"after it, an Hvpa it serves":         {recs: fixedRecs{{Namespace: "ns", Name: "web"}: {Load: recent, Confidence: 3}}, want: false},
		// restored from its checkpoints, but the metrics API has given no usage since the restart
		"after it, an Hvpa it serves with no recent sample": {recs: fixedRecs{{Namespace: "ns", Name: "web"}: {Load: load, Confidence: 3}}, want: true},
		"no recommender in this process, none in it":        {recs: nil, want: true},
	} {
		t.Run(name, func(t *testing.T) {
			h := wrappers.MakeHvpa("ns", "web").Obj()
			h.Spec.VPA = &hvpav1alpha1.VpaSpec{Deploy: true}
			h.Spec.ScalingIntervals = []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](5)}}
			h.Status.WorkloadRecommendation = hvpacycle.Status(load)
			h.Status.WorkloadRecommendation.LastUpdateTime = &metav1.Time{Time: now.Add(-time.Minute)}
			spec, errs := scaling.FromHvpa(h)
			if len(errs) > 0 {
				t.Fatal(errs.ToAggregate())
			}
			r := &Reconciler{Recommendations: tc.recs}
			st := scaling.State{Now: now, Replicas: 2, Containers: []scaling.Container{{Name: "app", Requests: scaling.V(500, 1<<29)}}}
			r.recommendationStatus(h, spec, &st, r.embedded(h), now)
			if st.RecentUnknown != tc.want {
				t.Errorf("RecentUnknown %v, want %v", st.RecentUnknown, tc.want)
			}
		})
	}
}
