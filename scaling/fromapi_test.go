package scaling

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

func apiHvpa() *hvpav1alpha1.Hvpa {
	q := resource.MustParse
	return &hvpav1alpha1.Hvpa{Spec: hvpav1alpha1.HvpaSpec{
		HPA: &hvpav1alpha1.HpaSpec{Template: hvpav1alpha1.HpaTemplate{MinReplicas: ptr.To[int32](1), MaxReplicas: 5}},
		VPA: &hvpav1alpha1.VpaSpec{Template: hvpav1alpha1.VpaTemplate{ResourcePolicy: &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{
			{ContainerName: "app", MaxAllowed: corev1.ResourceList{"cpu": q("8"), "memory": q("32Gi")}},
		}}}},
		ScalingIntervals: []hvpav1alpha1.ScalingInterval{
			{MaxReplicas: ptr.To[int32](2), MaxResources: &hvpav1alpha1.ScaledResources{CPU: ptr.To(q("1")), Memory: ptr.To(q("4Gi"))}},
			{},
		},
	}}
}

func TestFromHvpaDefaults(t *testing.T) {
	s, errs := FromHvpa(apiHvpa())
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	last := s.Intervals[1]
	if last.MaxReplicas != 5 {
		t.Errorf("last maxReplicas %d, want the HPA template's 5", last.MaxReplicas)
	}
	if cpu, _ := last.MaxResources.Get(CPU); cpu != 8000 {
		t.Errorf("last maxResources cpu %v, want maxAllowed 8000m", cpu)
	}
	if !s.HPAUtilization || s.ScaleUp.Mode != UpdateModeAuto || s.ScaleDown.Mode != UpdateModeAuto || s.MinReplicas != 1 {
		t.Errorf("defaults: %+v", s)
	}
	h := apiHvpa()
	h.Spec.HPA.Template.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: "cpu", Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("1"))}}}}
	if s, _ := FromHvpa(h); s.HPAUtilization {
		t.Error("an AverageValue metric must make the HPA a replica floor")
	}
}

func TestFromHvpaErrors(t *testing.T) {
	q := resource.MustParse
	cases := map[string]struct {
		mutate func(*hvpav1alpha1.Hvpa)
		field  string
	}{
		"decreasing maxReplicas": {func(h *hvpav1alpha1.Hvpa) { h.Spec.ScalingIntervals[1].MaxReplicas = ptr.To[int32](1) }, "spec.scalingIntervals[1].maxReplicas"},
		"decreasing maxResources after defaulting": {func(h *hvpav1alpha1.Hvpa) {
			h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies[0].MaxAllowed["cpu"] = q("500m")
		}, "spec.scalingIntervals[1].maxResources.cpu"},
		"no maxReplicas to default from": {func(h *hvpav1alpha1.Hvpa) { h.Spec.HPA = nil }, "spec.scalingIntervals[1].maxReplicas"},
		"missing maxReplicas before the last": {func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervals[0].MaxReplicas = nil
			h.Spec.ScalingIntervals[1].MaxReplicas = ptr.To[int32](4)
		}, "spec.scalingIntervals[0].maxReplicas"},
		"first interval below minReplicas": {func(h *hvpav1alpha1.Hvpa) { h.Spec.HPA.Template.MinReplicas = ptr.To[int32](3) }, "spec.scalingIntervals[0].maxReplicas"},
		"negative maxResources":            {func(h *hvpav1alpha1.Hvpa) { h.Spec.ScalingIntervals[0].MaxResources.CPU = ptr.To(q("-1")) }, "spec.scalingIntervals[0].maxResources.cpu"},
		"MaintenanceWindow without a window": {func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScaleDown = &hvpav1alpha1.ScaleParams{UpdatePolicy: &hvpav1alpha1.UpdatePolicy{UpdateMode: ptr.To(hvpav1alpha1.UpdateModeMaintenanceWindow)}}
		}, "spec.maintenanceTimeWindow"},
		"window with begin == end": {func(h *hvpav1alpha1.Hvpa) {
			h.Spec.MaintenanceTimeWindow = &hvpav1alpha1.MaintenanceTimeWindow{Begin: "220000+0000", End: "230000+0100"}
		}, "spec.maintenanceTimeWindow"},
		"overlap percentage above 100": {func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervalsOverlap = &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Percentage: ptr.To[int32](101)}}
		}, "spec.scalingIntervalsOverlap.cpu.percentage"},
		"minAllowed above maxAllowed": {func(h *hvpav1alpha1.Hvpa) {
			h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies[0].MinAllowed = corev1.ResourceList{"cpu": q("9")}
		}, "spec.vpa.template.resourcePolicy.containerPolicies[0].minAllowed[cpu]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := apiHvpa()
			tc.mutate(h)
			_, errs := FromHvpa(h)
			var fields []string
			for _, e := range errs {
				fields = append(fields, e.Field)
				if e.Field == tc.field {
					return
				}
			}
			t.Errorf("no error at %s; errors at %s (%v)", tc.field, strings.Join(fields, ", "), errs)
		})
	}
}
