package gardenerhvpa

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// LossKind says how a gardener field fared in the conversion.
type LossKind string

const (
	// Dropped: the field is not carried over.
	Dropped LossKind = "dropped"
	// Approximated: the field is carried over with a meaning that differs from gardener's.
	Approximated LossKind = "approximated"
	// Unknown: the field is not in gardener's schema (found by Decode).
	Unknown LossKind = "unknown"
)

// Loss names a gardener field (its path in gardener's object) that is not carried over as it was, why, what
// was done instead and what the user should do.
type Loss struct {
	Path   string
	Kind   LossKind
	Reason string
}

// String is the loss as one line: "path: kind: reason".
func (l Loss) String() string { return l.Path + ": " + string(l.Kind) + ": " + l.Reason }

const (
	// hpaControllerAnnotation ("hvpa") made gardener's controller apply the HPA's replicas itself.
	hpaControllerAnnotation = "hpa-controller"
	lastAppliedAnnotation   = "kubectl.kubernetes.io/last-applied-configuration"
	// maxExtrapolatedReplicas is the largest maxReplicas hvpa's CRD allows with an extrapolation.
	maxExtrapolatedReplicas = 1000
)

// gardenerMinChange are the thresholds (per pod) gardener's controller used when a minChange was unset.
var gardenerMinChange = map[string]string{"cpu": "200m", "memory": "200M"}

// windowPattern is the HHMMSS+ZZZZ format both schemas use for the maintenance window.
var windowPattern = regexp.MustCompile(`^([01][0-9]|2[0-3])[0-5][0-9][0-5][0-9][+-]([01][0-9]|2[0-3])[0-5][0-9]$`)

// converter holds one conversion: the input, the losses so far and what later fields depend on.
type converter struct {
	in     *GardenerHvpa
	losses []Loss
	// minReplicas and maxReplicas are the replica bounds (hpa template, or derived without one).
	minReplicas, maxReplicas int32
	// hpaRuns: gardener's controller keeps an HPA (hpa.deploy, and both hpa updateModes Auto); without one,
	// replicas never change.
	hpaRuns bool
	// held is the replica count the Hvpa holds when gardener's controller ran no HPA (0: replicas change).
	held int32
	// windowOK: the maintenance window is carried over.
	windowOK bool
}

func (c *converter) lose(path string, kind LossKind, format string, args ...any) {
	c.losses = append(c.losses, Loss{Path: path, Kind: kind, Reason: fmt.Sprintf(format, args...)})
}

// Convert turns a gardener Hvpa into hvpa's Hvpa. Every gardener field is carried over, or named in a Loss:
// dropped (no equivalent) or approximated (carried over with another meaning), with what to do. The
// weight-based intervals have no exact equivalent: the scaling intervals are derived from their replica
// ranges and the largest maxAllowed of the container policies, and the approximation is reported.
func Convert(in GardenerHvpa) (*hvpav1alpha1.Hvpa, []Loss) {
	c := &converter{in: &in}
	out := &hvpav1alpha1.Hvpa{TypeMeta: metav1.TypeMeta{APIVersion: APIVersion, Kind: hvpav1alpha1.KindHvpa}}
	out.ObjectMeta = c.metadata()
	out.Spec.TargetRef = c.targetRef()
	out.Spec.Replicas = c.replicas()
	c.bounds()
	out.Spec.HPA = c.hpa()
	out.Spec.VPA = c.vpa()
	out.Spec.ScalingIntervals = c.intervals()
	out.Spec.MaintenanceTimeWindow = c.window()
	out.Spec.ScaleUp = c.direction("scaleUp", in.Spec.Hpa.ScaleUp, in.Spec.Vpa.ScaleUp)
	out.Spec.ScaleDown = c.direction("scaleDown", in.Spec.Hpa.ScaleDown, in.Spec.Vpa.ScaleDown)
	out.Spec.LimitsRequestsGapScaleParams = c.limitsGap()
	return out, c.losses
}

// metadata keeps the user's metadata; the fields the API server sets are left for it to set again.
func (c *converter) metadata() metav1.ObjectMeta {
	in := c.in.ObjectMeta
	out := metav1.ObjectMeta{Name: in.Name, GenerateName: in.GenerateName, Namespace: in.Namespace, Labels: in.Labels,
		OwnerReferences: in.OwnerReferences, Finalizers: in.Finalizers}
	annotations := maps.Clone(in.Annotations)
	if v, ok := annotations[hpaControllerAnnotation]; ok {
		delete(annotations, hpaControllerAnnotation)
		c.lose("metadata.annotations["+hpaControllerAnnotation+"]", Dropped, "%q switched gardener's controller to apply "+
			"the HPA's replicas itself; hvpa's Hvpa always decides replicas itself (its HPA writes the desired replicas "+
			"into the Hvpa's scale subresource), so the annotation has no meaning here", v)
	}
	if _, ok := annotations[lastAppliedAnnotation]; ok {
		delete(annotations, lastAppliedAnnotation)
		c.lose("metadata.annotations["+lastAppliedAnnotation+"]", Dropped, "it holds the gardener object kubectl last "+
			"applied; the converted object gets its own when you apply it")
	}
	if len(annotations) > 0 {
		out.Annotations = annotations
	}
	return out
}

func (c *converter) targetRef() autoscalingv2.CrossVersionObjectReference {
	t := c.in.Spec.TargetRef
	if t == nil {
		c.lose("spec.targetRef", Dropped, "missing (gardener's schema requires it too): set spec.targetRef to the "+
			"apiVersion, kind and name of the workload to scale")
		return autoscalingv2.CrossVersionObjectReference{}
	}
	if t.Kind == "DaemonSet" {
		c.lose("spec.targetRef", Approximated, "carried over, but hvpa scales workloads that have a scale "+
			"subresource and a DaemonSet has none, so the Hvpa will not act on it: size a DaemonSet's pods with a "+
			"VerticalPodAutoscaler (hvpa serves those) instead")
	}
	return *t
}

func (c *converter) replicas() *int32 {
	r := c.in.Spec.Replicas
	if r != nil && *r < 0 {
		c.lose("spec.replicas", Dropped, "%d is negative; the Hvpa controller sets spec.replicas from the target", *r)
		return nil
	}
	return r
}

// bounds reads the replica bounds and whether gardener's controller would run an HPA.
func (c *converter) bounds() {
	t := c.in.Spec.Hpa.Template.Spec
	c.minReplicas = 1
	if t.MinReplicas != nil {
		if *t.MinReplicas >= 1 {
			c.minReplicas = *t.MinReplicas
		} else {
			c.lose("spec.hpa.template.spec.minReplicas", Approximated, "%d is below 1, which hvpa does not allow: set to 1",
				*t.MinReplicas)
		}
	}
	c.maxReplicas = t.MaxReplicas
	if c.maxReplicas == 0 {
		c.maxReplicas = c.derivedMaxReplicas()
		if c.hpaPresent() {
			c.lose("spec.hpa.template.spec.maxReplicas", Approximated, "missing (gardener's schema requires it): set "+
				"to %d, the highest replica count the object names; check spec.hpa.template.maxReplicas", c.maxReplicas)
		}
	}
	if c.maxReplicas < c.minReplicas {
		c.lose("spec.hpa.template.spec.maxReplicas", Approximated, "%d is below minReplicas %d (gardener's HPA could "+
			"not be created either): raised to %d", c.maxReplicas, c.minReplicas, c.minReplicas)
		c.maxReplicas = c.minReplicas
	}
	h := c.in.Spec.Hpa
	c.hpaRuns = h.Deploy && isAuto(h.ScaleUp.UpdatePolicy.UpdateMode) && isAuto(h.ScaleDown.UpdatePolicy.UpdateMode)
}

// derivedMaxReplicas is the highest replica count the object names without an hpa maxReplicas.
func (c *converter) derivedMaxReplicas() int32 {
	m := c.minReplicas
	if r := c.in.Spec.Replicas; r != nil {
		m = max(m, *r)
	}
	for _, iv := range c.in.Spec.WeightBasedScalingIntervals {
		m = max(m, iv.StartReplicaCount, iv.LastReplicaCount)
	}
	return m
}

// hpaPresent reports whether the gardener object configures an HPA at all.
func (c *converter) hpaPresent() bool {
	t := c.in.Spec.Hpa.Template.Spec
	return c.in.Spec.Hpa.Deploy || t.MaxReplicas != 0 || t.MinReplicas != nil || len(t.Metrics) > 0
}

// isAuto is gardener's test for whether its controller deploys the HPA: an updateMode unset or Auto.
func isAuto(mode *string) bool {
	return mode == nil || *mode == "" || *mode == string(hvpav1alpha1.UpdateModeAuto)
}

// present reports whether a template's metadata holds anything.
func present(raw json.RawMessage) bool {
	var m map[string]any
	return len(raw) > 0 && json.Unmarshal(raw, &m) == nil && len(m) > 0
}

func (c *converter) hpa() *hvpav1alpha1.HpaSpec {
	g := c.in.Spec.Hpa
	if g.Selector != nil {
		c.lose("spec.hpa.selector", Dropped, "the Hvpa finds the HPA it creates by its owner reference; no selector is needed")
	}
	if present(g.Template.Metadata) {
		c.lose("spec.hpa.template.metadata", Dropped, "the HPA an Hvpa creates is named after the Hvpa, and its labels "+
			"and annotations are not configurable; select it by its owner reference instead")
	}
	if !c.hpaPresent() {
		return nil
	}
	out := &hvpav1alpha1.HpaSpec{Deploy: c.hpaRuns, Template: hvpav1alpha1.HpaTemplate{MaxReplicas: c.maxReplicas,
		Metrics: c.metrics()}}
	if g.Template.Spec.MinReplicas != nil {
		out.Template.MinReplicas = &c.minReplicas
	}
	if g.Deploy && !c.hpaRuns {
		c.lose("spec.hpa.deploy", Approximated, "true, but gardener's controller runs no HPA while "+
			"spec.hpa.scaleUp or spec.hpa.scaleDown has an updateMode other than Auto: converted to false")
	}
	return out
}

func (c *converter) vpa() *hvpav1alpha1.VpaSpec {
	g := c.in.Spec.Vpa
	if g.Selector != nil {
		c.lose("spec.vpa.selector", Dropped, "hvpa creates no VerticalPodAutoscaler for an Hvpa (its recommender "+
			"serves the Hvpa directly), so there is nothing to select")
	}
	if present(g.Template.Metadata) {
		c.lose("spec.vpa.template.metadata", Dropped, "hvpa creates no VerticalPodAutoscaler for an Hvpa, so there is "+
			"no object to label")
	}
	policy := c.resourcePolicy(g.Template.Spec.ResourcePolicy)
	if !g.Deploy && policy == nil {
		return nil
	}
	return &hvpav1alpha1.VpaSpec{Deploy: g.Deploy, Template: hvpav1alpha1.VpaTemplate{ResourcePolicy: policy}}
}

func (c *converter) resourcePolicy(in *PodResourcePolicy) *vpav1.PodResourcePolicy {
	if in == nil {
		return nil
	}
	out := &vpav1.PodResourcePolicy{}
	for i, p := range in.ContainerPolicies {
		path := fmt.Sprintf("spec.vpa.template.spec.resourcePolicy.containerPolicies[%d]", i)
		cp := vpav1.ContainerResourcePolicy{ContainerName: p.ContainerName, MinAllowed: p.MinAllowed,
			MaxAllowed: p.MaxAllowed, ControlledResources: p.ControlledResources}
		if p.Mode != nil {
			switch m := vpav1.ContainerScalingMode(*p.Mode); m {
			case vpav1.ContainerScalingModeAuto, vpav1.ContainerScalingModeOff:
				cp.Mode = &m
			default:
				c.lose(path+".mode", Dropped, "%q is not a container mode (Auto, Off); left unset, which is Auto", *p.Mode)
			}
		}
		if p.ControlledValues != nil {
			switch v := vpav1.ContainerControlledValues(*p.ControlledValues); v {
			case vpav1.ContainerControlledValuesRequestsAndLimits, vpav1.ContainerControlledValuesRequestsOnly:
				cp.ControlledValues = &v
			default:
				c.lose(path+".controlledValues", Dropped, "%q is not RequestsAndLimits or RequestsOnly; left unset, "+
					"which is RequestsAndLimits", *p.ControlledValues)
			}
		}
		out.ContainerPolicies = append(out.ContainerPolicies, cp)
	}
	return out
}

func (c *converter) window() *hvpav1alpha1.MaintenanceTimeWindow {
	w := c.in.Spec.MaintenanceTimeWindow
	if w == nil {
		return nil
	}
	for _, f := range []struct{ name, value string }{{"begin", w.Begin}, {"end", w.End}} {
		if !windowPattern.MatchString(f.value) {
			c.lose("spec.maintenanceTimeWindow."+f.name, Dropped, "%q is not a time of day as HHMMSS+ZZZZ (e.g. "+
				"220000+0100); gardener's controller could not read it either, so the window is not carried over: "+
				"fix it and add spec.maintenanceTimeWindow", f.value)
			return nil
		}
	}
	c.windowOK = true
	return &hvpav1alpha1.MaintenanceTimeWindow{Begin: w.Begin, End: w.End}
}

// direction merges gardener's hpa and vpa policies of one direction into hvpa's one policy, which gates
// replica and resource changes alike.
func (c *converter) direction(dir string, h, v ScaleType) *hvpav1alpha1.ScaleParams {
	hp, vp := "spec.hpa."+dir, "spec.vpa."+dir
	mode := c.vpaMode(dir, v.UpdatePolicy.UpdateMode)
	c.hpaMode(dir, h.UpdatePolicy.UpdateMode)
	out := &hvpav1alpha1.ScaleParams{UpdatePolicy: &hvpav1alpha1.UpdatePolicy{UpdateMode: &mode}}
	out.StabilizationDuration = c.stabilization(hp, vp, h.StabilizationDuration, v.StabilizationDuration)
	out.MinChange = c.minChange(vp+".minChange", v.MinChange)
	for _, r := range []struct {
		name string
		p    ChangeParams
	}{{"cpu", h.MinChange.CPU}, {"memory", h.MinChange.Memory}, {"replicas", h.MinChange.Replicas}} {
		if r.p.Value != nil || r.p.Percentage != nil {
			c.lose(hp+".minChange."+r.name, Dropped, "gardener's controller applied no minChange to replica changes "+
				"and hvpa has none for them; hvpa's minChange (from spec.vpa.%s.minChange) gates cpu and memory totals", dir)
		}
	}
	return out
}

// vpaMode is the mode of one direction: gardener's vpa updateMode, which in hvpa gates replica changes too.
func (c *converter) vpaMode(dir string, raw *string) hvpav1alpha1.UpdateMode {
	path := "spec.vpa." + dir + ".updatePolicy.updateMode"
	mode := hvpav1alpha1.UpdateModeAuto
	switch m := hvpav1alpha1.UpdateMode(deref(raw)); m {
	case "", hvpav1alpha1.UpdateModeAuto:
	case hvpav1alpha1.UpdateModeOff, hvpav1alpha1.UpdateModeMaintenanceWindow:
		mode = m
	default:
		c.lose(path, Dropped, "%q is not an updateMode (Auto, Off, MaintenanceWindow); gardener's controller "+
			"applied such changes like Auto, and so does the converted Hvpa", m)
	}
	if mode == hvpav1alpha1.UpdateModeMaintenanceWindow && !c.windowOK {
		c.lose(path, Approximated, "MaintenanceWindow without a valid spec.maintenanceTimeWindow: gardener's "+
			"controller never applied these changes, so the converted Hvpa has Off; add the window and set "+
			"MaintenanceWindow to apply them inside it")
		mode = hvpav1alpha1.UpdateModeOff
	}
	if mode != hvpav1alpha1.UpdateModeAuto && c.hpaRuns {
		c.lose(path, Approximated, "%s gates the replica changes of this direction too in hvpa (one policy per "+
			"direction), while gardener's HPA changed replicas at any time; if replicas must change at any time, set "+
			"spec.%s.updatePolicy.updateMode to Auto (resource changes of this direction are then applied at any time too)",
			mode, dir)
	}
	return mode
}

// hpaMode reports gardener's hpa updateMode of one direction: anything but Auto meant no HPA at all.
func (c *converter) hpaMode(dir string, raw *string) {
	if isAuto(raw) {
		return
	}
	path := "spec.hpa." + dir + ".updatePolicy.updateMode"
	if !c.in.Spec.Hpa.Deploy {
		c.lose(path, Dropped, "%q had no effect: spec.hpa.deploy is false, so gardener's controller ran no HPA", *raw)
		return
	}
	c.lose(path, Approximated, "%q: gardener's controller deletes its HPA unless both hpa updateModes are Auto, so "+
		"replicas never changed; the converted Hvpa has hpa.deploy false and one scaling interval at a fixed replica "+
		"count (vertical scaling only). To scale replicas, set spec.hpa.deploy true and add scaling intervals; "+
		"spec.%s.updatePolicy then gates replica changes too", *raw, dir)
}

// stabilization merges gardener's hpa and vpa stabilizationDuration of one direction: hvpa has one, which
// delays replica and resource changes alike; the longer of the two is kept.
func (c *converter) stabilization(hp, vp string, hraw, vraw *string) *metav1.Duration {
	v, vok := c.duration(vp+".stabilizationDuration", vraw)
	h, hok := c.duration(hp+".stabilizationDuration", hraw)
	switch {
	case hok && !c.hpaRuns:
		c.lose(hp+".stabilizationDuration", Dropped, "had no effect: gardener's controller ran no HPA")
	case hok && h != v:
		took := max(h, v)
		c.lose(hp+".stabilizationDuration", Approximated, "hvpa has one stabilizationDuration per direction, for "+
			"replica and resource changes alike: took %s, the longer of hpa's %s and vpa's %s", took, h, v)
		v, vok = took, true
	}
	if !vok {
		return nil
	}
	return &metav1.Duration{Duration: v}
}

func (c *converter) duration(path string, raw *string) (time.Duration, bool) {
	if raw == nil {
		return 0, false
	}
	d, err := time.ParseDuration(*raw)
	if err != nil || d < 0 {
		c.lose(path, Dropped, "%q is not a duration such as 3m or 1h30m; gardener's controller read it as 0, "+
			"so it is not carried over", *raw)
		return 0, false
	}
	return d, true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
