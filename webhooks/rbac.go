package webhooks

// The admission controller's cluster-wide permissions, from the API calls of this package and its pod and
// validation webhooks. `make manifests` turns these markers (with those of internal/workload) into
// charts/hvpa/files/rbac/admission.yaml, which the chart's ClusterRole renders. The chart adds what
// depends on its values: the admission Lease, the certificate Secret and webhook configurations (self-managed
// certificates), secure metrics and rbac.extraTargets. Every marker says what its verbs are for on the line
// above it (a chart test checks).

// VerticalPodAutoscalers and Hvpas: list and watch (informer cache) to find what sizes a new pod.
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=verticalpodautoscalers;hvpas,verbs=list;watch

// LimitRanges: list and watch (a sized pod stays within its namespace's LimitRange).
// +kubebuilder:rbac:groups="",resources=limitranges,verbs=list;watch
