package scaling

import (
	"fmt"
	"sort"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// Who writes an Hvpa's spec.replicas, and what it means (the scaling contract, section 2, HPA source). Any
// scaler that writes the Hvpa's scale subresource drives it: the HPA the Hvpa deploys, another
// HorizontalPodAutoscaler that targets the Hvpa (a user's, or the one a KEDA ScaledObject makes), or, with no
// HPA at all, whoever writes /scale (kubectl scale). The rules are the deployed HPA's: the HPA's own metrics
// say whether its replicas make a total (Utilization Resource metrics) or a replica floor; with no HPA the
// replicas are a floor ("h pods of any size").

// HorizontalKind says where an Hvpa's horizontal input comes from.
type HorizontalKind int

const (
	// HorizontalNone: nothing asks for replicas (no HPA, and spec.replicas is the value the controller wrote).
	HorizontalNone HorizontalKind = iota
	// HorizontalDeployed: the HPA the Hvpa deploys (spec.hpa.deploy).
	HorizontalDeployed
	// HorizontalHPA: a HorizontalPodAutoscaler the Hvpa did not create targets its scale subresource.
	HorizontalHPA
	// HorizontalScale: spec.replicas was written through the scale subresource (or the spec) with no HPA
	// targeting the Hvpa: a replica floor.
	HorizontalScale
)

// Horizontal is the source of an Hvpa's horizontal input.
type Horizontal struct {
	Kind HorizontalKind
	// HPA is the HPA whose desired replicas spec.replicas holds (Deployed: nil until it exists; HPA: set).
	HPA *autoscalingv2.HorizontalPodAutoscaler
	// Others are the other HPAs that target the Hvpa: two writers of one spec.replicas fight, so only one
	// counts (the deployed one, else the oldest) and status names the others.
	Others []string
}

// sourceHPAPrefix starts status.hpa.source whenever an HPA writes spec.replicas.
const sourceHPAPrefix = "HorizontalPodAutoscaler "

// TargetsHvpa reports whether hpa's scaleTargetRef is the Hvpa named name (any version of its group).
func TargetsHvpa(hpa *autoscalingv2.HorizontalPodAutoscaler, name string) bool {
	ref := hpa.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == hvpav1alpha1.GroupVersion.Group && ref.Kind == hvpav1alpha1.KindHvpa && ref.Name == name
}

// HorizontalOf is the horizontal input of h. owned is the HPA h deploys as read (nil: none); hpas are the
// HPAs of h's namespace; own is the spec.replicas value the Hvpa controller wrote itself (at creation, or when
// the HPA that drove it went away; nil: none): while spec.replicas still holds it, no one has asked for
// replicas.
func HorizontalOf(h *hvpav1alpha1.Hvpa, owned *autoscalingv2.HorizontalPodAutoscaler, hpas []autoscalingv2.HorizontalPodAutoscaler, own *int32) Horizontal {
	var targeting []*autoscalingv2.HorizontalPodAutoscaler
	for i := range hpas {
		a := &hpas[i]
		if TargetsHvpa(a, h.Name) && !metav1.IsControlledBy(a, h) && (owned == nil || a.Name != owned.Name) {
			targeting = append(targeting, a)
		}
	}
	sort.Slice(targeting, func(i, j int) bool {
		a, b := targeting[i], targeting[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	names := func(l []*autoscalingv2.HorizontalPodAutoscaler) []string {
		var out []string
		for _, a := range l {
			out = append(out, a.Name)
		}
		return out
	}
	switch {
	case h.Spec.HPA != nil && h.Spec.HPA.Deploy:
		return Horizontal{Kind: HorizontalDeployed, HPA: owned, Others: names(targeting)}
	case len(targeting) > 0:
		return Horizontal{Kind: HorizontalHPA, HPA: targeting[0], Others: names(targeting[1:])}
	case h.Spec.Replicas != nil && (own == nil || *own != *h.Spec.Replicas):
		return Horizontal{Kind: HorizontalScale}
	}
	return Horizontal{Kind: HorizontalNone}
}

// Describe is status.hpa.source: who writes spec.replicas and how it counts ("": no input).
func (s Horizontal) Describe(h *hvpav1alpha1.Hvpa) string {
	var out string
	switch s.Kind {
	case HorizontalDeployed:
		out = sourceHPAPrefix + h.Name + " (deployed by this Hvpa)"
	case HorizontalHPA:
		how := "its replicas are a replica floor (not every metric is a Resource metric with a Utilization target)"
		if utilizationOnly(s.HPA.Spec.Metrics) {
			how = "its Utilization metrics make totals"
		}
		out = sourceHPAPrefix + s.HPA.Name + " (targets this Hvpa; " + how + ")"
	case HorizontalScale:
		return "spec.replicas, written through the scale subresource with no HPA targeting this Hvpa: a replica floor"
	default:
		return ""
	}
	if len(s.Others) > 0 {
		out += fmt.Sprintf("; ignored, also targeting this Hvpa: HorizontalPodAutoscaler %s (keep one HPA per Hvpa)", strings.Join(s.Others, ", "))
	}
	return out
}

// Released reports whether spec.replicas was last written by an HPA that no longer drives it (deleted, its
// ScaledObject removed, spec.hpa.deploy turned off): its last replicas are then no input, and the controller
// records them as its own (HorizontalOf's own) rather than keep them as a floor nobody asked for.
func (s Horizontal) Released(h *hvpav1alpha1.Hvpa) bool {
	rec := h.Status.HPA
	return (s.Kind == HorizontalNone || s.Kind == HorizontalScale) && rec != nil && strings.HasPrefix(rec.Source, sourceHPAPrefix)
}

// FollowHorizontal sets how the spec reads the horizontal input: the metrics of the HPA that writes
// spec.replicas, the resources they measure and their target utilizations (the HPA's own, which for the
// deployed one are its template's, as FromHvpa read them), and a replica floor when no HPA does.
func (s *Spec) FollowHorizontal(src Horizontal) {
	switch src.Kind {
	case HorizontalHPA:
		s.followHPAMetrics(src.HPA.Spec.Metrics)
	case HorizontalScale:
		s.HPAUtilization = false
	}
}
