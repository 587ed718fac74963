package gardenerhvpa

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// row is one gardener field: set on a minimal gardener Hvpa, the hvpa field it maps to (out, nil when none)
// must equal want, and the loss at lossAt (default: the field) must be of kind with a reason containing
// reason; no loss there when kind is "".
type row struct {
	field  string
	name   string // tells rows of the same field apart
	set    func(*GardenerHvpa)
	out    func(*hvpav1alpha1.Hvpa) any
	want   any
	kind   LossKind
	reason string
	lossAt string
}

func base() GardenerHvpa {
	return GardenerHvpa{
		TypeMeta:   metav1.TypeMeta{APIVersion: APIVersion, Kind: "Hvpa"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: Spec{TargetRef: &autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment",
			Name: "web"}},
	}
}

// withHPA makes gardener's controller run an HPA (deploy, modes unset) between 1 and 4 replicas.
func withHPA(g *GardenerHvpa) {
	g.Spec.Hpa.Deploy = true
	g.Spec.Hpa.Template.Spec.MaxReplicas = 4
}

func qp(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func both(fs ...func(*GardenerHvpa)) func(*GardenerHvpa) {
	return func(g *GardenerHvpa) {
		for _, f := range fs {
			f(g)
		}
	}
}

// Output fields.
var (
	outReplicas  = func(h *hvpav1alpha1.Hvpa) any { return h.Spec.Replicas }
	outTarget    = func(h *hvpav1alpha1.Hvpa) any { return h.Spec.TargetRef }
	outWindow    = func(h *hvpav1alpha1.Hvpa) any { return h.Spec.MaintenanceTimeWindow }
	outHPA       = func(h *hvpav1alpha1.Hvpa) any { return h.Spec.HPA }
	outVPA       = func(h *hvpav1alpha1.Hvpa) any { return h.Spec.VPA }
	outIntervals = func(h *hvpav1alpha1.Hvpa) any { return h.Spec.ScalingIntervals }
	outGap       = func(h *hvpav1alpha1.Hvpa) any { return h.Spec.LimitsRequestsGapScaleParams }
	outMeta      = func(h *hvpav1alpha1.Hvpa) any { return h.ObjectMeta }
	outHPADeploy = func(h *hvpav1alpha1.Hvpa) any { return h.Spec.HPA != nil && h.Spec.HPA.Deploy }
	outMetrics   = func(h *hvpav1alpha1.Hvpa) any {
		if h.Spec.HPA == nil {
			return nil
		}
		return h.Spec.HPA.Template.Metrics
	}
	outPolicy = func(h *hvpav1alpha1.Hvpa) any {
		if h.Spec.VPA == nil || h.Spec.VPA.Template.ResourcePolicy == nil {
			return nil
		}
		return h.Spec.VPA.Template.ResourcePolicy.ContainerPolicies
	}
)

func outScale(dir string) func(h *hvpav1alpha1.Hvpa) *hvpav1alpha1.ScaleParams {
	return func(h *hvpav1alpha1.Hvpa) *hvpav1alpha1.ScaleParams {
		if dir == "scaleUp" {
			return h.Spec.ScaleUp
		}
		return h.Spec.ScaleDown
	}
}

func outMode(dir string) func(h *hvpav1alpha1.Hvpa) any {
	return func(h *hvpav1alpha1.Hvpa) any { return *outScale(dir)(h).UpdatePolicy.UpdateMode }
}

func outStabilization(dir string) func(h *hvpav1alpha1.Hvpa) any {
	return func(h *hvpav1alpha1.Hvpa) any { return outScale(dir)(h).StabilizationDuration }
}

func outMinChange(dir string) func(h *hvpav1alpha1.Hvpa) any {
	return func(h *hvpav1alpha1.Hvpa) any { return outScale(dir)(h).MinChange }
}

// scaleType returns the gardener ScaleType of side (hpa, vpa) and direction.
func scaleType(g *GardenerHvpa, side, dir string) *ScaleType {
	switch {
	case side == "hpa" && dir == "scaleUp":
		return &g.Spec.Hpa.ScaleUp
	case side == "hpa":
		return &g.Spec.Hpa.ScaleDown
	case dir == "scaleUp":
		return &g.Spec.Vpa.ScaleUp
	}
	return &g.Spec.Vpa.ScaleDown
}

func metric(m MetricSpec) func(*GardenerHvpa) {
	return func(g *GardenerHvpa) {
		withHPA(g)
		g.Spec.Hpa.Template.Spec.Metrics = []MetricSpec{m}
	}
}

func v2(m autoscalingv2.MetricSpec) []autoscalingv2.MetricSpec { return []autoscalingv2.MetricSpec{m} }

func utilization(p int32) autoscalingv2.MetricTarget {
	return autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &p}
}

func averageValue(s string) autoscalingv2.MetricTarget {
	return autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: qp(s)}
}

func value(s string) autoscalingv2.MetricTarget {
	return autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: qp(s)}
}

var selector = &metav1.LabelSelector{MatchLabels: map[string]string{"queue": "default"}}

func metricRows() []row {
	const p = "spec.hpa.template.spec.metrics[0]"
	ingress := autoscalingv2.CrossVersionObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "main"}
	v1beta1Object := ObjectMetric{Target: ObjectTarget{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "main"},
		MetricName: "rps", TargetValue: qp("100")}
	v2Object := ObjectMetric{DescribedObject: &ingress, Metric: &autoscalingv2.MetricIdentifier{Name: "rps"},
		Target: ObjectTarget{Type: autoscalingv2.ValueMetricType, Value: qp("100")}}
	objectOut := func(t autoscalingv2.MetricTarget, id autoscalingv2.MetricIdentifier) []autoscalingv2.MetricSpec {
		return v2(autoscalingv2.MetricSpec{Type: "Object", Object: &autoscalingv2.ObjectMetricSource{DescribedObject: ingress,
			Metric: id, Target: t}})
	}
	rps := autoscalingv2.MetricIdentifier{Name: "rps"}
	withObject := func(mut func(o *ObjectMetric)) func(*GardenerHvpa) {
		o := v1beta1Object
		mut(&o)
		return metric(MetricSpec{Type: "Object", Object: &o})
	}
	withV2Object := func(mut func(o *ObjectMetric)) func(*GardenerHvpa) {
		o := v2Object
		mut(&o)
		return metric(MetricSpec{Type: "Object", Object: &o})
	}
	res := func(r ResourceMetric) func(*GardenerHvpa) { return metric(MetricSpec{Type: "Resource", Resource: &r}) }
	resOut := func(name corev1.ResourceName, t autoscalingv2.MetricTarget) []autoscalingv2.MetricSpec {
		return v2(autoscalingv2.MetricSpec{Type: "Resource", Resource: &autoscalingv2.ResourceMetricSource{Name: name, Target: t}})
	}
	cres := func(r ContainerResourceMetric) func(*GardenerHvpa) {
		return metric(MetricSpec{Type: "ContainerResource", ContainerResource: &r})
	}
	cresOut := func(name corev1.ResourceName, t autoscalingv2.MetricTarget) []autoscalingv2.MetricSpec {
		return v2(autoscalingv2.MetricSpec{Type: "ContainerResource", ContainerResource: &autoscalingv2.ContainerResourceMetricSource{
			Name: name, Container: "app", Target: t}})
	}
	pods := func(m PodsMetric) func(*GardenerHvpa) { return metric(MetricSpec{Type: "Pods", Pods: &m}) }
	podsOut := func(id autoscalingv2.MetricIdentifier, t autoscalingv2.MetricTarget) []autoscalingv2.MetricSpec {
		return v2(autoscalingv2.MetricSpec{Type: "Pods", Pods: &autoscalingv2.PodsMetricSource{Metric: id, Target: t}})
	}
	ext := func(m ExternalMetric) func(*GardenerHvpa) { return metric(MetricSpec{Type: "External", External: &m}) }
	extOut := func(id autoscalingv2.MetricIdentifier, t autoscalingv2.MetricTarget) []autoscalingv2.MetricSpec {
		return v2(autoscalingv2.MetricSpec{Type: "External", External: &autoscalingv2.ExternalMetricSource{Metric: id, Target: t}})
	}
	depth := autoscalingv2.MetricIdentifier{Name: "queue_depth", Selector: selector}
	return []row{
		{field: p + ".type", set: metric(MetricSpec{Type: "Custom"}), out: outMetrics, want: []autoscalingv2.MetricSpec(nil),
			kind: Dropped, reason: `metric type "Custom" is not Resource`, lossAt: p},
		{field: p + ".resource.name", set: res(ResourceMetric{Name: "memory", TargetAverageUtilization: ptr(int32(70))}),
			out: outMetrics, want: resOut("memory", utilization(70))},
		{field: p + ".resource.targetAverageUtilization", set: res(ResourceMetric{Name: "cpu", TargetAverageUtilization: ptr(int32(80))}),
			out: outMetrics, want: resOut("cpu", utilization(80))},
		{field: p + ".resource.targetAverageValue", set: res(ResourceMetric{Name: "cpu", TargetAverageValue: qp("500m")}),
			out: outMetrics, want: resOut("cpu", averageValue("500m"))},
		{field: p + ".resource.target", set: res(ResourceMetric{Name: "cpu", Target: &autoscalingv2.MetricTarget{
			Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(60))}}), out: outMetrics, want: resOut("cpu", utilization(60))},
		{field: p + ".resource.target", name: "none", set: res(ResourceMetric{Name: "cpu"}), out: outMetrics,
			want: []autoscalingv2.MetricSpec(nil), kind: Dropped, reason: "has no resource source with a target", lossAt: p},
		{field: p + ".containerResource.name", set: cres(ContainerResourceMetric{Name: "memory", Container: "app",
			TargetAverageUtilization: ptr(int32(75))}), out: outMetrics, want: cresOut("memory", utilization(75))},
		{field: p + ".containerResource.container", set: cres(ContainerResourceMetric{Name: "cpu", Container: "app",
			TargetAverageUtilization: ptr(int32(75))}), out: outMetrics, want: cresOut("cpu", utilization(75))},
		{field: p + ".containerResource.targetAverageUtilization", set: cres(ContainerResourceMetric{Name: "cpu", Container: "app",
			TargetAverageUtilization: ptr(int32(50))}), out: outMetrics, want: cresOut("cpu", utilization(50))},
		{field: p + ".containerResource.targetAverageValue", set: cres(ContainerResourceMetric{Name: "cpu", Container: "app",
			TargetAverageValue: qp("300m")}), out: outMetrics, want: cresOut("cpu", averageValue("300m"))},
		{field: p + ".containerResource.target", set: cres(ContainerResourceMetric{Name: "cpu", Container: "app",
			Target: ptr(averageValue("1"))}), out: outMetrics, want: cresOut("cpu", averageValue("1"))},
		{field: p + ".pods.metricName", set: pods(PodsMetric{MetricName: "jobs", TargetAverageValue: qp("20")}),
			out: outMetrics, want: podsOut(autoscalingv2.MetricIdentifier{Name: "jobs"}, averageValue("20"))},
		{field: p + ".pods.selector", set: pods(PodsMetric{MetricName: "jobs", Selector: selector, TargetAverageValue: qp("20")}),
			out: outMetrics, want: podsOut(autoscalingv2.MetricIdentifier{Name: "jobs", Selector: selector}, averageValue("20"))},
		{field: p + ".pods.targetAverageValue", set: pods(PodsMetric{MetricName: "jobs", TargetAverageValue: qp("5")}),
			out: outMetrics, want: podsOut(autoscalingv2.MetricIdentifier{Name: "jobs"}, averageValue("5"))},
		{field: p + ".pods.metric", set: pods(PodsMetric{Metric: &autoscalingv2.MetricIdentifier{Name: "jobs"},
			Target: ptr(averageValue("5"))}), out: outMetrics, want: podsOut(autoscalingv2.MetricIdentifier{Name: "jobs"}, averageValue("5"))},
		{field: p + ".pods.target", set: pods(PodsMetric{MetricName: "jobs", Target: ptr(averageValue("7"))}),
			out: outMetrics, want: podsOut(autoscalingv2.MetricIdentifier{Name: "jobs"}, averageValue("7"))},
		{field: p + ".pods.metricName", name: "missing", set: pods(PodsMetric{TargetAverageValue: qp("5")}), out: outMetrics,
			want: []autoscalingv2.MetricSpec(nil), kind: Dropped, reason: "has no pods source with a target (and a metric name)", lossAt: p},
		{field: p + ".object.target.apiVersion", set: withObject(func(*ObjectMetric) {}), out: outMetrics, want: objectOut(value("100"), rps)},
		{field: p + ".object.target.kind", set: withObject(func(*ObjectMetric) {}), out: outMetrics, want: objectOut(value("100"), rps)},
		{field: p + ".object.target.name", set: withObject(func(*ObjectMetric) {}), out: outMetrics, want: objectOut(value("100"), rps)},
		{field: p + ".object.metricName", set: withObject(func(o *ObjectMetric) { o.MetricName = "qps" }), out: outMetrics,
			want: objectOut(value("100"), autoscalingv2.MetricIdentifier{Name: "qps"})},
		{field: p + ".object.targetValue", set: withObject(func(o *ObjectMetric) { o.TargetValue = qp("250") }), out: outMetrics,
			want: objectOut(value("250"), rps)},
		{field: p + ".object.selector", set: withObject(func(o *ObjectMetric) { o.Selector = selector }), out: outMetrics,
			want: objectOut(value("100"), autoscalingv2.MetricIdentifier{Name: "rps", Selector: selector})},
		{field: p + ".object.averageValue", set: withObject(func(o *ObjectMetric) { o.AverageValue = qp("10") }), out: outMetrics,
			want: objectOut(averageValue("10"), rps)},
		{field: p + ".object.describedObject", set: withV2Object(func(*ObjectMetric) {}), out: outMetrics, want: objectOut(value("100"), rps)},
		{field: p + ".object.metric", set: withV2Object(func(o *ObjectMetric) { o.Metric = &autoscalingv2.MetricIdentifier{Name: "qps"} }),
			out: outMetrics, want: objectOut(value("100"), autoscalingv2.MetricIdentifier{Name: "qps"})},
		{field: p + ".object.target.type", set: withV2Object(func(o *ObjectMetric) {
			o.Target = ObjectTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: qp("3")}
		}), out: outMetrics, want: objectOut(averageValue("3"), rps)},
		{field: p + ".object.target.value", set: withV2Object(func(o *ObjectMetric) { o.Target.Value = qp("42") }),
			out: outMetrics, want: objectOut(value("42"), rps)},
		{field: p + ".object.target.averageValue", set: withV2Object(func(o *ObjectMetric) {
			o.Target = ObjectTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: qp("9")}
		}), out: outMetrics, want: objectOut(averageValue("9"), rps)},
		{field: p + ".object.target.averageUtilization", set: withV2Object(func(o *ObjectMetric) {
			o.Target = ObjectTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(65))}
		}), out: outMetrics, want: objectOut(utilization(65), rps)},
		{field: p + ".external.metricName", set: ext(ExternalMetric{MetricName: "queue_depth", TargetValue: qp("30")}),
			out: outMetrics, want: extOut(autoscalingv2.MetricIdentifier{Name: "queue_depth"}, value("30"))},
		{field: p + ".external.metricSelector", set: ext(ExternalMetric{MetricName: "queue_depth", MetricSelector: selector,
			TargetValue: qp("30")}), out: outMetrics, want: extOut(depth, value("30"))},
		{field: p + ".external.targetValue", set: ext(ExternalMetric{MetricName: "queue_depth", MetricSelector: selector,
			TargetValue: qp("12")}), out: outMetrics, want: extOut(depth, value("12"))},
		{field: p + ".external.targetAverageValue", set: ext(ExternalMetric{MetricName: "queue_depth", MetricSelector: selector,
			TargetAverageValue: qp("30")}), out: outMetrics, want: extOut(depth, averageValue("30"))},
		{field: p + ".external.metric", set: ext(ExternalMetric{Metric: &depth, Target: ptr(value("8"))}), out: outMetrics,
			want: extOut(depth, value("8"))},
		{field: p + ".external.target", set: ext(ExternalMetric{MetricName: "queue_depth", MetricSelector: selector,
			Target: ptr(averageValue("4"))}), out: outMetrics, want: extOut(depth, averageValue("4"))},
	}
}

// scaleRows are the rows of the hpa and vpa scaleUp and scaleDown fields.
func scaleRows() []row {
	var rows []row
	for _, dir := range []string{"scaleUp", "scaleDown"} {
		hp, vp := "spec.hpa."+dir, "spec.vpa."+dir
		setHPA := func(f func(s *ScaleType)) func(*GardenerHvpa) {
			return func(g *GardenerHvpa) { withHPA(g); f(scaleType(g, "hpa", dir)) }
		}
		setVPA := func(f func(s *ScaleType)) func(*GardenerHvpa) {
			return func(g *GardenerHvpa) { g.Spec.Vpa.Deploy = true; f(scaleType(g, "vpa", dir)) }
		}
		mode := func(m string) func(s *ScaleType) { return func(s *ScaleType) { s.UpdatePolicy.UpdateMode = &m } }
		rows = append(rows,
			row{field: hp + ".updatePolicy.updateMode", set: setHPA(mode("Auto")), out: outHPADeploy, want: true},
			row{field: hp + ".updatePolicy.updateMode", name: "Off", set: setHPA(mode("Off")), out: outHPADeploy, want: false,
				kind: Approximated, reason: "deletes its HPA unless both hpa updateModes are Auto"},
			row{field: hp + ".updatePolicy.updateMode", name: "no HPA", set: both(setHPA(mode("MaintenanceWindow")),
				func(g *GardenerHvpa) { g.Spec.Hpa.Deploy = false }), out: outHPADeploy, want: false,
				kind: Dropped, reason: "had no effect: spec.hpa.deploy is false"},
			row{field: hp + ".stabilizationDuration", set: setHPA(func(s *ScaleType) { s.StabilizationDuration = ptr("5m") }),
				out: outStabilization(dir), want: &metav1.Duration{Duration: 5 * time.Minute},
				kind: Approximated, reason: "took 5m0s, the longer of hpa's 5m0s and vpa's 0s"},
			row{field: hp + ".stabilizationDuration", name: "same as vpa", set: both(setHPA(func(s *ScaleType) {
				s.StabilizationDuration = ptr("5m")
			}), setVPA(func(s *ScaleType) { s.StabilizationDuration = ptr("300s") })), out: outStabilization(dir),
				want: &metav1.Duration{Duration: 5 * time.Minute}},
			row{field: hp + ".stabilizationDuration", name: "no HPA", set: func(g *GardenerHvpa) {
				scaleType(g, "hpa", dir).StabilizationDuration = ptr("5m")
			}, out: outStabilization(dir), want: (*metav1.Duration)(nil), kind: Dropped, reason: "had no effect"},
			row{field: vp + ".updatePolicy.updateMode", set: setVPA(mode("Off")), out: outMode(dir), want: hvpav1alpha1.UpdateModeOff},
			row{field: vp + ".updatePolicy.updateMode", name: "with HPA", set: both(withHPA, setVPA(mode("Off"))), out: outMode(dir),
				want: hvpav1alpha1.UpdateModeOff, kind: Approximated, reason: "gates the replica changes of this direction too"},
			row{field: vp + ".updatePolicy.updateMode", name: "no window", set: setVPA(mode("MaintenanceWindow")), out: outMode(dir),
				want: hvpav1alpha1.UpdateModeOff, kind: Approximated, reason: "never applied these changes, so the converted Hvpa has Off"},
			row{field: vp + ".updatePolicy.updateMode", name: "window", set: both(setVPA(mode("MaintenanceWindow")), func(g *GardenerHvpa) {
				g.Spec.MaintenanceTimeWindow = &MaintenanceTimeWindow{Begin: "220000+0000", End: "230000+0000"}
			}), out: outMode(dir), want: hvpav1alpha1.UpdateModeMaintenanceWindow},
			row{field: vp + ".updatePolicy.updateMode", name: "unknown", set: setVPA(mode("ScaleUp")), out: outMode(dir),
				want: hvpav1alpha1.UpdateModeAuto, kind: Dropped, reason: `"ScaleUp" is not an updateMode`},
			row{field: vp + ".stabilizationDuration", set: setVPA(func(s *ScaleType) { s.StabilizationDuration = ptr("3m") }),
				out: outStabilization(dir), want: &metav1.Duration{Duration: 3 * time.Minute}},
			row{field: vp + ".stabilizationDuration", name: "not a duration", set: setVPA(func(s *ScaleType) {
				s.StabilizationDuration = ptr("3 minutes")
			}), out: outStabilization(dir), want: (*metav1.Duration)(nil), kind: Dropped, reason: "is not a duration"},
			row{field: vp + ".minChange.cpu.value", set: both(withHPA, setVPA(func(s *ScaleType) { s.MinChange.CPU.Value = ptr("300m") })),
				out: outMinChange(dir), want: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Value: qp("300m")},
					Memory: &hvpav1alpha1.ChangeParams{Value: qp("200M")}}, kind: Approximated, reason: "change of the TOTAL across replicas"},
			row{field: vp + ".minChange.cpu.value", name: "held replicas", set: both(setVPA(func(s *ScaleType) {
				s.MinChange.CPU.Value = ptr("300m")
			}), func(g *GardenerHvpa) { g.Spec.Replicas = ptr(int32(3)) }), out: outMinChange(dir),
				want: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Value: qp("900m")},
					Memory: &hvpav1alpha1.ChangeParams{Value: qp("600M")}}},
			row{field: vp + ".minChange.cpu.value", name: "unset", set: both(withHPA, setVPA(func(*ScaleType) {})), out: outMinChange(dir),
				want: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Value: qp("200m")},
					Memory: &hvpav1alpha1.ChangeParams{Value: qp("200M")}},
				kind: Approximated, reason: "unset: gardener's controller then ignored request changes below 200m per pod", lossAt: vp + ".minChange.cpu"},
			row{field: vp + ".minChange.cpu.percentage", set: setVPA(func(s *ScaleType) { s.MinChange.CPU.Percentage = ptr(int32(80)) }),
				out: outMinChange(dir), want: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Percentage: ptr(int32(80))},
					Memory: &hvpav1alpha1.ChangeParams{Value: qp("200M")}}},
			row{field: vp + ".minChange.cpu.percentage", name: "out of range", set: setVPA(func(s *ScaleType) {
				s.MinChange.CPU.Percentage = ptr(int32(150))
			}), out: outMinChange(dir), want: &hvpav1alpha1.ResourceChangeParams{Memory: &hvpav1alpha1.ChangeParams{Value: qp("200M")}},
				kind: Dropped, reason: "150 is not a percentage from 0 to 100"},
			row{field: vp + ".minChange.memory.value", set: both(withHPA, setVPA(func(s *ScaleType) { s.MinChange.Memory.Value = ptr("1G") })),
				out: outMinChange(dir), want: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Value: qp("200m")},
					Memory: &hvpav1alpha1.ChangeParams{Value: qp("1G")}}, kind: Approximated, reason: "gardener compared 1G with the change of each pod's request"},
			row{field: vp + ".minChange.memory.value", name: "not a quantity", set: setVPA(func(s *ScaleType) {
				s.MinChange.Memory.Value = ptr("lots")
			}), out: outMinChange(dir), want: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Value: qp("200m")}},
				kind: Dropped, reason: `"lots" is not a quantity`},
			row{field: vp + ".minChange.memory.percentage", set: setVPA(func(s *ScaleType) { s.MinChange.Memory.Percentage = ptr(int32(70)) }),
				out: outMinChange(dir), want: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Value: qp("200m")},
					Memory: &hvpav1alpha1.ChangeParams{Percentage: ptr(int32(70))}}},
		)
		for _, f := range []string{"value", "percentage"} {
			setReplicas := func(s *ScaleType) {
				if f == "value" {
					s.MinChange.Replicas.Value = ptr("1")
				} else {
					s.MinChange.Replicas.Percentage = ptr(int32(10))
				}
			}
			rows = append(rows, row{field: vp + ".minChange.replicas." + f, set: setVPA(setReplicas), out: outMinChange(dir),
				want: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Value: qp("200m")},
					Memory: &hvpav1alpha1.ChangeParams{Value: qp("200M")}},
				kind: Dropped, reason: "hvpa's minChange has no replicas", lossAt: vp + ".minChange.replicas"})
			for _, res := range []string{"cpu", "memory", "replicas"} {
				set := setHPA(func(s *ScaleType) {
					cp := map[string]*ChangeParams{"cpu": &s.MinChange.CPU, "memory": &s.MinChange.Memory, "replicas": &s.MinChange.Replicas}[res]
					if f == "value" {
						cp.Value = ptr("1")
					} else {
						cp.Percentage = ptr(int32(10))
					}
				})
				rows = append(rows, row{field: hp + ".minChange." + res + "." + f, set: set, out: outMinChange(dir),
					want: (*hvpav1alpha1.ResourceChangeParams)(nil), kind: Dropped, reason: "applied no minChange to replica changes",
					lossAt: hp + ".minChange." + res})
			}
		}
	}
	return rows
}

func hpaRows() []row {
	return []row{
		{field: "spec.hpa.selector", set: func(g *GardenerHvpa) { g.Spec.Hpa.Selector = selector }, out: outHPA,
			want: (*hvpav1alpha1.HpaSpec)(nil), kind: Dropped, reason: "by its owner reference; no selector is needed"},
		{field: "spec.hpa.deploy", set: withHPA, out: outHPA, want: &hvpav1alpha1.HpaSpec{Deploy: true,
			Template: hvpav1alpha1.HpaTemplate{MaxReplicas: 4}}},
		{field: "spec.hpa.deploy", name: "mode Off", set: both(withHPA, func(g *GardenerHvpa) {
			g.Spec.Hpa.ScaleDown.UpdatePolicy.UpdateMode = ptr("Off")
		}), out: outHPADeploy, want: false, kind: Approximated, reason: "converted to false"},
		{field: "spec.hpa.template.metadata", set: func(g *GardenerHvpa) {
			g.Spec.Hpa.Template.Metadata = json.RawMessage(`{"labels":{"role":"apiserver-hpa"}}`)
		}, out: outHPA, want: (*hvpav1alpha1.HpaSpec)(nil), kind: Dropped, reason: "labels and annotations are not configurable"},
		{field: "spec.hpa.template.spec.minReplicas", set: both(withHPA, func(g *GardenerHvpa) {
			g.Spec.Hpa.Template.Spec.MinReplicas = ptr(int32(2))
		}), out: outHPA, want: &hvpav1alpha1.HpaSpec{Deploy: true, Template: hvpav1alpha1.HpaTemplate{MinReplicas: ptr(int32(2)),
			MaxReplicas: 4}}},
		{field: "spec.hpa.template.spec.minReplicas", name: "zero", set: both(withHPA, func(g *GardenerHvpa) {
			g.Spec.Hpa.Template.Spec.MinReplicas = ptr(int32(0))
		}), out: outHPA, want: &hvpav1alpha1.HpaSpec{Deploy: true, Template: hvpav1alpha1.HpaTemplate{MinReplicas: ptr(int32(1)),
			MaxReplicas: 4}}, kind: Approximated, reason: "0 is below 1"},
		{field: "spec.hpa.template.spec.maxReplicas", set: withHPA, out: func(h *hvpav1alpha1.Hvpa) any {
			return h.Spec.HPA.Template.MaxReplicas
		}, want: int32(4)},
		{field: "spec.hpa.template.spec.maxReplicas", name: "missing", set: func(g *GardenerHvpa) {
			g.Spec.Hpa.Deploy = true
			g.Spec.WeightBasedScalingIntervals = []WeightBasedScalingInterval{{VpaWeight: 100, StartReplicaCount: 6, LastReplicaCount: 6}}
		}, out: func(h *hvpav1alpha1.Hvpa) any { return h.Spec.HPA.Template.MaxReplicas }, want: int32(6),
			kind: Approximated, reason: "missing (gardener's schema requires it): set to 6"},
		{field: "spec.hpa.template.spec.maxReplicas", name: "below min", set: both(withHPA, func(g *GardenerHvpa) {
			g.Spec.Hpa.Template.Spec.MinReplicas = ptr(int32(5))
		}), out: func(h *hvpav1alpha1.Hvpa) any { return h.Spec.HPA.Template.MaxReplicas }, want: int32(5),
			kind: Approximated, reason: "4 is below minReplicas 5"},
	}
}

func vpaRows() []row {
	const cp = "spec.vpa.template.spec.resourcePolicy.containerPolicies[0]"
	policy := func(f func(p *ContainerResourcePolicy)) func(*GardenerHvpa) {
		return func(g *GardenerHvpa) {
			p := ContainerResourcePolicy{ContainerName: "app"}
			f(&p)
			g.Spec.Vpa.Template.Spec.ResourcePolicy = &PodResourcePolicy{ContainerPolicies: []ContainerResourcePolicy{p}}
		}
	}
	policies := func(p vpav1.ContainerResourcePolicy) []vpav1.ContainerResourcePolicy {
		p.ContainerName = "app"
		return []vpav1.ContainerResourcePolicy{p}
	}
	list := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	off, requestsOnly := vpav1.ContainerScalingModeOff, vpav1.ContainerControlledValuesRequestsOnly
	gap := func(f func(p *ScaleParams)) func(*GardenerHvpa) {
		return func(g *GardenerHvpa) { f(&g.Spec.Vpa.LimitsRequestsGapScaleParams) }
	}
	return []row{
		{field: "spec.vpa.selector", set: func(g *GardenerHvpa) { g.Spec.Vpa.Selector = selector }, out: outVPA,
			want: (*hvpav1alpha1.VpaSpec)(nil), kind: Dropped, reason: "nothing to select"},
		{field: "spec.vpa.deploy", set: func(g *GardenerHvpa) { g.Spec.Vpa.Deploy = true }, out: outVPA,
			want: &hvpav1alpha1.VpaSpec{Deploy: true}},
		{field: "spec.vpa.template.metadata", set: func(g *GardenerHvpa) {
			g.Spec.Vpa.Template.Metadata = json.RawMessage(`{"labels":{"role":"apiserver-vpa"}}`)
		}, out: outVPA, want: (*hvpav1alpha1.VpaSpec)(nil), kind: Dropped, reason: "no object to label"},
		{field: cp + ".containerName", set: policy(func(*ContainerResourcePolicy) {}), out: outPolicy,
			want: policies(vpav1.ContainerResourcePolicy{})},
		{field: cp + ".mode", set: policy(func(p *ContainerResourcePolicy) { p.Mode = ptr("Off") }), out: outPolicy,
			want: policies(vpav1.ContainerResourcePolicy{Mode: &off})},
		{field: cp + ".mode", name: "unknown", set: policy(func(p *ContainerResourcePolicy) { p.Mode = ptr("Initial") }),
			out: outPolicy, want: policies(vpav1.ContainerResourcePolicy{}), kind: Dropped, reason: `"Initial" is not a container mode`},
		{field: cp + ".minAllowed", set: policy(func(p *ContainerResourcePolicy) { p.MinAllowed = list }), out: outPolicy,
			want: policies(vpav1.ContainerResourcePolicy{MinAllowed: list})},
		{field: cp + ".maxAllowed", set: policy(func(p *ContainerResourcePolicy) { p.MaxAllowed = list }), out: outPolicy,
			want: policies(vpav1.ContainerResourcePolicy{MaxAllowed: list})},
		{field: cp + ".maxAllowed", name: "per-pod maximum", set: both(withHPA, policy(func(p *ContainerResourcePolicy) {
			p.MaxAllowed = list
		})), out: outIntervals, want: []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr(int32(4)),
			MaxResources:                   &hvpav1alpha1.ScaledResources{CPU: qp("4"), Memory: qp("8Gi")},
			EffectiveIntervalExtrapolation: ptr(hvpav1alpha1.ExtrapolationLinear)}}},
		{field: cp + ".maxAllowed", name: "no cpu maximum", set: both(withHPA, policy(func(p *ContainerResourcePolicy) {
			p.MaxAllowed = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Gi")}
		})), out: outIntervals, want: []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr(int32(4)),
			MaxResources:                   &hvpav1alpha1.ScaledResources{Memory: qp("8Gi")},
			EffectiveIntervalExtrapolation: ptr(hvpav1alpha1.ExtrapolationLinear)}}, kind: Approximated,
			reason: "no container policy sets maxAllowed.cpu", lossAt: "spec.vpa.template.spec.resourcePolicy.containerPolicies"},
		{field: cp + ".controlledResources", set: policy(func(p *ContainerResourcePolicy) {
			p.ControlledResources = &[]corev1.ResourceName{corev1.ResourceMemory}
		}), out: outPolicy, want: policies(vpav1.ContainerResourcePolicy{ControlledResources: &[]corev1.ResourceName{corev1.ResourceMemory}})},
		{field: cp + ".controlledValues", set: policy(func(p *ContainerResourcePolicy) { p.ControlledValues = ptr("RequestsOnly") }),
			out: outPolicy, want: policies(vpav1.ContainerResourcePolicy{ControlledValues: &requestsOnly})},
		{field: cp + ".controlledValues", name: "unknown", set: policy(func(p *ContainerResourcePolicy) { p.ControlledValues = ptr("LimitsOnly") }),
			out: outPolicy, want: policies(vpav1.ContainerResourcePolicy{}), kind: Dropped, reason: `"LimitsOnly" is not RequestsAndLimits`},
		{field: "spec.vpa.limitsRequestsGapScaleParams.cpu.value", set: gap(func(p *ScaleParams) { p.CPU.Value = ptr("1") }),
			out: outGap, want: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Value: qp("1")}}},
		{field: "spec.vpa.limitsRequestsGapScaleParams.cpu.percentage", set: gap(func(p *ScaleParams) { p.CPU.Percentage = ptr(int32(70)) }),
			out: outGap, want: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Percentage: ptr(int32(70))}}},
		{field: "spec.vpa.limitsRequestsGapScaleParams.memory.value", set: gap(func(p *ScaleParams) { p.Memory.Value = ptr("1G") }),
			out: outGap, want: &hvpav1alpha1.ResourceChangeParams{Memory: &hvpav1alpha1.ChangeParams{Value: qp("1G")}}},
		{field: "spec.vpa.limitsRequestsGapScaleParams.memory.value", name: "negative", set: gap(func(p *ScaleParams) {
			p.Memory.Value = ptr("-1G")
		}), out: outGap, want: (*hvpav1alpha1.ResourceChangeParams)(nil), kind: Dropped, reason: `"-1G" is negative`},
		{field: "spec.vpa.limitsRequestsGapScaleParams.memory.percentage", set: gap(func(p *ScaleParams) { p.Memory.Percentage = ptr(int32(40)) }),
			out: outGap, want: &hvpav1alpha1.ResourceChangeParams{Memory: &hvpav1alpha1.ChangeParams{Percentage: ptr(int32(40))}}},
		{field: "spec.vpa.limitsRequestsGapScaleParams.replicas.value", set: gap(func(p *ScaleParams) { p.Replicas.Value = ptr("1") }),
			out: outGap, want: (*hvpav1alpha1.ResourceChangeParams)(nil), kind: Dropped, reason: "replicas have no limits",
			lossAt: "spec.vpa.limitsRequestsGapScaleParams.replicas"},
		{field: "spec.vpa.limitsRequestsGapScaleParams.replicas.percentage", set: gap(func(p *ScaleParams) {
			p.Replicas.Percentage = ptr(int32(10))
		}), out: outGap, want: (*hvpav1alpha1.ResourceChangeParams)(nil), kind: Dropped, reason: "replicas have no limits",
			lossAt: "spec.vpa.limitsRequestsGapScaleParams.replicas"},
	}
}

func intervalRows() []row {
	const w = "spec.weightBasedScalingIntervals[0]"
	weights := func(ws ...WeightBasedScalingInterval) func(*GardenerHvpa) {
		return func(g *GardenerHvpa) { withHPA(g); g.Spec.WeightBasedScalingIntervals = ws }
	}
	linear := ptr(hvpav1alpha1.ExtrapolationLinear)
	iv := func(r int32, l *hvpav1alpha1.Extrapolation) hvpav1alpha1.ScalingInterval {
		return hvpav1alpha1.ScalingInterval{MaxReplicas: ptr(r), EffectiveIntervalExtrapolation: l}
	}
	ivs := func(list ...hvpav1alpha1.ScalingInterval) []hvpav1alpha1.ScalingInterval { return list }
	return []row{
		{field: w + ".vpaWeight", set: weights(WeightBasedScalingInterval{VpaWeight: 0, StartReplicaCount: 1, LastReplicaCount: 3}),
			out: outIntervals, want: ivs(iv(3, linear), iv(4, nil)), kind: Approximated,
			reason: "0: gardener's controller changed only replicas in 1..3, pods kept their requests; spec.scalingIntervals[0] lets pods grow"},
		{field: w + ".vpaWeight", name: "50", set: weights(WeightBasedScalingInterval{VpaWeight: 50, StartReplicaCount: 2, LastReplicaCount: 4}),
			out: outIntervals, want: ivs(iv(1, nil), iv(4, linear)), kind: Approximated,
			reason: "50: gardener's controller moved requests 50% and replicas 50% of the way"},
		{field: w + ".vpaWeight", name: "100", set: weights(WeightBasedScalingInterval{VpaWeight: 100, StartReplicaCount: 4, LastReplicaCount: 4}),
			out: outIntervals, want: ivs(iv(3, linear), iv(4, nil))},
		{field: w + ".vpaWeight", name: "100 over a range", set: weights(WeightBasedScalingInterval{VpaWeight: 100, StartReplicaCount: 1,
			LastReplicaCount: 4}), out: outIntervals, want: ivs(iv(4, linear)), kind: Approximated,
			reason: "100 over replicas 1..4: gardener's controller changed no replicas inside the range"},
		{field: w + ".startReplicaCount", set: weights(WeightBasedScalingInterval{VpaWeight: 100, StartReplicaCount: 2, LastReplicaCount: 4}),
			out: outIntervals, want: ivs(iv(1, nil), iv(4, linear))},
		{field: w + ".startReplicaCount", name: "unset", set: weights(WeightBasedScalingInterval{VpaWeight: 100, LastReplicaCount: 2},
			WeightBasedScalingInterval{VpaWeight: 100, StartReplicaCount: 3}), out: outIntervals, want: ivs(iv(2, linear), iv(4, linear))},
		{field: w + ".lastReplicaCount", set: weights(WeightBasedScalingInterval{VpaWeight: 100, StartReplicaCount: 1, LastReplicaCount: 2}),
			out: outIntervals, want: ivs(iv(2, linear), iv(4, linear))},
		{field: w + ".lastReplicaCount", name: "above maxReplicas", set: weights(WeightBasedScalingInterval{VpaWeight: 100,
			StartReplicaCount: 3, LastReplicaCount: 9}), out: outIntervals, want: ivs(iv(2, linear), iv(4, linear)),
			kind: Approximated, reason: "9 is above hpa maxReplicas: clipped to 4"},
		{field: w + ".lastReplicaCount", name: "outside", set: weights(WeightBasedScalingInterval{VpaWeight: 100,
			StartReplicaCount: 6, LastReplicaCount: 9}), out: outIntervals, want: ivs(iv(4, linear)),
			kind: Dropped, reason: "replicas 6 to 9 are outside hpa minReplicas..maxReplicas (1..4)", lossAt: w},
		{field: w + ".vpaWeight", name: "without HPA", set: func(g *GardenerHvpa) {
			g.Spec.Replicas = ptr(int32(2))
			g.Spec.WeightBasedScalingIntervals = []WeightBasedScalingInterval{{VpaWeight: 100, StartReplicaCount: 1, LastReplicaCount: 3}}
		}, out: outIntervals, want: ivs(iv(2, nil)), kind: Dropped, reason: "not used: gardener's controller ran no HPA",
			lossAt: "spec.weightBasedScalingIntervals"},
	}
}

func topRows() []row {
	window := &MaintenanceTimeWindow{Begin: "220000+0100", End: "230000+0100"}
	return []row{
		{field: "spec.replicas", set: func(g *GardenerHvpa) { g.Spec.Replicas = ptr(int32(3)) }, out: outReplicas, want: ptr(int32(3))},
		{field: "spec.replicas", name: "negative", set: func(g *GardenerHvpa) { g.Spec.Replicas = ptr(int32(-1)) }, out: outReplicas,
			want: (*int32)(nil), kind: Dropped, reason: "-1 is negative"},
		{field: "spec.replicas", name: "no HPA, unset", set: func(g *GardenerHvpa) {
			g.Spec.Hpa.Template.Spec.MaxReplicas = 3
		}, out: outIntervals, want: []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr(int32(1))}}, kind: Approximated,
			reason: "the scaling interval holds 1 replica(s)"},
		{field: "spec.targetRef", set: func(g *GardenerHvpa) {
			g.Spec.TargetRef = &autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "etcd"}
		}, out: outTarget, want: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "etcd"}},
		{field: "spec.targetRef", name: "missing", set: func(g *GardenerHvpa) { g.Spec.TargetRef = nil }, out: outTarget,
			want: autoscalingv2.CrossVersionObjectReference{}, kind: Dropped, reason: "missing (gardener's schema requires it too)"},
		{field: "spec.targetRef", name: "DaemonSet", set: func(g *GardenerHvpa) {
			g.Spec.TargetRef = &autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent"}
		}, out: outTarget, want: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent"},
			kind: Approximated, reason: "a DaemonSet has none"},
		{field: "spec.maintenanceTimeWindow.begin", set: func(g *GardenerHvpa) { g.Spec.MaintenanceTimeWindow = window }, out: outWindow,
			want: &hvpav1alpha1.MaintenanceTimeWindow{Begin: "220000+0100", End: "230000+0100"}},
		{field: "spec.maintenanceTimeWindow.begin", name: "bad", set: func(g *GardenerHvpa) {
			g.Spec.MaintenanceTimeWindow = &MaintenanceTimeWindow{Begin: "22:00", End: "230000+0100"}
		}, out: outWindow, want: (*hvpav1alpha1.MaintenanceTimeWindow)(nil), kind: Dropped, reason: `"22:00" is not a time of day`},
		{field: "spec.maintenanceTimeWindow.end", set: func(g *GardenerHvpa) { g.Spec.MaintenanceTimeWindow = window }, out: outWindow,
			want: &hvpav1alpha1.MaintenanceTimeWindow{Begin: "220000+0100", End: "230000+0100"}},
		{field: "spec.maintenanceTimeWindow.end", name: "bad", set: func(g *GardenerHvpa) {
			g.Spec.MaintenanceTimeWindow = &MaintenanceTimeWindow{Begin: "220000+0100", End: "240000+0100"}
		}, out: outWindow, want: (*hvpav1alpha1.MaintenanceTimeWindow)(nil), kind: Dropped, reason: `"240000+0100" is not a time of day`},
		{field: "metadata.labels", set: func(g *GardenerHvpa) { g.Labels = map[string]string{"role": "apiserver"} }, out: outMeta,
			want: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: map[string]string{"role": "apiserver"}}},
		{field: "metadata.annotations", set: func(g *GardenerHvpa) { g.Annotations = map[string]string{"team": "a"} }, out: outMeta,
			want: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{"team": "a"}}},
		{field: "metadata.annotations[hpa-controller]", set: func(g *GardenerHvpa) {
			g.Annotations = map[string]string{"hpa-controller": "hvpa"}
		}, out: outMeta, want: metav1.ObjectMeta{Name: "web", Namespace: "default"}, kind: Dropped, reason: "has no meaning here"},
		{field: "metadata.annotations[kubectl.kubernetes.io/last-applied-configuration]", set: func(g *GardenerHvpa) {
			g.Annotations = map[string]string{lastAppliedAnnotation: "{}", "team": "a"}
		}, out: outMeta, want: metav1.ObjectMeta{Name: "web", Namespace: "default", Annotations: map[string]string{"team": "a"}},
			kind: Dropped, reason: "the converted object gets its own"},
	}
}

func allRows() []row {
	var rows []row
	for _, part := range [][]row{topRows(), hpaRows(), scaleRows(), metricRows(), vpaRows(), intervalRows()} {
		rows = append(rows, part...)
	}
	return rows
}

// TestConvertFields: every gardener field, set alone on a minimal gardener Hvpa, gives its hvpa field and its
// loss (or none).
func TestConvertFields(t *testing.T) {
	if _, losses := Convert(base()); len(losses) > 0 {
		t.Fatalf("the minimal gardener Hvpa converts with losses %v, want none", losses)
	}
	for _, r := range allRows() {
		t.Run(strings.TrimSpace(r.field+" "+r.name), func(t *testing.T) {
			g := base()
			r.set(&g)
			out, losses := Convert(g)
			if got := r.out(out); !equality.Semantic.DeepEqual(got, r.want) {
				t.Errorf("converted field = %s, want %s", show(got), show(r.want))
			}
			at := r.lossAt
			if at == "" {
				at = r.field
			}
			var found []Loss
			for _, l := range losses {
				if l.Path == at {
					found = append(found, l)
				}
			}
			switch {
			case r.kind == "" && len(found) > 0:
				t.Errorf("losses at %s: %v, want none", at, found)
			case r.kind != "" && len(found) != 1:
				t.Errorf("losses at %s: %v, want one %s loss containing %q (all: %v)", at, found, r.kind, r.reason, losses)
			case r.kind != "" && (found[0].Kind != r.kind || !strings.Contains(found[0].Reason, r.reason)):
				t.Errorf("loss at %s = %s, want kind %s and a reason containing %q", at, found[0], r.kind, r.reason)
			}
		})
	}
}

func show(v any) string {
	j, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(j)
}

// TestConvertEveryFieldHasARow: the table has a row for every field of gardener's spec (this package's types,
// walked by their JSON names; index 0 of every list).
func TestConvertEveryFieldHasARow(t *testing.T) {
	rows := map[string]bool{}
	for _, r := range allRows() {
		rows[r.field] = true
	}
	var fields []string
	walk(reflect.TypeOf(Spec{}), "spec", &fields)
	if len(fields) < 90 {
		t.Fatalf("found %d fields in gardener's spec, want the whole schema (over 90)", len(fields))
	}
	for _, f := range fields {
		if !rows[f] {
			t.Errorf("no row for gardener field %s", f)
		}
	}
	known := map[string]bool{}
	for _, f := range fields {
		known[f] = true
	}
	for f := range rows {
		if !known[f] && !strings.HasPrefix(f, "metadata.") {
			t.Errorf("row for %s, which is not a field of gardener's spec", f)
		}
	}
}

// walk lists the leaf fields of t: the fields of this package's structs, recursively; any other type (a
// Kubernetes type, a scalar) is a leaf.
func walk(t reflect.Type, path string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice && t.Elem().PkgPath() == reflect.TypeOf(Spec{}).PkgPath() {
		walk(t.Elem(), path+"[0]", out)
		return
	}
	if t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeOf(Spec{}).PkgPath() {
		*out = append(*out, path)
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		walk(f.Type, path+"."+name, out)
	}
}

// TestConvertGardenerShapes converts whole objects in the shapes gardener renders and checks the derived
// scaling intervals and policies.
func TestConvertGardenerShapes(t *testing.T) {
	g := base()
	withHPA(&g)
	g.Spec.Hpa.Template.Spec.MinReplicas = ptr(int32(2))
	g.Spec.Vpa.Deploy = true
	g.Spec.Vpa.ScaleDown.UpdatePolicy.UpdateMode = ptr("MaintenanceWindow")
	g.Spec.MaintenanceTimeWindow = &MaintenanceTimeWindow{Begin: "220000+0000", End: "230000+0000"}
	g.Spec.Vpa.Template.Spec.ResourcePolicy = &PodResourcePolicy{ContainerPolicies: []ContainerResourcePolicy{
		{ContainerName: "kube-apiserver", MaxAllowed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"),
			corev1.ResourceMemory: resource.MustParse("25G")}},
		{ContainerName: "sidecar", MaxAllowed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
	}}
	g.Spec.WeightBasedScalingIntervals = []WeightBasedScalingInterval{
		{VpaWeight: 0, StartReplicaCount: 2, LastReplicaCount: 3},
		{VpaWeight: 100, StartReplicaCount: 4, LastReplicaCount: 4},
	}
	out, losses := Convert(g)
	perPod := &hvpav1alpha1.ScaledResources{CPU: qp("8"), Memory: qp("25G")}
	want := []hvpav1alpha1.ScalingInterval{
		{MaxReplicas: ptr(int32(3)), MaxResources: perPod, EffectiveIntervalExtrapolation: ptr(hvpav1alpha1.ExtrapolationLinear)},
		{MaxReplicas: ptr(int32(4)), MaxResources: perPod},
	}
	if !equality.Semantic.DeepEqual(out.Spec.ScalingIntervals, want) {
		t.Errorf("scalingIntervals = %s, want %s", show(out.Spec.ScalingIntervals), show(want))
	}
	if m := *out.Spec.ScaleDown.UpdatePolicy.UpdateMode; m != hvpav1alpha1.UpdateModeMaintenanceWindow {
		t.Errorf("scaleDown updateMode = %s, want MaintenanceWindow", m)
	}
	var paths []string
	for _, l := range losses {
		paths = append(paths, l.Path)
	}
	wantPaths := []string{"spec.weightBasedScalingIntervals[0].vpaWeight", "spec.vpa.scaleUp.minChange.cpu",
		"spec.vpa.scaleUp.minChange.memory", "spec.vpa.scaleDown.updatePolicy.updateMode", "spec.vpa.scaleDown.minChange.cpu",
		"spec.vpa.scaleDown.minChange.memory"}
	if !reflect.DeepEqual(paths, wantPaths) {
		t.Errorf("losses at %q, want at %q", paths, wantPaths)
	}
}
