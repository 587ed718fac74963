package validation

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/scaling"
)

func res(cpu, memory string) *hvpav1alpha1.ScaledResources {
	return &hvpav1alpha1.ScaledResources{CPU: qp(cpu), Memory: qp(memory)}
}

// baseHvpa is the EP-0001 kube-apiserver Hvpa: valid, and without warnings. Every case changes one thing.
func baseHvpa() *hvpav1alpha1.Hvpa {
	return &hvpav1alpha1.Hvpa{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "kube-apiserver"},
		Spec: hvpav1alpha1.HvpaSpec{
			TargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "kube-apiserver"},
			HPA: &hvpav1alpha1.HpaSpec{Deploy: true, Template: hvpav1alpha1.HpaTemplate{
				MinReplicas: ptr.To[int32](1), MaxReplicas: 5,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}}}},
			}},
			VPA: &hvpav1alpha1.VpaSpec{Deploy: true, Template: hvpav1alpha1.VpaTemplate{ResourcePolicy: &vpav1.PodResourcePolicy{
				ContainerPolicies: []vpav1.ContainerResourcePolicy{{
					ContainerName: "*",
					MinAllowed:    corev1.ResourceList{corev1.ResourceCPU: q("100m"), corev1.ResourceMemory: q("256Mi")},
					MaxAllowed:    corev1.ResourceList{corev1.ResourceCPU: q("8"), corev1.ResourceMemory: q("32Gi")},
				}},
			}}},
			ScalingIntervals: []hvpav1alpha1.ScalingInterval{
				{MaxReplicas: ptr.To[int32](1), MaxResources: res("500m", "2Gi")},
				{MaxReplicas: ptr.To[int32](2), MaxResources: res("1", "4Gi")},
				{MaxReplicas: ptr.To[int32](3), MaxResources: res("2", "8Gi")},
				{MaxReplicas: ptr.To[int32](4), MaxResources: res("4", "16Gi")},
				{MaxResources: res("8", "32Gi")},
			},
			ScalingIntervalsOverlap: &hvpav1alpha1.ResourceChangeParams{
				CPU:    &hvpav1alpha1.ChangeParams{Value: qp("250m"), Percentage: ptr.To[int32](30)},
				Memory: &hvpav1alpha1.ChangeParams{Percentage: ptr.To[int32](30)},
			},
			ScaleDown: &hvpav1alpha1.ScaleParams{
				UpdatePolicy:          &hvpav1alpha1.UpdatePolicy{UpdateMode: ptr.To(hvpav1alpha1.UpdateModeMaintenanceWindow)},
				StabilizationDuration: &metav1.Duration{Duration: 15 * time.Minute},
			},
			MaintenanceTimeWindow: &hvpav1alpha1.MaintenanceTimeWindow{Begin: "220000+0000", End: "060000+0000"},
		},
	}
}

// policies replaces the container policies of the Hvpa's VPA template.
func policies(ps ...vpav1.ContainerResourcePolicy) func(*hvpav1alpha1.Hvpa) {
	return func(h *hvpav1alpha1.Hvpa) { h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies = ps }
}

func capped(name, cpu, memory string) vpav1.ContainerResourcePolicy {
	p := vpav1.ContainerResourcePolicy{ContainerName: name, MaxAllowed: corev1.ResourceList{}}
	if cpu != "" {
		p.MaxAllowed[corev1.ResourceCPU] = q(cpu)
	}
	if memory != "" {
		p.MaxAllowed[corev1.ResourceMemory] = q(memory)
	}
	return p
}

func target(apiVersion, kind string) func(*hvpav1alpha1.Hvpa) {
	return func(h *hvpav1alpha1.Hvpa) {
		h.Spec.TargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: "x"}
	}
}

func hvpaRatio(cpu *vpav1.ResourceRequestToLimitRatio) func(*hvpav1alpha1.Hvpa) {
	return func(h *hvpav1alpha1.Hvpa) {
		h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies[0].RequestToLimitRatio = &vpav1.RequestToLimitRatio{CPU: cpu}
	}
}

type hvpaCase struct {
	mutate func(*hvpav1alpha1.Hvpa)
	// old, when set, makes the case an UPDATE from baseHvpa changed by old.
	old   func(*hvpav1alpha1.Hvpa)
	gates []featuregate.Feature
	want  []fe
	warn  []string
}

func (c hvpaCase) run(t *testing.T) {
	t.Helper()
	h := baseHvpa()
	if c.mutate != nil {
		c.mutate(h)
	}
	var old *hvpav1alpha1.Hvpa
	if c.old != nil {
		old = baseHvpa()
		c.old(old)
	}
	errs, warnings := Hvpa(h, old, gatesOn(t, c.gates...))
	checkErrors(t, errs, c.want)
	checkWarnings(t, warnings, c.warn)
}

const (
	tp0      = "spec.vpa.template.resourcePolicy.containerPolicies[0]"
	notScale = "has no scale subresource, so an Hvpa cannot set its replicas"
)

func TestHvpa(t *testing.T) {
	both := func(fs ...func(*hvpav1alpha1.Hvpa)) func(*hvpav1alpha1.Hvpa) {
		return func(h *hvpav1alpha1.Hvpa) {
			for _, f := range fs {
				f(h)
			}
		}
	}
	longerStabilization := func(h *hvpav1alpha1.Hvpa) { h.Spec.ScaleDown.StabilizationDuration.Duration = 20 * time.Minute }

	cases := map[string]hvpaCase{
		"valid": {},

		// targetRef
		"target StatefulSet":            {mutate: target("apps/v1", "StatefulSet")},
		"target ReplicaSet":             {mutate: target("apps/v1", "ReplicaSet")},
		"target ReplicationController":  {mutate: target("v1", "ReplicationController")},
		"target an unknown custom kind": {mutate: target("argoproj.io/v1alpha1", "Rollout")},
		"target a custom kind named Job": {
			mutate: target("example.com/v1", "Job"),
		},
		"target DaemonSet": {
			mutate: target("apps/v1", "DaemonSet"),
			want:   []fe{{"spec.targetRef.kind", field.ErrorTypeInvalid, "DaemonSet " + notScale}},
		},
		"target DaemonSet without apiVersion": {
			mutate: target("", "DaemonSet"),
			want:   []fe{{"spec.targetRef.kind", field.ErrorTypeInvalid, "DaemonSet " + notScale}},
		},
		"target Job": {
			mutate: target("batch/v1", "Job"),
			want:   []fe{{"spec.targetRef.kind", field.ErrorTypeInvalid, "Job " + notScale}},
		},
		"target CronJob": {
			mutate: target("batch/v1", "CronJob"),
			want:   []fe{{"spec.targetRef.kind", field.ErrorTypeInvalid, "CronJob " + notScale}},
		},
		"target Pod": {
			mutate: target("v1", "Pod"),
			want:   []fe{{"spec.targetRef.kind", field.ErrorTypeInvalid, "Pod " + notScale}},
		},
		"target HorizontalPodAutoscaler": {
			mutate: target("autoscaling/v2", "HorizontalPodAutoscaler"),
			want:   []fe{{"spec.targetRef.kind", field.ErrorTypeInvalid, "HorizontalPodAutoscaler is an autoscaler, not a workload; point targetRef at the workload it scales"}},
		},
		"target VerticalPodAutoscaler": {
			mutate: target("autoscaling.k8s.io/v1", "VerticalPodAutoscaler"),
			want:   []fe{{"spec.targetRef.kind", field.ErrorTypeInvalid, "VerticalPodAutoscaler is an autoscaler"}},
		},
		"target Hvpa": {
			mutate: target("autoscaling.k8s.io/v1alpha1", "Hvpa"),
			want:   []fe{{"spec.targetRef.kind", field.ErrorTypeInvalid, "Hvpa is an autoscaler"}},
		},
		"target without kind or name": {
			mutate: target("apps/v1", ""),
			want:   []fe{{"spec.targetRef.kind", field.ErrorTypeRequired, "e.g. Deployment"}},
		},
		"target apiVersion does not parse": {
			mutate: target("a/b/c", "Deployment"),
			want:   []fe{{"spec.targetRef.apiVersion", field.ErrorTypeInvalid, "must be group/version"}},
		},

		"a container policy's startupBoost: an Hvpa's pods are not boosted": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies[0].StartupBoost = &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{
					Type: vpav1.StartupBoostFactor, Factor: ptr.To[int32](2)}}
			},
			gates: []featuregate.Feature{features.CPUStartupBoost},
			want: []fe{{"spec.vpa.template.resourcePolicy.containerPolicies[0].startupBoost", field.ErrorTypeForbidden,
				"an Hvpa's pods are sized from its intent and not boosted"}},
		},

		// intervals and the HPA template
		"last interval above hpa.template.maxReplicas": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.ScalingIntervals[4].MaxReplicas = ptr.To[int32](6) },
			want: []fe{{"spec.scalingIntervals[4].maxReplicas", field.ErrorTypeInvalid,
				"is above hpa.template.maxReplicas 5, so the workload never reaches this interval; lower it to at most 5 or raise hpa.template.maxReplicas"}},
		},
		"last interval equal to hpa.template.maxReplicas": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.ScalingIntervals[4].MaxReplicas = ptr.To[int32](5) },
		},
		"no spec.hpa: the intervals set maxReplicas": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA = nil
				h.Spec.ScalingIntervals[4].MaxReplicas = ptr.To[int32](9)
			},
		},
		"first interval below hpa.template.minReplicas (from scaling.FromHvpa)": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.HPA.Template.MinReplicas = ptr.To[int32](2) },
			want:   []fe{{"spec.scalingIntervals[0].maxReplicas", field.ErrorTypeInvalid, "the first interval ends below hpa.template.minReplicas 2"}},
		},
		"maxResources decreasing (from scaling.FromHvpa)": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.ScalingIntervals[1].MaxResources.CPU = qp("400m") },
			want:   []fe{{"spec.scalingIntervals[1].maxResources.cpu", field.ErrorTypeInvalid, "maxResources must not decrease: interval 0 has 500m"}},
		},
		"maxResources 0": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.ScalingIntervals[0].MaxResources.Memory = qp("0") },
			want: []fe{{"spec.scalingIntervals[0].maxResources.memory", field.ErrorTypeInvalid,
				"must be greater than 0 (a per-pod maximum of 0 leaves the container nothing); omit it to default to the VPA template's maxAllowed"}},
		},

		// maxResources and the VPA template's maxAllowed
		"maxResources above the * policy's maxAllowed": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies[0].MaxAllowed[corev1.ResourceCPU] = q("4")
			},
			want: []fe{{"spec.scalingIntervals[4].maxResources.cpu", field.ErrorTypeInvalid,
				"is above the largest maxAllowed.cpu (4) of the container policies that scale cpu: no container can grow to it"}},
		},
		"maxResources above every named cap, * off": {
			mutate: policies(capped("app", "2", ""), capped("sidecar", "100m", ""), vpav1.ContainerResourcePolicy{ContainerName: "*", Mode: ptr.To(vpav1.ContainerScalingModeOff)}),
			want: []fe{
				{"spec.scalingIntervals[3].maxResources.cpu", field.ErrorTypeInvalid, "is above the largest maxAllowed.cpu (2)"},
				{"spec.scalingIntervals[4].maxResources.cpu", field.ErrorTypeInvalid, "is above the largest maxAllowed.cpu (2)"},
			},
			warn: []string{`container policy "sidecar" caps cpu at maxAllowed 100m, below spec.scalingIntervals[0].maxResources.cpu 500m`},
		},
		"maxResources above a cap of a resource the policy does not control": {
			mutate: policies(vpav1.ContainerResourcePolicy{ContainerName: "*", MaxAllowed: corev1.ResourceList{corev1.ResourceCPU: q("1")},
				ControlledResources: &[]corev1.ResourceName{corev1.ResourceMemory}}),
		},
		"maxResources above the * cap but a named policy is uncapped": {
			mutate: policies(vpav1.ContainerResourcePolicy{ContainerName: "app"}, capped("*", "4", "")),
			warn:   []string{`container policy "*" caps cpu at maxAllowed 4, below spec.scalingIntervals[4].maxResources.cpu 8`},
		},

		// overlap
		"overlap value reaches the first upper total": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.ScalingIntervalsOverlap.CPU.Value = qp("600m") },
			want: []fe{{"spec.scalingIntervalsOverlap.cpu.value", field.ErrorTypeInvalid,
				"is not below 500m, the upper total at 1 replica: the down boundary at 2 replicas is 0, so the workload would never scale down from there; make value smaller than 500m"}},
		},
		"overlap value reaches two upper totals": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.ScalingIntervalsOverlap.CPU.Value = qp("2") },
			want:   []fe{{"spec.scalingIntervalsOverlap.cpu.value", field.ErrorTypeInvalid, "the down boundaries at 2 to 3 replicas are 0"}},
		},
		"overlap value just below the first upper total": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.ScalingIntervalsOverlap.CPU.Value = qp("499m") },
		},
		"overlap percentage 100": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.ScalingIntervalsOverlap.Memory.Percentage = ptr.To[int32](100) },
			want: []fe{{"spec.scalingIntervalsOverlap.memory.percentage", field.ErrorTypeInvalid,
				"is the whole upper total: the down boundaries at 2 to 5 replicas are 0, so the workload would never scale down from there; use a percentage below 100"}},
		},
		"overlap with linear extrapolation": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA.Template.MaxReplicas = 10
				h.Spec.ScalingIntervals[4].EffectiveIntervalExtrapolation = ptr.To(hvpav1alpha1.ExtrapolationLinear)
				h.Spec.ScalingIntervalsOverlap.CPU.Value = qp("3")
			},
			want: []fe{{"spec.scalingIntervalsOverlap.cpu.value", field.ErrorTypeInvalid, "is not below 500m, the upper total at 1 replica"}},
		},
		"too many effective intervals": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA.Template.MaxReplicas = 20000
				h.Spec.ScalingIntervals[4].EffectiveIntervalExtrapolation = ptr.To(hvpav1alpha1.ExtrapolationHorizontalOnly)
			},
			want: []fe{{"spec.scalingIntervals[4].effectiveIntervalExtrapolation", field.ErrorTypeInvalid,
				"makes one effective interval per replica count, more than 1000 up to 20000 replicas"}},
		},
		"as many effective intervals as allowed": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA.Template.MaxReplicas = scaling.MaxEffectiveIntervals
				h.Spec.ScalingIntervals[4].EffectiveIntervalExtrapolation = ptr.To(hvpav1alpha1.ExtrapolationLinear)
			},
		},

		// maintenance window (from scaling.FromHvpa; the CRD has the same rule)
		"MaintenanceWindow mode without a window": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.MaintenanceTimeWindow = nil },
			want:   []fe{{"spec.maintenanceTimeWindow", field.ErrorTypeRequired, "updateMode MaintenanceWindow needs a window"}},
		},

		// the VPA template's container policies
		"template minAllowed above maxAllowed is reported once": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies[0].MinAllowed[corev1.ResourceMemory] = q("64Gi")
			},
			want: []fe{{tp0 + ".maxAllowed[memory]", field.ErrorTypeInvalid, `max resource for memory is lower than min of "64Gi"`}},
		},
		"template policy errors and other conversion errors": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies[0].MinAllowed[corev1.ResourceMemory] = q("64Gi")
				h.Spec.MaintenanceTimeWindow = nil
			},
			want: []fe{
				{tp0 + ".maxAllowed[memory]", field.ErrorTypeInvalid, "lower than min"},
				{"spec.maintenanceTimeWindow", field.ErrorTypeRequired, "needs a window"},
			},
		},
		"template containerName empty": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies[0].ContainerName = "" },
			want:   []fe{{tp0 + ".containerName", field.ErrorTypeRequired, "name the container"}},
		},
		"template ratio with the gate off": {
			mutate: hvpaRatio(factor(2)),
			want:   []fe{{tp0 + ".requestToLimitRatio", field.ErrorTypeForbidden, "you must enable feature gate RequestToLimitRatio"}},
		},
		"template updateMode InPlace with the gate off": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.VPA.Template.UpdatePolicy = &vpav1.PodUpdatePolicy{UpdateMode: ptr.To(vpav1.UpdateModeInPlace)}
			},
			want: []fe{{"spec.vpa.template.updatePolicy.updateMode", field.ErrorTypeForbidden, "you must enable feature gate InPlace"}},
		},
		"template updateMode InPlace with the gate on": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.VPA.Template.UpdatePolicy = &vpav1.PodUpdatePolicy{UpdateMode: ptr.To(vpav1.UpdateModeInPlace)}
			},
			gates: []featuregate.Feature{features.InPlace},
		},
		"template minReplicas 0": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.VPA.Template.UpdatePolicy = &vpav1.PodUpdatePolicy{MinReplicas: ptr.To[int32](0)}
			},
			want: []fe{{"spec.vpa.template.updatePolicy.minReplicas", field.ErrorTypeInvalid, "minReplicas has to be positive"}},
		},
		"template ratio with the gate on": {
			mutate: hvpaRatio(factor(2)),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
		},
		"template ratio factor below 1 is reported once": {
			mutate: hvpaRatio(factor(0.9)),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
			want:   []fe{{tp0 + ".requestToLimitRatio.cpu.factor", field.ErrorTypeInvalid, "must be at least 1"}},
		},
		"template ratio kept by an unrelated update with the gate off": {
			mutate: both(hvpaRatio(factor(2)), longerStabilization),
			old:    hvpaRatio(factor(2)),
			warn:   []string{tp0 + ".requestToLimitRatio is ignored while feature gate RequestToLimitRatio is off"},
		},
		"template ratio changed by an update with the gate off": {
			mutate: hvpaRatio(factor(3)),
			old:    hvpaRatio(factor(2)),
			want:   []fe{{tp0 + ".requestToLimitRatio", field.ErrorTypeForbidden, "feature gate RequestToLimitRatio"}},
		},
		"template ratio added with the whole template by an update, gate off": {
			mutate: hvpaRatio(factor(2)),
			old:    func(h *hvpav1alpha1.Hvpa) { h.Spec.VPA = nil },
			want:   []fe{{tp0 + ".requestToLimitRatio", field.ErrorTypeForbidden, "feature gate RequestToLimitRatio"}},
		},
		"an update that leaves the spec alone is not checked": {
			mutate: both(target("apps/v1", "DaemonSet"), func(h *hvpav1alpha1.Hvpa) { h.Annotations = map[string]string{"a": "b"}; h.Spec.ScaleDown = nil }),
			old:    both(target("apps/v1", "DaemonSet"), func(h *hvpav1alpha1.Hvpa) { h.Spec.ScaleDown = nil }),
		},
		"hpa: {deploy: false} without a template (spec.replicas as others write it is the input)": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA = &hvpav1alpha1.HpaSpec{}
				last := &h.Spec.ScalingIntervals[len(h.Spec.ScalingIntervals)-1]
				if last.MaxReplicas == nil {
					last.MaxReplicas = ptr.To[int32](int32(len(h.Spec.ScalingIntervals)) + 10)
				}
			},
		},
		"an update is checked like a create": {
			mutate: target("apps/v1", "DaemonSet"),
			old:    func(*hvpav1alpha1.Hvpa) {},
			want:   []fe{{"spec.targetRef.kind", field.ErrorTypeInvalid, "DaemonSet " + notScale}},
		},
	}
	for name, c := range cases {
		t.Run(name, c.run)
	}
}

func TestHvpaWarnings(t *testing.T) {
	cases := map[string]hvpaCase{
		"HPA scale-down stabilization window": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA.Template.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](300)}}
			},
			warn: []string{"spec.hpa.template.behavior.scaleDown.stabilizationWindowSeconds is 300: the HPA's window holds its replicas high and ratchets the Hvpa's totals up; set it to 0 and use spec.scaleDown.stabilizationDuration instead"},
		},
		"HPA scale-down stabilization window 0": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA.Template.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0)}}
			},
		},
		"HPA window on a template that is not deployed": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA.Deploy = false
				h.Spec.HPA.Template.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](300)}}
			},
		},
		"HPA with a non-Utilization metric": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA.Template.Metrics = append(h.Spec.HPA.Template.Metrics,
					autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
						Metric: autoscalingv2.MetricIdentifier{Name: "queue"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: qp("10")}}},
					autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType})
			},
			warn: []string{"spec.hpa.template.metrics[1] is not a Resource metric with a Utilization target: the HPA's replicas then only set a replica floor"},
		},
		"HPA with a Resource AverageValue metric": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA.Template.Metrics[0].Resource.Target = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: qp("500m")}
			},
			warn: []string{"spec.hpa.template.metrics[0] is not a Resource metric with a Utilization target"},
		},
		"scaleDown unset (Auto, no stabilization)": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.ScaleDown = nil },
			warn:   []string{"spec.scaleDown has updateMode Auto and no stabilizationDuration: a scale-down can follow right after a scale-up; set spec.scaleDown.stabilizationDuration (e.g. 10m)"},
		},
		"scaleDown Auto with a zero stabilization": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.ScaleDown.UpdatePolicy.UpdateMode = ptr.To(hvpav1alpha1.UpdateModeAuto)
				h.Spec.ScaleDown.StabilizationDuration = &metav1.Duration{}
			},
			warn: []string{"spec.scaleDown has updateMode Auto and no stabilizationDuration"},
		},
		"scaleDown Auto with a stabilization": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.ScaleDown.UpdatePolicy.UpdateMode = ptr.To(hvpav1alpha1.UpdateModeAuto)
			},
		},
		"scaleDown Off": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.ScaleDown = &hvpav1alpha1.ScaleParams{UpdatePolicy: &hvpav1alpha1.UpdatePolicy{UpdateMode: ptr.To(hvpav1alpha1.UpdateModeOff)}}
			},
		},
		"nothing deployed": {
			mutate: func(h *hvpav1alpha1.Hvpa) { h.Spec.HPA.Deploy, h.Spec.VPA.Deploy = false, false },
			warn:   []string{"neither spec.hpa.deploy nor spec.vpa.deploy is true: the Hvpa only follows spec.replicas as an HPA or a KEDA ScaledObject that targets its scale subresource, or kubectl scale, writes it; set spec.vpa.deploy for per-pod sizing from usage"},
		},
		"last interval below hpa.template.maxReplicas": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA.Template.MaxReplicas = 8
				h.Spec.ScalingIntervals[4].MaxReplicas = ptr.To[int32](5)
			},
			warn: []string{"spec.scalingIntervals[4].maxReplicas is 5 but hpa.template.maxReplicas is 8: replicas above 5 have no interval of their own; set it to 8 or omit it"},
		},
		"a sidecar capped below the intervals": {
			mutate: policies(capped("*", "8", "32Gi"), capped("sidecar", "200m", "3Gi")),
			warn: []string{
				`container policy "sidecar" caps cpu at maxAllowed 200m, below spec.scalingIntervals[0].maxResources.cpu 500m: that container can run at its cap before the Hvpa scales out; raise its maxAllowed or lower maxResources`,
				`container policy "sidecar" caps memory at maxAllowed 3Gi, below spec.scalingIntervals[1].maxResources.memory 4Gi`,
			},
		},
		"a named policy capped below the intervals, no * policy": {
			mutate: policies(capped("app", "4", "")),
			warn:   []string{`container policy "app" caps cpu at maxAllowed 4, below spec.scalingIntervals[4].maxResources.cpu 8`},
		},
		"an Off policy's cap does not count": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				p := capped("sidecar", "100m", "")
				p.Mode = ptr.To(vpav1.ContainerScalingModeOff)
				policies(capped("*", "8", "32Gi"), p)(h)
			},
		},
		"several warnings, in order": {
			mutate: func(h *hvpav1alpha1.Hvpa) {
				h.Spec.HPA.Template.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}}
				h.Spec.ScaleDown = nil
			},
			warn: []string{"stabilizationWindowSeconds is 60", "spec.scaleDown has updateMode Auto"},
		},
	}
	for name, c := range cases {
		t.Run(name, c.run)
	}
}
