package v1

import "strings"

// Annotations an admission webhook writes on a pod whose resources it changed when the pod was created.
const (
	// AnnotationSizedResources lists what hvpa's pod webhook changed, before -> after, per container; the
	// updater reads it as the sign that the webhook sized the pod (SizedAtAdmission).
	AnnotationSizedResources = "autoscaling.hvpa.dev/resources"
	// AnnotationUpstreamUpdates is upstream VPA's admission controller's on a pod it admitted for a VPA ("Pod
	// resources updated by NAME: container 0: cpu request, ..."), also when it changed nothing (no request or
	// limit listed); the updater reads one that lists a change as AnnotationSizedResources.
	AnnotationUpstreamUpdates = "vpaUpdates"
	// AnnotationSizedBy names the object hvpa's pod webhook sized the pod from, e.g.
	// "VerticalPodAutoscaler/web", also when it changed nothing.
	AnnotationSizedBy = "autoscaling.hvpa.dev/sized-by"
)

// MatchedAtAdmission reports whether a pod's annotations say that a sizing webhook, hvpa's or upstream's,
// matched it to an autoscaler with a recommendation when it was created: hvpa's AnnotationSizedBy (on every
// pod it admits for an autoscaler, whether or not it changed anything), upstream's AnnotationUpstreamUpdates
// (on every pod it patches a container of: every recommended container is patched, also to its own value).
func MatchedAtAdmission(annotations map[string]string) bool {
	return annotations[AnnotationSizedBy] != "" || annotations[AnnotationUpstreamUpdates] != ""
}

// SizedAtAdmission reports whether a pod's (or a template's) annotations say that an admission webhook,
// hvpa's or upstream's, changed its resources when it was created.
func SizedAtAdmission(annotations map[string]string) bool {
	up := annotations[AnnotationUpstreamUpdates]
	return annotations[AnnotationSizedResources] != "" || strings.Contains(up, " request") || strings.Contains(up, " limit")
}
