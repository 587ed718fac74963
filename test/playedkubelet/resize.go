package playedkubelet

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/scaling"
)

// AnswerLabel on a pod tells AnswerByLabel how to answer its resizes: "accept" (or no label), "infeasible",
// "deferred" or "ignore".
const AnswerLabel = "played.hvpa.dev/resize"

// AnswerByLabel answers a pod's resize as its AnswerLabel says; suites pass it to Loop or AnswerResizes.
func AnswerByLabel(p *corev1.Pod) ResizeAnswer {
	switch p.Labels[AnswerLabel] {
	case "infeasible":
		return ResizeInfeasible
	case "deferred":
		return ResizeDeferred
	case "ignore":
		return ResizeIgnore
	}
	return ResizeAccept
}

// ResizeAnswer is how the played kubelet answers a pending resize of one pod.
type ResizeAnswer int

const (
	// ResizeAccept actuates the resize at once: the container status resources (and allocatedResources)
	// become the spec, and the resize conditions are removed.
	ResizeAccept ResizeAnswer = iota
	// ResizeInfeasible marks the resize PodResizePending, reason Infeasible (it can never fit this node).
	ResizeInfeasible
	// ResizeDeferred marks the resize PodResizePending, reason Deferred (it may fit later).
	ResizeDeferred
	// ResizeInProgress allocates the resize (allocatedResources := spec requests, PodResizePending removed)
	// and marks it PodResizeInProgress, without actuating it: status resources stay the old ones, so a later
	// AnswerResizes sees the pod again and can Accept it.
	ResizeInProgress
	// ResizeIgnore leaves the pod as it is, as a kubelet that has not looked yet.
	ResizeIgnore
)

func (a ResizeAnswer) String() string {
	switch a {
	case ResizeAccept:
		return "Accept"
	case ResizeInfeasible:
		return "Infeasible"
	case ResizeDeferred:
		return "Deferred"
	case ResizeInProgress:
		return "InProgress"
	case ResizeIgnore:
		return "Ignore"
	}
	return fmt.Sprintf("ResizeAnswer(%d)", int(a))
}

// AnswerResizes finds the Running pods of namespace ("" all) bound to this node, not terminating, whose spec
// container resources differ from status.containerStatuses[].resources, and answers each per answer(pod):
//
//   - Accept: status resources and allocatedResources := spec (the resize is done); the PodResizePending and
//     PodResizeInProgress conditions are removed. A container is not restarted (restartCount unchanged)
//     unless its resizePolicy for a changed resource says RestartContainer; then, as the kubelet does, its
//     restartCount grows by one, its last termination state is a Completed exit and it runs again from now.
//   - Infeasible / Deferred: condition PodResizePending True with reason corev1.PodReasonInfeasible /
//     corev1.PodReasonDeferred and a message; its lastTransitionTime is kept when the condition already had
//     the same status and reason, so how long a resize has been deferred is measurable.
//   - InProgress: see ResizeInProgress; the condition's lastTransitionTime is kept if it was already True.
//   - Ignore: nothing.
//
// Every answer except Ignore also sets status.observedGeneration (and the resize conditions'
// observedGeneration) to the pod's metadata.generation, as the kubelet does. status.qosClass is never
// touched. Only regular containers (spec.containers) are compared; init containers and pod-level resources
// are not. The status is written through the status subresource, re-reading the pod on conflicts. It returns
// how many pods it answered (Ignore does not count).
func (k *Kubelet) AnswerResizes(ctx context.Context, namespace string, answer func(*corev1.Pod) ResizeAnswer) (int, error) {
	return k.forEachPod(ctx, namespace, k.resizePending, func(p *corev1.Pod) (bool, error) {
		answered := false
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			answered = false
			if err := k.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				return err
			}
			if !k.resizePending(p) {
				return nil
			}
			a := answer(p)
			if a == ResizeIgnore {
				return nil
			}
			applyResizeAnswer(p, a, metav1.Now())
			if err := k.Client.Status().Update(ctx, p); err != nil {
				return err
			}
			answered = true
			return nil
		})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("answering the resize of pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		return answered, nil
	})
}

// resizePending: the pod is this node's, Running, not terminating, and some container's spec resources
// differ from its status resources.
func (k *Kubelet) resizePending(p *corev1.Pod) bool {
	if p.Spec.NodeName != k.Node || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Spec.Containers {
		cs := containerStatus(p, c.Name)
		if cs == nil {
			continue // not started: nothing to resize
		}
		if !sameResources(c.Resources, cs.Resources) {
			return true
		}
	}
	return false
}

func applyResizeAnswer(p *corev1.Pod, a ResizeAnswer, now metav1.Time) {
	p.Status.ObservedGeneration = p.Generation
	switch a {
	case ResizeAccept:
		for _, c := range p.Spec.Containers {
			cs := containerStatus(p, c.Name)
			if cs == nil || sameResources(c.Resources, cs.Resources) {
				continue
			}
			if needsRestart(c, cs.Resources) {
				cs.RestartCount++
				started := now
				if cs.State.Running != nil {
					started = cs.State.Running.StartedAt
				}
				cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: now}}
				cs.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
			}
			res := c.Resources.DeepCopy()
			res.Claims = nil
			cs.Resources = res
			cs.AllocatedResources = res.Requests.DeepCopy()
		}
		removeCondition(p, corev1.PodResizePending)
		removeCondition(p, corev1.PodResizeInProgress)
	case ResizeInfeasible, ResizeDeferred:
		reason, msg := corev1.PodReasonDeferred, "played kubelet: the resize is deferred, node "+p.Spec.NodeName+" has no room for it now"
		if a == ResizeInfeasible {
			reason, msg = corev1.PodReasonInfeasible, "played kubelet: the resize does not fit node "+p.Spec.NodeName
		}
		setCondition(p, corev1.PodCondition{Type: corev1.PodResizePending, Status: corev1.ConditionTrue, Reason: reason, Message: msg}, now)
	case ResizeInProgress:
		for _, c := range p.Spec.Containers {
			if cs := containerStatus(p, c.Name); cs != nil {
				cs.AllocatedResources = c.Resources.Requests.DeepCopy()
			}
		}
		removeCondition(p, corev1.PodResizePending)
		setCondition(p, corev1.PodCondition{Type: corev1.PodResizeInProgress, Status: corev1.ConditionTrue}, now)
	}
}

func containerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

// sameResources compares requests and limits semantically (1000m == 1, 1Gi == 1073741824); a nil status is
// the same as empty requirements.
func sameResources(spec corev1.ResourceRequirements, status *corev1.ResourceRequirements) bool {
	if status == nil {
		status = &corev1.ResourceRequirements{}
	}
	return scaling.SameResourceList(spec.Requests, status.Requests) && scaling.SameResourceList(spec.Limits, status.Limits)
}

// needsRestart: a resource whose request or limit changes has resizePolicy RestartContainer.
func needsRestart(c corev1.Container, old *corev1.ResourceRequirements) bool {
	if old == nil {
		old = &corev1.ResourceRequirements{}
	}
	for _, rp := range c.ResizePolicy {
		if rp.RestartPolicy != corev1.RestartContainer {
			continue
		}
		if !sameQuantity(c.Resources.Requests, old.Requests, rp.ResourceName) || !sameQuantity(c.Resources.Limits, old.Limits, rp.ResourceName) {
			return true
		}
	}
	return false
}

func sameQuantity(a, b corev1.ResourceList, name corev1.ResourceName) bool {
	qa, oka := a[name]
	qb, okb := b[name]
	if oka != okb {
		return false
	}
	return !oka || qa.Cmp(qb) == 0
}

// setCondition sets c (with observedGeneration and lastTransitionTime); an existing condition of the type
// keeps its lastTransitionTime when its status and reason are unchanged.
func setCondition(p *corev1.Pod, c corev1.PodCondition, now metav1.Time) {
	c.ObservedGeneration = p.Generation
	c.LastProbeTime = now
	c.LastTransitionTime = now
	for i := range p.Status.Conditions {
		old := &p.Status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if old.Status == c.Status && old.Reason == c.Reason && !old.LastTransitionTime.IsZero() {
			c.LastTransitionTime = old.LastTransitionTime
		}
		*old = c
		return
	}
	p.Status.Conditions = append(p.Status.Conditions, c)
}

func removeCondition(p *corev1.Pod, t corev1.PodConditionType) {
	out := p.Status.Conditions[:0]
	for _, c := range p.Status.Conditions {
		if c.Type != t {
			out = append(out, c)
		}
	}
	p.Status.Conditions = out
}

// ResizeCondition returns the pod's PodResizePending or PodResizeInProgress condition, or nil.
func ResizeCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// FinishTerminating deletes (grace period 0) every pod of namespace ("" all) on this node that has a
// deletionTimestamp, as a kubelet does once its containers stopped; it returns how many. The delete is
// preconditioned on the pod's UID, so a pod recreated under the same name (a StatefulSet's) is left alone.
// A pod that still has finalizers stays (the API server removes it once they are gone) but is counted.
func (k *Kubelet) FinishTerminating(ctx context.Context, namespace string) (int, error) {
	terminating := func(p *corev1.Pod) bool { return p.Spec.NodeName == k.Node && p.DeletionTimestamp != nil }
	return k.forEachPod(ctx, namespace, terminating, func(p *corev1.Pod) (bool, error) {
		uid := p.UID
		err := k.Client.Delete(ctx, p, client.GracePeriodSeconds(0), client.Preconditions{UID: &uid})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return false, nil // gone already, or replaced by a new pod of the same name
		}
		if err != nil {
			return false, fmt.Errorf("finishing the termination of pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		return true, nil
	})
}
