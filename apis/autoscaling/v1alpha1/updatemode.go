package v1alpha1

import vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"

// PodUpdatePolicy is spec.vpa.template.updatePolicy: how the updater applies the per-pod resources (nil
// where unset).
func (h *Hvpa) PodUpdatePolicy() *vpav1.PodUpdatePolicy {
	if h.Spec.VPA == nil {
		return nil
	}
	return h.Spec.VPA.Template.UpdatePolicy
}

// PodUpdateMode is the updateMode of PodUpdatePolicy, or InPlaceOrRecreate where it is unset (an Hvpa's
// default: its per-pod resources move with its replicas, so resizing in place disrupts least).
func (h *Hvpa) PodUpdateMode() vpav1.UpdateMode {
	return h.PodUpdatePolicy().Mode(vpav1.UpdateModeInPlaceOrRecreate)
}
