package validation

import (
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Hvpa validates an Hvpa beyond its CRD schema; old is nil on CREATE. It returns the errors and the
// admission warnings (settings that work but are risky). An UPDATE that leaves the spec unchanged is always
// accepted, without warnings.
func Hvpa(h, old *hvpav1alpha1.Hvpa, gates featuregate.FeatureGate) (field.ErrorList, []string) {
	if old != nil && equality.Semantic.DeepEqual(old.Spec, h.Spec) {
		return nil, nil
	}
	sp := field.NewPath("spec")
	ref := h.Spec.TargetRef
	errs := targetRef(ref.APIVersion, ref.Kind, ref.Name, notScalable, sp.Child("targetRef"))
	var warnings []string

	var rp, oldRP *vpav1.PodResourcePolicy
	if h.Spec.VPA != nil {
		rp = h.Spec.VPA.Template.ResourcePolicy
	}
	if old != nil && old.Spec.VPA != nil {
		oldRP = old.Spec.VPA.Template.ResourcePolicy
	}
	var oldUP *vpav1.PodUpdatePolicy
	if old != nil {
		oldUP = old.PodUpdatePolicy()
	}
	perVPA := perVPAConfig(gates, oldRP, oldUP)
	policyErrs, w := resourcePolicy(rp, oldRP, old != nil, gates, perVPA, hvpaBoosts, sp.Child("vpa", "template", "resourcePolicy"))
	errs = append(errs, policyErrs...)
	warnings = append(warnings, w...)
	ue, uw := updatePolicy(h.PodUpdatePolicy(), oldUP, gates, perVPA, sp.Child("vpa", "template", "updatePolicy"))
	errs = append(errs, ue...)
	warnings = append(warnings, uw...)

	// the conversion the controller runs: what it refuses, the webhook refuses first
	_, convErrs := scaling.FromHvpa(h)
	errs = append(errs, withoutRepeats(convErrs, policyErrs)...)

	ie, iw := intervals(h, rp, sp)
	errs = append(errs, ie...)
	warnings = append(warnings, iw...)
	warnings = append(warnings, risky(h)...)
	return errs, warnings
}

// withoutRepeats drops the conversion errors about a container policy that resourcePolicy already reported
// on (both check min <= max and the ratio's factor and quantity); the others are kept.
func withoutRepeats(conv, policy field.ErrorList) field.ErrorList {
	reported := map[string]bool{}
	for _, e := range policy {
		if p := policyPrefix(e.Field); p != "" {
			reported[p] = true
		}
	}
	var out field.ErrorList
	for _, e := range conv {
		if p := policyPrefix(e.Field); p == "" || !reported[p] {
			out = append(out, e)
		}
	}
	return out
}

// policyPrefix returns "...containerPolicies[N]" of a field path, or "".
func policyPrefix(f string) string {
	i := strings.Index(f, "containerPolicies[")
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(f[i:], ']')
	if j < 0 {
		return ""
	}
	return f[:i+j+1]
}

// intervals checks the scaling intervals against the HPA template and the VPA template: no interval above
// hpa.template.maxReplicas, no per-pod maximum of 0, and no maxResources that every scaled container is
// capped below by its maxAllowed.
func intervals(h *hvpav1alpha1.Hvpa, rp *vpav1.PodResourcePolicy, sp *field.Path) (field.ErrorList, []string) {
	var errs field.ErrorList
	var warnings []string
	ip := sp.Child("scalingIntervals")
	for i, in := range h.Spec.ScalingIntervals {
		if hpa := h.Spec.HPA; hpa != nil && hpa.Template.MaxReplicas > 0 && in.MaxReplicas != nil && *in.MaxReplicas > hpa.Template.MaxReplicas {
			m := hpa.Template.MaxReplicas
			errs = append(errs, field.Invalid(ip.Index(i).Child("maxReplicas"), *in.MaxReplicas, fmt.Sprintf(
				"is above hpa.template.maxReplicas %d, so the workload never reaches this interval; lower it to at most %d or raise hpa.template.maxReplicas", m, m)))
		}
	}
	if n := len(h.Spec.ScalingIntervals); n > 0 && h.Spec.HPA != nil && h.Spec.HPA.Template.MaxReplicas > 0 {
		last, m := h.Spec.ScalingIntervals[n-1].MaxReplicas, h.Spec.HPA.Template.MaxReplicas
		if last != nil && *last < m {
			warnings = append(warnings, fmt.Sprintf(
				"%s.maxReplicas is %d but hpa.template.maxReplicas is %d: replicas above %d have no interval of their own; set it to %d or omit it",
				ip.Index(n-1), *last, m, *last, m))
		}
	}
	e, w := capsBelowIntervals(h, rp, ip)
	return append(errs, e...), append(warnings, w...)
}

func maxResource(s *hvpav1alpha1.ScaledResources, r corev1.ResourceName) *resource.Quantity {
	if s == nil {
		return nil
	}
	if r == corev1.ResourceCPU {
		return s.CPU
	}
	return s.Memory
}

// maxCap is a container policy's maxAllowed of one resource.
type maxCap struct {
	name string
	max  resource.Quantity
}

// maxAllowedCaps returns the maxAllowed of resource r of the container policies that scale it, and whether
// some scaled container is uncapped (a policy without maxAllowed for r, or no "*" policy for the others).
func maxAllowedCaps(rp *vpav1.PodResourcePolicy, r corev1.ResourceName) ([]maxCap, bool) {
	if rp == nil {
		return nil, true
	}
	var caps []maxCap
	complete, uncapped := false, false
	for _, p := range rp.ContainerPolicies {
		if p.ContainerName == vpav1.DefaultContainerResourcePolicy {
			complete = true
		}
		if (p.Mode != nil && *p.Mode == vpav1.ContainerScalingModeOff) || (p.ControlledResources != nil && !contains(*p.ControlledResources, r)) {
			continue
		}
		if q, ok := p.MaxAllowed[r]; ok {
			caps = append(caps, maxCap{p.ContainerName, q})
		} else {
			uncapped = true
		}
	}
	return caps, uncapped || !complete
}

// capsBelowIntervals compares each interval's explicit maxResources with the maxAllowed of the container
// policies that scale that resource. maxResources applies to every scaled container; a container capped
// below it runs at its cap while the total still fits the interval, so the workload does not scale out
// for it. When every scaled container is capped below (the "*" policy makes the set of policies complete;
// without it, containers without a policy are scaled with no cap), it is an error; for single containers,
// a warning (small sidecars are normal).
func capsBelowIntervals(h *hvpav1alpha1.Hvpa, rp *vpav1.PodResourcePolicy, ip *field.Path) (field.ErrorList, []string) {
	var errs field.ErrorList
	var warnings []string
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		caps, uncapped := maxAllowedCaps(rp, r)
		if len(caps) == 0 {
			continue
		}
		largest := caps[0].max
		for _, c := range caps[1:] {
			if c.max.Cmp(largest) > 0 {
				largest = c.max
			}
		}
		warned := make([]bool, len(caps))
		for i, in := range h.Spec.ScalingIntervals {
			m := maxResource(in.MaxResources, r)
			if m == nil || m.Sign() <= 0 {
				continue
			}
			path := ip.Index(i).Child("maxResources", string(r))
			if !uncapped && m.Cmp(largest) > 0 {
				errs = append(errs, field.Invalid(path, m.String(), fmt.Sprintf(
					"is above the largest maxAllowed.%s (%s) of the container policies that scale %s: no container can grow to it, so the workload stays in this interval while its pods run at their cap; lower it to at most %s or raise maxAllowed",
					r, largest.String(), r, largest.String())))
				continue
			}
			for k, c := range caps {
				if !warned[k] && c.max.Cmp(*m) < 0 {
					warned[k] = true
					warnings = append(warnings, fmt.Sprintf(
						"container policy %q caps %s at maxAllowed %s, below %s %s: that container can run at its cap before the Hvpa scales out; raise its maxAllowed or lower maxResources",
						c.name, r, c.max.String(), path, m.String()))
				}
			}
		}
	}
	return errs, warnings
}

// riskyHPA returns the warnings for HPA template settings that work but are risky.
func riskyHPA(h *hvpav1alpha1.Hvpa) []string {
	hpa := h.Spec.HPA
	if hpa == nil || !hpa.Deploy {
		return nil
	}
	var warnings []string
	if b := hpa.Template.Behavior; b != nil && b.ScaleDown != nil && b.ScaleDown.StabilizationWindowSeconds != nil && *b.ScaleDown.StabilizationWindowSeconds > 0 {
		warnings = append(warnings, fmt.Sprintf(
			"spec.hpa.template.behavior.scaleDown.stabilizationWindowSeconds is %d: the HPA's window holds its replicas high and ratchets the Hvpa's totals up; set it to 0 and use spec.scaleDown.stabilizationDuration instead",
			*b.ScaleDown.StabilizationWindowSeconds))
	}
	for i, m := range hpa.Template.Metrics {
		if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil || m.Resource.Target.Type != autoscalingv2.UtilizationMetricType {
			warnings = append(warnings, fmt.Sprintf(
				"spec.hpa.template.metrics[%d] is not a Resource metric with a Utilization target: the HPA's replicas then only set a replica floor, never a resource total; use Utilization targets if the HPA should drive the totals",
				i))
			break
		}
	}
	return warnings
}

// risky returns the warnings for settings that work but are risky.
func risky(h *hvpav1alpha1.Hvpa) []string {
	warnings := riskyHPA(h)
	mode, stab := hvpav1alpha1.UpdateModeAuto, false
	if sd := h.Spec.ScaleDown; sd != nil {
		if sd.UpdatePolicy != nil && sd.UpdatePolicy.UpdateMode != nil {
			mode = *sd.UpdatePolicy.UpdateMode
		}
		stab = sd.StabilizationDuration != nil && sd.StabilizationDuration.Duration > 0
	}
	if mode == hvpav1alpha1.UpdateModeAuto && !stab {
		warnings = append(warnings,
			"spec.scaleDown has updateMode Auto and no stabilizationDuration: a scale-down can follow right after a scale-up; set spec.scaleDown.stabilizationDuration (e.g. 10m)")
	}
	if (h.Spec.HPA == nil || !h.Spec.HPA.Deploy) && (h.Spec.VPA == nil || !h.Spec.VPA.Deploy) {
		warnings = append(warnings,
			"neither spec.hpa.deploy nor spec.vpa.deploy is true: the Hvpa only follows spec.replicas as an HPA or a KEDA ScaledObject that targets its scale subresource, or kubectl scale, writes it; set spec.vpa.deploy for per-pod sizing from usage")
	}
	return warnings
}
