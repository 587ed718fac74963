package recommender

// The recommender's cluster-wide permissions, from the API calls this package makes. `make manifests` turns
// these markers (with those of usage and internal/workload) into
// charts/hvpa/files/rbac/recommender.yaml, which the chart's ClusterRole renders. The chart adds what depends
// on its values: leader election, secure metrics and rbac.extraTargets. Every marker says what its verbs are
// for on the line above it (a chart test checks).

// VerticalPodAutoscalers: list and watch all of them (informer cache) to find those this recommender serves.
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=verticalpodautoscalers,verbs=list;watch

// VerticalPodAutoscaler status: patch status.recommendation and the conditions.
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=verticalpodautoscalers/status,verbs=patch

// Hvpas: list and watch (embedded recommendations for spec.vpa.deploy; one autoscaler per workload).
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=hvpas,verbs=list;watch

// Checkpoints (not cached): load the usage history at start and find those to collect (list), read one before
// its first write (get), create one per container, label one another recommender wrote before as this one's
// (update), delete those it wrote whose VerticalPodAutoscaler or Hvpa is gone (HvpaCheckpoints for Hvpas,
// which upstream's garbage collection never reaches; VerticalPodAutoscalerCheckpoints an earlier hvpa wrote
// for an Hvpa are moved).
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=verticalpodautoscalercheckpoints;hvpacheckpoints,verbs=get;list;create;update;patch;delete

// Checkpoint status: patch the saved histograms.
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=verticalpodautoscalercheckpoints/status;hvpacheckpoints/status,verbs=patch

// Pods: list and watch (which pods a VPA selects, their containers' requests, OOM kills and kubelet evictions
// under memory pressure in their status).
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch

// Events (events.k8s.io): record events on VerticalPodAutoscalers (e.g. NoPodsMatched), in their namespaces.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Nodes: list and watch (their allocatable and taints: a target is capped to what the largest schedulable node
// holds, less what the DaemonSets there request; DaemonSets are read with the targets' kinds).
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
