package v1

// Annotations an admission webhook writes on a pod whose resources it changed when the pod was created.
const (
	// AnnotationSizedResources lists what hvpa's pod webhook changed, before -> after, per container; the
	// updater reads it as the sign that the webhook sized the pod (SizedAtAdmission).
	AnnotationSizedResources = "autoscaling.hvpa.dev/resources"
	// AnnotationUpstreamUpdates is upstream VPA's admission controller's on a pod whose resources it changed
	// ("Pod resources updated by NAME: ..."); the updater reads it as AnnotationSizedResources.
	AnnotationUpstreamUpdates = "vpaUpdates"
)

// SizedAtAdmission reports whether a pod's annotations say that an admission webhook, hvpa's or upstream's,
// changed its resources when it was created.
func SizedAtAdmission(annotations map[string]string) bool {
	return annotations[AnnotationSizedResources] != "" || annotations[AnnotationUpstreamUpdates] != ""
}
