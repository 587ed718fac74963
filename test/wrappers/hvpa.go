package wrappers

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// HvpaWrapper builds an Hvpa.
type HvpaWrapper struct{ hvpav1alpha1.Hvpa }

// MakeHvpa is an Hvpa on Deployment <name> without intervals, HPA or VPA section.
func MakeHvpa(ns, name string) *HvpaWrapper {
	return &HvpaWrapper{hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: hvpav1alpha1.HvpaSpec{
		TargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name}}}}
}

// Obj is the Hvpa.
func (w *HvpaWrapper) Obj() *hvpav1alpha1.Hvpa { return &w.Hvpa }

// Target sets the targetRef (apps/v1 kind name).
func (w *HvpaWrapper) Target(kind, name string) *HvpaWrapper {
	w.Spec.TargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: kind, Name: name}
	return w
}

// Interval appends a scaling interval of up to maxReplicas replicas with per-pod maxima cpu and memory (""
// leaves one out).
func (w *HvpaWrapper) Interval(maxReplicas int32, cpu, memory string) *HvpaWrapper {
	w.Spec.ScalingIntervals = append(w.Spec.ScalingIntervals, hvpav1alpha1.ScalingInterval{MaxReplicas: &maxReplicas,
		MaxResources: &hvpav1alpha1.ScaledResources{CPU: quantity(cpu), Memory: quantity(memory)}})
	return w
}

// Overlap sets scalingIntervalsOverlap in percent of cpu and memory (0 leaves one out).
func (w *HvpaWrapper) Overlap(cpuPct, memoryPct int32) *HvpaWrapper {
	w.Spec.ScalingIntervalsOverlap = &hvpav1alpha1.ResourceChangeParams{CPU: percent(cpuPct), Memory: percent(memoryPct)}
	return w
}

// HPA sets the HPA section: deploy or not, and the replica range.
func (w *HvpaWrapper) HPA(deploy bool, minReplicas, maxReplicas int32) *HvpaWrapper {
	w.Spec.HPA = &hvpav1alpha1.HpaSpec{Deploy: deploy, Template: hvpav1alpha1.HpaTemplate{MaxReplicas: maxReplicas}}
	if minReplicas > 0 {
		w.Spec.HPA.Template.MinReplicas = &minReplicas
	}
	return w
}

// Utilization appends a Resource metric of the HPA (set by HPA first): average utilization of r in percent.
func (w *HvpaWrapper) Utilization(r corev1.ResourceName, pct int32) *HvpaWrapper {
	w.Spec.HPA.Template.Metrics = append(w.Spec.HPA.Template.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{Name: r, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &pct}}})
	return w
}

// ScaleDownWindow sets the HPA's scale-down stabilization window in seconds (set by HPA first).
func (w *HvpaWrapper) ScaleDownWindow(seconds int32) *HvpaWrapper {
	w.Spec.HPA.Template.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &seconds}}
	return w
}

// VPA sets the VPA section's deploy.
func (w *HvpaWrapper) VPA(deploy bool) *HvpaWrapper {
	if w.Spec.VPA == nil {
		w.Spec.VPA = &hvpav1alpha1.VpaSpec{}
	}
	w.Spec.VPA.Deploy = deploy
	return w
}

// ContainerPolicy appends a container policy to the VPA template.
func (w *HvpaWrapper) ContainerPolicy(p vpav1.ContainerResourcePolicy) *HvpaWrapper {
	w.VPA(w.Spec.VPA != nil && w.Spec.VPA.Deploy)
	t := &w.Spec.VPA.Template
	if t.ResourcePolicy == nil {
		t.ResourcePolicy = &vpav1.PodResourcePolicy{}
	}
	t.ResourcePolicy.ContainerPolicies = append(t.ResourcePolicy.ContainerPolicies, p)
	return w
}

// Controlled limits every container ("*") to the resources rs.
func (w *HvpaWrapper) Controlled(rs ...corev1.ResourceName) *HvpaWrapper {
	return w.ContainerPolicy(vpav1.ContainerResourcePolicy{ContainerName: "*", ControlledResources: &rs})
}

// Selector sets status.selector (as the controller resolves it).
func (w *HvpaWrapper) Selector(s string) *HvpaWrapper {
	w.Status.Selector = s
	return w
}

// Desired sets status.desired: replicas and each container's requests.
func (w *HvpaWrapper) Desired(replicas int32, containers ...hvpav1alpha1.ContainerResources) *HvpaWrapper {
	w.Status.Desired = &hvpav1alpha1.DesiredState{Replicas: replicas, Containers: containers}
	return w
}

func percent(p int32) *hvpav1alpha1.ChangeParams {
	if p == 0 {
		return nil
	}
	return &hvpav1alpha1.ChangeParams{Percentage: ptr.To(p)}
}

// CPUPerReplica appends one interval per replica count: interval i (up to i+1 replicas) has the per-pod cpu
// maximum perPod[i].
func (w *HvpaWrapper) CPUPerReplica(perPod ...string) *HvpaWrapper {
	for i, cpu := range perPod {
		w.Interval(int32(i+1), cpu, "")
	}
	return w
}

// Extrapolation sets effectiveIntervalExtrapolation on the last interval (set by Interval first).
func (w *HvpaWrapper) Extrapolation(e hvpav1alpha1.Extrapolation) *HvpaWrapper {
	w.Spec.ScalingIntervals[len(w.Spec.ScalingIntervals)-1].EffectiveIntervalExtrapolation = &e
	return w
}
