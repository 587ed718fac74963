package hvpa

// The Hvpa controller's cluster-wide permissions, from the API calls this package makes. `make manifests` turns
// these markers (with those of internal/workload) into charts/hvpa/files/rbac/hvpa.yaml, which the
// chart's ClusterRole renders. The chart adds what depends on its values: leader election, secure metrics and
// rbac.extraTargets. Every marker says what its verbs are for on the line above it (a chart test checks).

// Hvpas: get, list and watch (the reconcile queue and the cache it decides from; a status decided from a
// stale copy is refused by its resourceVersion), patch spec.replicas once (the HPA's input starts at the
// target's replicas).
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=hvpas,verbs=get;list;watch;patch

// Hvpa status: patch the decision, the intent (status.desired), conditions.
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=hvpas/status,verbs=patch

// Hvpa finalizers: the HPA's controller owner reference blocks the Hvpa's deletion (blockOwnerDeletion), which
// the API server allows only to who may update the owner's finalizers.
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=hvpas/finalizers,verbs=update

// VerticalPodAutoscalers: list and watch (a VPA that acts on an Hvpa's workload is a conflict).
// +kubebuilder:rbac:groups=autoscaling.k8s.io,resources=verticalpodautoscalers,verbs=list;watch

// HorizontalPodAutoscalers: the HPA each Hvpa owns on its scale subresource; list and watch (owned objects and
// conflicting HPAs), create, update from spec.hpa.template, delete when spec.hpa.deploy is off.
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=list;watch;create;update;delete

// Pods and LimitRanges: list and watch (the target's running pods and their resources; the bounds per
// namespace).
// +kubebuilder:rbac:groups="",resources=pods;limitranges,verbs=list;watch

// Scale subresources: get the target's replicas and update them to the decision.
// +kubebuilder:rbac:groups=apps,resources=deployments/scale;statefulsets/scale;replicasets/scale,verbs=get;update
// +kubebuilder:rbac:groups="",resources=replicationcontrollers/scale,verbs=get;update

// Core events: record every scaling (before -> after) and blocked decision on the Hvpa, in its namespace, and
// leader election's events about its Lease.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Nodes: list and watch (their allocatable and taints: the per-pod maxima are lowered to what the largest
// schedulable node holds, less what the DaemonSets there request, so the Hvpa scales out instead; DaemonSets
// are read with the targets' kinds).
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
