// Package podstore keeps what the recommender reads of every pod: names, labels, phase, each container's
// requests in force and OOM kills, and a kubelet eviction's message; a few hundred bytes a pod where a
// cached corev1.Pod, even stripped, costs about three kilobytes. Store is an informer of its own whose
// transform turns each pod into a Pod as it arrives; ClientLister reads through a client (tests, and
// programs without the store).
package podstore

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Pod is what the recommender reads of one pod. It is shared with the store: read only.
type Pod struct {
	Namespace, Name string
	UID             types.UID
	Labels          map[string]string // shared between pods with equal labels
	Phase           corev1.PodPhase
	// Ready is the pod's Ready condition: True while it serves (a Service sends it traffic); a container in
	// CrashLoopBackOff or a pod still starting is not ready.
	Ready bool
	// EvictionMessage is the kubelet's message when it evicted the pod (status.reason Evicted), else empty.
	EvictionMessage string
	// EvictedAt is when: the DisruptionTarget condition's transition, else the latest condition transition
	// (zero: unknown). Set only with EvictionMessage.
	EvictedAt  time.Time
	Containers []Container
	// Scheduling is where the pod may go (scaling.Scheduling: its nodeSelector, required node affinity and
	// tolerations; nil: none), shared between pods with equal ones (scaling.SchedulingKey). The node cap
	// reads it.
	Scheduling *corev1.PodSpec
}

// Container is one container of a Pod: spec.containers in order, then the sidecars (restartable init
// containers), which run beside them and are recommended for like them.
type Container struct {
	Name string
	// CPUMilli and MemoryBytes are the requests in force: status.resources after an in-place resize, else
	// the spec (0 when unset).
	CPUMilli, MemoryBytes float64
	// OOMKills are when the current and last state ended with OOMKilled (finishedAt; zero when the kubelet
	// did not say).
	OOMKills []time.Time
}

// Key is the pod's namespace and name.
func (p *Pod) Key() types.NamespacedName {
	return types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
}

// Container is the named container, nil when the pod has none of that name.
func (p *Pod) Container(name string) *Container {
	for i := range p.Containers {
		if p.Containers[i].Name == name {
			return &p.Containers[i]
		}
	}
	return nil
}

// Requests are a container's requests in force (millicores, bytes; 0 when unset or unknown).
func (p *Pod) Requests(container string) (cpuMilli, memoryBytes float64) {
	if c := p.Container(container); c != nil {
		return c.CPUMilli, c.MemoryBytes
	}
	return 0, 0
}

// GetObjectMeta lets the informer's store and indexes key a Pod (meta.Accessor).
func (p *Pod) GetObjectMeta() metav1.Object {
	return &metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name, UID: p.UID}
}

// From is what the recommender reads of p; p is not kept.
func From(p *corev1.Pod) *Pod {
	out := &Pod{Namespace: podMaps.share(p.Namespace), Name: p.Name, UID: p.UID, Labels: podMaps.labelMap(p.Labels), Phase: p.Status.Phase,
		Ready: IsReady(p)}
	if p.Status.Reason == "Evicted" {
		out.EvictionMessage, out.EvictedAt = p.Status.Message, evictedAt(p)
	}
	if key := scaling.SchedulingKey(&p.Spec); key != "" {
		out.Scheduling = podMaps.scheduling(key, &p.Spec)
	}
	out.Containers = make([]Container, 0, len(p.Spec.Containers))
	for i := range p.Spec.Containers {
		c := &p.Spec.Containers[i]
		out.Containers = append(out.Containers, Container{Name: podMaps.share(c.Name), CPUMilli: milli(c.Resources.Requests, corev1.ResourceCPU),
			MemoryBytes: value(c.Resources.Requests, corev1.ResourceMemory)})
	}
	sidecars := map[string]bool{}
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
			out.Containers = append(out.Containers, Container{Name: podMaps.share(c.Name), CPUMilli: milli(c.Resources.Requests, corev1.ResourceCPU),
				MemoryBytes: value(c.Resources.Requests, corev1.ResourceMemory)})
		}
	}
	statuses := p.Status.ContainerStatuses
	for _, cs := range p.Status.InitContainerStatuses {
		if sidecars[cs.Name] {
			statuses = append(statuses[:len(statuses):len(statuses)], cs)
		}
	}
	for i := range statuses {
		cs := &statuses[i]
		c := out.Container(cs.Name)
		if c == nil { // a status without its spec: its kills still count
			out.Containers = append(out.Containers, Container{Name: podMaps.share(cs.Name)})
			c = &out.Containers[len(out.Containers)-1]
		}
		if cs.Resources != nil { // resized in place: the status says what is in force
			if q, ok := cs.Resources.Requests[corev1.ResourceCPU]; ok {
				c.CPUMilli = float64(q.MilliValue())
			}
			if q, ok := cs.Resources.Requests[corev1.ResourceMemory]; ok {
				c.MemoryBytes = float64(q.Value())
			}
		}
		for _, st := range []corev1.ContainerState{cs.State, cs.LastTerminationState} {
			if t := vpav1.OOMKill(st); t != nil {
				c.OOMKills = append(c.OOMKills, t.FinishedAt.Time)
			}
		}
	}
	return out
}

func milli(l corev1.ResourceList, r corev1.ResourceName) float64 {
	if q, ok := l[r]; ok {
		return float64(q.MilliValue())
	}
	return 0
}

func value(l corev1.ResourceList, r corev1.ResourceName) float64 {
	if q, ok := l[r]; ok {
		return float64(q.Value())
	}
	return 0
}

// IsReady reports whether p's Ready condition is True (a Service sends it traffic).
func IsReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// evictedAt is when the kubelet evicted p: its DisruptionTarget condition's transition, else its latest
// condition transition (zero when none says).
func evictedAt(p *corev1.Pod) time.Time {
	var latest time.Time
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
		if c.LastTransitionTime.After(latest) {
			latest = c.LastTransitionTime.Time
		}
	}
	return latest
}
