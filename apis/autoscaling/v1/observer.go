package v1

// DefaultRecommender is the recommender that serves a VerticalPodAutoscaler whose spec.recommenders names none.
const DefaultRecommender = "default"

// RecommendedBy says whether recommender ("": DefaultRecommender) serves the object: an entry of
// spec.recommenders names it, or none is named and it is DefaultRecommender (upstream's recommender reads
// every entry; the webhooks refuse more than one, but an object stored while they were down may have more).
func (o *VerticalPodAutoscaler) RecommendedBy(recommender string) bool {
	if recommender == "" {
		recommender = DefaultRecommender
	}
	if len(o.Spec.Recommenders) == 0 {
		return recommender == DefaultRecommender
	}
	for _, r := range o.Spec.Recommenders {
		if r.Name == recommender {
			return true
		}
	}
	return false
}

// Observes says whether, to hvpa (whose recommender is named recommender), the object only watches its workload:
// its updateMode is Off (Goldilocks creates such VPAs for every workload), or another recommender serves it.
// An observer never stops an Hvpa on the same workload, and an Hvpa there is never stopped by it; only two
// actors on one workload are a conflict.
func (o *VerticalPodAutoscaler) Observes(recommender string) bool {
	return o.EffectiveUpdateMode() == UpdateModeOff || !o.RecommendedBy(recommender)
}
