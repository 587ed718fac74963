package playedkubelet

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Workloads plays the usage of whole workloads (pods labelled app=<name>): a CPU total per workload split evenly
// across its running pods (Set), or a CPU usage per pod (SetPerPod), and a memory working set per pod.
type Workloads struct {
	mu     sync.Mutex
	totals map[[2]string]workloadLoad
}

type workloadLoad struct {
	cpuMilli, memoryPerPod int64
	perPod                 bool // cpuMilli is each pod's usage, not the workload's total
}

// Set plays a workload's total CPU (millicores; negative: no samples at all) and per-pod memory (bytes).
func (w *Workloads) Set(ns, app string, cpuMilli, memoryPerPod int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.totals == nil {
		w.totals = map[[2]string]workloadLoad{}
	}
	w.totals[[2]string{ns, app}] = workloadLoad{cpuMilli: cpuMilli, memoryPerPod: memoryPerPod}
}

// SetPerPod plays a CPU usage (millicores) and memory working set (bytes) for each running pod of a workload,
// whatever their number (a standalone VPA's pods: an eviction does not move load onto the others).
func (w *Workloads) SetPerPod(ns, app string, cpuMilli, memoryPerPod int64) {
	w.Set(ns, app, cpuMilli, memoryPerPod)
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.totals[[2]string{ns, app}]
	l.perPod = true
	w.totals[[2]string{ns, app}] = l
}

// Play reports the usage of every running container of the played workloads through ms (replacing what
// it reported before).
func (w *Workloads) Play(ctx context.Context, c client.Reader, ms *MetricsServer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ms.Clear()
	for key, l := range w.totals {
		if l.cpuMilli < 0 {
			continue
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(key[0]), client.MatchingLabels{"app": key[1]}); err != nil {
			continue
		}
		var running []corev1.Pod
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running = append(running, p)
			}
		}
		cpu := l.cpuMilli
		if !l.perPod && len(running) > 0 {
			cpu /= int64(len(running))
		}
		for _, p := range running {
			for _, k := range p.Spec.Containers {
				ms.Set(key[0], p.Name, k.Name, Usage{CPUMilli: cpu, MemoryBytes: l.memoryPerPod})
			}
		}
	}
}

// Loop plays the node until ctx ends, every interval: it runs pending pods, answers resizes by answer (nil:
// resizes stay unanswered), finishes the pods that are terminating, and reports the played workloads' usage
// through ms (nil loads or ms: no usage). Suites and the demo run it in a goroutine.
func (k *Kubelet) Loop(ctx context.Context, interval time.Duration, answer func(*corev1.Pod) ResizeAnswer, loads *Workloads, ms *MetricsServer) {
	for ctx.Err() == nil {
		_, _ = k.RunPending(ctx, "")
		if answer != nil {
			_, _ = k.AnswerResizes(ctx, "", answer)
		}
		_, _ = k.FinishTerminating(ctx, "")
		if loads != nil && ms != nil {
			loads.Play(ctx, k.Client, ms)
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}

// AcceptResizes answers every resize by accepting it.
func AcceptResizes(*corev1.Pod) ResizeAnswer { return ResizeAccept }
