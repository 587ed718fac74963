package scaling

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// Node-aware caps: a pod sized beyond what any node can hold is never scheduled (an Infeasible resize, an
// eviction, a Pending replacement). Nodes.RoomFor says how much one pod can request and still fit the largest
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

// schedulableFor reports whether a pod of spec (nil: one without constraints) may be scheduled on n, as the
// scheduler's filters say it: the pod tolerates n's NoSchedule and NoExecute taints, and its nodeSelector
// and required node affinity match n (a constraint that does not parse counts as matching: the API server
// refuses such pods, and a node is never dropped for it). A cordoned node never counts, even for a pod
// that tolerates node.kubernetes.io/unschedulable (it is being drained).
func schedulableFor(spec *corev1.PodSpec, n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	var tolerations []corev1.Toleration
	if spec != nil {
		tolerations = spec.Tolerations
	}
	if _, untolerated := v1helper.FindMatchingUntoleratedTaint(logr.Discard(), n.Spec.Taints, tolerations, blocksScheduling, true); untolerated {
		return false
	}
	return spec == nil || matchesNode(spec, n)
}

// blocksScheduling says whether a taint keeps pods that do not tolerate it off its node.
func blocksScheduling(t *corev1.Taint) bool {
	return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
}

// matchesNode reports whether spec's nodeSelector and required node affinity match n (true when they do not
// parse).
func matchesNode(spec *corev1.PodSpec, n *corev1.Node) bool {
	if len(spec.NodeSelector) == 0 && (spec.Affinity == nil || spec.Affinity.NodeAffinity == nil) {
		return true
	}
	ok, err := nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: *spec}).Match(n)
	return ok || err != nil
}

// daemonTolerations are the tolerations the DaemonSet controller adds to every daemon pod
// (AddOrUpdateDaemonPodTolerations in kubernetes' pkg/controller/daemon/util): daemon pods run on nodes under
// pressure, cordoned or not ready.
func daemonTolerations(spec *corev1.PodSpec) []corev1.Toleration {
	out := slices.Clone(spec.Tolerations)
	add := func(key string, effect corev1.TaintEffect) {
		out = append(out, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: effect})
	}
	add(corev1.TaintNodeNotReady, corev1.TaintEffectNoExecute)
	add(corev1.TaintNodeUnreachable, corev1.TaintEffectNoExecute)
	for _, key := range []string{corev1.TaintNodeDiskPressure, corev1.TaintNodeMemoryPressure, corev1.TaintNodePIDPressure, corev1.TaintNodeUnschedulable} {
		add(key, corev1.TaintEffectNoSchedule)
	}
	if spec.HostNetwork {
		add(corev1.TaintNodeNetworkUnavailable, corev1.TaintEffectNoSchedule)
	}
	return out
}

// runsDaemon reports whether a pod of the DaemonSet may run on n (its controller's nodeShouldRunDaemonPod,
// shouldContinueRunning: a NoExecute taint it does not tolerate evicts it, its nodeSelector and required
// node affinity must match; a NoSchedule taint it does not tolerate keeps new daemon pods off but leaves
// the ones already there, so it counts). A constraint that does not parse counts the daemon: never more
// room than there is.
func runsDaemon(spec *corev1.PodSpec, tolerations []corev1.Toleration, n *corev1.Node) bool {
	noExecute := func(t *corev1.Taint) bool { return t.Effect == corev1.TaintEffectNoExecute }
	if _, untolerated := v1helper.FindMatchingUntoleratedTaint(logr.Discard(), n.Spec.Taints, tolerations, noExecute, true); untolerated {
		return false
	}
	return matchesNode(spec, n)
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

// Nodes are the cluster's nodes with the room each leaves a pod: its allocatable less the requests of the
// DaemonSet pods that run there (read once); RoomFor picks the largest a given pod may be scheduled on.
type Nodes struct {
	nodes []roomOn
	mu    sync.Mutex
	memo  map[string]*NodeRoom // by the pod's scheduling constraints
}

// maxRoomMemo bounds the rooms a Nodes remembers by scheduling constraints (one per distinct set asked for).
const maxRoomMemo = 4096

// roomOn is one node that is not cordoned, and its room.
type roomOn struct {
	node             *corev1.Node
	alloc, daemonSet Values
}

// NewNodes reads the nodes' room: a DaemonSet counts on every node its controller runs its pod on (its
// nodeSelector, required node affinity and tolerations, with the ones the controller adds).
func NewNodes(nodes []corev1.Node, daemonSets []appsv1.DaemonSet) *Nodes {
	out := &Nodes{memo: map[string]*NodeRoom{}}
	type daemon struct {
		spec        *corev1.PodSpec
		tolerations []corev1.Toleration
		requests    Values
	}
	daemons := make([]daemon, len(daemonSets))
	for i := range daemonSets {
		spec := &daemonSets[i].Spec.Template.Spec
		daemons[i] = daemon{spec, daemonTolerations(spec), PodRequests(spec)}
	}
	for i := range nodes {
		n := &nodes[i]
		if n.Spec.Unschedulable {
			continue
		}
		on := roomOn{node: n}
		for _, d := range daemons {
			if runsDaemon(d.spec, d.tolerations, n) {
				on.daemonSet = on.daemonSet.Plus(d.requests)
			}
		}
		for _, r := range Resources {
			if q, ok := n.Status.Allocatable[r.ResourceName()]; ok {
				on.alloc.Set(r, Amount(r, q))
			}
		}
		out.nodes = append(out.nodes, on)
	}
	slices.SortFunc(out.nodes, func(a, b roomOn) int { return strings.Compare(a.node.Name, b.node.Name) })
	return out
}

// RoomFor is the room of the largest node a pod of spec may be scheduled on (schedulableFor; nil spec: a pod
// without constraints), per resource: nil when there is none (no cap).
func (ns *Nodes) RoomFor(spec *corev1.PodSpec) *NodeRoom {
	key := SchedulingKey(spec)
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if room, ok := ns.memo[key]; ok {
		return room
	}
	var out NodeRoom
	for _, on := range ns.nodes {
		if !schedulableFor(spec, on.node) {
			continue
		}
		for _, r := range Resources {
			alloc, ok := on.alloc.Get(r)
			if !ok {
				continue
			}
			ds, _ := on.daemonSet.Get(r)
			room := max(alloc-ds, 0)
			if cur, had := out.Room.Get(r); !had || room > cur {
				out.Room.Set(r, room)
				out.Node[r], out.Allocatable[r], out.DaemonSets[r] = on.node.Name, alloc, ds
			}
		}
	}
	var room *NodeRoom
	if !out.Room.Empty() {
		room = &out
	}
	if len(ns.memo) >= maxRoomMemo { // kept for long (the Hvpa controller's), it never grows past this
		clear(ns.memo)
	}
	ns.memo[key] = room
	return room
}

// SchedulingKey identifies what of spec decides where its pod may go (RoomFor reads it: its nodeSelector,
// required node affinity and tolerations), equal for equal ones; "" when it has none (nil spec too).
func SchedulingKey(spec *corev1.PodSpec) string {
	if !constrained(spec) {
		return ""
	}
	return schedulingText(spec.NodeSelector, requiredAffinity(spec), spec.Tolerations)
}

// constrained reports whether spec has anything that decides where its pod may go.
func constrained(spec *corev1.PodSpec) bool {
	return spec != nil && (len(spec.NodeSelector) > 0 || len(spec.Tolerations) > 0 || requiredAffinity(spec) != nil)
}

// Scheduling is what of spec decides where its pod may go, in a spec of its own (nil when it has none).
func Scheduling(spec *corev1.PodSpec) *corev1.PodSpec {
	if !constrained(spec) {
		return nil
	}
	out := &corev1.PodSpec{NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations}
	if required := requiredAffinity(spec); required != nil {
		out.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required}}
	}
	return out
}

func requiredAffinity(spec *corev1.PodSpec) *corev1.NodeSelector {
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
		return spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	if len(m) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(m))
}

// schedulingText writes the constraints out (the transform of every pod event computes it: no reflection for
// the tolerations and nodeSelector every pod has).
func schedulingText(selector map[string]string, required *corev1.NodeSelector, tolerations []corev1.Toleration) string {
	var b strings.Builder
	b.Grow(64 * (len(tolerations) + len(selector)))
	for _, t := range tolerations {
		b.WriteString(t.Key)
		b.WriteByte(0)
		b.WriteString(string(t.Operator))
		b.WriteByte(0)
		b.WriteString(t.Value)
		b.WriteByte(0)
		b.WriteString(string(t.Effect))
		b.WriteByte(0)
		if t.TolerationSeconds != nil {
			var n [20]byte
			b.Write(strconv.AppendInt(n[:0], *t.TolerationSeconds, 10))
		}
		b.WriteByte(1)
	}
	for _, k := range sortedKeys(selector) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(selector[k])
		b.WriteByte(2)
	}
	if required != nil {
		j, _ := json.Marshal(required)
		b.Write(j)
	}
	return b.String()
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
