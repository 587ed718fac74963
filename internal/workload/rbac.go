package workload

// The permissions of the resolver, which every component uses; `make manifests` adds them to each component's
// generated ClusterRole (charts/hvpa/files/rbac). Targets of other kinds are the chart's rbac.extraTargets.

// Workloads: list and watch the well-known kinds (a VPA's or Hvpa's target and its pod selector, a pod's owner
// chain up to its top-most controller) into the cache; get what the cache has not seen yet.
// +kubebuilder:rbac:groups=apps,resources=deployments;statefulsets;replicasets;daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=replicationcontrollers,verbs=get;list;watch
