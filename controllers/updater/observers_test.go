package updater

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/workload"
)

// On a workload an Hvpa acts on, a VPA another recommender serves only observes: the updater does not act on
// it. Elsewhere, and for the VPAs hvpa's recommender serves (their conflicts are its conditions), nothing is
// dropped.
func TestWithoutObservers(t *testing.T) {
	web, api := workload.RefOf("apps/v1", "Deployment", "web"), workload.RefOf("apps/v1", "Deployment", "api")
	vpa := func(name, recommender string, target workload.Ref) served {
		v := &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: vpav1.VerticalPodAutoscalerSpec{UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: ptr.To(vpav1.UpdateModeAuto)}}}
		if recommender != "" {
			v.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: recommender}}
		}
		return served{ctl: Controller{Kind: "VerticalPodAutoscaler", Namespace: "shop", Name: name}, target: target, obj: v}
	}
	hvpa := func(ns, name string, target workload.Ref) served {
		return served{ctl: Controller{Kind: "Hvpa", Namespace: ns, Name: name}, target: target,
			obj: &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}}
	}
	cases := map[string]struct {
		in   []served
		want []string
	}{
		"another recommender's VPA beside an Hvpa is dropped": {
			[]served{vpa("upstream-web", "upstream", web), hvpa("shop", "web", web)}, []string{"Hvpa/web"}},
		"hvpa's own VPA beside an Hvpa stays (the recommender's conditions decide)": {
			[]served{vpa("web", "", web), hvpa("shop", "web", web)}, []string{"VerticalPodAutoscaler/web", "Hvpa/web"}},
		"another recommender's VPA alone is acted on (drop-in for upstream's recommender)": {
			[]served{vpa("upstream-api", "upstream", api), hvpa("shop", "web", web)}, []string{"VerticalPodAutoscaler/upstream-api", "Hvpa/web"}},
		"an Hvpa of another namespace on a workload of the same name is no reason": {
			[]served{vpa("upstream-web", "upstream", web), hvpa("other", "web", web)}, []string{"VerticalPodAutoscaler/upstream-web", "Hvpa/web"}},
	}
	for name, c := range cases {
		var got []string
		for _, s := range withoutObservers(c.in, "default") {
			got = append(got, s.ctl.Kind+"/"+s.ctl.Name)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", name, got, c.want)
			}
		}
	}
}
