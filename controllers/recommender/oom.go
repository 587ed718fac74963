package recommender

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/podstore"
)

// observeOOMs records OOM kills from pod status (current or last state terminated with reason OOMKilled) and
// containers evicted by the kubelet under memory pressure (an evicted pod's status). Each kill is recorded
// once.
func (r *Recommender) observeOOMs(ctx context.Context, match podMatch, now time.Time) {
	record := func(e *matchedPod, container string, at time.Time, request float64, key string) {
		if !r.state.FirstOOM(key, now) || r.inLoadedHistory(e, container, at) {
			return
		}
		m := e.models.For(container)
		if m == nil {
			m = r.model(r.Base)
		}
		cs := r.container(m, e.pod, container, now)
		peak, _ := cs.State.OpenWindowPeak()
		if err := m.RecordOOM(cs.State, at, request); err != nil {
			logf.FromContext(ctx).V(1).Info("OOM not recorded", "pod", e.pod.Namespace+"/"+e.pod.Name, "container", container, "reason", err.Error())
			return
		}
		r.Metrics.OOMs.Inc()
		r.oomAdaptive(e.adaptive, container, at, request)
		if h := e.hvpa; h != nil {
			if request <= 0 {
				request = cs.State.MemoryRequest
			}
			h.recordOOM(r.state, container, at, request, peak, now)
		}
	}
	countKilledNotReady(match, now.Add(-cmp.Or(r.Opts.Interval, time.Minute)))
	for _, e := range match.pods {
		p := e.pod
		for _, c := range p.Containers {
			for _, finished := range c.OOMKills {
				at := finished
				if at.IsZero() || at.After(now) { // unknown, or dated in the future: recorded as seen now (once: by its own time)
					at = now
				}
				record(e, c.Name, at, c.MemoryBytes, fmt.Sprintf("%s/%s/%s", p.UID, c.Name, finished.UTC().Format(time.RFC3339)))
			}
		}
	}
	// kubelet evictions under memory pressure, from the evicted pod's own status (which only the kubelet
	// writes), never from Events (which anyone who may create Events could forge); the container's own
	// request counts, not the number in the message
	for _, p := range match.evicted {
		e, tracked := match.pods[p.Key()] // an evicted pod is not running: not matched (the flags' model)
		if !tracked {
			if r.Opts.MemorySaver {
				continue
			}
			e = &matchedPod{pod: p}
		}
		at := p.EvictedAt
		if at.IsZero() || at.After(now) {
			at = now
		}
		if now.Sub(at) > r.Base.MemoryAggregationInterval {
			continue // old news: recorded long ago (the pod object outlives its eviction), or too old to count
		}
		for _, ev := range ParseMemoryEviction(p.EvictionMessage) {
			_, memory := p.Requests(ev.Container)
			record(e, ev.Container, at, memory, fmt.Sprintf("evicted/%s/%s", p.UID, ev.Container))
		}
	}
}

// inLoadedHistory reports whether an OOM kill at at of a pod's container came before the checkpoint each of
// the pod's VPAs loaded that container's history from: the process that wrote it had recorded the kill (in
// the history, or in an open window it left out), and upstream's recommender records a kill when it sees the
// container restart, never again after its own restart; recording it again would count it twice. A kill
// after the write (the writer's record of it was never checkpointed), of a VPA without a loaded checkpoint,
// or of an Hvpa's pod (its workload total is hvpa's own: a kill it might lose costs another kill) is recorded.
func (r *Recommender) inLoadedHistory(e *matchedPod, container string, at time.Time) bool {
	if len(e.owners) == 0 {
		return false
	}
	for _, o := range e.owners {
		if o.kind == hvpav1alpha1.KindHvpa {
			return false
		}
		// written two runs after the kill at least: the writer had seen it (a kill between its pod list and its
		// write, or reported late by the kubelet, may not be in it)
		if t, ok := r.historyAt[vpaContainer{e.pod.Namespace, o.name, container}]; !ok || !t.After(at.Add(2*cmp.Or(r.Opts.Interval, time.Minute))) {
			return false
		}
	}
	return true
}

// countKilledNotReady counts, for each Hvpa, its pods that are not ready and were OOM-killed since since (or
// at an unknown time): a pod in CrashLoopBackOff served until its kill, so a kill of this run counts it among
// the pods that served (servedHvpa.recordOOM), with the ready ones.
func countKilledNotReady(match podMatch, since time.Time) {
	for _, e := range match.pods {
		if e.hvpa == nil || e.pod.Ready {
			continue
		}
		if slices.ContainsFunc(e.pod.Containers, func(c podstore.Container) bool {
			return slices.ContainsFunc(c.OOMKills, func(t time.Time) bool { return t.IsZero() || t.After(since) })
		}) {
			e.hvpa.killedNotReady++
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
