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
	old := Autoscaler{"VerticalPodAutoscaler", "b", t0}
	sameAgeHvpa := Autoscaler{"Hvpa", "z", t0}
	young := Autoscaler{"VerticalPodAutoscaler", "a", t1}
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
