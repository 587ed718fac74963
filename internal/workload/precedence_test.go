package workload

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNotServingOldestServes(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Second))
	old := Autoscaler{Kind: "VerticalPodAutoscaler", Name: "b", Created: t0}
	sameAgeHvpa := Autoscaler{Kind: "Hvpa", Name: "z", Created: t0}
	young := Autoscaler{Kind: "VerticalPodAutoscaler", Name: "a", Created: t1}
	all := []Autoscaler{young, old, sameAgeHvpa}
	if msg := NotServing(sameAgeHvpa, all, "Deployment", "web"); msg != "" {
		t.Errorf("the oldest (by kind at the same age) must serve: %q", msg)
	}
	for _, a := range []Autoscaler{old, young} {
		msg := NotServing(a, all, "Deployment", "web")
		if !strings.Contains(msg, "the oldest, Hvpa z, serves it") || !strings.HasPrefix(msg, "Deployment web is also the target of") {
			t.Errorf("%s: %q", a, msg)
		}
	}
	SortAutoscalers(all)
	if all[0] != sameAgeHvpa || all[1] != old || all[2] != young {
		t.Errorf("order %v", all)
	}
	if NotServing(young, []Autoscaler{young}, "Deployment", "web") != "" {
		t.Error("alone, an autoscaler serves its workload")
	}
}

// An observer (updateMode Off, or another recommender's VPA) is served and never in conflict: an older
// observer does not stop a younger actor, and an actor does not stop an observer. Only two actors conflict.
func TestNotServingObservers(t *testing.T) {
	t0 := metav1.NewTime(time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	t1 := metav1.NewTime(t0.Add(time.Second))
	t2 := metav1.NewTime(t0.Add(2 * time.Second))
	goldilocks := Autoscaler{Kind: "VerticalPodAutoscaler", Name: "goldilocks-web", Created: t0, Observer: true}
	hvpa := Autoscaler{Kind: "Hvpa", Name: "web", Created: t1}
	secondActor := Autoscaler{Kind: "VerticalPodAutoscaler", Name: "web", Created: t2}

	cases := map[string]struct {
		self Autoscaler
		all  []Autoscaler
		want string // "" serves; else a part of the message
	}{
		"an older observer does not stop an actor":   {hvpa, []Autoscaler{goldilocks, hvpa}, ""},
		"an actor does not stop an observer":         {goldilocks, []Autoscaler{goldilocks, hvpa}, ""},
		"an observer among two actors is served":     {goldilocks, []Autoscaler{goldilocks, hvpa, secondActor}, ""},
		"the oldest actor serves, observers ignored": {hvpa, []Autoscaler{goldilocks, hvpa, secondActor}, ""},
		"a second actor is a conflict, naming actors only": {secondActor, []Autoscaler{goldilocks, hvpa, secondActor},
			"is also the target of Hvpa web: the oldest, Hvpa web, serves it"},
	}
	for name, c := range cases {
		got := NotServing(c.self, c.all, "Deployment", "web")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: NotServing(%s) = %q, want %q", name, c.self, got, c.want)
		}
	}
	all := []Autoscaler{goldilocks, secondActor, hvpa}
	SortAutoscalers(all)
	if all[0] != hvpa || all[1] != secondActor || all[2] != goldilocks {
		t.Errorf("order %v: actors (oldest first), then observers", all)
	}
}
