package pod

import (
	"fmt"
	"math"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

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
		only := requestsOnly(v, k.Name)
		boostedReq, boostedLim := capBoost(req, only, maxCPU)(scaling.BoostCPU(b, req, lim, only))
		if boostedReq == req && boostedLim == lim {
			continue
		}
		u := vpav1.Unboosted{CPURequest: ptrTo(reqQ.DeepCopy())}
		var what []string
		if boostedReq != req {
			what = append(what, fmt.Sprintf("cpu request %s -> %s", reqQ.String(), str(milli(boostedReq))))
			if k.Resources.Requests == nil {
				k.Resources.Requests = corev1.ResourceList{}
			}
			k.Resources.Requests[corev1.ResourceCPU] = milli(boostedReq)
		}
		if hasLim {
			u.CPULimit = ptrTo(limQ.DeepCopy())
			if boostedLim != lim {
				k.Resources.Limits[corev1.ResourceCPU] = milli(boostedLim)
				what = append(what, fmt.Sprintf("cpu limit %s -> %s", limQ.String(), str(milli(boostedLim))))
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

// requestsOnly reports whether container's policy in v has controlledValues RequestsOnly.
func requestsOnly(v *vpav1.VerticalPodAutoscaler, container string) bool {
	p := v.Spec.ResourcePolicy.PolicyFor(container)
	return p != nil && p.ControlledValues != nil && *p.ControlledValues == vpav1.ContainerControlledValuesRequestsOnly
}

// capBoost caps a boosted request at maxCPU (--max-allowed-cpu-boost; 0: none), never below the unboosted
// request req; the limit keeps its ratio (but for RequestsOnly, whose limit stays).
func capBoost(req float64, requestsOnly bool, maxCPU float64) func(boostedReq, boostedLim float64) (float64, float64) {
	return func(boostedReq, boostedLim float64) (float64, float64) {
		ceiling := max(maxCPU, req)
		if maxCPU <= 0 || boostedReq <= ceiling {
			return boostedReq, boostedLim
		}
		if boostedLim >= 0 && !requestsOnly {
			boostedLim = math.Ceil(boostedLim * ceiling / boostedReq)
		}
		return ceiling, boostedLim
	}
}

func milli(m float64) resource.Quantity {
	return *resource.NewMilliQuantity(int64(m), resource.DecimalSI)
}

func ptrTo[T any](v T) *T { return &v }

func str(q resource.Quantity) string { return q.String() }
