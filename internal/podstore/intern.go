package podstore

import (
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/hvpa-dev/hvpa/scaling"
)

// interned shares equal maps between the pods the informers keep (Pods here, and the manager's stripped
// corev1.Pods). The pods of one ReplicaSet carry the same
// labels and, per container, the same requests and limits in spec and status (allocated resources, actual
// resources): five resource maps per container that each cost about 700 bytes however few entries they
// hold. Sharing one map per distinct value saves most of it at ten thousand pods. Cached objects are read
// only (a read through the client copies them), so a shared map is never written.
type interned struct {
	mu        sync.Mutex
	resources map[string]corev1.ResourceList
	labels    map[string]map[string]string
	strings   map[string]string // namespaces and container names
	sched     map[string]*corev1.PodSpec
}

// internLimit bounds each table: when it is full it starts anew (maps of deleted pods are not kept forever;
// the maps already shared stay shared).
const internLimit = 1 << 14

var podMaps = newInterned()

func newInterned() *interned {
	return &interned{resources: map[string]corev1.ResourceList{}, labels: map[string]map[string]string{}, strings: map[string]string{},
		sched: map[string]*corev1.PodSpec{}}
}

// share returns the shared string equal to s.
func (in *interned) share(s string) string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return intern(in.strings, s, s)
}

// ShareLabels returns the map shared by every pod with labels equal to m (m itself the first time). The
// result is read only.
func ShareLabels(m map[string]string) map[string]string { return podMaps.labelMap(m) }

// ShareResources returns the map shared by every container with resources equal to l (l itself the first
// time). The result is read only.
func ShareResources(l corev1.ResourceList) corev1.ResourceList { return podMaps.resourceList(l) }

// ShareRequirements shares the maps of a container's requirements.
func ShareRequirements(r *corev1.ResourceRequirements) { podMaps.requirements(r) }

// resourceList returns the shared map equal to l (l itself the first time).
func (in *interned) resourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		q := l[corev1.ResourceName(n)]
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(q.String())
		b.WriteByte(0)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return intern(in.resources, b.String(), l)
}

// labelMap returns the shared map equal to m (m itself the first time).
func (in *interned) labelMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(m[k])
		b.WriteByte(0)
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return intern(in.labels, b.String(), m)
}

func intern[M any](table map[string]M, key string, v M) M {
	if shared, ok := table[key]; ok {
		return shared
	}
	if len(table) >= internLimit {
		clear(table)
	}
	table[key] = v
	return v
}

// scheduling returns the shared scheduling constraints of key (scaling.Scheduling of spec the first time).
func (in *interned) scheduling(key string, spec *corev1.PodSpec) *corev1.PodSpec {
	in.mu.Lock()
	defer in.mu.Unlock()
	if shared, ok := in.sched[key]; ok {
		return shared
	}
	return intern(in.sched, key, scaling.Scheduling(spec))
}

// ShareScheduling keeps of s only what decides where its pod may go (scaling.Scheduling: tolerations,
// nodeSelector, required node affinity), shared between pods with equal ones. The result is read only.
func ShareScheduling(s *corev1.PodSpec) {
	shared := &corev1.PodSpec{}
	if key := scaling.SchedulingKey(s); key != "" {
		shared = podMaps.scheduling(key, s)
	}
	s.Tolerations, s.NodeSelector, s.Affinity = shared.Tolerations, shared.NodeSelector, shared.Affinity
}

// requirements shares the maps of a container's requirements.
func (in *interned) requirements(r *corev1.ResourceRequirements) {
	r.Requests, r.Limits = in.resourceList(r.Requests), in.resourceList(r.Limits)
}
