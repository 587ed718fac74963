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

// Taint adds taint to node name (one OnlyNodes made: cleanup deletes it).
func Taint(c client.Client, name string, taint corev1.Taint) {
	ginkgo.GinkgoHelper()
	n := &corev1.Node{}
	gomega.Expect(c.Get(context.Background(), client.ObjectKey{Name: name}, n)).To(gomega.Succeed())
	orig := n.DeepCopy()
	n.Spec.Taints = append(n.Spec.Taints, taint)
	gomega.Expect(c.Patch(context.Background(), n, client.MergeFrom(orig))).To(gomega.Succeed())
}

func setUnschedulable(c client.Client, name string, on bool) {
	ginkgo.GinkgoHelper()
	n := &corev1.Node{}
	gomega.Expect(c.Get(context.Background(), client.ObjectKey{Name: name}, n)).To(gomega.Succeed())
	orig := n.DeepCopy()
	n.Spec.Unschedulable = on
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
