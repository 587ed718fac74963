package manager

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheOptions is what the manager's informers keep: every object without its managedFields, and pods
// without what no component reads (volumes, scheduling constraints, and the containers' commands,
// environment, probes, mounts and security settings), so that ten thousand pods cost little memory.
// Names, labels, annotations, owners, resources and the whole status stay.
func CacheOptions() cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: StripPod}},
	}
}

// lastApplied is kubectl's copy of the whole manifest, often the largest annotation of a pod.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// StripPod is the pod transform of CacheOptions.
func StripPod(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil // a tombstone (DeletedFinalStateUnknown) passes as it is
	}
	p.ManagedFields = nil
	delete(p.Annotations, lastApplied)
	s := &p.Spec
	s.Volumes, s.Affinity, s.Tolerations, s.TopologySpreadConstraints = nil, nil, nil, nil
	s.SecurityContext, s.ImagePullSecrets, s.HostAliases, s.ReadinessGates = nil, nil, nil, nil
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			c := &cs[i]
			c.Command, c.Args, c.Env, c.EnvFrom, c.Ports = nil, nil, nil, nil, nil
			c.VolumeMounts, c.VolumeDevices = nil, nil
			c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle, c.SecurityContext = nil, nil, nil, nil, nil
		}
	}
	s.EphemeralContainers = nil
	return p, nil
}
