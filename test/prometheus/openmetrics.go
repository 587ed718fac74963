package prometheus

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Pod is one pod's played usage history in the shapes cAdvisor (through the kubelet) and kube-state-metrics
// v2 write it, for backfilling.
type Pod struct {
	Namespace, Name, Container string
	// ReplicaSet owns the pod; Deployment owns the ReplicaSet (kube_pod_owner, kube_replicaset_owner).
	ReplicaSet, Deployment string
	// Labels are the pod's labels: kube_pod_labels carries them as label_* only with AllowLabels (the
	// --metric-labels-allowlist=pods=[*] of kube-state-metrics v2; by default it carries none).
	Labels map[string]string
	// From and To bound the pod's life.
	From, To time.Time
	// CPU is the usage in cores during the interval ending at t; Memory the working set at t (bytes).
	CPU, Memory func(t time.Time) float64
}

// History is what OpenMetrics writes.
type History struct {
	Pods []Pod
	// Interval between samples (cAdvisor's scrape interval; default 1m).
	Interval time.Duration
	// AllowLabels exports the pod labels in kube_pod_labels.
	AllowLabels bool
}

// OpenMetrics is the history as OpenMetrics text with timestamps (for promtool's backfill):
// container_cpu_usage_seconds_total (a counter of the CPU seconds used), container_memory_working_set_bytes,
// kube_pod_labels, kube_pod_owner and kube_replicaset_owner.
func (h History) OpenMetrics() []byte {
	iv := h.Interval
	if iv == 0 {
		iv = time.Minute
	}
	var b bytes.Buffer
	family(&b, "container_cpu_usage_seconds", "counter", func() {
		for _, p := range h.Pods {
			total := 0.0
			for t := p.From; !t.After(p.To); t = t.Add(iv) {
				if t.After(p.From) {
					total += p.CPU(t) * iv.Seconds()
				}
				sample(&b, "container_cpu_usage_seconds_total", p.cadvisor(), total, t)
			}
		}
	})
	family(&b, "container_memory_working_set_bytes", "gauge", func() {
		for _, p := range h.Pods {
			for t := p.From; !t.After(p.To); t = t.Add(iv) {
				sample(&b, "container_memory_working_set_bytes", p.cadvisor(), p.Memory(t), t)
			}
		}
	})
	h.kubeStateMetrics(&b)
	b.WriteString("# EOF\n")
	return b.Bytes()
}

// kubeStateMetrics writes the kube-state-metrics series every 5 minutes of each pod's life.
func (h History) kubeStateMetrics(b *bytes.Buffer) {
	each := func(p Pod, name, labels string) {
		for t := p.From; !t.After(p.To); t = t.Add(5 * time.Minute) {
			sample(b, name, labels, 1, t)
		}
	}
	family(b, "kube_pod_labels", "gauge", func() {
		for _, p := range h.Pods {
			l := fmt.Sprintf(`namespace=%q,pod=%q`, p.Namespace, p.Name)
			if h.AllowLabels {
				keys := make([]string, 0, len(p.Labels))
				for k := range p.Labels {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					l += fmt.Sprintf(`,label_%s=%q`, strings.ReplaceAll(k, "-", "_"), p.Labels[k])
				}
			}
			each(p, "kube_pod_labels", l)
		}
	})
	family(b, "kube_pod_owner", "gauge", func() {
		for _, p := range h.Pods {
			each(p, "kube_pod_owner", fmt.Sprintf(`namespace=%q,pod=%q,owner_kind="ReplicaSet",owner_name=%q,owner_is_controller="true"`, p.Namespace, p.Name, p.ReplicaSet))
		}
	})
	family(b, "kube_replicaset_owner", "gauge", func() {
		seen := map[string]bool{}
		for _, p := range h.Pods {
			if key := p.Namespace + "/" + p.ReplicaSet; !seen[key] {
				seen[key] = true
				each(p, "kube_replicaset_owner", fmt.Sprintf(`namespace=%q,replicaset=%q,owner_kind="Deployment",owner_name=%q,owner_is_controller="true"`, p.Namespace, p.ReplicaSet, p.Deployment))
			}
		}
	})
}

// cadvisor are the labels the kubelet's cAdvisor endpoint gives a container's series.
func (p Pod) cadvisor() string {
	return fmt.Sprintf(`namespace=%q,pod=%q,container=%q,image="played",job="kubelet",metrics_path="/metrics/cadvisor"`, p.Namespace, p.Name, p.Container)
}

func family(b *bytes.Buffer, name, typ string, samples func()) {
	fmt.Fprintf(b, "# TYPE %s %s\n", name, typ)
	samples()
}

func sample(b *bytes.Buffer, name, labels string, v float64, t time.Time) {
	fmt.Fprintf(b, "%s{%s} %g %d\n", name, labels, v, t.Unix())
}
