package app

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/podstore"
)

// CacheOptions is what the manager's informers keep: every object without its managedFields, and pods
// without what no component reads (volumes, scheduling and DNS settings but where the pod may go, the
// containers' images, commands, environment, probes, mounts and security settings, and the status's
// addresses and image and container IDs), so that ten thousand pods cost little memory; equal labels,
// resource maps and scheduling constraints are shared between pods (interned). Names, labels, annotations,
// owners, resources, resize policies, tolerations, nodeSelector and required node affinity (the node cap),
// phase, conditions, QoS class and the containers' states, restarts and resources stay.
func CacheOptions() cache.Options {
	return cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject:         map[client.Object]cache.ByObject{&corev1.Pod{}: {Transform: StripPod}, &corev1.Node{}: {Transform: StripNode}},
	}
}

// ClientOptions is how the manager's client reads: from the informers, except Events (written only) and
// checkpoints (VerticalPodAutoscalerCheckpoints and HvpaCheckpoints), which the recommender lists once at start and at each garbage collection
// and otherwise only writes: an informer would keep every container's histograms in memory for nothing
// (about 5 MB at 1,000 VPAs) and receive each of its own writes back.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Event{}, &vpav1.VerticalPodAutoscalerCheckpoint{}, &hvpav1alpha1.HvpaCheckpoint{}}}}
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
	p.Labels = podstore.ShareLabels(p.Labels)
	s := &p.Spec
	podstore.ShareScheduling(s) // the node cap reads where the pods may go
	s.Volumes, s.TopologySpreadConstraints = nil, nil
	s.SecurityContext, s.ImagePullSecrets, s.HostAliases, s.ReadinessGates = nil, nil, nil, nil
	s.DNSConfig, s.SchedulingGates, s.ResourceClaims = nil, nil, nil
	s.DNSPolicy, s.SchedulerName, s.ServiceAccountName, s.DeprecatedServiceAccount = "", "", "", ""
	s.Hostname, s.Subdomain, s.PriorityClassName, s.RuntimeClassName = "", "", "", nil
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			c := &cs[i]
			c.Image, c.ImagePullPolicy, c.WorkingDir, c.TerminationMessagePath, c.TerminationMessagePolicy = "", "", "", "", ""
			c.Command, c.Args, c.Env, c.EnvFrom, c.Ports = nil, nil, nil, nil, nil
			c.VolumeMounts, c.VolumeDevices = nil, nil
			c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle, c.SecurityContext = nil, nil, nil, nil, nil
			podstore.ShareRequirements(&c.Resources)
		}
	}
	s.EphemeralContainers = nil
	st := &p.Status
	st.HostIP, st.HostIPs, st.PodIP, st.PodIPs, st.NominatedNodeName = "", nil, "", nil, ""
	st.EphemeralContainerStatuses, st.ResourceClaimStatuses = nil, nil
	for _, css := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range css {
			c := &css[i]
			c.Image, c.ImageID, c.ContainerID = "", "", ""
			c.VolumeMounts, c.User, c.AllocatedResourcesStatus = nil, nil, nil
			c.AllocatedResources = podstore.ShareResources(c.AllocatedResources)
			if c.Resources != nil {
				podstore.ShareRequirements(c.Resources)
			}
			for _, state := range []*corev1.ContainerState{&c.State, &c.LastTerminationState} {
				if state.Terminated != nil {
					state.Terminated.ContainerID = ""
				}
			}
		}
	}
	return p, nil
}

// StripNode is the node transform of CacheOptions: the node cap reads only a node's name, labels, whether it
// is cordoned, its taints and its allocatable; the images list (often the largest part), addresses, volumes,
// system info and annotations are dropped.
func StripNode(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil // a tombstone passes as it is
	}
	n.ManagedFields, n.Annotations = nil, nil
	st := &n.Status
	st.Images, st.Addresses, st.VolumesAttached, st.VolumesInUse = nil, nil, nil, nil
	st.NodeInfo, st.Capacity, st.Conditions, st.Config = corev1.NodeSystemInfo{}, nil, nil, nil
	st.DaemonEndpoints, st.RuntimeHandlers, st.Features = corev1.NodeDaemonEndpoints{}, nil, nil
	return n, nil
}
