package validation

import (
	"testing"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

func baseVPA() *vpav1.VerticalPodAutoscaler {
	return wrappers.MakeVPA("ns", "web").Mode(vpav1.UpdateModeRecreate).ContainerPolicy(
		vpav1.ContainerResourcePolicy{
			ContainerName:       "app",
			MinAllowed:          wrappers.Resources("100m", "128Mi"),
			MaxAllowed:          wrappers.Resources("2", "4Gi"),
			ControlledResources: &[]corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory},
		},
		vpav1.ContainerResourcePolicy{ContainerName: "*", Mode: ptr.To(vpav1.ContainerScalingModeOff)},
	).Obj()
}

// app is the first container policy of a VPA from baseVPA.
func app(v *vpav1.VerticalPodAutoscaler) *vpav1.ContainerResourcePolicy {
	return &v.Spec.ResourcePolicy.ContainerPolicies[0]
}

func factor(f float64) *vpav1.ResourceRequestToLimitRatio {
	return &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioFactor, Factor: &f}
}

func quantity(s string) *vpav1.ResourceRequestToLimitRatio {
	return &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioQuantity, Quantity: qp(s)}
}

func withRatio(cpu, memory *vpav1.ResourceRequestToLimitRatio) func(*vpav1.VerticalPodAutoscaler) {
	return func(v *vpav1.VerticalPodAutoscaler) {
		app(v).RequestToLimitRatio = &vpav1.RequestToLimitRatio{CPU: cpu, Memory: memory}
	}
}

func inPlace(v *vpav1.VerticalPodAutoscaler) {
	v.Spec.UpdatePolicy.UpdateMode = ptr.To(vpav1.UpdateModeInPlace)
}

const (
	p0      = "spec.resourcePolicy.containerPolicies[0]"
	p0Ratio = p0 + ".requestToLimitRatio"
)

type vpaCase struct {
	mutate func(*vpav1.VerticalPodAutoscaler)
	// old, when set, makes the case an UPDATE from baseVPA changed by old.
	old   func(*vpav1.VerticalPodAutoscaler)
	gates []featuregate.Feature
	want  []fe
	warn  []string
}

func (c vpaCase) objects(t *testing.T) (v, old *vpav1.VerticalPodAutoscaler, g featuregate.FeatureGate) {
	v = baseVPA()
	if c.mutate != nil {
		c.mutate(v)
	}
	if c.old != nil {
		old = baseVPA()
		c.old(old)
	}
	return v, old, gatesOn(t, c.gates...)
}

func TestVPA(t *testing.T) {
	both := func(fs ...func(*vpav1.VerticalPodAutoscaler)) func(*vpav1.VerticalPodAutoscaler) {
		return func(v *vpav1.VerticalPodAutoscaler) {
			for _, f := range fs {
				f(v)
			}
		}
	}
	raiseMin := func(v *vpav1.VerticalPodAutoscaler) { app(v).MinAllowed[corev1.ResourceCPU] = q("200m") }

	cases := map[string]vpaCase{
		"valid": {},
		"every update mode but InPlace needs no gate": {mutate: func(v *vpav1.VerticalPodAutoscaler) {
			v.Spec.UpdatePolicy.UpdateMode = ptr.To(vpav1.UpdateModeInPlaceOrRecreate)
		}},
		"update policy without updateMode": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.UpdatePolicy = &vpav1.PodUpdatePolicy{MinReplicas: ptr.To[int32](2)}
			},
			want: []fe{{"spec.updatePolicy.updateMode", field.ErrorTypeRequired, "updateMode is required if updatePolicy is used"}},
		},
		"update policy without updateMode, kept from the old object": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.UpdatePolicy = &vpav1.PodUpdatePolicy{MinReplicas: ptr.To[int32](3)}
			},
			old: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.UpdatePolicy = &vpav1.PodUpdatePolicy{MinReplicas: ptr.To[int32](2)}
			},
			warn: []string{"spec.updatePolicy is kept without updateMode"},
		},
		"no update policy": {mutate: func(v *vpav1.VerticalPodAutoscaler) { v.Spec.UpdatePolicy = nil }},
		"updateMode Auto is deprecated": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { v.Spec.UpdatePolicy.UpdateMode = ptr.To(vpav1.UpdateModeAuto) },
			warn:   []string{`spec.updatePolicy.updateMode: "Auto" mode is deprecated`},
		},

		// targetRef
		"targetRef missing": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { v.Spec.TargetRef = nil },
			want:   []fe{{"spec.targetRef", field.ErrorTypeRequired, "point targetRef at the workload"}},
		},
		"targetRef without kind and name": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { v.Spec.TargetRef.Kind, v.Spec.TargetRef.Name = "", "" },
			want: []fe{
				{"spec.targetRef.kind", field.ErrorTypeRequired, "set the kind of the workload"},
				{"spec.targetRef.name", field.ErrorTypeRequired, "set the name of the workload"},
			},
		},
		"targetRef apiVersion does not parse": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { v.Spec.TargetRef.APIVersion = "apps/v1/beta" },
			want:   []fe{{"spec.targetRef.apiVersion", field.ErrorTypeInvalid, "must be group/version"}},
		},
		"targetRef is an HPA": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.TargetRef = &autoscalingv1.CrossVersionObjectReference{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler", Name: "web"}
			},
			want: []fe{{"spec.targetRef.kind", field.ErrorTypeInvalid, "HorizontalPodAutoscaler is an autoscaler, not a workload"}},
		},
		"targetRef is a ControllerRevision": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { v.Spec.TargetRef.Kind = "ControllerRevision" },
			want:   []fe{{"spec.targetRef.kind", field.ErrorTypeInvalid, "ControllerRevision is a revision record"}},
		},
		"targetRef DaemonSet is fine for a VPA": {mutate: func(v *vpav1.VerticalPodAutoscaler) { v.Spec.TargetRef.Kind = "DaemonSet" }},

		// updatePolicy
		"updateMode unknown": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.UpdatePolicy.UpdateMode = ptr.To(vpav1.UpdateMode("Sometimes"))
			},
			want: []fe{{"spec.updatePolicy.updateMode", field.ErrorTypeNotSupported, `"Auto", "InPlaceOrRecreate", "InPlace"`}},
		},
		"minReplicas 0": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { v.Spec.UpdatePolicy.MinReplicas = ptr.To[int32](0) },
			want:   []fe{{"spec.updatePolicy.minReplicas", field.ErrorTypeInvalid, "minReplicas has to be positive"}},
		},
		"InPlace with the gate off": {
			mutate: inPlace,
			want: []fe{{"spec.updatePolicy.updateMode", field.ErrorTypeForbidden,
				"in order to use UpdateMode InPlace, you must enable feature gate InPlace (--feature-gates=InPlace=true); otherwise use InPlaceOrRecreate"}},
		},
		"InPlace with the gate on":                              {mutate: inPlace, gates: []featuregate.Feature{features.InPlace}},
		"InPlace switched on by an update with the gate off":    {mutate: inPlace, old: func(*vpav1.VerticalPodAutoscaler) {}, want: []fe{{"spec.updatePolicy.updateMode", field.ErrorTypeForbidden, "feature gate InPlace"}}},
		"InPlace kept by an unrelated update with the gate off": {mutate: both(inPlace, raiseMin), old: inPlace, warn: []string{"spec.updatePolicy.updateMode InPlace is kept from the existing object, but feature gate InPlace is off"}},
		"InPlace kept by an unrelated update with the gate on":  {mutate: both(inPlace, raiseMin), old: inPlace, gates: []featuregate.Feature{features.InPlace}},
		"RequestToLimitRatio gate does not allow InPlace":       {mutate: inPlace, gates: []featuregate.Feature{features.RequestToLimitRatio}, want: []fe{{"spec.updatePolicy.updateMode", field.ErrorTypeForbidden, "feature gate InPlace"}}},
		"recommenders: one is fine": {mutate: func(v *vpav1.VerticalPodAutoscaler) {
			v.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "custom"}}
		}},
		"recommenders: two are too many": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "a"}, {Name: "b"}}
			},
			want: []fe{{"spec.recommenders", field.ErrorTypeTooMany, "The current version of VPA object shouldn't specify more than one recommenders"}},
		},

		// container policies
		"containerName empty": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { app(v).ContainerName = "" },
			want:   []fe{{p0 + ".containerName", field.ErrorTypeRequired, `name the container this policy applies to, or "*"`}},
		},
		"containerName is a pattern": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { app(v).ContainerName = "app-*" },
			want:   []fe{{p0 + ".containerName", field.ErrorTypeInvalid, `must be "*" or a container name`}},
		},
		"containerName not a DNS label, kept from the old object": {
			mutate: both(func(v *vpav1.VerticalPodAutoscaler) { app(v).ContainerName = "App_1" }, raiseMin),
			old:    func(v *vpav1.VerticalPodAutoscaler) { app(v).ContainerName = "App_1" },
		},
		"containerName duplicate": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.ResourcePolicy.ContainerPolicies = append(v.Spec.ResourcePolicy.ContainerPolicies, vpav1.ContainerResourcePolicy{ContainerName: "app"})
			},
			want: []fe{{"spec.resourcePolicy.containerPolicies[2].containerName", field.ErrorTypeDuplicate, "containerPolicies[0] has the same containerName; merge the two policies"}},
		},
		"containerName duplicate, kept from the old object": {
			mutate: both(func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.ResourcePolicy.ContainerPolicies = append(v.Spec.ResourcePolicy.ContainerPolicies, vpav1.ContainerResourcePolicy{ContainerName: "app"})
			}, raiseMin),
			old: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.ResourcePolicy.ContainerPolicies = append(v.Spec.ResourcePolicy.ContainerPolicies, vpav1.ContainerResourcePolicy{ContainerName: "app"})
			},
			warn: []string{`spec.resourcePolicy.containerPolicies[2].containerName: containerPolicies[0] has the same containerName "app", and only the first of them applies`},
		},
		"two * policies, kept from the old object: the last applies": {
			mutate: both(func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.ResourcePolicy.ContainerPolicies = append(v.Spec.ResourcePolicy.ContainerPolicies, vpav1.ContainerResourcePolicy{ContainerName: "*"})
			}, raiseMin),
			old: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.ResourcePolicy.ContainerPolicies = append(v.Spec.ResourcePolicy.ContainerPolicies, vpav1.ContainerResourcePolicy{ContainerName: "*"})
			},
			warn: []string{`containerPolicies[1] has the same containerName "*", and only the last of them applies`},
		},
		"containerName duplicate added on an update": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.ResourcePolicy.ContainerPolicies = append(v.Spec.ResourcePolicy.ContainerPolicies, vpav1.ContainerResourcePolicy{ContainerName: "app"})
			},
			old:  func(v *vpav1.VerticalPodAutoscaler) {},
			want: []fe{{"spec.resourcePolicy.containerPolicies[2].containerName", field.ErrorTypeDuplicate, "containerPolicies[0] has the same containerName"}},
		},
		"controlledResources other than cpu and memory": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				app(v).ControlledResources = &[]corev1.ResourceName{corev1.ResourceCPU, "nvidia.com/gpu"}
			},
			want: []fe{{p0 + ".controlledResources[1]", field.ErrorTypeNotSupported, `supported values: "cpu", "memory"`}},
		},
		"controlledResources other than cpu and memory, kept from the old object": {
			mutate: both(func(v *vpav1.VerticalPodAutoscaler) {
				app(v).ControlledResources = &[]corev1.ResourceName{corev1.ResourceCPU, "nvidia.com/gpu"}
			}, raiseMin),
			old: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.ResourcePolicy.ContainerPolicies[1].ControlledResources = &[]corev1.ResourceName{"nvidia.com/gpu"}
			},
			warn: []string{p0 + `.controlledResources[1]: "nvidia.com/gpu" is kept from the existing object but is not sized`},
		},
		"two * policies": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.ResourcePolicy.ContainerPolicies = append(v.Spec.ResourcePolicy.ContainerPolicies, vpav1.ContainerResourcePolicy{ContainerName: "*"})
			},
			want: []fe{{"spec.resourcePolicy.containerPolicies[2].containerName", field.ErrorTypeDuplicate, "containerPolicies[1] has the same containerName"}},
		},
		"mode unknown": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { app(v).Mode = ptr.To(vpav1.ContainerScalingMode("On")) },
			want:   []fe{{p0 + ".mode", field.ErrorTypeNotSupported, `supported values: "Auto", "Off"`}},
		},
		"minAllowed above maxAllowed": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { app(v).MinAllowed[corev1.ResourceCPU] = q("3") },
			want:   []fe{{p0 + ".maxAllowed[cpu]", field.ErrorTypeInvalid, `max resource for cpu is lower than min of "3"; raise maxAllowed.cpu or lower minAllowed.cpu`}},
		},
		"minAllowed above maxAllowed for another resource": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				app(v).MinAllowed["nvidia.com/gpu"] = q("2")
				app(v).MaxAllowed["nvidia.com/gpu"] = q("1")
			},
			want: []fe{{p0 + ".maxAllowed[nvidia.com/gpu]", field.ErrorTypeInvalid, "max resource for nvidia.com/gpu is lower than min"}},
		},
		"minAllowed negative": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { app(v).MinAllowed[corev1.ResourceMemory] = q("-1Mi") },
			want:   []fe{{p0 + ".minAllowed[memory]", field.ErrorTypeInvalid, "must not be negative"}},
		},
		"maxAllowed cpu below a millicore": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { app(v).MaxAllowed[corev1.ResourceCPU] = q("1500.5m") },
			want:   []fe{{p0 + ".maxAllowed[cpu]", field.ErrorTypeInvalid, "must be a whole number of milli CPUs"}},
		},
		"minAllowed memory below a byte": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) { app(v).MinAllowed[corev1.ResourceMemory] = q("1500m") },
			want:   []fe{{p0 + ".minAllowed[memory]", field.ErrorTypeInvalid, "must be a whole number of bytes"}},
		},
		"controlledValues unknown": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				app(v).ControlledValues = ptr.To(vpav1.ContainerControlledValues("LimitsOnly"))
			},
			want: []fe{{p0 + ".controlledValues", field.ErrorTypeNotSupported, `"RequestsAndLimits", "RequestsOnly"`}},
		},
		"controlledValues RequestsAndLimits with mode Off": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				app(v).Mode = ptr.To(vpav1.ContainerScalingModeOff)
				app(v).ControlledValues = ptr.To(vpav1.ContainerControlledValuesRequestsAndLimits)
			},
			want: []fe{{p0 + ".controlledValues", field.ErrorTypeForbidden, "controlledValues shouldn't be specified if container scaling mode is off; remove controlledValues or set mode to Auto"}},
		},
		"controlledValues RequestsOnly with mode Off (accepted, as upstream)": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				app(v).Mode = ptr.To(vpav1.ContainerScalingModeOff)
				app(v).ControlledValues = ptr.To(vpav1.ContainerControlledValuesRequestsOnly)
			},
		},

		// requestToLimitRatio: the gate
		"ratio with the gate off": {
			mutate: withRatio(factor(2), nil),
			want: []fe{{p0Ratio, field.ErrorTypeForbidden,
				"in order to use requestToLimitRatio, you must enable feature gate RequestToLimitRatio (--feature-gates=RequestToLimitRatio=true); otherwise remove requestToLimitRatio"}},
		},
		"ratio with the gate on": {mutate: withRatio(factor(2), quantity("256Mi")), gates: []featuregate.Feature{features.RequestToLimitRatio}},
		"ratio kept by an unrelated update with the gate off": {
			mutate: both(withRatio(factor(2), nil), raiseMin),
			old:    withRatio(factor(2), nil),
			warn:   []string{p0Ratio + " is ignored while feature gate RequestToLimitRatio is off"},
		},
		"ratio changed by an update with the gate off": {
			mutate: withRatio(factor(3), nil),
			old:    withRatio(factor(2), nil),
			want:   []fe{{p0Ratio, field.ErrorTypeForbidden, "feature gate RequestToLimitRatio"}},
		},
		"ratio added by an update with the gate off": {
			mutate: withRatio(factor(2), nil),
			old:    func(*vpav1.VerticalPodAutoscaler) {},
			want:   []fe{{p0Ratio, field.ErrorTypeForbidden, "feature gate RequestToLimitRatio"}},
		},
		"ratio moved to a renamed policy by an update with the gate off": {
			mutate: both(withRatio(factor(2), nil), func(v *vpav1.VerticalPodAutoscaler) { app(v).ContainerName = "main" }),
			old:    withRatio(factor(2), nil),
			want:   []fe{{p0Ratio, field.ErrorTypeForbidden, "feature gate RequestToLimitRatio"}},
		},
		"ratio removed by an update with the gate off": {
			old: withRatio(factor(2), nil),
		},
		"ratio kept by an unrelated update with the gate on": {
			mutate: both(withRatio(factor(2), nil), raiseMin),
			old:    withRatio(factor(2), nil),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
		},
		"ratio kept but invalid, gate off: the content is still checked": {
			mutate: both(withRatio(factor(0.5), nil), raiseMin),
			old:    withRatio(factor(0.5), nil),
			want:   []fe{{p0Ratio + ".cpu.factor", field.ErrorTypeInvalid, "must be at least 1"}},
			warn:   []string{"is ignored while feature gate RequestToLimitRatio is off"},
		},

		// upstream v1.6-v1.8 fields
		"per-container model fields in range": {mutate: func(v *vpav1.VerticalPodAutoscaler) {
			r, m := q("1.5"), q("200Mi")
			app(v).OOMBumpUpRatio, app(v).OOMMinBumpUp = &r, &m
			app(v).MemoryAggregationIntervalSeconds, app(v).MemoryAggregationIntervalCount = ptr.To[int32](3600), ptr.To[int64](48)
			v.Spec.UpdatePolicy.EvictAfterOOMSeconds = ptr.To[int32](300)
		}, gates: []featuregate.Feature{features.PerVPAConfig}},
		"per-object configuration needs the PerVPAConfig gate, as upstream's webhook": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				r := q("1.5")
				app(v).OOMBumpUpRatio, app(v).MemoryAggregationIntervalCount = &r, ptr.To[int64](48)
				v.Spec.UpdatePolicy.EvictAfterOOMSeconds = ptr.To[int32](300)
			},
			want: []fe{
				{"spec.updatePolicy.evictAfterOOMSeconds", field.ErrorTypeForbidden, "in order to use evictAfterOOMSeconds, you must enable feature gate PerVPAConfig"},
				{p0 + ".memoryAggregationIntervalCount", field.ErrorTypeForbidden, "in order to use memoryAggregationIntervalCount, you must enable feature gate PerVPAConfig"},
				{p0 + ".oomBumpUpRatio", field.ErrorTypeForbidden, "in order to use oomBumpUpRatio, you must enable feature gate PerVPAConfig"},
			},
		},
		"per-object configuration the object had stays updatable with the gate off": {
			mutate: both(func(v *vpav1.VerticalPodAutoscaler) { r := q("1.5"); app(v).OOMBumpUpRatio = &r }, raiseMin),
			old:    func(v *vpav1.VerticalPodAutoscaler) { r := q("1.5"); app(v).OOMBumpUpRatio = &r },
		},
		// found in review: upstream allows them all when the existing object has any, in either policy
		"per-object configuration the object had allows another, in the other policy, with the gate off": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				r := q("1.5")
				v.Spec.UpdatePolicy.EvictAfterOOMSeconds = ptr.To[int32](300)
				app(v).OOMBumpUpRatio = &r
			},
			old: func(v *vpav1.VerticalPodAutoscaler) { v.Spec.UpdatePolicy.EvictAfterOOMSeconds = ptr.To[int32](300) },
		},
		"oomBumpUpRatio below 1 and a negative oomMinBumpUp": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				r, m := q("0.5"), q("-1Mi")
				app(v).OOMBumpUpRatio, app(v).OOMMinBumpUp = &r, &m
			},
			gates: []featuregate.Feature{features.PerVPAConfig},
			want: []fe{
				{p0 + ".oomBumpUpRatio", field.ErrorTypeInvalid, "must be a number in [1, 10], e.g. 1.5"},
				{p0 + ".oomMinBumpUp", field.ErrorTypeInvalid, "must be a memory quantity in [0, 1Ti]"},
			},
		},
		"a new startupBoost needs the CPUStartupBoost gate": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.StartupBoost = &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostFactor, Factor: ptr.To[int32](2)}}
				app(v).StartupBoost = v.Spec.StartupBoost.DeepCopy()
			},
			want: []fe{
				{p0 + ".startupBoost", field.ErrorTypeForbidden, "in order to use startupBoost, you must enable feature gate CPUStartupBoost (--feature-gates=CPUStartupBoost=true); otherwise remove startupBoost"},
				{"spec.startupBoost", field.ErrorTypeForbidden, "in order to use startupBoost, you must enable feature gate CPUStartupBoost (--feature-gates=CPUStartupBoost=true); otherwise remove startupBoost"},
			},
		},
		"startupBoost with the gate on": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.StartupBoost = &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostFactor, Factor: ptr.To[int32](2)}}
				app(v).StartupBoost = v.Spec.StartupBoost.DeepCopy()
			},
			gates: []featuregate.Feature{features.CPUStartupBoost},
		},
		"a startupBoost the object had is kept, with a warning": {
			mutate: both(func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.StartupBoost = &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostFactor, Factor: ptr.To[int32](2)}}
			}, raiseMin),
			old: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.StartupBoost = &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostFactor, Factor: ptr.To[int32](2)}}
			},
			warn: []string{"spec.startupBoost is kept because the existing object has a startup boost, but has no effect"},
		},
		"an object with a startupBoost may change and add boosts with the gate off, as upstream": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.StartupBoost = &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostFactor, Factor: ptr.To[int32](3)}}
				app(v).StartupBoost = &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostQuantity, Quantity: qp("500m")}}
			},
			old: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.StartupBoost = &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostFactor, Factor: ptr.To[int32](2)}}
			},
			warn: []string{p0 + ".startupBoost is kept because", "spec.startupBoost is kept because"},
		},
		"a startupBoost quantity finer than a millicore": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.StartupBoost = &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostQuantity, Quantity: qp("500u")}}
			},
			gates: []featuregate.Feature{features.CPUStartupBoost},
			want:  []fe{{"spec.startupBoost.cpu.quantity", field.ErrorTypeInvalid, "must be a whole number of milli CPUs"}},
		},

		// requestToLimitRatio: the content (gate on)
		"ratio with controlledValues RequestsOnly": {
			mutate: both(withRatio(factor(2), nil), func(v *vpav1.VerticalPodAutoscaler) {
				app(v).ControlledValues = ptr.To(vpav1.ContainerControlledValuesRequestsOnly)
			}),
			gates: []featuregate.Feature{features.RequestToLimitRatio},
			want:  []fe{{p0Ratio, field.ErrorTypeForbidden, "requestToLimitRatio sets limits: it needs controlledValues RequestsAndLimits (the default), not RequestsOnly"}},
		},
		"ratio for a resource that is not controlled": {
			mutate: both(withRatio(nil, quantity("100Mi")), func(v *vpav1.VerticalPodAutoscaler) {
				app(v).ControlledResources = &[]corev1.ResourceName{corev1.ResourceCPU}
			}),
			gates: []featuregate.Feature{features.RequestToLimitRatio},
			want:  []fe{{p0Ratio + ".memory", field.ErrorTypeForbidden, "memory is not in controlledResources, so its limit is never set; add memory to controlledResources or remove requestToLimitRatio.memory"}},
		},
		"ratio without controlledResources covers cpu and memory": {
			mutate: both(withRatio(factor(1), quantity("0")), func(v *vpav1.VerticalPodAutoscaler) { app(v).ControlledResources = nil }),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
		},
		"ratio factor below 1": {
			mutate: withRatio(factor(0.5), nil),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
			want:   []fe{{p0Ratio + ".cpu.factor", field.ErrorTypeInvalid, "must be at least 1 (a limit below the request is not allowed); use 1 for limit = request"}},
		},
		"ratio factor missing": {
			mutate: withRatio(&vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioFactor}, nil),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
			want:   []fe{{p0Ratio + ".cpu.factor", field.ErrorTypeRequired, "type Factor needs factor"}},
		},
		"ratio Factor with a quantity": {
			mutate: withRatio(&vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioFactor, Factor: ptr.To(2.0), Quantity: qp("1")}, nil),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
			want:   []fe{{p0Ratio + ".cpu.quantity", field.ErrorTypeForbidden, "quantity is only used with type Quantity"}},
		},
		"ratio quantity missing": {
			mutate: withRatio(nil, &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioQuantity}),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
			want:   []fe{{p0Ratio + ".memory.quantity", field.ErrorTypeRequired, "type Quantity needs quantity"}},
		},
		"ratio quantity negative": {
			mutate: withRatio(nil, quantity("-100Mi")),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
			want:   []fe{{p0Ratio + ".memory.quantity", field.ErrorTypeInvalid, "must not be negative (a limit below the request is not allowed); use 0 for limit = request"}},
		},
		"ratio cpu quantity below a millicore": {
			mutate: withRatio(quantity("0.5m"), nil),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
			want:   []fe{{p0Ratio + ".cpu.quantity", field.ErrorTypeInvalid, "must be a whole number of milli CPUs"}},
		},
		"ratio Quantity with a factor": {
			mutate: withRatio(nil, &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioQuantity, Quantity: qp("1Gi"), Factor: ptr.To(2.0)}),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
			want:   []fe{{p0Ratio + ".memory.factor", field.ErrorTypeForbidden, "factor is only used with type Factor"}},
		},
		"ratio type unknown": {
			mutate: withRatio(&vpav1.ResourceRequestToLimitRatio{Type: "Percent"}, nil),
			gates:  []featuregate.Feature{features.RequestToLimitRatio},
			want:   []fe{{p0Ratio + ".cpu.type", field.ErrorTypeNotSupported, `"Factor", "Quantity"`}},
		},
		"several problems are all reported, in order": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.TargetRef.Name = ""
				v.Spec.UpdatePolicy.MinReplicas = ptr.To[int32](-1)
				app(v).MinAllowed[corev1.ResourceCPU] = q("3")
				v.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "a"}, {Name: "b"}}
			},
			want: []fe{
				{"spec.targetRef.name", field.ErrorTypeRequired, "name of the workload"},
				{"spec.updatePolicy.minReplicas", field.ErrorTypeInvalid, "has to be positive"},
				{p0 + ".maxAllowed[cpu]", field.ErrorTypeInvalid, "lower than min"},
				{"spec.recommenders", field.ErrorTypeTooMany, "more than one recommenders"},
			},
		},
		"an update that leaves the spec alone is not checked": {
			mutate: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "a"}, {Name: "b"}}
				withRatio(factor(2), nil)(v)
				v.Labels = map[string]string{"team": "web"}
			},
			old: func(v *vpav1.VerticalPodAutoscaler) {
				v.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "a"}, {Name: "b"}}
				withRatio(factor(2), nil)(v)
			},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			v, old, g := c.objects(t)
			checkErrors(t, VPA(v, old, g), c.want)
			_, warnings := validateVPA(v, old, g)
			checkWarnings(t, warnings, c.warn)
		})
	}
}

func TestVPAGatesNilOrUnknownAreOff(t *testing.T) {
	v := baseVPA()
	withRatio(factor(2), nil)(v)
	inPlace(v)
	want := []fe{
		{"spec.updatePolicy.updateMode", field.ErrorTypeForbidden, "feature gate InPlace"},
		{p0Ratio, field.ErrorTypeForbidden, "feature gate RequestToLimitRatio"},
	}
	checkErrors(t, VPA(v, nil, nil), want)
	checkErrors(t, VPA(v, nil, featuregate.NewFeatureGate()), want) // a gate that knows neither feature: no panic
}
