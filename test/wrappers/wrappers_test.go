package wrappers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// The builders share no maps between objects or between a selector and a template: a suite that changes
// one object never changes another.
func TestWrappersShareNothing(t *testing.T) {
	w := MakeDeployment("ns", "web")
	a := w.Obj()
	w.PodLabel("answer", "infeasible")
	if _, ok := a.Spec.Selector.MatchLabels["answer"]; ok {
		t.Error("a pod label went into the selector")
	}
	if a.Spec.Template.Labels["answer"] != "infeasible" || a.Spec.Template.Labels["app"] != "web" {
		t.Errorf("pod labels %v, want app=web and answer=infeasible", a.Spec.Template.Labels)
	}
	if b := MakeDeployment("ns", "web").Obj(); len(b.Spec.Template.Labels) != 1 {
		t.Errorf("a new Deployment has pod labels %v", b.Spec.Template.Labels)
	}
}

func TestVPAWrapper(t *testing.T) {
	v := MakeVPA("ns", "web").Target("StatefulSet", "db").Mode(vpav1.UpdateModeInPlaceOrRecreate).Recommender("upstream").
		Recommendation(ContainerRecommendation("app", Resources("250m", "1Gi"), nil, nil)).Obj()
	if v.Spec.TargetRef.Kind != "StatefulSet" || v.Spec.TargetRef.Name != "db" || *v.Spec.UpdatePolicy.UpdateMode != vpav1.UpdateModeInPlaceOrRecreate ||
		v.Spec.Recommenders[0].Name != "upstream" {
		t.Errorf("spec %+v", v.Spec)
	}
	r := v.Status.Recommendation.ContainerRecommendations[0]
	if r.ContainerName != "app" || !r.Target.Cpu().Equal(Resources("250m", "")[corev1.ResourceCPU]) || !r.UncappedTarget.Memory().Equal(*r.Target.Memory()) {
		t.Errorf("recommendation %+v", r)
	}
	if MakeVPA("ns", "web").Recommender("").Obj().Spec.Recommenders != nil {
		t.Error(`Recommender("") must leave the default recommender`)
	}
}

func TestHvpaWrapper(t *testing.T) {
	h := MakeHvpa("ns", "web").CPUPerReplica("500m", "1").Overlap(30, 0).HPA(true, 1, 2).Utilization(corev1.ResourceCPU, 80).
		Controlled(corev1.ResourceCPU).Obj()
	iv := h.Spec.ScalingIntervals
	if len(iv) != 2 || *iv[1].MaxReplicas != 2 || iv[1].MaxResources.CPU.String() != "1" || iv[1].MaxResources.Memory != nil {
		t.Errorf("intervals %+v", iv)
	}
	if *h.Spec.ScalingIntervalsOverlap.CPU.Percentage != 30 || h.Spec.ScalingIntervalsOverlap.Memory != nil {
		t.Errorf("overlap %+v", h.Spec.ScalingIntervalsOverlap)
	}
	if m := h.Spec.HPA.Template.Metrics; len(m) != 1 || *m[0].Resource.Target.AverageUtilization != 80 || *h.Spec.HPA.Template.MinReplicas != 1 {
		t.Errorf("hpa %+v", h.Spec.HPA.Template)
	}
	if p := h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies; len(p) != 1 || (*p[0].ControlledResources)[0] != corev1.ResourceCPU || h.Spec.VPA.Deploy {
		t.Errorf("vpa %+v", h.Spec.VPA)
	}
}
