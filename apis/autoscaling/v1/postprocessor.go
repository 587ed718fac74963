package v1

// IntegerCPUAnnotation is the annotation of upstream's integer-CPU post processor (its recommender's
// --cpu-integer-post-processor-enabled): a VPA annotated vpa-post-processor.kubernetes.io/<container>_integerCPU:
// "true" gets that container's CPU recommendation rounded up to whole cores (the kubelet's static CPU manager
// policy gives exclusive cores to Guaranteed containers with a whole number of them).
func IntegerCPUAnnotation(container string) string {
	return "vpa-post-processor.kubernetes.io/" + container + "_integerCPU"
}

// IntegerCPU reports whether a VPA's annotations ask container's CPU recommendation in whole cores (the
// annotation's value exactly "true", as upstream reads it).
func IntegerCPU(annotations map[string]string, container string) bool {
	return annotations[IntegerCPUAnnotation(container)] == "true"
}
