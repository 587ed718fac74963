package gardenerhvpa

import (
	"fmt"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// metrics converts gardener's autoscaling/v2beta1 HPA metrics into autoscaling/v2 ones, field for field.
func (c *converter) metrics() []autoscalingv2.MetricSpec {
	var out []autoscalingv2.MetricSpec
	for i, m := range c.in.Spec.Hpa.Template.Spec.Metrics {
		ms, reason := convertMetric(m)
		if reason != "" {
			c.lose(fmt.Sprintf("spec.hpa.template.spec.metrics[%d]", i), Dropped, "%s", reason)
			continue
		}
		out = append(out, ms)
	}
	return out
}

func convertMetric(m MetricSpec) (autoscalingv2.MetricSpec, string) {
	out := autoscalingv2.MetricSpec{Type: m.Type}
	ok := false
	switch m.Type {
	case autoscalingv2.ResourceMetricSourceType:
		if r := m.Resource; r != nil {
			t := averageTarget(r.Target, r.TargetAverageUtilization, r.TargetAverageValue)
			out.Resource, ok = &autoscalingv2.ResourceMetricSource{Name: r.Name, Target: targetOrZero(t)}, t != nil
		}
	case autoscalingv2.ContainerResourceMetricSourceType:
		if r := m.ContainerResource; r != nil {
			t := averageTarget(r.Target, r.TargetAverageUtilization, r.TargetAverageValue)
			out.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: r.Name, Container: r.Container,
				Target: targetOrZero(t)}
			ok = t != nil
		}
	case autoscalingv2.PodsMetricSourceType:
		out.Pods, ok = podsMetric(m.Pods)
	case autoscalingv2.ObjectMetricSourceType:
		out.Object, ok = objectMetric(m.Object)
	case autoscalingv2.ExternalMetricSourceType:
		out.External, ok = externalMetric(m.External)
	default:
		return out, fmt.Sprintf("metric type %q is not Resource, ContainerResource, Pods, Object or External; add the "+
			"metric to spec.hpa.template.metrics by hand", m.Type)
	}
	if !ok {
		return out, fmt.Sprintf("the %s metric has no %s source with a target (and a metric name): gardener's HPA "+
			"could not use it either; add a complete metric to spec.hpa.template.metrics", m.Type, lowerFirst(string(m.Type)))
	}
	return out, ""
}

// averageTarget is the target of a Resource, ContainerResource or Pods metric: the v2 shape as it is, else
// v2beta1's average utilization or average value.
func averageTarget(t *autoscalingv2.MetricTarget, utilization *int32, average *resource.Quantity) *autoscalingv2.MetricTarget {
	switch {
	case t != nil:
		return t
	case utilization != nil:
		return &autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: utilization}
	case average != nil:
		return &autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: average}
	}
	return nil
}

// valueTarget is the target of an Object or External metric in v2beta1: an average value, else a value.
func valueTarget(value, average *resource.Quantity) *autoscalingv2.MetricTarget {
	switch {
	case average != nil:
		return &autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: average}
	case value != nil:
		return &autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: value}
	}
	return nil
}

// identifier is a v2 metric identifier: the v2 shape as it is, else v2beta1's name and selector.
func identifier(id *autoscalingv2.MetricIdentifier, name string, selector *metav1.LabelSelector) autoscalingv2.MetricIdentifier {
	if id != nil {
		return *id
	}
	return autoscalingv2.MetricIdentifier{Name: name, Selector: selector}
}

func podsMetric(p *PodsMetric) (*autoscalingv2.PodsMetricSource, bool) {
	if p == nil {
		return nil, false
	}
	t := averageTarget(p.Target, nil, p.TargetAverageValue)
	out := &autoscalingv2.PodsMetricSource{Metric: identifier(p.Metric, p.MetricName, p.Selector), Target: targetOrZero(t)}
	return out, t != nil && out.Metric.Name != ""
}

func objectMetric(o *ObjectMetric) (*autoscalingv2.ObjectMetricSource, bool) {
	if o == nil {
		return nil, false
	}
	if o.DescribedObject != nil { // the v2 shape: target is the metric target
		t := autoscalingv2.MetricTarget{Type: o.Target.Type, Value: o.Target.Value, AverageValue: o.Target.AverageValue,
			AverageUtilization: o.Target.AverageUtilization}
		out := &autoscalingv2.ObjectMetricSource{DescribedObject: *o.DescribedObject, Metric: identifier(o.Metric, "", nil), Target: t}
		return out, t.Type != "" && out.Metric.Name != ""
	}
	t := valueTarget(o.TargetValue, o.AverageValue)
	out := &autoscalingv2.ObjectMetricSource{
		DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: o.Target.APIVersion, Kind: o.Target.Kind, Name: o.Target.Name},
		Metric:          identifier(o.Metric, o.MetricName, o.Selector),
		Target:          targetOrZero(t),
	}
	return out, t != nil && out.Metric.Name != ""
}

func externalMetric(e *ExternalMetric) (*autoscalingv2.ExternalMetricSource, bool) {
	if e == nil {
		return nil, false
	}
	t := e.Target
	if t == nil {
		t = valueTarget(e.TargetValue, e.TargetAverageValue)
	}
	out := &autoscalingv2.ExternalMetricSource{Metric: identifier(e.Metric, e.MetricName, e.MetricSelector), Target: targetOrZero(t)}
	return out, t != nil && out.Metric.Name != ""
}

func targetOrZero(t *autoscalingv2.MetricTarget) autoscalingv2.MetricTarget {
	if t == nil {
		return autoscalingv2.MetricTarget{}
	}
	return *t
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}
