package scaling

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Node-aware caps: a pod sized beyond what any node can hold is never scheduled (an Infeasible resize, an
// eviction, a Pending replacement). NodeRoomOf says how much one pod can request and still fit the largest
// schedulable node; the VPA recommendation (recommender.FitNode) and the Hvpa decision (State.NodeRoom) stay
// within it.

// NodeRoom is, per resource, the requests one pod can have and still fit a schedulable node: the largest over
// the schedulable nodes of the node's allocatable less the requests of the DaemonSet pods that run there.
// Each resource is taken on its own (the node with the most cpu room may not be the one with the most memory
// room): the caps bound each resource, not a node's shape.
type NodeRoom struct {
	// Room per resource; a resource no schedulable node reports is unset (no cap).
	Room Values
	// Node, Allocatable and DaemonSets say where each resource's room comes from (for messages).
	Node        [NumResources]string
	Allocatable [NumResources]float64
	DaemonSets  [NumResources]float64
}

// Schedulable reports whether ordinary pods may be scheduled on n: not cordoned and without a NoSchedule or
// NoExecute taint (a node that needs a toleration, such as a control-plane node or a dedicated pool, does not
// count: a pod that tolerates it may go there, but the caps are for pods in general).
func Schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	return true
}

// PodRequests are a pod spec's effective requests as the scheduler counts them: the app containers and the
// sidecars together, or an init container with the sidecars started before it when that is more, plus the
// pod's overhead.
func PodRequests(spec *corev1.PodSpec) Values {
	var out Values
	for _, r := range Resources {
		name := r.ResourceName()
		amount := func(k *corev1.Container) float64 {
			if q, ok := k.Resources.Requests[name]; ok {
				return Amount(r, q)
			}
			return 0
		}
		sum, sidecars, initMax := 0.0, 0.0, 0.0
		for i := range spec.Containers {
			sum += amount(&spec.Containers[i])
		}
		for i := range spec.InitContainers {
			k := &spec.InitContainers[i]
			if k.RestartPolicy != nil && *k.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				sidecars += amount(k)
				continue
			}
			initMax = max(initMax, sidecars+amount(k))
		}
		total := max(sum+sidecars, initMax)
		if q, ok := spec.Overhead[name]; ok {
			total += Amount(r, q)
		}
		out.Set(r, total)
	}
	return out
}

// NodeRoomOf is the room of the largest schedulable node (nil: no schedulable node, so no cap). A DaemonSet
// counts on a node whose labels its pod template's nodeSelector matches (its affinity is not read: it counts
// wherever its nodeSelector allows, which may leave less room than there is, never more).
func NodeRoomOf(nodes []corev1.Node, daemonSets []appsv1.DaemonSet) *NodeRoom {
	sorted := make([]*corev1.Node, 0, len(nodes))
	for i := range nodes {
		if Schedulable(&nodes[i]) {
			sorted = append(sorted, &nodes[i])
		}
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	type daemon struct {
		sel      labels.Selector
		requests Values
	}
	daemons := make([]daemon, len(daemonSets))
	for i := range daemonSets {
		spec := &daemonSets[i].Spec.Template.Spec
		daemons[i] = daemon{labels.SelectorFromSet(spec.NodeSelector), PodRequests(spec)}
	}
	var out NodeRoom
	for _, n := range sorted {
		var taken Values
		for _, d := range daemons {
			if d.sel.Matches(labels.Set(n.Labels)) {
				taken = taken.Plus(d.requests)
			}
		}
		for _, r := range Resources {
			q, ok := n.Status.Allocatable[r.ResourceName()]
			if !ok {
				continue
			}
			alloc := Amount(r, q)
			ds, _ := taken.Get(r)
			room := max(alloc-ds, 0)
			if cur, had := out.Room.Get(r); !had || room > cur {
				out.Room.Set(r, room)
				out.Node[r], out.Allocatable[r], out.DaemonSets[r] = n.Name, alloc, ds
			}
		}
	}
	if out.Room.Empty() {
		return nil
	}
	return &out
}

// Plus is v + w per resource (set where either is).
func (v Values) Plus(w Values) Values {
	out := v
	for _, r := range Resources {
		if y, ok := w.Get(r); ok {
			x, _ := out.Get(r)
			out.Set(r, x+y)
		}
	}
	return out
}

// Explain says where the room of r comes from: "node n-8: allocatable 8, DaemonSets 200m".
func (n *NodeRoom) Explain(r Resource) string {
	return fmt.Sprintf("largest schedulable node %s: allocatable %s, DaemonSets %s", n.Node[r], Format(r, n.Allocatable[r]), Format(r, n.DaemonSets[r]))
}

// ContainerRoom is the room one container of a pod has on the largest node, per resource: the node's room
// less the requests of the pod's containers that are not scaled for that resource (fixed: app containers
// without a total, sidecars, in force) and less the other scaled containers at their values in force
// (others): with one scaled container it is exact; with several it assumes the others keep their values.
// Unset where the room is (no node reports the resource). Never below 0.
func (n *NodeRoom) ContainerRoom(fixed, others Values) Values {
	var out Values
	if n == nil {
		return out
	}
	for _, r := range Resources {
		room, ok := n.Room.Get(r)
		if !ok {
			continue
		}
		f, _ := fixed.Get(r)
		o, _ := others.Get(r)
		out.Set(r, max(room-f-o, 0))
	}
	return out
}

// minAllowedOf is the largest minAllowed per resource of the container policies that scale it.
func minAllowedOf(spec *Spec, cs []Container) Values {
	var out Values
	for _, k := range cs {
		pol := spec.PolicyFor(k.Name)
		for _, r := range Resources {
			lo, ok := pol.MinAllowed.Get(r)
			if f, _ := out.Get(r); ok && !pol.Off && pol.Controlled[r] {
				out.Set(r, max(f, lo))
			}
		}
	}
	return out
}

// usableRoom is room without the resources a pod at its minAllowed (floor) does not fit, or with none left:
// the cap would size pods below their minimum and take the workload to its most replicas, and no node holds
// such pods anyway (a DaemonSet counted on every node that only runs on some, a workload on a tainted
// pool), so the largest node sets no cap there.
func usableRoom(room, floor Values) Values {
	var out Values
	for _, r := range Resources {
		c, ok := room.Get(r)
		if f, _ := floor.Get(r); ok && c > 0 && c >= f {
			out.Set(r, c)
		}
	}
	return out
}

// nodeCappedIntervals are the spec's intervals with each per-pod maximum lowered to the room a scaled
// container has on the largest node (ContainerRoom, with the pod's containers in force): the totals then
// reach the next interval's replicas instead of pods no node holds (section 3 picks more replicas, section 4
// clamps to the lowered maximum). It also says which resources were lowered, and why, for CappedToNode.
func nodeCappedIntervals(spec *Spec, st State) ([]Interval, []string) {
	if st.NodeRoom == nil {
		return spec.Intervals, nil
	}
	var fixed, scaled, largest Values
	for _, k := range st.Containers {
		pol := spec.PolicyFor(k.Name)
		for _, r := range Resources {
			x, _ := k.Requests.Get(r)
			if pol.Off || !pol.Controlled[r] {
				fixed = fixed.Plus(V1(r, x))
				continue
			}
			scaled = scaled.Plus(V1(r, x))
			if l, _ := largest.Get(r); x > l || !largest.Has(r) {
				largest.Set(r, x)
			}
		}
	}
	for _, k := range st.InitContainers {
		if k.Kind == SidecarContainer { // beside the app containers all the time; init containers run before
			fixed = fixed.Plus(k.Requests)
		}
	}
	others := scaled
	for _, r := range Resources {
		s, _ := scaled.Get(r)
		l, _ := largest.Get(r)
		others.Set(r, s-l)
	}
	room := usableRoom(st.NodeRoom.ContainerRoom(fixed, others), minAllowedOf(spec, st.Containers))
	out := make([]Interval, len(spec.Intervals))
	var why []string
	for i, iv := range spec.Intervals {
		out[i] = iv
		for _, r := range Resources {
			c, ok := room.Get(r)
			if m, has := iv.MaxResources.Get(r); !ok || (has && m <= c) {
				continue
			}
			out[i].MaxResources.Set(r, c)
			if !slices.ContainsFunc(why, func(w string) bool { return strings.HasPrefix(w, r.String()+" ") }) {
				why = append(why, fmt.Sprintf("%s per pod at most %s (%s)", r, Format(r, c), st.NodeRoom.Explain(r)))
			}
		}
	}
	return out, why
}

// V1 is Values with only r set to x.
func V1(r Resource, x float64) Values {
	var v Values
	v.Set(r, x)
	return v
}
