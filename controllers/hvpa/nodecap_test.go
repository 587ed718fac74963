package hvpa

import (
	"context"
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

func capNode(name, cpu string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("32Gi")}}}
}

func capDaemonSet(cpu string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "agent", Generation: 1},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}}}
}

// cpuRoom is the CPU room for a pod of spec (-1: none, no node it may go to).
func cpuRoom(ns *scaling.Nodes, spec *corev1.PodSpec) float64 {
	room := ns.RoomFor(spec)
	if room == nil {
		return -1
	}
	x, _ := room.Room.Get(scaling.CPU)
	return x
}

func roomCPU(t *testing.T, ns *scaling.Nodes) float64 {
	t.Helper()
	if ns == nil {
		t.Fatal("no nodes read")
	}
	room := ns.RoomFor(nil)
	if room == nil {
		t.Fatal("no room")
	}
	x, _ := room.Room.Get(scaling.CPU)
	return x
}

// TestNodeRoomsKeptUntilAChange: the nodes' room is read once and kept between reconciles until a Node or
// DaemonSet changes in what it reads (a node's labels, cordon, taints or allocatable; a DaemonSet's spec, or
// one added or deleted); a node's heartbeat or a DaemonSet's status reads nothing again. Unwatched, every ask
// reads again.
func TestNodeRoomsKeptUntilAChange(t *testing.T) {
	ctx := context.Background()
	node, ds := capNode("n1", "8"), capDaemonSet("500m")
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(node, ds).Build()
	informers := &informertest.FakeInformers{Scheme: testenv.Scheme()}
	var rooms nodeRooms
	if err := rooms.watch(ctx, informers); err != nil {
		t.Fatal(err)
	}
	nodeInf, _ := informers.FakeInformerFor(ctx, &corev1.Node{})
	dsInf, _ := informers.FakeInformerFor(ctx, &appsv1.DaemonSet{})
	if got := roomCPU(t, rooms.get(ctx, c)); got != 7500 {
		t.Fatalf("room %v, want 7500m (8 less the DaemonSet's 500m)", got)
	}
	set := func(obj client.Object) {
		t.Helper()
		status := obj.DeepCopyObject().(client.Object)
		status.SetResourceVersion("")
		if err := c.Status().Update(ctx, status); err != nil { // a node's allocatable
			t.Fatal(err)
		}
		obj.SetResourceVersion("")
		if err := c.Update(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	bigger := node.DeepCopy()
	bigger.Status.Allocatable[corev1.ResourceCPU] = resource.MustParse("16")
	set(bigger)
	heartbeat := node.DeepCopy()
	heartbeat.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	nodeInf.Update(node, heartbeat)
	statusOnly := ds.DeepCopy()
	statusOnly.Status.NumberReady = 1
	dsInf.Update(ds, statusOnly)
	if got := roomCPU(t, rooms.get(ctx, c)); got != 7500 {
		t.Errorf("after a heartbeat and a DaemonSet status: room %v, want the kept 7500m (nothing it reads changed)", got)
	}
	nodeInf.Update(node, bigger)
	if got := roomCPU(t, rooms.get(ctx, c)); got != 15500 {
		t.Errorf("after the node's allocatable changed: room %v, want 15500m", got)
	}
	changeNode := func(mutate func(*corev1.Node)) {
		t.Helper()
		old := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: "n1"}, old); err != nil {
			t.Fatal(err)
		}
		n := old.DeepCopy()
		mutate(n)
		set(n)
		nodeInf.Update(old, n)
	}
	tolerating := &corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}}}
	// in order: each starts from the cluster the one before left (n1: 16 CPU)
	for _, tc := range []struct {
		name   string
		asking *corev1.PodSpec // the pod whose room is asked for
		change func()
	}{
		{"DaemonSet spec", nil, func() {
			d := ds.DeepCopy()
			d.Generation = 2
			d.Spec.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1")
			set(d)
			dsInf.Update(ds, d)
		}},
		{"node added", nil, func() {
			n := capNode("n2", "32")
			if err := c.Create(ctx, n); err != nil {
				t.Fatal(err)
			}
			nodeInf.Add(n)
		}},
		{"node deleted", nil, func() {
			n := capNode("n2", "32")
			if err := c.Delete(ctx, n); err != nil {
				t.Fatal(err)
			}
			nodeInf.Delete(n)
		}},
		{"node labelled", &corev1.PodSpec{NodeSelector: map[string]string{"pool": "a"}}, func() {
			changeNode(func(n *corev1.Node) { n.Labels = map[string]string{"pool": "a"} })
		}},
		{"node tainted", nil, func() {
			changeNode(func(n *corev1.Node) {
				n.Spec.Taints = []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}
			})
		}},
		{"node cordoned", tolerating, func() { changeNode(func(n *corev1.Node) { n.Spec.Unschedulable = true }) }},
	} {
		before := cpuRoom(rooms.get(ctx, c), tc.asking)
		tc.change()
		if got := cpuRoom(rooms.get(ctx, c), tc.asking); got == before {
			t.Errorf("after %s: room %v, still the kept one", tc.name, got)
		}
	}

	var unwatched nodeRooms
	set(capNode("n1", "8")) // uncordoned, untainted
	if got := roomCPU(t, unwatched.get(ctx, c)); got != 7000 {
		t.Errorf("unwatched: room %v, want 7000m", got)
	}
	set(capNode("n1", "4"))
	if got := roomCPU(t, unwatched.get(ctx, c)); got != 3000 {
		t.Errorf("unwatched: room %v, want 3000m read again", got)
	}
}

// BenchmarkNodeRooms: what a reconcile pays for the node cap in a 1,000-node cluster with 20 DaemonSets, read
// from a cache: "kept" is the steady state (nothing the room reads changed since the last reconcile: one
// RoomFor of the kept nodes), "read" what every reconcile paid before (list and build, then RoomFor).
func BenchmarkNodeRooms(b *testing.B) {
	ctx := context.Background()
	var objs []client.Object
	for i := range 1000 {
		objs = append(objs, capNode(fmt.Sprintf("node-%04d", i), "8"))
	}
	for i := range 20 {
		ds := capDaemonSet("100m")
		ds.Name = fmt.Sprintf("agent-%d", i)
		objs = append(objs, ds)
	}
	informers := &informertest.FakeInformers{Scheme: testenv.Scheme()}
	c := &listCache{objs: objs}
	for name, watched := range map[string]bool{"kept": true, "read": false} {
		b.Run(name, func(b *testing.B) {
			var rooms nodeRooms
			if watched {
				if err := rooms.watch(ctx, informers); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if rooms.get(ctx, c).RoomFor(nil) == nil {
					b.Fatal("no room")
				}
			}
		})
	}
}

// listCache answers List as the manager's cache does with UnsafeDisableDeepCopy: the items it holds, copied
// shallowly into the list (the fake client serializes every object, which no cache does).
type listCache struct {
	client.Reader
	objs []client.Object
}

func (l *listCache) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	switch out := list.(type) {
	case *corev1.NodeList:
		for _, o := range l.objs {
			if n, ok := o.(*corev1.Node); ok {
				out.Items = append(out.Items, *n)
			}
		}
	case *appsv1.DaemonSetList:
		for _, o := range l.objs {
			if d, ok := o.(*appsv1.DaemonSet); ok {
				out.Items = append(out.Items, *d)
			}
		}
	}
	return nil
}
