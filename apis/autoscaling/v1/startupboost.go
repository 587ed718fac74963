package v1

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// AnnotationStartupBoost marks a pod whose CPU hvpa's webhook boosted at admission (spec.startupBoost or a
// container policy's): per container, the CPU request and limit it goes back to when the boost ends (JSON).
// The updater resizes the pod in place to them once the boost's durationSeconds have passed since the pod
// became Ready; the annotation stays, and a pod resized since its creation (metadata.generation above 1) is
// no longer boosted. Only the webhook writes it (it removes one a pod comes with), and the updater follows
// it only with the CPUStartupBoost gate on, for containers the pod's VPA boosts, and only to lower CPU.
const AnnotationStartupBoost = "autoscaling.hvpa.dev/startup-boost"

// Unboosted is one container's CPU after its startup boost (nil: none set).
type Unboosted struct {
	CPURequest *resource.Quantity `json:"cpuRequest,omitempty"`
	CPULimit   *resource.Quantity `json:"cpuLimit,omitempty"`
}

// EncodeUnboosted is the value of AnnotationStartupBoost.
func EncodeUnboosted(m map[string]Unboosted) string {
	b, err := json.Marshal(m)
	if err != nil { // a map of quantities always encodes
		panic(err)
	}
	return string(b)
}

// DecodeUnboosted reads AnnotationStartupBoost; an error says what is wrong with it.
func DecodeUnboosted(s string) (map[string]Unboosted, error) {
	m := map[string]Unboosted{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", AnnotationStartupBoost, err)
	}
	return m, nil
}

// StartupBoostFor is the startup boost of container in a VPA (upstream's rule): its container policy's
// (the container's own, else "*"), else the object's spec.startupBoost; nil when none, or when the policy's
// mode is Off.
func (v *VerticalPodAutoscaler) StartupBoostFor(container string) *GenericStartupBoost {
	p := v.Spec.ResourcePolicy.PolicyFor(container)
	if p != nil && p.Mode != nil && *p.Mode == ContainerScalingModeOff {
		return nil
	}
	b := v.Spec.StartupBoost
	if p != nil && p.StartupBoost != nil {
		b = p.StartupBoost
	}
	if b == nil {
		return nil
	}
	return b.CPU
}

// HasStartupBoost reports whether the VPA boosts any container: its spec.startupBoost or a policy's.
func (v *VerticalPodAutoscaler) HasStartupBoost() bool {
	if v.Spec.StartupBoost != nil && v.Spec.StartupBoost.CPU != nil {
		return true
	}
	if v.Spec.ResourcePolicy != nil {
		for _, p := range v.Spec.ResourcePolicy.ContainerPolicies {
			if p.StartupBoost != nil && p.StartupBoost.CPU != nil {
				return true
			}
		}
	}
	return false
}
