package usage

// The permission the metrics.k8s.io source needs; `make manifests` adds it to the recommender's generated
// ClusterRole (charts/hvpa/files/rbac/recommender.yaml).

// Resource metrics: list the pods' container usage (metrics.k8s.io, served by metrics-server).
// +kubebuilder:rbac:groups=metrics.k8s.io,resources=pods,verbs=list
