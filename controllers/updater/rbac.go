package updater

// The updater's cluster-wide permissions, from the API calls this package makes. `make manifests` turns these
// markers (with those of internal/workload) into charts/hvpa/files/rbac/updater.yaml, which the chart's
// ClusterRole renders. The chart adds what depends on its values: leader election, the admission Lease, the
// loop records ConfigMap, secure metrics and rbac.extraTargets. Every marker says what its verbs are for on the
// line above it (a chart test checks).

// VerticalPodAutoscalers and Hvpas: list and watch (the recommendations and intents to bring pods to).
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=verticalpodautoscalers;hvpas,verbs=list;watch

// Pods and LimitRanges: list and watch (the pods to update; the bounds per namespace).
// +kubebuilder:rbac:groups="",resources=pods;limitranges,verbs=list;watch

// Pods: create, only as a server-side dry run (dryRun=All, nothing is stored) of an evicted pod's replacement
// with its new resources: the pod is evicted only if the API server would admit that (policies, webhooks,
// LimitRanges). RBAC cannot restrict a verb to dry runs: the chart's ValidatingAdmissionPolicy
// (templates/updaterpolicy.yaml) refuses the updater's identity every pod create that is not one. Without
// this permission the updater does not evict (DryRunForbiddenError).
// +kubebuilder:rbac:groups="",resources=pods,verbs=create

// metrics.k8s.io pods: list, in a namespace, before a resize lowers a memory limit (never to or below the
// container's usage).
// +kubebuilder:rbac:groups=metrics.k8s.io,resources=pods,verbs=list

// pods/resize: patch a running pod's resources in place (InPlaceOrRecreate, InPlace), and end startup boosts.
// +kubebuilder:rbac:groups="",resources=pods/resize,verbs=patch

// pods/eviction: evict through the Eviction API, which honours PodDisruptionBudgets (Recreate, Auto, fallback).
// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create

// Scale subresources: get a target's desired replicas (the eviction tolerance is a share of them).
// +kubebuilder:rbac:groups=apps,resources=deployments/scale;statefulsets/scale;replicasets/scale,verbs=get
// +kubebuilder:rbac:groups="",resources=replicationcontrollers/scale,verbs=get

// Core events: record every resize, eviction and skipped update on the pod and its VPA or Hvpa (in their
// namespace), and leader election's events about its Lease.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
