package scaling

import (
	"math"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
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
		// the controller refuses what the webhook refuses, since the webhook may not have run (before, these two
		// were the webhook's alone: a maxResources of 0 made a desired request of 0)
		"maxResources 0": {func(h *hvpav1alpha1.Hvpa) { h.Spec.ScalingIntervals[0].MaxResources.CPU = ptr.To(q("0")) }, "spec.scalingIntervals[0].maxResources.cpu"},
		"overlap value making a down boundary 0": {func(h *hvpav1alpha1.Hvpa) {
			h.Spec.ScalingIntervalsOverlap = &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Value: ptr.To(q("100"))}}
		}, "spec.scalingIntervalsOverlap.cpu.value"},
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

// TestHugeQuantitiesRefusedByName: quantities the CRD pattern accepts but no resource holds are refused with
// the field named, and computed amounts saturate instead of overflowing to a negative request.
func TestHugeQuantitiesRefusedByName(t *testing.T) {
	for _, q := range []string{"9e308", "1e19", "8Ei", "1e15"} {
		rp := &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{{ContainerName: "app",
			MinAllowed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q), corev1.ResourceMemory: resource.MustParse(q)}}}}
		_, errs := ContainerPolicies(rp, field.NewPath("spec", "resourcePolicy"))
		got := errs.ToAggregate()
		if got == nil || !strings.Contains(got.Error(), "spec.resourcePolicy.containerPolicies[0].minAllowed[cpu]") ||
			!strings.Contains(got.Error(), "spec.resourcePolicy.containerPolicies[0].minAllowed[memory]") || !strings.Contains(got.Error(), "must be at most") {
			t.Errorf("minAllowed %s: %v", q, got)
		}
	}
	for _, x := range []float64{1e300, math.Inf(1), 9.3e18, -5, math.NaN()} {
		for _, r := range Resources {
			if q := Quantity(r, x); q.Sign() < 0 || q.AsApproximateFloat64() > MaxAmount {
				t.Errorf("Quantity(%s, %g) = %s", r, x, q.String())
			}
		}
	}
}

// TestEffectiveIntervalCount: the count EffectiveIntervals makes, without making them; an Hvpa above the
// limit is refused by FromHvpa with the field named.
func TestEffectiveIntervalCount(t *testing.T) {
	lin := ExtrapolationLinear
	for _, ivs := range [][]Interval{
		{{MaxReplicas: 1}, {MaxReplicas: 5}},
		{{MaxReplicas: 3, Extrapolation: lin}, {MaxReplicas: 10}, {MaxReplicas: 40, Extrapolation: ExtrapolationHorizontalOnly}},
		{{MaxReplicas: 2}, {MaxReplicas: 2, Extrapolation: lin}},
	} {
		for _, m := range []int32{0, 1, 2} {
			if got, want := EffectiveIntervalCount(ivs, m), int64(len(mustIntervals(t, ivs, m, [NumResources]*ChangeParams{}))); got != want {
				t.Errorf("%+v from %d: count %d, EffectiveIntervals makes %d", ivs, m, got, want)
			}
		}
	}
	h := &hvpav1alpha1.Hvpa{Spec: hvpav1alpha1.HvpaSpec{ScalingIntervals: []hvpav1alpha1.ScalingInterval{
		{MaxReplicas: ptr.To[int32](4000000), EffectiveIntervalExtrapolation: ptr.To(hvpav1alpha1.ExtrapolationLinear)}}}}
	if _, errs := FromHvpa(h); !strings.Contains(errs.ToAggregate().Error(), "spec.scalingIntervals[0].effectiveIntervalExtrapolation: Invalid value: \"linear\": makes one effective interval per replica count, more than 1000 up to 4000000 replicas") {
		t.Errorf("4,000,000 linear replicas: %v", errs.ToAggregate())
	}
}

// TestMaxReplicasBound: a maxReplicas above MaxReplicas, of an interval or of the HPA template (the default
// of the last interval), is refused by name, whether or not the CRD's maximum ran (issue 31: an interval to
// 2147483647 replicas made the decision loop forever).
func TestMaxReplicasBound(t *testing.T) {
	q := resource.MustParse
	top := &hvpav1alpha1.ScaledResources{CPU: ptr.To(q("8")), Memory: ptr.To(q("32Gi"))}
	for name, tc := range map[string]struct {
		hpaMax, interval *int32
		want             string
	}{
		"interval":                  {interval: ptr.To[int32](math.MaxInt32), want: "spec.scalingIntervals[0].maxReplicas: Invalid value: 2147483647: must be at most 100000"},
		"HPA template":              {hpaMax: ptr.To[int32](math.MaxInt32), want: "spec.hpa.template.maxReplicas: Invalid value: 2147483647: must be at most 100000"},
		"interval MinInt32":         {interval: ptr.To[int32](math.MinInt32), want: "spec.scalingIntervals[0].maxReplicas: Invalid value: -2147483648: must be at least 1"},
		"interval at the bound":     {interval: ptr.To[int32](MaxReplicas)},
		"HPA template at the bound": {hpaMax: ptr.To[int32](MaxReplicas)},
		"interval one above":        {interval: ptr.To[int32](MaxReplicas + 1), want: "spec.scalingIntervals[0].maxReplicas: Invalid value: 100001: must be at most 100000"},
		"HPA template one above":    {hpaMax: ptr.To[int32](MaxReplicas + 1), want: "spec.hpa.template.maxReplicas: Invalid value: 100001: must be at most 100000"},
	} {
		t.Run(name, func(t *testing.T) {
			h := &hvpav1alpha1.Hvpa{Spec: hvpav1alpha1.HvpaSpec{ScalingIntervals: []hvpav1alpha1.ScalingInterval{{MaxReplicas: tc.interval, MaxResources: top}}}}
			if tc.hpaMax != nil {
				h.Spec.HPA = &hvpav1alpha1.HpaSpec{Template: hvpav1alpha1.HpaTemplate{MaxReplicas: *tc.hpaMax}}
			}
			_, errs := FromHvpa(h)
			switch got := errs.ToAggregate(); {
			case tc.want == "" && got != nil:
				t.Fatalf("refused: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Fatalf("want %q, got %v", tc.want, got)
			}
		})
	}
}

// FuzzQuantities: any quantity the API machinery parses is refused by name or gives an amount in
// [0, MaxAmount], and any amount converts back to a quantity that is neither negative nor above MaxAmount.
func FuzzQuantities(f *testing.F) {
	for _, s := range []string{"500m", "2Gi", "9e308", "1e19", "8Ei", "-1", "0.0000001", "123456789012345678901234567890"} {
		f.Add(s, 1e300)
	}
	f.Fuzz(func(t *testing.T, s string, x float64) {
		if q, err := resource.ParseQuantity(s); err == nil {
			v, errs := FromResourceList(corev1.ResourceList{corev1.ResourceCPU: q, corev1.ResourceMemory: q}, field.NewPath("minAllowed"))
			for _, r := range Resources {
				if a, ok := v.Get(r); ok && (a < 0 || a > MaxAmount || math.IsNaN(a)) {
					t.Fatalf("%s %q gives %g", r, s, a)
				}
			}
			for _, e := range errs {
				if !strings.HasPrefix(e.Field, "minAllowed[") {
					t.Fatalf("an error that names no field: %v", e)
				}
			}
		}
		for _, r := range Resources {
			if q := Quantity(r, x); q.Sign() < 0 || q.AsApproximateFloat64() > MaxAmount*1.001 {
				t.Fatalf("Quantity(%s, %g) = %s", r, x, q.String())
			}
		}
	})
}

// The recommender and the sizing pick a container's policy by one rule (vpav1.PolicyIndex): for every order
// of own, wildcard, other and unnamed policies, both choose the same one.
func TestPolicyForAgreesWithTheRecommender(t *testing.T) {
	names := []string{"app", "*", "sidecar", ""}
	for _, a := range names {
		for _, b := range names {
			for _, c := range names {
				rp := &vpav1.PodResourcePolicy{}
				for i, n := range []string{a, b, c} {
					// policy i is recognisable by its minAllowed cpu: (i+1) x 100m
					rp.ContainerPolicies = append(rp.ContainerPolicies, vpav1.ContainerResourcePolicy{ContainerName: n,
						MinAllowed: corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(int64(i+1)*100, resource.DecimalSI)}})
				}
				policies, errs := ContainerPolicies(rp, field.NewPath("resourcePolicy"))
				if len(errs) > 0 {
					t.Fatal(errs)
				}
				sized, _ := PolicyFor(policies, "app").MinAllowed.Get(CPU)
				recommended := 0.0 // the recommender's default, -1: no minimum
				if cores := recommender.PolicyFor(rp, "app").MinCPU; cores >= 0 {
					recommended = math.Round(cores * 1000)
				}
				if sized != recommended {
					t.Errorf("policies %q: the sizing picks minAllowed %vm, the recommender %vm", []string{a, b, c}, sized, recommended)
				}
			}
		}
	}
}

// The webhook and the updater read a VPA's and an Hvpa's sizing through SizingFromVPA and SizingFromHvpa:
// targets from the recommendation or the intent, bounds for VPAs only, policies and the gap from the spec,
// and no targets at all before there is something to size with.
func TestSizing(t *testing.T) {
	rl := func(cpu string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
	}
	v := &vpav1.VerticalPodAutoscaler{Spec: vpav1.VerticalPodAutoscalerSpec{ResourcePolicy: &vpav1.PodResourcePolicy{
		ContainerPolicies: []vpav1.ContainerResourcePolicy{{ContainerName: "app", MaxAllowed: rl("2")}}}}}
	if sz, errs := SizingFromVPA(v); len(errs) > 0 || sz.Targets != nil || len(sz.Policies) != 1 {
		t.Errorf("VPA without a recommendation: %+v %v, want its policy and no targets", sz, errs)
	}
	v.Status.Recommendation = &vpav1.RecommendedPodResources{ContainerRecommendations: []vpav1.RecommendedContainerResources{
		{ContainerName: "app", Target: rl("500m"), LowerBound: rl("400m"), UpperBound: rl("900m")}}}
	sz, errs := SizingFromVPA(v)
	target, _ := sz.Targets["app"].Get(CPU)
	lower, _ := sz.Lower["app"].Get(CPU)
	upper, _ := sz.Upper["app"].Get(CPU)
	if len(errs) > 0 || !near(target, 500) || !near(lower, 400) || !near(upper, 900) {
		t.Errorf("VPA with a recommendation: %+v %v, want target 500m within 400m..900m", sz, errs)
	}

	h := &hvpav1alpha1.Hvpa{Spec: hvpav1alpha1.HvpaSpec{
		VPA:                          &hvpav1alpha1.VpaSpec{Template: hvpav1alpha1.VpaTemplate{ResourcePolicy: v.Spec.ResourcePolicy}},
		LimitsRequestsGapScaleParams: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Percentage: ptr.To[int32](20)}}}}
	if sz, errs := SizingFromHvpa(h); len(errs) > 0 || sz.Targets != nil || sz.Gap[CPU] == nil || len(sz.Policies) != 1 {
		t.Errorf("Hvpa without an intent: %+v %v, want its policy and gap, no targets", sz, errs)
	}
	h.Status.Desired = &hvpav1alpha1.DesiredState{Containers: []hvpav1alpha1.ContainerResources{{Name: "app", Requests: rl("700m")}}}
	sz, errs = SizingFromHvpa(h)
	if x, _ := sz.Targets["app"].Get(CPU); len(errs) > 0 || !near(x, 700) || sz.Lower != nil {
		t.Errorf("Hvpa with an intent: %+v %v, want target 700m and no bounds", sz, errs)
	}
}

// TestZeroBoundIsNone: a minAllowed or maxAllowed of 0 bounds nothing, as upstream's capping skips it (found
// in review: the webhook sized a pod to a CPU request of 0 while the recommendation, which skipped it, said
// 250m; with a minAllowed above it the policy was refused and the pod left unsized).
func TestZeroBoundIsNone(t *testing.T) {
	rl := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	v := &vpav1.VerticalPodAutoscaler{Spec: vpav1.VerticalPodAutoscalerSpec{ResourcePolicy: &vpav1.PodResourcePolicy{
		ContainerPolicies: []vpav1.ContainerResourcePolicy{{ContainerName: "app", MinAllowed: rl("100m", "0"), MaxAllowed: rl("0", "1Gi")}}}}}
	sz, errs := SizingFromVPA(v)
	if len(errs) > 0 || len(sz.Policies) != 1 {
		t.Fatalf("a policy with zero bounds: %v", errs)
	}
	p := sz.Policies[0]
	if p.MaxAllowed.Has(CPU) || p.MinAllowed.Has(Memory) || !p.MinAllowed.Has(CPU) || !p.MaxAllowed.Has(Memory) {
		t.Errorf("minAllowed %+v maxAllowed %+v: want the zero ones (max cpu, min memory) left out, the others kept", p.MinAllowed, p.MaxAllowed)
	}
}

// TestHasPodLevelResources: the one rule by which neither the webhook nor the updater sizes a pod.
func TestHasPodLevelResources(t *testing.T) {
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	for name, tc := range map[string]struct {
		res  *corev1.ResourceRequirements
		want bool
	}{
		"none":                {nil, false},
		"empty":               {&corev1.ResourceRequirements{}, false},
		"pod-level limits":    {&corev1.ResourceRequirements{Limits: cpu}, true},
		"pod-level requests":  {&corev1.ResourceRequirements{Requests: cpu}, true},
		"empty lists, as set": {&corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}, false},
	} {
		if got := HasPodLevelResources(&corev1.PodSpec{Resources: tc.res}); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}
