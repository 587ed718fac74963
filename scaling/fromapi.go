package scaling

import (
	"errors"
	"fmt"
	"iter"
	"math"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// ResourceName is the Kubernetes name of r.
func (r Resource) ResourceName() corev1.ResourceName { return corev1.ResourceName(r.String()) }

// Amount converts a quantity of r to base units (millicores for CPU, bytes for memory).
func Amount(r Resource, q resource.Quantity) float64 {
	if r == CPU {
		return q.AsApproximateFloat64() * 1000
	}
	return q.AsApproximateFloat64()
}

// MaxAmount is the largest amount of a resource in base units (1e14: 100 billion cores, or about 91 TiB):
// larger quantities in a spec are refused by name, and computed amounts saturate there, far below where
// int64 millicores or bytes overflow to negative values.
const MaxAmount = 1e14

// MaxEffectiveIntervals bounds the effective intervals one Hvpa makes: each decision builds them all, so a
// linear interval to millions of replicas would take the controller's memory.
const MaxEffectiveIntervals = 1000

// MaxReplicas is the largest maxReplicas of a scaling interval and of the HPA template (the CRD's maximum,
// checked again here: the code never trusts that the API server's schema ran). It is far above what one
// workload runs (Kubernetes is tested to 150,000 pods in a whole cluster) and far below where int32 replica
// counts wrap around.
const MaxReplicas = 100000

// EffectiveIntervalCount is how many effective intervals EffectiveIntervals makes from intervals, without
// making them: one per interval, or one per replica count of an extrapolated one.
func EffectiveIntervalCount(intervals []Interval, minReplicas int32) int64 {
	var n int64
	prev := int64(max(minReplicas, 1)) - 1
	for _, in := range intervals {
		if in.Extrapolation == ExtrapolationNone {
			n++
		} else {
			n += max(1, int64(in.MaxReplicas)-prev)
		}
		prev = int64(in.MaxReplicas)
	}
	return n
}

// checkIntervalCount refuses intervals that make more than MaxEffectiveIntervals effective intervals, naming
// the first interval (under ip) from which there are too many; nil when they are within the bound.
func checkIntervalCount(intervals []Interval, minReplicas int32, ip *field.Path) *field.Error {
	if EffectiveIntervalCount(intervals, minReplicas) <= MaxEffectiveIntervals {
		return nil
	}
	for i := range intervals {
		if EffectiveIntervalCount(intervals[:i+1], minReplicas) > MaxEffectiveIntervals {
			iv := intervals[i]
			return field.Invalid(ip.Index(i).Child("effectiveIntervalExtrapolation"), string(iv.Extrapolation), fmt.Sprintf(
				"makes one effective interval per replica count, more than %d up to %d replicas; remove the extrapolation from the intervals with many replicas, or lower their maxReplicas",
				MaxEffectiveIntervals, iv.MaxReplicas))
		}
	}
	return nil
}

// amountIn is a spec quantity in base units, refused with a field error when negative or above MaxAmount.
func amountIn(r Resource, q resource.Quantity, path *field.Path) (float64, *field.Error) {
	if q.Sign() < 0 {
		return 0, field.Invalid(path, q.String(), "must not be negative")
	}
	x := Amount(r, q)
	if x > MaxAmount || math.IsNaN(x) || math.IsInf(x, 0) {
		limit := "1e11 cores"
		if r == Memory {
			limit = "1e14 bytes (about 91Ti)"
		}
		return 0, field.Invalid(path, q.String(), "must be at most "+limit)
	}
	return x, nil
}

// Quantity converts an amount of r in base units to a Kubernetes quantity, rounded up to a whole unit and
// saturated to [0, MaxAmount] (never a negative or overflowing quantity).
func Quantity(r Resource, x float64) resource.Quantity {
	x = min(max(x, 0), MaxAmount)
	if math.IsNaN(x) {
		x = 0
	}
	if r == CPU {
		return *resource.NewMilliQuantity(int64(RoundUp(x)), resource.DecimalSI)
	}
	return *resource.NewQuantity(int64(RoundUp(x)), resource.BinarySI)
}

// FromResourceList converts a ResourceList to Values (only cpu and memory); negative amounts are errors.
func FromResourceList(l corev1.ResourceList, path *field.Path) (Values, field.ErrorList) {
	var v Values
	var errs field.ErrorList
	for _, r := range Resources {
		if q, ok := l[r.ResourceName()]; ok {
			x, err := amountIn(r, q, path.Key(r.String()))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			v.Set(r, x)
		}
	}
	return v, errs
}

// ToResourceList converts Values to a ResourceList.
func ToResourceList(v Values) corev1.ResourceList {
	if v.Empty() {
		return nil
	}
	l := corev1.ResourceList{}
	for _, r := range Resources {
		if x, ok := v.Get(r); ok {
			l[r.ResourceName()] = Quantity(r, x)
		}
	}
	return l
}

// SameValues reports whether l holds what ToResourceList renders from v (SameResourceList(l, ToResourceList(v)))
// without building that list: a decision's values against the intent in force, at every decision.
func SameValues(l corev1.ResourceList, v Values) bool {
	n := 0
	for _, r := range Resources {
		x, ok := v.Get(r)
		if !ok {
			continue
		}
		n++
		if q, in := l[r.ResourceName()]; !in || q.Cmp(Quantity(r, x)) != 0 {
			return false
		}
	}
	return n == len(l)
}

// SameResourceList reports whether a and b hold the same resources with the same quantities by value (1000m
// is 1, 1Gi is 1073741824); an empty list is the same as none.
func SameResourceList(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if o, ok := b[name]; !ok || q.Cmp(o) != 0 {
			return false
		}
	}
	return true
}

func scaledValues(s *hvpav1alpha1.ScaledResources, path *field.Path) (Values, field.ErrorList) {
	var v Values
	var errs field.ErrorList
	if s == nil {
		return v, nil
	}
	for r, q := range [NumResources]*resource.Quantity{CPU: s.CPU, Memory: s.Memory} {
		r := Resource(r)
		if q == nil {
			continue
		}
		x, err := amountIn(r, *q, path.Child(r.String()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v.Set(r, x)
	}
	return v, errs
}

func changeParams(r Resource, c *hvpav1alpha1.ChangeParams, path *field.Path) (*ChangeParams, field.ErrorList) {
	if c == nil {
		return nil, nil
	}
	var errs field.ErrorList
	out := &ChangeParams{}
	if c.Value != nil {
		x, err := amountIn(r, *c.Value, path.Child("value"))
		if err != nil {
			errs = append(errs, err)
		}
		out.Value, out.HasValue = x, true
	}
	if c.Percentage != nil {
		if *c.Percentage < 0 || *c.Percentage > 100 {
			errs = append(errs, field.Invalid(path.Child("percentage"), *c.Percentage, "must be from 0 to 100"))
		}
		out.Percentage, out.HasPercentage = float64(*c.Percentage), true
	}
	if !out.HasValue && !out.HasPercentage {
		errs = append(errs, field.Required(path, "set value, percentage, or both"))
	}
	return out, errs
}

func resourceChangeParams(c *hvpav1alpha1.ResourceChangeParams, path *field.Path) ([NumResources]*ChangeParams, field.ErrorList) {
	var out [NumResources]*ChangeParams
	if c == nil {
		return out, nil
	}
	var errs, e field.ErrorList
	out[CPU], e = changeParams(CPU, c.CPU, path.Child("cpu"))
	errs = append(errs, e...)
	out[Memory], e = changeParams(Memory, c.Memory, path.Child("memory"))
	return out, append(errs, e...)
}

// ContainerPolicies converts VPA container policies to plain values.
func ContainerPolicies(rp *vpav1.PodResourcePolicy, path *field.Path) ([]ContainerPolicy, field.ErrorList) {
	if rp == nil {
		return nil, nil
	}
	var out []ContainerPolicy
	var errs field.ErrorList
	for i, p := range rp.ContainerPolicies {
		cp, e := containerPolicy(p, path.Child("containerPolicies").Index(i))
		errs = append(errs, e...)
		out = append(out, cp)
	}
	return out, errs
}

// withoutZeros is v without its zero values.
func withoutZeros(v Values) Values {
	for _, r := range Resources {
		if x, ok := v.Get(r); ok && x == 0 {
			v.Unset(r)
		}
	}
	return v
}

// containerPolicy converts one container policy (at pp) to plain values.
func containerPolicy(p vpav1.ContainerResourcePolicy, pp *field.Path) (ContainerPolicy, field.ErrorList) {
	cp := ContainerPolicy{Name: p.ContainerName, Controlled: [NumResources]bool{true, true}, ControlledValues: RequestsAndLimits}
	cp.Off = p.Mode != nil && *p.Mode == vpav1.ContainerScalingModeOff
	var errs, e field.ErrorList
	cp.MinAllowed, e = FromResourceList(p.MinAllowed, pp.Child("minAllowed"))
	errs = append(errs, e...)
	cp.MaxAllowed, e = FromResourceList(p.MaxAllowed, pp.Child("maxAllowed"))
	errs = append(errs, e...)
	// a zero bound is none, as upstream's capping skips it (a maxAllowed of 0 would size a pod to nothing)
	cp.MinAllowed, cp.MaxAllowed = withoutZeros(cp.MinAllowed), withoutZeros(cp.MaxAllowed)
	for _, r := range Resources {
		lo, okLo := cp.MinAllowed.Get(r)
		hi, okHi := cp.MaxAllowed.Get(r)
		if okLo && okHi && lo > hi {
			errs = append(errs, field.Invalid(pp.Child("minAllowed").Key(r.String()), Format(r, lo),
				fmt.Sprintf("must not be greater than maxAllowed %s", Format(r, hi))))
		}
	}
	if p.ControlledResources != nil {
		cp.Controlled = [NumResources]bool{}
		for _, name := range *p.ControlledResources {
			for _, r := range Resources {
				if name == r.ResourceName() {
					cp.Controlled[r] = true
				}
			}
		}
	}
	if p.ControlledValues != nil {
		cp.ControlledValues = ControlledValues(*p.ControlledValues)
		if cp.ControlledValues != RequestsAndLimits && cp.ControlledValues != RequestsOnly {
			errs = append(errs, field.NotSupported(pp.Child("controlledValues"), cp.ControlledValues, []string{"RequestsAndLimits", "RequestsOnly"}))
		}
	}
	if rl := p.RequestToLimitRatio; rl != nil {
		for r, x := range [NumResources]*vpav1.ResourceRequestToLimitRatio{CPU: rl.CPU, Memory: rl.Memory} {
			if x != nil {
				var err *field.Error
				if cp.Ratio[r], err = requestToLimitRatio(Resource(r), x, pp.Child("requestToLimitRatio", Resource(r).String())); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return cp, errs
}

// requestToLimitRatio converts one resource's requestToLimitRatio (at rp).
func requestToLimitRatio(r Resource, x *vpav1.ResourceRequestToLimitRatio, rp *field.Path) (*Ratio, *field.Error) {
	switch x.Type {
	case vpav1.RequestToLimitRatioFactor:
		if x.Factor == nil || *x.Factor < 1 {
			return nil, field.Invalid(rp.Child("factor"), x.Factor, "type Factor needs factor >= 1")
		}
		return &Ratio{Type: RatioFactor, Factor: *x.Factor}, nil
	case vpav1.RequestToLimitRatioQuantity:
		if x.Quantity == nil || x.Quantity.Sign() < 0 {
			return nil, field.Invalid(rp.Child("quantity"), x.Quantity, "type Quantity needs a quantity >= 0")
		}
		q, err := amountIn(r, *x.Quantity, rp.Child("quantity"))
		if err != nil {
			return nil, err
		}
		return &Ratio{Type: RatioQuantity, Quantity: q}, nil
	default:
		return nil, field.NotSupported(rp.Child("type"), x.Type, []string{"Factor", "Quantity"})
	}
}

func policy(p *hvpav1alpha1.ScaleParams, path *field.Path) (Policy, field.ErrorList) {
	out := Policy{Mode: UpdateModeAuto}
	if p == nil {
		return out, nil
	}
	var errs field.ErrorList
	if p.UpdatePolicy != nil && p.UpdatePolicy.UpdateMode != nil {
		out.Mode = UpdateMode(*p.UpdatePolicy.UpdateMode)
		switch out.Mode {
		case UpdateModeAuto, UpdateModeOff, UpdateModeMaintenanceWindow:
		default:
			errs = append(errs, field.NotSupported(path.Child("updatePolicy", "updateMode"), out.Mode, []string{"Auto", "Off", "MaintenanceWindow"}))
		}
	}
	if p.StabilizationDuration != nil {
		if p.StabilizationDuration.Duration < 0 {
			errs = append(errs, field.Invalid(path.Child("stabilizationDuration"), p.StabilizationDuration.String(), "must not be negative"))
		}
		out.Stabilization = p.StabilizationDuration.Duration
	}
	var e field.ErrorList
	out.MinChange, e = resourceChangeParams(p.MinChange, path.Child("minChange"))
	return out, append(errs, e...)
}

// FromHvpa converts and validates an Hvpa spec, applying the documented defaults. Every error names its
// field.
func FromHvpa(h *hvpav1alpha1.Hvpa) (*Spec, field.ErrorList) {
	sp := field.NewPath("spec")
	s := &Spec{MinReplicas: 1, HPAUtilization: true, Tracking: DefaultTracking}
	errs, hasHPAMax := hpaBounds(s, h.Spec.HPA, sp.Child("hpa", "template"))
	var e field.ErrorList
	if h.Spec.VPA != nil {
		s.Policies, e = ContainerPolicies(h.Spec.VPA.Template.ResourcePolicy, sp.Child("vpa", "template", "resourcePolicy"))
		errs = append(errs, e...)
	}
	errs = append(errs, intervals(s, h.Spec.ScalingIntervals, hasHPAMax, sp.Child("scalingIntervals"))...)
	s.Overlap, e = resourceChangeParams(h.Spec.ScalingIntervalsOverlap, sp.Child("scalingIntervalsOverlap"))
	errs = append(errs, e...)
	s.Base, e = resourceChangeParams(h.Spec.BaseResourcesPerReplica, sp.Child("baseResourcesPerReplica"))
	errs = append(errs, e...)
	s.LimitsGap, e = resourceChangeParams(h.Spec.LimitsRequestsGapScaleParams, sp.Child("limitsRequestsGapScaleParams"))
	errs = append(errs, e...)
	s.ScaleUp, e = policy(h.Spec.ScaleUp, sp.Child("scaleUp"))
	errs = append(errs, e...)
	s.ScaleDown, e = policy(h.Spec.ScaleDown, sp.Child("scaleDown"))
	errs = append(errs, e...)
	if w := h.Spec.MaintenanceTimeWindow; w != nil {
		win, err := NewWindow(w.Begin, w.End)
		if err != nil {
			errs = append(errs, field.Invalid(sp.Child("maintenanceTimeWindow"), w.Begin+"-"+w.End, err.Error()))
		}
		s.Window = win
	} else if s.ScaleUp.Mode == UpdateModeMaintenanceWindow || s.ScaleDown.Mode == UpdateModeMaintenanceWindow {
		errs = append(errs, field.Required(sp.Child("maintenanceTimeWindow"), "updateMode MaintenanceWindow needs a window (begin and end as HHMMSS+ZZZZ)"))
	}
	if len(errs) == 0 {
		errs = downBoundaries(h, s, sp)
	}
	return s, errs
}

// downBoundaries checks what only the effective intervals show: that every down boundary after the first is
// above 0 (an overlap as large as the previous upper total makes a down boundary of 0, which no total falls
// below: the workload would never scale down from there). It needs a spec that converted without errors.
func downBoundaries(h *hvpav1alpha1.Hvpa, s *Spec, sp *field.Path) field.ErrorList {
	eff, err := EffectiveIntervals(s.Intervals, s.MinReplicas, s.Overlap)
	var fe *field.Error
	if errors.As(err, &fe) {
		return field.ErrorList{fe}
	} else if err != nil {
		return field.ErrorList{field.InternalError(sp.Child("scalingIntervals"), err)}
	}
	var errs field.ErrorList
	op := sp.Child("scalingIntervalsOverlap")
	for _, r := range Resources {
		if s.Overlap[r] == nil {
			continue
		}
		first, last := -1, -1
		for j := 1; j < len(eff); j++ {
			if up := eff[j-1].Up[r]; math.IsInf(up, 1) || up <= 0 {
				continue
			}
			if eff[j].Down[r] <= 0 {
				if first < 0 {
					first = j
				}
				last = j
			}
		}
		if first < 0 {
			continue
		}
		up, at := eff[first-1].Up[r], eff[first-1].Replicas
		stuck := fmt.Sprintf("the down boundary at %s is 0", replicasText(eff[first].Replicas))
		if last != first {
			stuck = fmt.Sprintf("the down boundaries at %d to %d replicas are 0", eff[first].Replicas, eff[last].Replicas)
		}
		ov := h.Spec.ScalingIntervalsOverlap.CPU
		if r == Memory {
			ov = h.Spec.ScalingIntervalsOverlap.Memory
		}
		if ov.Percentage == nil || (ov.Value != nil && Amount(r, *ov.Value) >= up) {
			errs = append(errs, field.Invalid(op.Child(r.String(), "value"), ov.Value.String(), fmt.Sprintf(
				"is not below %s, the upper total at %s: %s, so the workload would never scale down from there; make value smaller than %s",
				Format(r, up), replicasText(at), stuck, Format(r, up))))
		} else {
			errs = append(errs, field.Invalid(op.Child(r.String(), "percentage"), *ov.Percentage, fmt.Sprintf(
				"is the whole upper total: %s, so the workload would never scale down from there; use a percentage below 100",
				stuck)))
		}
	}
	return errs
}

func replicasText(n int32) string {
	if n == 1 {
		return "1 replica"
	}
	return fmt.Sprintf("%d replicas", n)
}

// hpaBounds reads the HPA template's replica bounds and metrics into s; hasMax: the template gives a
// maxReplicas. Without deploy the template may be left out (hpa: {deploy: false}): no HPA is deployed and the
// bounds come from the intervals.
func hpaBounds(s *Spec, hpa *hvpav1alpha1.HpaSpec, tp *field.Path) (errs field.ErrorList, hasMax bool) {
	if hpa == nil || (!hpa.Deploy && equality.Semantic.DeepEqual(hpa.Template, hvpav1alpha1.HpaTemplate{})) {
		return nil, false
	}
	t := hpa.Template
	if t.MinReplicas != nil {
		s.MinReplicas = *t.MinReplicas
	}
	s.MaxReplicas = t.MaxReplicas
	if s.MinReplicas < 1 {
		errs = append(errs, field.Invalid(tp.Child("minReplicas"), s.MinReplicas, "must be at least 1"))
	}
	if s.MaxReplicas < s.MinReplicas {
		errs = append(errs, field.Invalid(tp.Child("maxReplicas"), s.MaxReplicas, "must not be less than minReplicas"))
	}
	if s.MaxReplicas > MaxReplicas {
		errs = append(errs, replicasInRange(tp.Child("maxReplicas"), s.MaxReplicas)...)
	}
	s.followHPAMetrics(t.Metrics)
	return errs, true
}

// intervals reads the scaling intervals into s.Intervals (and s.MaxReplicas without an HPA maximum). An
// interval's maxResources default to the VPA template's maxAllowed (the largest over its container policies).
func intervals(s *Spec, in []hvpav1alpha1.ScalingInterval, hasHPAMax bool, ip *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(in) == 0 {
		errs = append(errs, field.Required(ip, "at least one scaling interval is needed"))
	}
	maxAllowed := largestMaxAllowed(s.Policies)
	for i, iv := range in {
		p := ip.Index(i)
		out, e := interval(iv, i == len(in)-1, hasHPAMax, s.MaxReplicas, maxAllowed, p)
		errs = append(errs, e...)
		if i > 0 {
			errs = append(errs, increasing(s.Intervals[i-1], out, i, p)...)
		}
		s.Intervals = append(s.Intervals, out)
	}
	if len(s.Intervals) == 0 {
		return errs
	}
	if first := s.Intervals[0].MaxReplicas; first > 0 && first < s.MinReplicas {
		errs = append(errs, field.Invalid(ip.Index(0).Child("maxReplicas"), first,
			fmt.Sprintf("the first interval ends below hpa.template.minReplicas %d", s.MinReplicas)))
	}
	if !hasHPAMax {
		s.MaxReplicas = s.Intervals[len(s.Intervals)-1].MaxReplicas
	}
	if fe := checkIntervalCount(s.Intervals, s.MinReplicas, ip); fe != nil {
		errs = append(errs, fe)
	}
	return errs
}

// largestMaxAllowed is, per resource, the largest maxAllowed over the container policies.
func largestMaxAllowed(policies []ContainerPolicy) Values {
	var out Values
	for _, p := range policies {
		for _, r := range Resources {
			if x, ok := p.MaxAllowed.Get(r); ok {
				if cur, had := out.Get(r); !had || x > cur {
					out.Set(r, x)
				}
			}
		}
	}
	return out
}

// interval reads one scaling interval; the last one may take its maxReplicas from the HPA template's.
func interval(in hvpav1alpha1.ScalingInterval, last, hasHPAMax bool, hpaMax int32, maxAllowed Values, p *field.Path) (Interval, field.ErrorList) {
	var errs field.ErrorList
	out := Interval{}
	switch {
	case in.MaxReplicas != nil:
		out.MaxReplicas = *in.MaxReplicas
	case last && hasHPAMax:
		out.MaxReplicas = hpaMax
	case last:
		errs = append(errs, field.Required(p.Child("maxReplicas"), "the last interval has no maxReplicas and there is no spec.hpa.template.maxReplicas to default it from"))
	default:
		errs = append(errs, field.Required(p.Child("maxReplicas"), "only the last interval may omit maxReplicas"))
	}
	if in.MaxReplicas != nil {
		errs = append(errs, replicasInRange(p.Child("maxReplicas"), out.MaxReplicas)...)
	}
	var e field.ErrorList
	out.MaxResources, e = scaledValues(in.MaxResources, p.Child("maxResources"))
	errs = append(errs, e...)
	for _, r := range Resources {
		if x, ok := out.MaxResources.Get(r); ok && x == 0 {
			errs = append(errs, field.Invalid(p.Child("maxResources", r.String()), Format(r, x),
				"must be greater than 0 (a per-pod maximum of 0 leaves the container nothing); omit it to default to the VPA template's maxAllowed"))
		}
	}
	for _, r := range Resources {
		if x, ok := maxAllowed.Get(r); ok && !out.MaxResources.Has(r) {
			out.MaxResources.Set(r, x)
		}
	}
	if in.EffectiveIntervalExtrapolation != nil {
		out.Extrapolation = Extrapolation(*in.EffectiveIntervalExtrapolation)
		switch out.Extrapolation {
		case ExtrapolationLinear, ExtrapolationHorizontalOnly:
		default:
			errs = append(errs, field.NotSupported(p.Child("effectiveIntervalExtrapolation"), out.Extrapolation, []string{"linear", "horizontalOnly"}))
		}
	}
	return out, errs
}

// replicasInRange refuses a maxReplicas outside [1, MaxReplicas], naming its field.
func replicasInRange(p *field.Path, n int32) field.ErrorList {
	switch {
	case n < 1:
		return field.ErrorList{field.Invalid(p, n, "must be at least 1")}
	case n > MaxReplicas:
		return field.ErrorList{field.Invalid(p, n, fmt.Sprintf("must be at most %d; lower it", MaxReplicas))}
	}
	return nil
}

// increasing checks interval i (out) against the one before it: maxReplicas strictly increase, maxResources
// never decrease (a bounded maximum after an unbounded one is a decrease).
func increasing(prev, out Interval, i int, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if out.MaxReplicas <= prev.MaxReplicas {
		errs = append(errs, field.Invalid(p.Child("maxReplicas"), out.MaxReplicas,
			fmt.Sprintf("maxReplicas must strictly increase: interval %d has %d", i-1, prev.MaxReplicas)))
	}
	for _, r := range Resources {
		a, okA := prev.MaxResources.Get(r)
		b, okB := out.MaxResources.Get(r)
		switch {
		case !okA && okB: // unbounded, then bounded: a decrease
			errs = append(errs, field.Invalid(p.Child("maxResources", r.String()), Format(r, b),
				fmt.Sprintf("maxResources must not decrease: interval %d has no %s maximum (unbounded); set one there or give no %s maximum here", i-1, r, r)))
		case okA && okB && b < a:
			errs = append(errs, field.Invalid(p.Child("maxResources", r.String()), Format(r, b),
				fmt.Sprintf("maxResources must not decrease: interval %d has %s", i-1, Format(r, a))))
		}
	}
	return errs
}

// utilizationOnly reports whether every HPA metric is a Resource metric with a Utilization target. No
// metrics means the HPA's default, 80% CPU utilization.
func utilizationOnly(metrics []autoscalingv2.MetricSpec) bool {
	for _, m := range metrics {
		if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil || m.Resource.Target.Type != autoscalingv2.UtilizationMetricType {
			return false
		}
	}
	return true
}

// finite turns an unbounded amount into a ResourceList-free marker for printing.
func finite(x float64) bool { return !math.IsInf(x, 0) && !math.IsNaN(x) }

// FromLimitRanges folds a namespace's LimitRanges into the bounds pods are sized within: the tightest of
// each wins. No LimitRange gives nil.
func FromLimitRanges(items []corev1.LimitRange) *LimitRange {
	if len(items) == 0 {
		return nil
	}
	out := &LimitRange{}
	tighten := func(dst *Values, src corev1.ResourceList, lower bool) {
		v, _ := FromResourceList(src, nil)
		for _, res := range Resources {
			x, ok := v.Get(res)
			if !ok {
				continue
			}
			if cur, had := dst.Get(res); !had || (lower && x < cur) || (!lower && x > cur) {
				dst.Set(res, x)
			}
		}
	}
	for _, lr := range items {
		for _, item := range lr.Spec.Limits {
			switch item.Type {
			case corev1.LimitTypeContainer:
				tighten(&out.ContainerMax, item.Max, true)
				tighten(&out.ContainerMin, item.Min, false)
				tightenRatio(&out.MaxLimitRequestRatio, item.MaxLimitRequestRatio)
			case corev1.LimitTypePod:
				tighten(&out.PodMax, item.Max, true)
				tighten(&out.PodMin, item.Min, false)
				tightenRatio(&out.PodMaxLimitRequestRatio, item.MaxLimitRequestRatio)
			}
		}
	}
	return out
}

// tightenRatio keeps the smallest maxLimitRequestRatio per resource: a plain number, not an amount, taken
// at its milli value (rounded up) as the LimitRanger compares it.
func tightenRatio(dst *Values, src corev1.ResourceList) {
	for _, res := range Resources {
		if q, ok := src[res.ResourceName()]; ok {
			if y := float64(q.MilliValue()) / 1000; !dst.Has(res) || y < dst.v[res] {
				dst.Set(res, y)
			}
		}
	}
}

// Sizing is what sizes a workload's pods, read from a VPA or an Hvpa the one way the admission webhook and
// the updater both use: per container the target requests (a VPA's recommendation target, an Hvpa's
// status.desired requests) and, for a VPA, its recommendation's bounds; the container policies; the limits
// gap.
type Sizing struct {
	Targets, Lower, Upper map[string]Values
	Policies              []ContainerPolicy
	Gap                   [NumResources]*ChangeParams
}

// SizingFromVPA reads v's sizing; no Targets while v has no recommendation.
func SizingFromVPA(v *vpav1.VerticalPodAutoscaler) (Sizing, field.ErrorList) {
	var s Sizing
	var errs field.ErrorList
	s.Policies, errs = ContainerPolicies(v.Spec.ResourcePolicy, field.NewPath("spec", "resourcePolicy"))
	if rec := v.Status.Recommendation; rec != nil && len(rec.ContainerRecommendations) > 0 {
		s.Targets, s.Lower, s.Upper = map[string]Values{}, map[string]Values{}, map[string]Values{}
		for _, r := range rec.ContainerRecommendations {
			s.Targets[r.ContainerName], _ = FromResourceList(r.Target, nil)
			s.Lower[r.ContainerName], _ = FromResourceList(r.LowerBound, nil)
			s.Upper[r.ContainerName], _ = FromResourceList(r.UpperBound, nil)
		}
	}
	return s, errs
}

// SizingFromHvpa reads h's sizing: its intent (status.desired), its container policies
// (spec.vpa.template.resourcePolicy) and limitsRequestsGapScaleParams; the rest of the spec (intervals, the
// decision's policies) plays no part. No Targets while h has no intent.
func SizingFromHvpa(h *hvpav1alpha1.Hvpa) (Sizing, field.ErrorList) {
	sp := field.NewPath("spec")
	var s Sizing
	var errs field.ErrorList
	if h.Spec.VPA != nil {
		s.Policies, errs = ContainerPolicies(h.Spec.VPA.Template.ResourcePolicy, sp.Child("vpa", "template", "resourcePolicy"))
	}
	var e field.ErrorList
	s.Gap, e = resourceChangeParams(h.Spec.LimitsRequestsGapScaleParams, sp.Child("limitsRequestsGapScaleParams"))
	errs = append(errs, e...)
	if d := h.Status.Desired; d != nil && len(d.Containers) > 0 {
		s.Targets = map[string]Values{}
		for _, dc := range d.Containers {
			s.Targets[dc.Name], _ = FromResourceList(dc.Requests, nil)
		}
	}
	return s, errs
}

// HasPodLevelResources reports whether a pod sets pod-level resources (spec.resources requests or limits).
// They bound the sum of its containers, so sizing the containers alone could make the pod invalid or change
// what it was given: neither the admission webhook nor the updater sizes such a pod (one rule for both).
func HasPodLevelResources(spec *corev1.PodSpec) bool {
	return spec.Resources != nil && len(spec.Resources.Requests)+len(spec.Resources.Limits) > 0
}

// FromContainers are the requests and limits of pod-spec containers as plain values.
func FromContainers(containers []corev1.Container) []Container {
	if len(containers) == 0 {
		return nil
	}
	out := make([]Container, len(containers))
	for i, k := range containers {
		req, _ := FromResourceList(k.Resources.Requests, nil)
		lim, _ := FromResourceList(k.Resources.Limits, nil)
		out[i] = Container{Name: k.Name, Requests: req, Limits: lim}
	}
	return out
}

// FromInitContainers are the requests and limits of a pod spec's init containers, in order, each marked
// InitContainer or, with restartPolicy Always, SidecarContainer.
func FromInitContainers(containers []corev1.Container) []Container {
	out := FromContainers(containers)
	for i, k := range containers {
		out[i].Kind = InitContainer
		if k.RestartPolicy != nil && *k.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			out[i].Kind = SidecarContainer
		}
	}
	return out
}

// FromPodContainers are a pod spec's app containers followed by its init containers (FromInitContainers):
// what SizePod sizes a pod from.
func FromPodContainers(spec *corev1.PodSpec) []Container {
	return append(FromContainers(spec.Containers), FromInitContainers(spec.InitContainers)...)
}

// defaultHPAMetrics is what the API server gives an HPA without metrics: 80% CPU utilization.
var defaultHPAMetrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
	Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}}}}

// utilizationReadings are the HPA's current readings (status.currentMetrics) of its Resource metrics whose spec
// has a Utilization target, each with that target as a fraction.
func utilizationReadings(spec []autoscalingv2.MetricSpec, current []autoscalingv2.MetricStatus) iter.Seq2[float64, *autoscalingv2.ResourceMetricStatus] {
	return func(yield func(float64, *autoscalingv2.ResourceMetricStatus) bool) {
		targets := utilizationTargets(spec)
		for _, m := range current {
			if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil {
				continue
			}
			if target, ok := targets[m.Resource.Name]; ok && !yield(target, m.Resource) {
				return
			}
		}
	}
}

// HPARaw is h_raw of docs/design/scaling.md section 2: c x current / target of the HPA's Resource metrics whose
// spec (the Hvpa's HPA template; none means the default 80% CPU) has a Utilization target, the largest ratio
// over them, from the HPA's status.currentMetrics. c is the number of pods the metrics were averaged over (the
// workload's ready pods; not the HPA's status.currentReplicas, which is the Hvpa's spec.replicas), so that
// h_raw x the per-pod values in force is the measured total usage / target. podRequests is the pod's requests
// in force (the sum over its containers of the per-pod values the decision multiplies h_raw by): when it has
// the metric's resource, the current utilization is the metric's averageValue (usage per pod) over it, so that
// h_raw x the values in force is usage / target even while the running pods still have other requests (not
// yet resized to the intent, or measured before a resize); otherwise the HPA's averageUtilization. 0 when no
// such metric has a current value.
func HPARaw(c int32, spec []autoscalingv2.MetricSpec, current []autoscalingv2.MetricStatus, podRequests Values) float64 {
	ratio := 0.0
	for target, m := range utilizationReadings(spec, current) {
		cur := m.Current
		r, known := resourceOf(m.Name)
		req, hasReq := podRequests.Get(r)
		switch {
		case known && hasReq && req > 0 && cur.AverageValue != nil:
			ratio = max(ratio, Amount(r, *cur.AverageValue)/req/target)
		case cur.AverageUtilization != nil:
			ratio = max(ratio, float64(*cur.AverageUtilization)/100/target)
		}
	}
	return float64(c) * ratio
}

// HPAReadingCurrent reports whether the HPA's status.currentMetrics were read on pods with the requests in
// force: for every Resource metric with a Utilization target that has a current averageValue and
// averageUtilization, the request they imply (value over utilization) is within 5% of podRequests (the
// utilization is a whole percent). A reading from before the pods were last resized is not current: its
// utilization is of other requests, and the pod count it was averaged over may have changed with them.
// False when no such metric has both values.
func HPAReadingCurrent(spec []autoscalingv2.MetricSpec, current []autoscalingv2.MetricStatus, podRequests Values) bool {
	seen := false
	for _, m := range utilizationReadings(spec, current) {
		cur := m.Current
		r, known := resourceOf(m.Name)
		req, hasReq := podRequests.Get(r)
		if !known || !hasReq || req <= 0 || cur.AverageValue == nil || cur.AverageUtilization == nil || *cur.AverageUtilization <= 0 {
			continue
		}
		implied := Amount(r, *cur.AverageValue) * 100 / float64(*cur.AverageUtilization)
		if math.Abs(implied/req-1) > 0.05 {
			return false
		}
		seen = true
	}
	return seen
}

// HPARawFromUsage is h_raw from the workload's usage read at one time (summed over its pods and containers,
// per resource): usage / (podRequests x target) of the HPA's Resource Utilization metrics (the template's; none
// means the default 80% CPU), the largest over them, so that h_raw x the per-pod values in force is usage /
// target. Unlike the HPA's status, it does not mix a pod count with an average over fewer pods while new pods
// start. 0 when no such metric has both a usage and a request.
func HPARawFromUsage(spec []autoscalingv2.MetricSpec, usage, podRequests Values) float64 {
	raw := 0.0
	for name, target := range utilizationTargets(spec) {
		r, known := resourceOf(name)
		if !known {
			continue
		}
		u, hasU := usage.Get(r)
		req, hasReq := podRequests.Get(r)
		if hasU && hasReq && req > 0 {
			raw = max(raw, u/req/target)
		}
	}
	return raw
}

// followHPAMetrics sets how the spec reads the HPA whose metrics these are: whether its replicas make a total
// (every metric a Resource Utilization one), the resources it measures and their target utilizations (none:
// the default 80% CPU).
func (s *Spec) followHPAMetrics(metrics []autoscalingv2.MetricSpec) {
	s.HPAUtilization = utilizationOnly(metrics)
	s.HPAMeasures, s.HPATargets = [NumResources]bool{}, [NumResources]float64{}
	for name, target := range utilizationTargets(metrics) {
		if r, ok := resourceOf(name); ok {
			s.HPAMeasures[r], s.HPATargets[r] = true, target
		}
	}
}

// utilizationTargets are the target utilizations (fractions) of an HPA's Resource metrics with a Utilization
// target, by resource name (no metrics: the default 80% CPU).
func utilizationTargets(spec []autoscalingv2.MetricSpec) map[corev1.ResourceName]float64 {
	if len(spec) == 0 {
		spec = defaultHPAMetrics
	}
	targets := map[corev1.ResourceName]float64{}
	for _, m := range spec {
		if m.Type != autoscalingv2.ResourceMetricSourceType || m.Resource == nil || m.Resource.Target.Type != autoscalingv2.UtilizationMetricType ||
			m.Resource.Target.AverageUtilization == nil || *m.Resource.Target.AverageUtilization <= 0 {
			continue
		}
		targets[m.Resource.Name] = float64(*m.Resource.Target.AverageUtilization) / 100
	}
	return targets
}

// resourceOf is the scaled resource of a Kubernetes resource name.
func resourceOf(name corev1.ResourceName) (Resource, bool) {
	for _, r := range Resources {
		if r.ResourceName() == name {
			return r, true
		}
	}
	return 0, false
}
