package validation

import (
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/internal/features"
)

// enabled reports whether gate f is on. A nil gate, or one that does not know f, counts as off: the webhook
// then refuses the gated fields instead of panicking.
func enabled(g featuregate.FeatureGate, f featuregate.Feature) (on bool) {
	if g == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			on = false
		}
	}()
	return g.Enabled(f)
}

// gateMessage is the refusal of a field (or value) whose feature gate is off.
func gateMessage(what string, f featuregate.Feature) string {
	return fmt.Sprintf("in order to use %s, you must enable feature gate %s (--feature-gates=%s=true)", what, f, f)
}

// policyByName returns the policy named name in rp that applies, or nil: the first named so, the last "*"
// (vpav1.PolicyIndex, upstream's rule).
func policyByName(rp *vpav1.PodResourcePolicy, name string) *vpav1.ContainerResourcePolicy {
	if rp == nil {
		return nil
	}
	found := -1
	for i := range rp.ContainerPolicies {
		if rp.ContainerPolicies[i].ContainerName == name {
			found = i
			if name != vpav1.DefaultContainerResourcePolicy {
				break
			}
		}
	}
	if found < 0 {
		return nil
	}
	return &rp.ContainerPolicies[found]
}

// resourcePolicy validates the container policies of a VPA (or of an Hvpa's VPA template). old is the
// policy of the object being updated; isUpdate says whether there is an old object at all (old may be nil
// on an update that adds the policy). Fields guarded by a feature gate that is off are accepted when the
// old object already had them unchanged; a warning says they are ignored.
func resourcePolicy(rp, old *vpav1.PodResourcePolicy, isUpdate bool, gates featuregate.FeatureGate, perVPA bool, boost boostRule, path *field.Path) (field.ErrorList, []string) {
	if rp == nil {
		return nil, nil
	}
	var errs field.ErrorList
	var warnings []string
	seen := map[string]int{}
	for i := range rp.ContainerPolicies {
		p := &rp.ContainerPolicies[i]
		pp := path.Child("containerPolicies").Index(i)
		var oldP *vpav1.ContainerResourcePolicy
		if isUpdate {
			oldP = policyByName(old, p.ContainerName)
		}

		errs = append(errs, containerName(p.ContainerName, oldP != nil, pp.Child("containerName"))...)
		e, w := uniqueName(p.ContainerName, i, seen, old, isUpdate, pp.Child("containerName"))
		errs, warnings = append(errs, e...), append(warnings, w...)

		e, w = controlledResources(p, old, pp.Child("controlledResources"))
		errs, warnings = append(errs, e...), append(warnings, w...)

		if p.Mode != nil && *p.Mode != vpav1.ContainerScalingModeAuto && *p.Mode != vpav1.ContainerScalingModeOff {
			errs = append(errs, field.NotSupported(pp.Child("mode"), *p.Mode,
				[]string{string(vpav1.ContainerScalingModeAuto), string(vpav1.ContainerScalingModeOff)}))
		}

		errs = append(errs, bounds(p, pp)...)

		errs = append(errs, controlledValues(p, pp)...)

		errs = append(errs, modelFields(p, pp, perVPA)...)
		var oldBoost *vpav1.StartupBoost
		if oldP != nil {
			oldBoost = oldP.StartupBoost
		}
		e, w = boost.check(p.StartupBoost, oldBoost, pp.Child("startupBoost"))
		errs, warnings = append(errs, e...), append(warnings, w...)

		if p.RequestToLimitRatio != nil {
			ratioPath := pp.Child("requestToLimitRatio")
			if !enabled(gates, features.RequestToLimitRatio) {
				if oldP != nil && equality.Semantic.DeepEqual(oldP.RequestToLimitRatio, p.RequestToLimitRatio) {
					warnings = append(warnings, fmt.Sprintf("%s is ignored while feature gate %s is off: limits keep the pod's original limit/request ratio",
						ratioPath, features.RequestToLimitRatio))
				} else {
					errs = append(errs, field.Forbidden(ratioPath, gateMessage("requestToLimitRatio", features.RequestToLimitRatio)+"; otherwise remove requestToLimitRatio"))
				}
			}
			errs = append(errs, ratio(p, ratioPath)...)
		}
	}
	return errs, warnings
}

// uniqueName refuses the i-th policy's name when an earlier one (seen, which it records) has it; upstream
// accepts duplicates (the first named policy applies, the last "*"), so an update keeps a duplicate the
// existing object (old) already has, with a warning.
func uniqueName(name string, i int, seen map[string]int, old *vpav1.PodResourcePolicy, isUpdate bool, path *field.Path) (field.ErrorList, []string) {
	if name == "" {
		return nil, nil
	}
	j, dup := seen[name]
	switch {
	case !dup:
		seen[name] = i
		return nil, nil
	case isUpdate && policiesNamed(old, name) > 1:
		which := "first" // upstream's rule (vpav1.PolicyIndex)
		if name == vpav1.DefaultContainerResourcePolicy {
			which = "last"
		}
		return nil, []string{fmt.Sprintf("%s: containerPolicies[%d] has the same containerName %q, and only the %s of them applies; merge the two policies into one",
			path, j, name, which)}
	}
	return field.ErrorList{&field.Error{Type: field.ErrorTypeDuplicate, Field: path.String(), BadValue: name,
		Detail: fmt.Sprintf("containerPolicies[%d] has the same containerName; merge the two policies into one", j)}}, nil
}

// policiesNamed counts the container policies of rp named name.
func policiesNamed(rp *vpav1.PodResourcePolicy, name string) int {
	n := 0
	if rp != nil {
		for _, p := range rp.ContainerPolicies {
			if p.ContainerName == name {
				n++
			}
		}
	}
	return n
}

// controlledResources refuses a controlled resource other than cpu and memory (the only ones sized; it would
// be ignored), as upstream's webhook does; one that a policy of the existing object (old) already names is
// kept, with a warning, so that the object stays updatable.
func controlledResources(p *vpav1.ContainerResourcePolicy, old *vpav1.PodResourcePolicy, path *field.Path) (field.ErrorList, []string) {
	if p.ControlledResources == nil {
		return nil, nil
	}
	var errs field.ErrorList
	var warnings []string
	for j, r := range *p.ControlledResources {
		if r == corev1.ResourceCPU || r == corev1.ResourceMemory {
			continue
		}
		if controlledBefore(old, r) {
			warnings = append(warnings, fmt.Sprintf("%s: %q is kept from the existing object but is not sized (only cpu and memory are); remove it",
				path.Index(j), r))
			continue
		}
		errs = append(errs, field.NotSupported(path.Index(j), r, []string{string(corev1.ResourceCPU), string(corev1.ResourceMemory)}))
	}
	return errs, warnings
}

// controlledBefore says whether a container policy of old names r in its controlledResources.
func controlledBefore(old *vpav1.PodResourcePolicy, r corev1.ResourceName) bool {
	if old == nil {
		return false
	}
	for _, p := range old.ContainerPolicies {
		if p.ControlledResources != nil && contains(*p.ControlledResources, r) {
			return true
		}
	}
	return false
}

// containerName checks that a policy names a container (a DNS-1123 label, like a pod's container names) or
// is the "*" policy. A name that the old object already had is not checked for its form again: upstream
// accepts any non-empty name, and such objects must stay updatable.
func containerName(name string, existed bool, path *field.Path) field.ErrorList {
	switch {
	case name == "":
		return field.ErrorList{field.Required(path, `name the container this policy applies to, or "*" for every container without its own policy`)}
	case name == vpav1.DefaultContainerResourcePolicy || existed:
		return nil
	case len(utilvalidation.IsDNS1123Label(name)) > 0:
		return field.ErrorList{field.Invalid(path, name,
			`must be "*" or a container name (a DNS-1123 label such as "app"); patterns such as "app-*" are not supported`)}
	}
	return nil
}

// bounds checks minAllowed and maxAllowed: not negative, a resolution the pod can carry (whole millicores,
// whole bytes) and min <= max (with the upstream message, on maxAllowed).
func bounds(p *vpav1.ContainerResourcePolicy, pp *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, b := range []struct {
		name string
		list corev1.ResourceList
	}{{"minAllowed", p.MinAllowed}, {"maxAllowed", p.MaxAllowed}} {
		for _, r := range sortedNames(b.list) {
			q := b.list[r]
			path := pp.Child(b.name).Key(string(r))
			if q.Sign() < 0 {
				errs = append(errs, field.Invalid(path, q.String(), "must not be negative"))
				continue
			}
			errs = append(errs, resolution(r, q, path)...)
		}
	}
	for _, r := range sortedNames(p.MinAllowed) {
		lo := p.MinAllowed[r]
		if hi, ok := p.MaxAllowed[r]; ok && hi.Cmp(lo) < 0 {
			errs = append(errs, field.Invalid(pp.Child("maxAllowed").Key(string(r)), hi.String(),
				fmt.Sprintf("max resource for %s is lower than min of %q; raise maxAllowed.%s or lower minAllowed.%s", r, lo.String(), r, r)))
		}
	}
	return errs
}

// resolution checks that a cpu quantity is whole millicores and a memory quantity whole bytes (the upstream
// messages); other resources are not checked.
func resolution(r corev1.ResourceName, q resource.Quantity, path *field.Path) field.ErrorList {
	switch r {
	case corev1.ResourceCPU:
		if _, exact := q.AsScale(resource.Milli); !exact {
			return field.ErrorList{field.Invalid(path, q.String(), "must be a whole number of milli CPUs")}
		}
	case corev1.ResourceMemory:
		if _, exact := q.AsScale(0); !exact {
			return field.ErrorList{field.Invalid(path, q.String(), "must be a whole number of bytes")}
		}
	}
	return nil
}

// ratio checks a requestToLimitRatio (AEP-8515). The first two checks repeat CEL rules of the CRD, so that
// a caller of the pure function (and an object stored before the rule) gets the same answer as the API.
func ratio(p *vpav1.ContainerResourcePolicy, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	rl := p.RequestToLimitRatio
	if p.ControlledValues != nil && *p.ControlledValues != vpav1.ContainerControlledValuesRequestsAndLimits {
		errs = append(errs, field.Forbidden(path, fmt.Sprintf(
			"requestToLimitRatio sets limits: it needs controlledValues RequestsAndLimits (the default), not %s; remove requestToLimitRatio or set controlledValues to RequestsAndLimits",
			*p.ControlledValues)))
	}
	for _, x := range []struct {
		name corev1.ResourceName
		r    *vpav1.ResourceRequestToLimitRatio
	}{{corev1.ResourceCPU, rl.CPU}, {corev1.ResourceMemory, rl.Memory}} {
		if x.r == nil {
			continue
		}
		rp := path.Child(string(x.name))
		if p.ControlledResources != nil && !contains(*p.ControlledResources, x.name) {
			errs = append(errs, field.Forbidden(rp, fmt.Sprintf(
				"%s is not in controlledResources, so its limit is never set; add %s to controlledResources or remove requestToLimitRatio.%s",
				x.name, x.name, x.name)))
		}
		switch x.r.Type {
		case vpav1.RequestToLimitRatioFactor:
			switch f := x.r.Factor; {
			case f == nil:
				errs = append(errs, field.Required(rp.Child("factor"), "type Factor needs factor (a number >= 1, limit = request x factor)"))
			case !(*f >= 1): // also refuses NaN
				errs = append(errs, field.Invalid(rp.Child("factor"), *f, "must be at least 1 (a limit below the request is not allowed); use 1 for limit = request"))
			}
			if x.r.Quantity != nil {
				errs = append(errs, field.Forbidden(rp.Child("quantity"), "quantity is only used with type Quantity; remove it or set type to Quantity"))
			}
		case vpav1.RequestToLimitRatioQuantity:
			switch q := x.r.Quantity; {
			case q == nil:
				errs = append(errs, field.Required(rp.Child("quantity"), "type Quantity needs quantity (limit = request + quantity, e.g. 200Mi)"))
			case q.Sign() < 0:
				errs = append(errs, field.Invalid(rp.Child("quantity"), q.String(), "must not be negative (a limit below the request is not allowed); use 0 for limit = request"))
			default:
				errs = append(errs, resolution(x.name, *q, rp.Child("quantity"))...)
			}
			if x.r.Factor != nil {
				errs = append(errs, field.Forbidden(rp.Child("factor"), "factor is only used with type Factor; remove it or set type to Factor"))
			}
		default:
			errs = append(errs, field.NotSupported(rp.Child("type"), x.r.Type,
				[]string{string(vpav1.RequestToLimitRatioFactor), string(vpav1.RequestToLimitRatioQuantity)}))
		}
	}
	return errs
}

func contains(names []corev1.ResourceName, n corev1.ResourceName) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// sortedNames returns the resource names of l in order, so that errors come out in a stable order.
func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for r := range l {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// modelFields checks a policy's model fields (upstream's per-container configuration) against the ranges
// the recommender takes; without PerVPAConfig (allowed false) they are refused, as upstream's webhook does.
func modelFields(p *vpav1.ContainerResourcePolicy, pp *field.Path, allowed bool) field.ErrorList {
	var errs field.ErrorList
	if !allowed {
		for name, set := range map[string]bool{"oomBumpUpRatio": p.OOMBumpUpRatio != nil, "oomMinBumpUp": p.OOMMinBumpUp != nil,
			"memoryAggregationIntervalSeconds": p.MemoryAggregationIntervalSeconds != nil, "memoryAggregationIntervalCount": p.MemoryAggregationIntervalCount != nil} {
			if set {
				errs = append(errs, field.Forbidden(pp.Child(name), gateMessage(name, features.PerVPAConfig)+"; otherwise remove it"))
			}
		}
		sort.Slice(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
		return errs
	}
	if q := p.OOMBumpUpRatio; q != nil {
		if f := q.AsApproximateFloat64(); f < 1 || f > 10 {
			errs = append(errs, field.Invalid(pp.Child("oomBumpUpRatio"), q.String(), "must be a number in [1, 10], e.g. 1.5 (memory after an OOM kill is at least this times what it used)"))
		}
	}
	if q := p.OOMMinBumpUp; q != nil && (q.Sign() < 0 || q.Cmp(resource.MustParse("1Ti")) > 0) {
		errs = append(errs, field.Invalid(pp.Child("oomMinBumpUp"), q.String(), "must be a memory quantity in [0, 1Ti], e.g. 200Mi"))
	}
	return errs
}

// boostRule says whether an object may have a startupBoost: a VPA while the CPUStartupBoost gate is on;
// never an Hvpa (its pods are sized from its intent, not boosted).
type boostRule struct {
	allowed bool
	kept    bool   // allowed only because the existing object has a boost: the boosts have no effect
	why     string // why not
}

// vpaBoosts is a VPA's boost rule; old is the existing object (nil on CREATE). As upstream's webhook
// decides, an object that already has a boost (its own or a container policy's) may keep, change and add
// boosts while the gate is off, with a warning that they have no effect.
func vpaBoosts(gates featuregate.FeatureGate, old *vpav1.VerticalPodAutoscaler) boostRule {
	r := boostRule{allowed: enabled(gates, features.CPUStartupBoost), why: gateMessage("startupBoost", features.CPUStartupBoost)}
	if !r.allowed && hadBoost(old) {
		r.allowed, r.kept = true, true
	}
	return r
}

// hadBoost says whether the existing object has a startup boost, as upstream's webhook reads it: a cpu boost
// of the object's, or any boost of a container policy's.
func hadBoost(old *vpav1.VerticalPodAutoscaler) bool {
	if old == nil {
		return false
	}
	if old.Spec.StartupBoost != nil && old.Spec.StartupBoost.CPU != nil {
		return true
	}
	return old.Spec.ResourcePolicy != nil && slices.ContainsFunc(old.Spec.ResourcePolicy.ContainerPolicies,
		func(p vpav1.ContainerResourcePolicy) bool { return p.StartupBoost != nil })
}

var hvpaBoosts = boostRule{why: "an Hvpa's pods are sized from its intent and not boosted; use a VerticalPodAutoscaler's startupBoost"}

// check refuses a new startupBoost the rule does not allow; one the existing object already had is kept, with
// a warning, so that the object stays updatable.
func (r boostRule) check(b, old *vpav1.StartupBoost, path *field.Path) (field.ErrorList, []string) {
	switch {
	case b == nil:
		return nil, nil
	case r.kept:
		return boostValues(b, path), []string{fmt.Sprintf("%s is kept because the existing object has a startup boost, but has no effect: %s", path, r.why)}
	case r.allowed:
		return boostValues(b, path), nil
	}
	if old != nil && equality.Semantic.DeepEqual(old, b) {
		return nil, []string{fmt.Sprintf("%s has no effect: %s", path, r.why)}
	}
	return field.ErrorList{field.Forbidden(path, r.why+"; otherwise remove startupBoost")}, nil
}

// boostValues checks what the CRD's rules do not: a quantity boost is whole millicores (upstream's rule).
func boostValues(b *vpav1.StartupBoost, path *field.Path) field.ErrorList {
	if b.CPU == nil || b.CPU.Quantity == nil {
		return nil
	}
	return resolution(corev1.ResourceCPU, *b.CPU.Quantity, path.Child("cpu", "quantity"))
}

// controlledValues checks a policy's controlledValues and its combination with mode.
func controlledValues(p *vpav1.ContainerResourcePolicy, pp *field.Path) field.ErrorList {
	cv := p.ControlledValues
	if cv == nil {
		return nil
	}
	var errs field.ErrorList
	switch *cv {
	case vpav1.ContainerControlledValuesRequestsAndLimits, vpav1.ContainerControlledValuesRequestsOnly:
	default:
		errs = append(errs, field.NotSupported(pp.Child("controlledValues"), *cv,
			[]string{string(vpav1.ContainerControlledValuesRequestsAndLimits), string(vpav1.ContainerControlledValuesRequestsOnly)}))
	}
	// upstream refuses exactly this combination (RequestsOnly with mode Off is accepted there too)
	if p.Mode != nil && *p.Mode == vpav1.ContainerScalingModeOff && *cv == vpav1.ContainerControlledValuesRequestsAndLimits {
		errs = append(errs, field.Forbidden(pp.Child("controlledValues"),
			"controlledValues shouldn't be specified if container scaling mode is off; remove controlledValues or set mode to Auto"))
	}
	return errs
}

// perVPAConfig says whether the per-object configuration fields (upstream's PerVPAConfig: a policy's
// oomBumpUpRatio, oomMinBumpUp, memoryAggregationInterval*, updatePolicy.evictAfterOOMSeconds) are allowed:
// with the gate on, or when the existing object already uses one of them, in its resourcePolicy or its
// updatePolicy (it stays updatable, and may add another), as upstream decides.
func perVPAConfig(gates featuregate.FeatureGate, old *vpav1.PodResourcePolicy, oldUP *vpav1.PodUpdatePolicy) bool {
	if enabled(gates, features.PerVPAConfig) {
		return true
	}
	if oldUP != nil && oldUP.EvictAfterOOMSeconds != nil {
		return true
	}
	if old != nil {
		for _, p := range old.ContainerPolicies {
			if p.OOMBumpUpRatio != nil || p.OOMMinBumpUp != nil || p.MemoryAggregationIntervalSeconds != nil || p.MemoryAggregationIntervalCount != nil {
				return true
			}
		}
	}
	return false
}
