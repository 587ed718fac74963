package recommender

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/hvpa-dev/hvpa/internal/podstore"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/usage"
)

// Where the history at start came from (the history_source metric).
const (
	historyCheckpoint         = "checkpoint"
	historyPrometheus         = "prometheus"
	historyCheckpointFallback = "checkpoint-fallback" // --storage=prometheus, but Prometheus could not be read
	historyNone               = "none"
)

// loadPrometheusHistory loads the containers' usage history from Prometheus into history aggregates. A
// container's pod labels (which VPA selects it) come from the pod as the cluster knows it, else from the pod
// template of the workload that owned it, else from Prometheus (kube-state-metrics' form of them).
//
// The loop's liveness (LoopHealthy) is off while Prometheus is read, and counts from the end of the read:
// its five queries may take --prometheus-timeout (5m) each, longer than the stall bound, and a process
// restarted for it would only read again. Upstream VPA, too, starts its health check after the read.
func (r *Recommender) loadPrometheusHistory(ctx context.Context) error {
	logger := logf.FromContext(ctx)
	started := r.progress.Swap(0) != 0
	history, err := r.History.History(ctx)
	if started {
		r.progress.Store(r.Clock.Now().UnixNano())
	}
	if err != nil {
		return fmt.Errorf("reading usage history from Prometheus: %w", err)
	}
	find, running, err := r.historyLabels(ctx)
	if err != nil {
		return err
	}
	m := r.model(r.Base)
	now := r.Clock.Now()
	count := map[string]int{}
	for _, h := range history {
		lbl, from := find(ctx, h)
		count[from]++
		if len(lbl) == 0 { // neither Prometheus nor the cluster knows the pod's labels: no VPA could select it
			continue
		}
		group := recommender.LabelKey(lbl)
		var c *recommender.Container
		if running(h.Namespace, h.Pod) {
			// the pod container its live samples feed, as upstream feeds history and live samples into one
			// container state: the memory window the history leaves open goes on with them, one peak for it
			c = r.state.Container(m, recommender.ContainerKey{Namespace: h.Namespace, Pod: h.Pod, Container: h.Container}, group, lbl, now).State
		} else {
			c = r.state.HistoryContainer(m, recommender.AggregateKey{Namespace: h.Namespace, Container: h.Container, Group: group}, lbl)
		}
		for _, s := range h.CPU {
			m.AddCPUSpan(c, s.Time, s.Value, h.Step)
		}
		for _, s := range h.Memory {
			m.AddMemory(c, s.Time, s.Value)
		}
	}
	logger.Info("loaded usage history from Prometheus", "containers", len(history)-count[""], "labelsFromPrometheus", count["prometheus"],
		"labelsFromLivePods", count["pod"], "labelsFromOwners", count["owner"], "withoutLabels", count[""])
	return nil
}

// historyLabels returns the lookup of a history container's pod labels and where they came from
// ("prometheus", "pod", "owner"; "" none), and whether a pod runs now.
func (r *Recommender) historyLabels(ctx context.Context) (func(context.Context, usage.ContainerHistory) (map[string]string, string), func(ns, pod string) bool, error) {
	pods, err := r.Pods.List(ctx, metav1.NamespaceAll)
	if err != nil {
		return nil, nil, err
	}
	known := make(map[types.NamespacedName]*podstore.Pod, len(pods))
	for _, p := range pods {
		known[p.Key()] = p
	}
	running := func(ns, pod string) bool {
		p := known[types.NamespacedName{Namespace: ns, Name: pod}]
		return p != nil && p.Phase == corev1.PodRunning
	}
	templates := map[types.NamespacedName]map[string]string{} // owner (kind/name) -> its pod template's labels
	owned := func(ctx context.Context, ns string, o usage.Owner) map[string]string {
		key := types.NamespacedName{Namespace: ns, Name: o.Kind + "/" + o.Name}
		if l, ok := templates[key]; ok {
			return l
		}
		var l map[string]string
		if gvk, ok := workload.KindGVK(o.Kind); ok && r.Targets != nil {
			if t, err := r.Targets.PodTemplate(ctx, gvk, ns, o.Name); err == nil && t != nil {
				l = t.Labels
			}
		}
		templates[key] = l
		return l
	}
	return func(ctx context.Context, h usage.ContainerHistory) (map[string]string, string) {
		p := known[types.NamespacedName{Namespace: h.Namespace, Name: h.Pod}]
		switch {
		case p != nil && len(p.Labels) > 0:
			// the pod's own labels: what selects it (and, while it runs, the ones its live samples come with,
			// the same container state going on with them); kube-state-metrics rewrites label keys (a-b.c/d as
			// a_b_c_d), which no selector names, and exports only those its allow-list names
			return p.Labels, "pod"
		case h.Owner.Kind != "" && len(owned(ctx, h.Namespace, h.Owner)) > 0:
			return owned(ctx, h.Namespace, h.Owner), "owner" // its workload's template: what its selector matches
		case len(h.Labels) > 0:
			return h.Labels, "prometheus"
		}
		return nil, ""
	}, running, nil
}
