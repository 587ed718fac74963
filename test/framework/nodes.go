package framework

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// OnlyNodes makes the cluster's schedulable nodes, for the rest of the spec, Nodes of the given allocatable
// cpu and memory (name -> {cpu, memory}): it creates them and cordons every other node (the played kubelet's
// node keeps running the pods bound to it; cordoning only takes it out of the node caps). Cleanup deletes them
// and uncordons the others.
func OnlyNodes(c client.Client, nodes map[string][2]string) {
	ginkgo.GinkgoHelper()
	ctx := context.Background()
	var existing corev1.NodeList
	gomega.Expect(c.List(ctx, &existing)).To(gomega.Succeed())
	for i := range existing.Items {
		n := &existing.Items[i]
		if n.Spec.Unschedulable {
			continue
		}
		name := n.Name
		setUnschedulable(c, name, true)
		ginkgo.DeferCleanup(func() { setUnschedulable(c, name, false) })
	}
	for name, res := range nodes {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}}}
		gomega.Expect(c.Create(ctx, n)).To(gomega.Succeed())
		ginkgo.DeferCleanup(func() { gomega.Expect(client.IgnoreNotFound(c.Delete(ctx, n))).To(gomega.Succeed()) })
		alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(res[0]), corev1.ResourceMemory: resource.MustParse(res[1]),
			corev1.ResourcePods: resource.MustParse("110")}
		n.Status = corev1.NodeStatus{Capacity: alloc, Allocatable: alloc,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), Reason: "PlayedKubeletReady"}}}
		gomega.Expect(c.Status().Update(ctx, n)).To(gomega.Succeed())
		// the API server taints a new node not-ready (NoSchedule); the node lifecycle controller, which does
		// not run here, removes the taint once the node is Ready
		orig := n.DeepCopy()
		n.Spec.Taints = nil
		gomega.Expect(c.Patch(ctx, n, client.MergeFrom(orig))).To(gomega.Succeed())
	}
}

// DedicatedPool makes the cluster's schedulable nodes a general node (prefix-general: 4 CPU, 16Gi) and a
// dedicated one (prefix-dedicated: 16 CPU, 64Gi) tainted hvpa.dev/dedicated=batch:NoExecute, and creates
// DaemonSet agent in ns (200m, 256Mi) that tolerates nothing, so the taint keeps it off the dedicated node.
// It returns the toleration of the taint (a pod with it may go to either node).
func DedicatedPool(c client.Client, ns, prefix string) corev1.Toleration {
	ginkgo.GinkgoHelper()
	OnlyNodes(c, map[string][2]string{prefix + "-general": {"4", "16Gi"}, prefix + "-dedicated": {"16", "64Gi"}})
	taint := corev1.Taint{Key: "hvpa.dev/dedicated", Value: "batch", Effect: corev1.TaintEffectNoExecute}
	patchNode(c, prefix+"-dedicated", func(n *corev1.Node) { n.Spec.Taints = append(n.Spec.Taints, taint) })
	CreateDaemonSet(c, ns, "agent", "200m", "256Mi")
	return corev1.Toleration{Key: taint.Key, Operator: corev1.TolerationOpEqual, Value: taint.Value, Effect: taint.Effect}
}

func setUnschedulable(c client.Client, name string, on bool) {
	ginkgo.GinkgoHelper()
	patchNode(c, name, func(n *corev1.Node) { n.Spec.Unschedulable = on })
}

// patchNode changes node name as change says, with a merge patch.
func patchNode(c client.Client, name string, change func(*corev1.Node)) {
	ginkgo.GinkgoHelper()
	n := &corev1.Node{}
	gomega.Expect(c.Get(context.Background(), client.ObjectKey{Name: name}, n)).To(gomega.Succeed())
	orig := n.DeepCopy()
	change(n)
	gomega.Expect(c.Patch(context.Background(), n, client.MergeFrom(orig))).To(gomega.Succeed())
}

// CreateDaemonSet creates DaemonSet name in ns, one container requesting cpu and memory on every node; cleanup
// deletes it.
func CreateDaemonSet(c client.Client, ns, name, cpu, memory string) {
	ginkgo.GinkgoHelper()
	labels := map[string]string{"app": name}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{wrappers.MakeContainer("agent").Requests(cpu, memory).Obj()}}}}}
	gomega.Expect(c.Create(context.Background(), ds)).To(gomega.Succeed())
	ginkgo.DeferCleanup(func() { gomega.Expect(client.IgnoreNotFound(c.Delete(context.Background(), ds))).To(gomega.Succeed()) })
}
