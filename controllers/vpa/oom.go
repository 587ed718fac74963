package vpa

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/hvpa-dev/hvpa/recommender"
)

// observeOOMs records OOM kills from pod status (current or last state terminated with reason OOMKilled) and
// containers evicted by the kubelet under memory pressure (Evicted events). Each kill is recorded once.
func (r *Recommender) observeOOMs(ctx context.Context, pods, allPods map[types.NamespacedName]*corev1.Pod, models map[types.NamespacedName]*recommender.Model,
	hvpas map[types.NamespacedName]*servedHvpa, now time.Time) {
	record := func(p *corev1.Pod, container string, at time.Time, request float64, key string) {
		if !r.state.FirstOOM(key, now) {
			return
		}
		m := models[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]
		if m == nil {
			m = r.model(r.Base)
		}
		cs := r.container(m, p, container, now)
		peak, _ := cs.State.OpenWindowPeak()
		if err := m.RecordOOM(cs.State, at, request); err != nil {
			log.FromContext(ctx).V(1).Info("OOM not recorded", "pod", p.Namespace+"/"+p.Name, "container", container, "reason", err.Error())
			return
		}
		r.Metrics.OOMs.Inc()
		if h := hvpas[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]; h != nil {
			if request <= 0 {
				request = cs.State.MemoryRequest
			}
			h.recordOOM(r.state, container, at, request, peak, now)
		}
	}
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			for _, st := range []corev1.ContainerState{cs.State, cs.LastTerminationState} {
				t := st.Terminated
				if t == nil || t.Reason != "OOMKilled" {
					continue
				}
				at := t.FinishedAt.Time
				if at.IsZero() {
					at = now
				}
				record(p, cs.Name, at, requestInForce(p, cs.Name, corev1.ResourceMemory), fmt.Sprintf("%s/%s/%s", p.UID, cs.Name, at.UTC().Format(time.RFC3339)))
			}
		}
	}
	var evs corev1.EventList
	if err := r.Client.List(ctx, &evs, client.MatchingFields{"reason": "Evicted"}); err != nil {
		// field selectors on events need no index on a real API server; a cache without one refuses it
		if err := r.Client.List(ctx, &evs); err != nil {
			log.FromContext(ctx).V(1).Info("listing events for evictions", "error", err.Error())
			return
		}
	}
	for _, ev := range evs.Items {
		if ev.Reason != "Evicted" || ev.InvolvedObject.Kind != "Pod" {
			continue
		}
		// an evicted pod is Failed: it is found among all pods, and is tracked when a served object selects it
		// (or without --memory-saver)
		key := types.NamespacedName{Namespace: ev.InvolvedObject.Namespace, Name: ev.InvolvedObject.Name}
		p := allPods[key]
		if p == nil {
			continue
		}
		if _, tracked := models[key]; !tracked && r.Opts.MemorySaver {
			continue
		}
		at := ev.LastTimestamp.Time
		if at.IsZero() {
			at = ev.EventTime.Time
		}
		if at.IsZero() {
			at = now
		}
		for _, e := range ParseMemoryEviction(ev.Message) {
			record(p, e.Container, at, e.Request, fmt.Sprintf("evicted/%s/%s", ev.UID, e.Container))
		}
	}
}

// MemoryEviction is one container named by a kubelet eviction under memory pressure.
type MemoryEviction struct {
	Container string
	Usage     float64 // bytes
	Request   float64 // bytes
}

var evictedContainer = regexp.MustCompile(`Container (\S+) was using (\S+), request is (\S+)|Container (\S+) was using (\S+), which exceeds its request of (\S+)`)

// ParseMemoryEviction reads the containers of a kubelet Evicted message about memory, e.g. "The node was low
// on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container app was using 1Gi, request is
// 512Mi, has larger consumption of memory." Messages about other resources give nothing.
func ParseMemoryEviction(msg string) []MemoryEviction {
	var out []MemoryEviction
	if !strings.Contains(msg, "low on resource: memory") {
		return nil
	}
	for _, m := range evictedContainer.FindAllStringSubmatch(msg, -1) {
		name, usage, req := m[1], m[2], m[3]
		if name == "" {
			name, usage, req = m[4], m[5], m[6]
		}
		u, err1 := resource.ParseQuantity(trimPunct(usage))
		q, err2 := resource.ParseQuantity(trimPunct(req))
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, MemoryEviction{Container: name, Usage: u.AsApproximateFloat64(), Request: q.AsApproximateFloat64()})
	}
	return out
}

func trimPunct(s string) string {
	for len(s) > 0 && (s[len(s)-1] == ',' || s[len(s)-1] == '.') {
		s = s[:len(s)-1]
	}
	return s
}
