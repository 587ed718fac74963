package pod

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// boost gives the containers of a (sized) pod the CPU startup boost their VPA asks for
// (vpav1.StartupBoostFor), on top of the values they would start with, and records in
// vpav1.AnnotationStartupBoost the CPU each goes back to; it returns what it changed. A container without a
// CPU request or limit has nothing to boost from.
func boost(pod *corev1.Pod, v *vpav1.VerticalPodAutoscaler, maxCPU float64) []string {
	back := map[string]vpav1.Unboosted{}
	var changes []string
	for i := range pod.Spec.Containers {
		k := &pod.Spec.Containers[i]
		b := v.StartupBoostFor(k.Name)
		if b == nil {
			continue
		}
		reqQ, hasReq := k.Resources.Requests[corev1.ResourceCPU]
		limQ, hasLim := k.Resources.Limits[corev1.ResourceCPU]
		if !hasReq && !hasLim {
			continue
		}
		if !hasReq {
			reqQ = limQ // the API server defaults a missing request to the limit
		}
		req, lim := float64(reqQ.MilliValue()), -1.0
		if hasLim {
			lim = float64(limQ.MilliValue())
		}
		boostedReq, boostedLim := scaling.BoostCPU(b, req, lim, requestsOnly(v, k.Name), maxCPU)
		if boostedReq == req && boostedLim == lim {
			continue
		}
		u := vpav1.Unboosted{CPURequest: ptr.To(reqQ.DeepCopy())}
		var what []string
		if boostedReq != req {
			q := milli(boostedReq)
			what = append(what, fmt.Sprintf("cpu request %s -> %s", reqQ.String(), q.String()))
			if k.Resources.Requests == nil {
				k.Resources.Requests = corev1.ResourceList{}
			}
			k.Resources.Requests[corev1.ResourceCPU] = q
		}
		if hasLim {
			u.CPULimit = ptr.To(limQ.DeepCopy())
			if boostedLim != lim {
				q := milli(boostedLim)
				k.Resources.Limits[corev1.ResourceCPU] = q
				what = append(what, fmt.Sprintf("cpu limit %s -> %s", limQ.String(), q.String()))
			}
		}
		back[k.Name] = u
		changes = append(changes, k.Name+": "+strings.Join(what, ", ")+" (startup boost)")
	}
	if len(back) > 0 {
		if pod.Annotations == nil {
			pod.Annotations = map[string]string{}
		}
		pod.Annotations[vpav1.AnnotationStartupBoost] = vpav1.EncodeUnboosted(back)
	}
	return changes
}

// unboost takes the startup boost this webhook gave the pod off its containers' CPU: a pod admitted again
// (reinvocationPolicy IfNeeded, after a later webhook changed it) carries the boost and its annotation. A
// container goes back to the values the annotation records only when the boost of those values is what it
// has; an annotation the pod came with from its author matches no boost and is left to size() to drop.
func unboost(pod *corev1.Pod, v *vpav1.VerticalPodAutoscaler, maxCPU float64) {
	back, err := vpav1.DecodeUnboosted(pod.Annotations[vpav1.AnnotationStartupBoost])
	if err != nil {
		return
	}
	for i := range pod.Spec.Containers {
		k := &pod.Spec.Containers[i]
		u, ok := back[k.Name]
		b := v.StartupBoostFor(k.Name)
		if !ok || b == nil || u.CPURequest == nil {
			continue
		}
		reqQ, hasReq := k.Resources.Requests[corev1.ResourceCPU]
		limQ, hasLim := k.Resources.Limits[corev1.ResourceCPU]
		if !hasReq || hasLim != (u.CPULimit != nil) {
			continue
		}
		lim, unboostedLim := -1.0, -1.0
		if hasLim {
			lim, unboostedLim = float64(limQ.MilliValue()), float64(u.CPULimit.MilliValue())
		}
		boostedReq, boostedLim := scaling.BoostCPU(b, float64(u.CPURequest.MilliValue()), unboostedLim, requestsOnly(v, k.Name), maxCPU)
		if float64(reqQ.MilliValue()) != boostedReq || lim != boostedLim {
			continue
		}
		k.Resources.Requests[corev1.ResourceCPU] = u.CPURequest.DeepCopy()
		if hasLim {
			k.Resources.Limits[corev1.ResourceCPU] = u.CPULimit.DeepCopy()
		}
	}
}

// requestsOnly reports whether container's policy in v has controlledValues RequestsOnly.
func requestsOnly(v *vpav1.VerticalPodAutoscaler, container string) bool {
	p := v.Spec.ResourcePolicy.PolicyFor(container)
	return p != nil && p.ControlledValues != nil && *p.ControlledValues == vpav1.ContainerControlledValuesRequestsOnly
}

func milli(m float64) resource.Quantity {
	return *resource.NewMilliQuantity(int64(m), resource.DecimalSI)
}
