package updater

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/hvpa-dev/hvpa/scaling"
)

// QoS returns the QoS class of a pod with these containers (init containers included, as Kubernetes counts
// them), by the Kubernetes rules for cpu and memory:
// BestEffort without any request or limit; Guaranteed when every container has cpu and memory limits and
// its requests equal them (a missing request defaults to the limit); else Burstable.
func QoS(containers []scaling.Container) corev1.PodQOSClass {
	any, guaranteed := false, true
	for _, c := range containers {
		for _, r := range scaling.Resources {
			req, hasReq := c.Requests.Get(r)
			lim, hasLim := c.Limits.Get(r)
			if (hasReq && req > 0) || (hasLim && lim > 0) {
				any = true
			}
			// a zero limit is no limit, as Kubernetes counts it
			if !hasLim || lim == 0 || (hasReq && req != lim) {
				guaranteed = false
			}
		}
	}
	switch {
	case !any:
		return corev1.PodQOSBestEffort
	case guaranteed:
		return corev1.PodQOSGuaranteed
	}
	return corev1.PodQOSBurstable
}

// QoSAfter is the QoS class the pod would have with the sized containers' values.
func QoSAfter(containers []scaling.Container, sized []scaling.ContainerDecision) corev1.PodQOSClass {
	after := make([]scaling.Container, len(containers))
	copy(after, containers)
	for _, d := range sized {
		for i := range after {
			if after[i].Name == d.Name {
				after[i].Requests, after[i].Limits = d.Requests, d.Limits
			}
		}
	}
	return QoS(after)
}
