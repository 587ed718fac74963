package playedkubelet

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// PodsPerNode is the pod capacity of a played Node.
const PodsPerNode = 500

// Kubelet plays a node's kubelet: it owns one Node object and binds and runs the pods the test gives it.
type Kubelet struct {
	Client client.Client
	Node   string
}

// New creates the Node (with plenty of allocatable resources) and returns its played kubelet.
func New(ctx context.Context, c client.Client, node string) (*Kubelet, error) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node, Labels: map[string]string{"kubernetes.io/hostname": node}}}
	if err := c.Create(ctx, n); err != nil {
		return nil, fmt.Errorf("creating node %s: %w", node, err)
	}
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"),
		corev1.ResourcePods: *resource.NewQuantity(PodsPerNode, resource.DecimalSI)}
	n.Status = corev1.NodeStatus{Capacity: capacity, Allocatable: capacity,
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now(), Reason: "PlayedKubeletReady"}}}
	if err := c.Status().Update(ctx, n); err != nil {
		return nil, fmt.Errorf("node %s status: %w", node, err)
	}
	return &Kubelet{Client: c, Node: node}, nil
}

// Run creates the pod bound to this node and marks it Running and Ready, with every container running and
// its resources reported in status.
func (k *Kubelet) Run(ctx context.Context, pod *corev1.Pod) error {
	pod.Spec.NodeName = k.Node
	if err := k.Client.Create(ctx, pod); err != nil {
		return fmt.Errorf("creating pod %s: %w", pod.Name, err)
	}
	return k.MarkRunning(ctx, pod)
}

// MarkRunning writes a Running, Ready status for an existing pod.
func (k *Kubelet) MarkRunning(ctx context.Context, pod *corev1.Pod) error {
	setRunning(pod, metav1.Now())
	return k.Client.Status().Update(ctx, pod)
}

// setRunning makes pod's status Running and Ready since now, with every container running and its resources
// reported.
func setRunning(pod *corev1.Pod, now metav1.Time) {
	pod.Status.Phase = corev1.PodRunning
	pod.Status.StartTime = &now
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now}}
	pod.Status.ContainerStatuses = nil
	for _, c := range pod.Spec.Containers {
		res := c.Resources.DeepCopy()
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: ptrTrue(),
			State:     corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
			Resources: res, AllocatedResources: res.Requests,
		})
	}
}

// OOMKill records an OOM kill of one container at the given time, as the kubelet reports it: the container
// restarted, with the kill as its last termination state.
func (k *Kubelet) OOMKill(ctx context.Context, pod *corev1.Pod, container string, at time.Time) error {
	if err := k.Client.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		return err
	}
	for i := range pod.Status.ContainerStatuses {
		cs := &pod.Status.ContainerStatuses[i]
		if cs.Name != container {
			continue
		}
		cs.RestartCount++
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: vpav1.ReasonOOMKilled, StartedAt: metav1.NewTime(at.Add(-time.Hour)), FinishedAt: metav1.NewTime(at)}}
		cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at.Add(time.Second))}}
		return k.Client.Status().Update(ctx, pod)
	}
	return fmt.Errorf("pod %s has no container %s", pod.Name, container)
}

func ptrTrue() *bool { t := true; return &t }

// RunPending binds every pod of the namespace ("" for all) that has no node yet to this node and marks it Running, as a
// kubelet (and scheduler) would; it returns how many it started. Tests call it in a loop while controllers
// create pods.
func (k *Kubelet) RunPending(ctx context.Context, namespace string) (int, error) {
	pending := func(p *corev1.Pod) bool { return p.Spec.NodeName == "" && p.DeletionTimestamp == nil }
	return k.forEachPod(ctx, namespace, pending, func(p *corev1.Pod) (bool, error) {
		binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name},
			Target: corev1.ObjectReference{Kind: "Node", Name: k.Node}}
		if err := k.Client.SubResource("binding").Create(ctx, p, binding); err != nil {
			return false, fmt.Errorf("binding %s: %w", p.Name, err)
		}
		if err := k.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return false, err
		}
		return true, k.MarkRunning(ctx, p)
	})
}

// forEachPod lists the pods of namespace ("" all) and acts on each that selected picks; it returns how many
// acts did something, and stops at the first error.
func (k *Kubelet) forEachPod(ctx context.Context, namespace string, selected func(*corev1.Pod) bool, act func(*corev1.Pod) (bool, error)) (int, error) {
	var pods corev1.PodList
	if err := k.Client.List(ctx, &pods, client.InNamespace(namespace)); err != nil {
		return 0, err
	}
	n := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if !selected(p) {
			continue
		}
		did, err := act(p)
		if err != nil {
			return n, err
		}
		if did {
			n++
		}
	}
	return n, nil
}
