package scaling

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

func node(name, cpu, memory string, labels map[string]string, mutate ...func(*corev1.Node)) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{}}}
	if cpu != "" {
		n.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		n.Status.Allocatable[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	for _, m := range mutate {
		m(&n)
	}
	return n
}

// nodeRoomOf is the room of the largest node a pod without scheduling constraints may go to.
func nodeRoomOf(nodes []corev1.Node, daemonSets []appsv1.DaemonSet) *NodeRoom {
	return NewNodes(nodes, daemonSets).RoomFor(nil)
}

func daemonSet(cpu, memory string, nodeSelector map[string]string, initCPU ...string) appsv1.DaemonSet {
	ds := appsv1.DaemonSet{}
	ds.Spec.Template.Spec.NodeSelector = nodeSelector
	ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: "agent", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}}}
	for _, c := range initCPU {
		ds.Spec.Template.Spec.InitContainers = append(ds.Spec.Template.Spec.InitContainers, corev1.Container{Name: "init",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(c)}}})
	}
	return ds
}

func TestNodeRoomOf(t *testing.T) {
	cordoned := func(n *corev1.Node) { n.Spec.Unschedulable = true }
	tainted := func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	}
	preferNot := func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule}}
	}
	pool := map[string]string{"pool": "big"}
	for _, tc := range []struct {
		name      string
		nodes     []corev1.Node
		ds        []appsv1.DaemonSet
		cpu       float64 // millicores; -1: no room (nil)
		memory    float64
		cpuNodeIs string
	}{
		{"no nodes: no cap", nil, nil, -1, -1, ""},
		{"the largest of three", []corev1.Node{node("a", "2", "8Gi", nil), node("b", "8", "32Gi", nil), node("c", "4", "64Gi", nil)}, nil,
			8000, 64 << 30, "b"},
		{"DaemonSets take their share on every node", []corev1.Node{node("a", "8", "32Gi", nil)},
			[]appsv1.DaemonSet{daemonSet("100m", "128Mi", nil), daemonSet("100m", "128Mi", nil)}, 7800, 32<<30 - 256<<20, "a"},
		{"a DaemonSet counts only where its nodeSelector matches", []corev1.Node{node("a", "8", "32Gi", nil), node("b", "8", "32Gi", pool)},
			[]appsv1.DaemonSet{daemonSet("2", "4Gi", pool)}, 8000, 32 << 30, "a"},
		{"a DaemonSet's init container counts when it asks for more", []corev1.Node{node("a", "8", "32Gi", nil)},
			[]appsv1.DaemonSet{daemonSet("100m", "0", nil, "1")}, 7000, 32 << 30, "a"},
		{"cordoned and NoSchedule-tainted nodes do not count", []corev1.Node{node("a", "4", "16Gi", nil), node("big", "64", "256Gi", nil, cordoned),
			node("cp", "32", "128Gi", nil, tainted)}, nil, 4000, 16 << 30, "a"},
		{"PreferNoSchedule still takes pods", []corev1.Node{node("a", "4", "16Gi", nil), node("spot", "16", "64Gi", nil, preferNot)}, nil,
			16000, 64 << 30, "spot"},
		{"DaemonSets larger than a node leave it no room", []corev1.Node{node("a", "1", "1Gi", nil)}, []appsv1.DaemonSet{daemonSet("2", "2Gi", nil)}, 0, 0, "a"},
		{"a node without memory allocatable caps cpu only", []corev1.Node{node("a", "4", "", nil)}, nil, 4000, -1, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			room := nodeRoomOf(tc.nodes, tc.ds)
			if tc.cpu < 0 {
				if room != nil {
					t.Fatalf("room %+v, want none", room.Room)
				}
				return
			}
			if room == nil {
				t.Fatal("no room")
			}
			if cpu, _ := room.Room.Get(CPU); cpu != tc.cpu {
				t.Errorf("cpu room %v, want %v", cpu, tc.cpu)
			}
			mem, ok := room.Room.Get(Memory)
			if (tc.memory < 0) == ok || (ok && mem != tc.memory) {
				t.Errorf("memory room %v (set %v), want %v", mem, ok, tc.memory)
			}
			if room.Node[CPU] != tc.cpuNodeIs || !strings.Contains(room.Explain(CPU), tc.cpuNodeIs) {
				t.Errorf("cpu room from %q (%s), want %q", room.Node[CPU], room.Explain(CPU), tc.cpuNodeIs)
			}
		})
	}
}

func TestPodRequests(t *testing.T) {
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	req := func(cpu string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
	}
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "sidecar", RestartPolicy: always, Resources: req("200m")}, {Name: "migrate", Resources: req("1")}},
		Containers:     []corev1.Container{{Name: "app", Resources: req("500m")}},
		Overhead:       corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")},
	}
	// app + sidecar = 700m; migrate runs with the sidecar: 1200m; the larger, plus the overhead
	if cpu, _ := PodRequests(spec).Get(CPU); cpu != 1250 {
		t.Errorf("pod cpu %v, want 1250", cpu)
	}
	spec.InitContainers[1].Resources = req("100m")
	if cpu, _ := PodRequests(spec).Get(CPU); cpu != 750 {
		t.Errorf("pod cpu %v, want 750 (app and sidecar, plus the overhead)", cpu)
	}
}

// TestDecideScalesOutAtTheNodeCap: a workload whose total would need 12 cpu per pod at its current replicas,
// on a cluster whose largest node has 8 allocatable (less 500m of DaemonSets), gets pods of at most 7500m and
// more replicas within its intervals, with CappedToNode.
func TestDecideScalesOutAtTheNodeCap(t *testing.T) {
	h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: hvpav1alpha1.HvpaSpec{
		TargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		ScalingIntervals: []hvpav1alpha1.ScalingInterval{
			{MaxReplicas: ptr.To[int32](1), MaxResources: &hvpav1alpha1.ScaledResources{CPU: ptr.To(resource.MustParse("16"))}},
			{MaxReplicas: ptr.To[int32](4), MaxResources: &hvpav1alpha1.ScaledResources{CPU: ptr.To(resource.MustParse("16"))}},
		}}}
	spec, errs := FromHvpa(h)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	st := State{Replicas: 1, Containers: []Container{{Name: "app", Requests: V(4000, -1)}, {Name: "proxy", Requests: V(250, -1)}},
		Recommendation: []Recommendation{{Name: "app", UncappedTarget: V(12000, -1)}}}
	spec.Policies = []ContainerPolicy{{Name: "proxy", Off: true}}
	room := nodeRoomOf([]corev1.Node{node("small", "4", "16Gi", nil), node("large", "8", "32Gi", nil)}, []appsv1.DaemonSet{daemonSet("500m", "256Mi", nil)})

	without, err := Decide(spec, st)
	if err != nil {
		t.Fatal(err)
	}
	if without.Replicas != 1 || cpuOf(without, "app") != 12000 {
		t.Fatalf("without node information: %d x %v, want 1 x 12 cpu (nothing caps it)", without.Replicas, cpuOf(without, "app"))
	}

	st.NodeRoom = room
	d, err := Decide(spec, st)
	if err != nil {
		t.Fatal(err)
	}
	// room on the large node: 8 - 500m DaemonSet - 250m proxy = 7250m per app container; 12 cpu > 1 x 7250m,
	// so the next interval (4 replicas, up to 29 cpu) holds it: 4 pods, each keeping at least what it has
	if d.Replicas != 4 {
		t.Errorf("replicas %d, want 4 (scale out instead of a pod no node holds)", d.Replicas)
	}
	if cpu := cpuOf(d, "app"); cpu > 7250 || cpu < 3000 {
		t.Errorf("app cpu per pod %v, want within the node's room 7250m", cpu)
	}
	var capped *Condition
	for i := range d.Conditions {
		if d.Conditions[i].Type == hvpav1alpha1.ConditionCappedToNode {
			capped = &d.Conditions[i]
		}
	}
	if capped == nil || capped.Status != "True" || !strings.Contains(capped.Message, "cpu per pod at most 7250m (largest schedulable node large: allocatable 8, DaemonSets 500m)") {
		t.Errorf("CappedToNode %+v, want True naming the node and the room", capped)
	}
	for _, iv := range d.Intervals {
		if up := iv.Up[CPU]; up > float64(iv.Replicas)*7250 {
			t.Errorf("interval %d up %v: above %d pods of the node's room", iv.Replicas, up, iv.Replicas)
		}
	}
}

func cpuOf(d Decision, name string) float64 {
	for _, c := range d.Containers {
		if c.Name == name {
			x, _ := c.Requests.Get(CPU)
			return x
		}
	}
	return -1
}

// BenchmarkNodeRoomOf: the room of the largest node of a 1,000-node cluster with 20 DaemonSets (half of them
// on a node pool), as the Hvpa controller reads it at every decision.
func BenchmarkNodeRoomOf(b *testing.B) {
	var nodes []corev1.Node
	for i := range 1000 {
		labels := map[string]string{"kubernetes.io/hostname": "n", "pool": []string{"a", "b"}[i%2]}
		nodes = append(nodes, node("node-"+strings.Repeat("x", i%7)+string(rune('a'+i%26)), "8", "32Gi", labels))
	}
	var ds []appsv1.DaemonSet
	for i := range 20 {
		var sel map[string]string
		if i%2 == 0 {
			sel = map[string]string{"pool": "a"}
		}
		ds = append(ds, daemonSet("100m", "128Mi", sel))
	}
	b.ReportAllocs()
	for b.Loop() {
		if nodeRoomOf(nodes, ds) == nil {
			b.Fatal("no room")
		}
	}
}

// TestNodeCapBelowThePodsMinimum: a largest node with no room for a pod at its minimum (none at all, or less
// than the container policy's minAllowed) sets no cap: capping there sized pods at 0 cpu and took the
// workload to its most replicas (found in review), and no node would hold such pods anyway.
func TestNodeCapBelowThePodsMinimum(t *testing.T) {
	for name, tc := range map[string]struct {
		room, minAllowed float64
	}{"no room": {0, -1}, "less than minAllowed": {200, 300}} {
		s := epSpec()
		if tc.minAllowed > 0 {
			s.Policies = []ContainerPolicy{{Name: "*", Controlled: [NumResources]bool{true, true}, ControlledValues: RequestsAndLimits, MinAllowed: V(tc.minAllowed, -1)}}
		}
		st := vpaState(2, V(800, gi), 1600, 2*gi)
		want := mustDecide(t, s, st)
		st.NodeRoom = &NodeRoom{Room: V(tc.room, 64*gi)}
		d := mustDecide(t, s, st)
		if d.Replicas != want.Replicas || request(t, d, "app", CPU) != request(t, want, "app", CPU) {
			t.Errorf("%s: %d replicas of %.0fm, want %d of %.0fm as without the node", name, d.Replicas, request(t, d, "app", CPU), want.Replicas, request(t, want, "app", CPU))
		}
	}
}

// TestNodeRoomForAPod: the room is the largest node the workload's pod may be scheduled on (its tolerations,
// nodeSelector and required node affinity, as the scheduler's filters read them), and a DaemonSet counts on
// the nodes its controller runs it on (its required node affinity and tolerations too, with the ones the
// controller adds). Found in review: tainted nodes never counted, so a workload on a tolerated dedicated pool
// was capped to the general pool's room, and a DaemonSet limited by node affinity counted on every node.
func TestNodeRoomForAPod(t *testing.T) {
	gpu := func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoExecute}}
	}
	notReady := func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoSchedule}, {Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}}
	}
	gpuPool := map[string]string{"pool": "gpu"}
	nodes := []corev1.Node{node("general", "8", "32Gi", map[string]string{"pool": "general"}), node("gpu-1", "32", "128Gi", gpuPool, gpu),
		node("down", "64", "256Gi", map[string]string{"pool": "general"}, notReady)}
	tolerateGPU := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoExecute},
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)}}
	inPool := func(pool string) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{pool}}}}}}}}
	}
	// an agent on the GPU pool only (by affinity, tolerating its taint), one on every node that tolerates nothing
	gpuAgent := daemonSet("4", "8Gi", nil)
	gpuAgent.Spec.Template.Spec.Affinity, gpuAgent.Spec.Template.Spec.Tolerations = inPool("gpu"), tolerateGPU[:1]
	everywhere := daemonSet("500m", "1Gi", nil)
	ns := NewNodes(nodes, []appsv1.DaemonSet{gpuAgent, everywhere})
	for _, tc := range []struct {
		name string
		pod  *corev1.PodSpec
		cpu  float64 // -1: no room
		from string
	}{
		// the GPU node's taint keeps it out, and the not-ready node's: general's 8 less the agent everywhere
		// (which does not tolerate the GPU taint, so it never counted there)
		{"a pod without constraints", nil, 7500, "general"},
		{"a pod with the default tolerations only", &corev1.PodSpec{Tolerations: tolerateGPU[1:]}, 7500, "general"},
		// the GPU pool is its: 32 less the GPU agent's 4 (the agent everywhere does not tolerate the taint)
		{"a pod that tolerates the GPU pool", &corev1.PodSpec{Tolerations: tolerateGPU}, 28000, "gpu-1"},
		{"a pod held to the general pool by its nodeSelector", &corev1.PodSpec{Tolerations: tolerateGPU, NodeSelector: map[string]string{"pool": "general"}}, 7500, "general"},
		{"a pod held to the GPU pool by its affinity", &corev1.PodSpec{Tolerations: tolerateGPU, Affinity: inPool("gpu")}, 28000, "gpu-1"},
		{"a pod whose affinity no node matches: no cap", &corev1.PodSpec{Affinity: inPool("arm")}, -1, ""},
	} {
		room := ns.RoomFor(tc.pod)
		if tc.cpu < 0 {
			if room != nil {
				t.Errorf("%s: room %+v from %v, want none", tc.name, room.Room, room.Node)
			}
			continue
		}
		if room == nil {
			t.Errorf("%s: no room, want %.0fm from %s", tc.name, tc.cpu, tc.from)
			continue
		}
		if cpu, _ := room.Room.Get(CPU); cpu != tc.cpu || room.Node[CPU] != tc.from {
			t.Errorf("%s: %.0fm from %s, want %.0fm from %s", tc.name, cpu, room.Node[CPU], tc.cpu, tc.from)
		}
	}
	// a DaemonSet's pods run on cordoned nodes and nodes under pressure (the tolerations its controller adds);
	// on a node whose taint it does not tolerate it takes nothing
	pressure := node("a", "8", "32Gi", nil, func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeMemoryPressure, Effect: corev1.TaintEffectNoSchedule}}
	})
	tolerates := &corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists}}}
	if room := NewNodes([]corev1.Node{pressure}, []appsv1.DaemonSet{everywhere}).RoomFor(tolerates); room == nil || room.DaemonSets[CPU] != 500 {
		t.Errorf("a node under memory pressure: %+v, want the DaemonSet's 500m counted there", room)
	}
	// a NoSchedule taint the DaemonSet does not tolerate keeps new daemon pods off, not the ones already there
	// (its controller's shouldContinueRunning): they count, never more room than there is
	noSchedule := node("b", "8", "32Gi", nil, func(n *corev1.Node) {
		n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	})
	if room := NewNodes([]corev1.Node{noSchedule}, []appsv1.DaemonSet{everywhere}).RoomFor(&corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}}); room == nil || room.DaemonSets[CPU] != 500 {
		t.Errorf("a NoSchedule-tainted node: %+v, want the DaemonSet's 500m counted there", room)
	}
}
