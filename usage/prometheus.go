package usage

import (
	"cmp"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// PrometheusConfig configures the Prometheus history provider. DefaultPrometheusConfig gives today's cAdvisor
// and kube-state-metrics (v2) names.
type PrometheusConfig struct {
	// Address of the Prometheus HTTP API, e.g. http://prometheus.monitoring:9090.
	Address string
	// HTTP is how the queries reach Prometheus: TLS (CA, client certificate, server name, skip verify), a
	// bearer token or basic auth (inline or from files, re-read as they change), a proxy.
	HTTP promconfig.HTTPClientConfig
	// HistoryLength is how far back to read (8 days), Resolution the step of the range queries (1h).
	HistoryLength, Resolution time.Duration
	// CPUQuery gives CPU usage in cores per container, the mean over each step; MemoryQuery the working set
	// in bytes per container, the peak within each step. "$RESOLUTION" is replaced by the resolution.
	CPUQuery, MemoryQuery string
	// PodLabelsQuery gives one series per pod whose labels (with PodLabelPrefix) are the pod's labels;
	// empty: pod labels are not read. kube-state-metrics v2 exports them only for the labels its
	// --metric-labels-allowlist names (e.g. pods=[*]).
	PodLabelsQuery, PodLabelPrefix string
	// PodOwnerQuery gives one series per pod naming its controller (labels owner_kind, owner_name);
	// ReplicaSetOwnerQuery one per ReplicaSet (label replicaset) naming its controller. They let history of
	// pods whose labels are unknown (gone pods, without the allow-list) count for their workload. "$HISTORY"
	// is replaced by the history length. Empty: owners are not read.
	PodOwnerQuery, ReplicaSetOwnerQuery string
	// Label names of namespace, pod and container in the series.
	NamespaceLabel, PodLabel, ContainerLabel string
	// PodLabelsNamespaceLabel and PodLabelsPodLabel name the namespace and pod labels of the pod-labels series
	// when they differ from NamespaceLabel and PodLabel (upstream VPA's --pod-namespace-label and
	// --pod-name-label, for a pod-labels query such as up{job="kubernetes-pods"}); empty: the same.
	PodLabelsNamespaceLabel, PodLabelsPodLabel string
	// Timeout of each query (--prometheus-timeout, 1m).
	Timeout time.Duration
}

// DefaultPrometheusConfig returns the defaults (address unset).
func DefaultPrometheusConfig() PrometheusConfig {
	cpu, memory := CadvisorQueries("")
	return PrometheusConfig{
		HTTP:          promconfig.DefaultHTTPClientConfig,
		HistoryLength: 8 * 24 * time.Hour, Resolution: time.Hour,
		CPUQuery:             cpu,
		MemoryQuery:          memory,
		PodLabelsQuery:       `kube_pod_labels`,
		PodLabelPrefix:       "label_",
		PodOwnerQuery:        `max by (namespace, pod, owner_kind, owner_name) (last_over_time(kube_pod_owner{owner_is_controller="true"}[$HISTORY]))`,
		ReplicaSetOwnerQuery: `max by (namespace, replicaset, owner_kind, owner_name) (last_over_time(kube_replicaset_owner{owner_is_controller="true"}[$HISTORY]))`,
		NamespaceLabel:       "namespace", PodLabel: "pod", ContainerLabel: "container",
		Timeout: time.Minute,
	}
}

// CadvisorQueries are the default CPU and memory queries on cAdvisor's series, restricted to the series of
// the scrape job named job (upstream VPA's --prometheus-cadvisor-job-name; "": every job).
func CadvisorQueries(job string) (cpu, memory string) {
	sel := `{container!="", container!="POD", pod!=""}`
	if job != "" {
		sel = fmt.Sprintf(`{job=%q, container!="", container!="POD", pod!=""}`, job)
	}
	return `sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total` + sel + `[$RESOLUTION]))`,
		`max by (namespace, pod, container) (max_over_time(container_memory_working_set_bytes` + sel + `[$RESOLUTION]))`
}

// Prometheus reads usage history through the Prometheus HTTP API.
type Prometheus struct {
	cfg PrometheusConfig
	api promv1.API
	now func() time.Time
}

var _ HistoryProvider = (*Prometheus)(nil)

// NewPrometheus returns a history provider; now gives the end of the history (a clock, for tests).
func NewPrometheus(cfg PrometheusConfig, now func() time.Time) (*Prometheus, error) {
	if cfg.Address == "" {
		return nil, fmt.Errorf("prometheus: --prometheus-address is required with --storage=prometheus")
	}
	if cfg.HistoryLength <= 0 || cfg.Resolution <= 0 {
		return nil, fmt.Errorf("prometheus: history length %s and resolution %s must be positive", cfg.HistoryLength, cfg.Resolution)
	}
	if err := cfg.HTTP.Validate(); err != nil {
		return nil, fmt.Errorf("prometheus client options: %w", err)
	}
	hc, err := promconfig.NewClientFromConfig(cfg.HTTP, "hvpa-recommender")
	if err != nil {
		return nil, fmt.Errorf("prometheus client options: %w", err)
	}
	c, err := promapi.NewClient(promapi.Config{Address: cfg.Address, Client: hc})
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	return &Prometheus{cfg: cfg, api: promv1.NewAPI(c), now: now}, nil
}

type podKey struct{ ns, pod string }
type containerKey struct{ ns, pod, container string }

// History runs the CPU, memory, pod-label and owner queries over the history length, ending at the last
// whole step (so that each step's window is one whole hour of the clock at the default resolution, as
// dashboards align them).
func (p *Prometheus) History(ctx context.Context) ([]ContainerHistory, error) {
	end := p.now().Truncate(p.cfg.Resolution)
	r := promv1.Range{Start: end.Add(-p.cfg.HistoryLength), End: end, Step: p.cfg.Resolution}
	byKey := map[containerKey]*ContainerHistory{}
	if err := p.usage(ctx, r, byKey); err != nil {
		return nil, err
	}
	labels, err := p.podLabels(ctx, r)
	if err != nil {
		return nil, err
	}
	owners, err := p.podOwners(ctx, end)
	if err != nil {
		return nil, err
	}
	out := make([]ContainerHistory, 0, len(byKey))
	for k, h := range byKey {
		h.Labels = labels[podKey{k.ns, k.pod}]
		h.Owner = owners[podKey{k.ns, k.pod}]
		sort.Slice(h.CPU, func(i, j int) bool { return h.CPU[i].Time.Before(h.CPU[j].Time) })
		sort.Slice(h.Memory, func(i, j int) bool { return h.Memory[i].Time.Before(h.Memory[j].Time) })
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Namespace+"/"+a.Pod+"/"+a.Container < b.Namespace+"/"+b.Pod+"/"+b.Container
	})
	return out, nil
}

// usage reads the CPU and memory series into byKey.
func (p *Prometheus) usage(ctx context.Context, r promv1.Range, byKey map[containerKey]*ContainerHistory) error {
	get := func(m model.Metric) *ContainerHistory {
		k := containerKey{p.label(m, p.cfg.NamespaceLabel), p.label(m, p.cfg.PodLabel), p.label(m, p.cfg.ContainerLabel)}
		if k.ns == "" || k.pod == "" || k.container == "" {
			return nil
		}
		h, ok := byKey[k]
		if !ok {
			h = &ContainerHistory{Namespace: k.ns, Pod: k.pod, Container: k.container, Step: p.cfg.Resolution}
			byKey[k] = h
		}
		return h
	}
	step := model.Duration(p.cfg.Resolution).String()
	for _, q := range []struct {
		query string
		add   func(h *ContainerHistory, s []HistorySample)
	}{
		{p.cfg.CPUQuery, func(h *ContainerHistory, s []HistorySample) { h.CPU = append(h.CPU, s...) }},
		{p.cfg.MemoryQuery, func(h *ContainerHistory, s []HistorySample) { h.Memory = append(h.Memory, s...) }},
	} {
		series, err := p.rangeQuery(ctx, strings.ReplaceAll(q.query, "$RESOLUTION", step), r)
		if err != nil {
			return err
		}
		for _, s := range series {
			if h := get(s.Metric); h != nil {
				q.add(h, points(s.Values))
			}
		}
	}
	return nil
}

func (p *Prometheus) label(m model.Metric, name string) string {
	return string(m[model.LabelName(name)])
}

// podLabels reads the pods' labels from the pod-labels series (none without PodLabelsQuery).
func (p *Prometheus) podLabels(ctx context.Context, r promv1.Range) (map[podKey]map[string]string, error) {
	labels := map[podKey]map[string]string{}
	if p.cfg.PodLabelsQuery == "" {
		return labels, nil
	}
	series, err := p.rangeQuery(ctx, p.cfg.PodLabelsQuery, r)
	if err != nil {
		return nil, err
	}
	nsLabel, podLabel := cmp.Or(p.cfg.PodLabelsNamespaceLabel, p.cfg.NamespaceLabel), cmp.Or(p.cfg.PodLabelsPodLabel, p.cfg.PodLabel)
	for _, s := range series {
		k := podKey{p.label(s.Metric, nsLabel), p.label(s.Metric, podLabel)}
		for name, v := range s.Metric {
			n := string(name)
			if p.cfg.PodLabelPrefix == "" || !strings.HasPrefix(n, p.cfg.PodLabelPrefix) {
				continue
			}
			if labels[k] == nil {
				labels[k] = map[string]string{}
			}
			labels[k][strings.TrimPrefix(n, p.cfg.PodLabelPrefix)] = string(v)
		}
	}
	return labels, nil
}

// podOwners reads each pod's controller, a ReplicaSet resolved to its own controller (a Deployment's).
func (p *Prometheus) podOwners(ctx context.Context, end time.Time) (map[podKey]Owner, error) {
	owners := map[podKey]Owner{}
	if p.cfg.PodOwnerQuery == "" {
		return owners, nil
	}
	history := model.Duration(p.cfg.HistoryLength).String()
	rsOwners := map[podKey]Owner{} // namespace, replicaset -> its controller
	if p.cfg.ReplicaSetOwnerQuery != "" {
		rs, err := p.instantQuery(ctx, strings.ReplaceAll(p.cfg.ReplicaSetOwnerQuery, "$HISTORY", history), end)
		if err != nil {
			return nil, err
		}
		for _, s := range rs {
			if o := ownerOf(s.Metric); o.Kind != "" {
				rsOwners[podKey{p.label(s.Metric, p.cfg.NamespaceLabel), string(s.Metric["replicaset"])}] = o
			}
		}
	}
	pods, err := p.instantQuery(ctx, strings.ReplaceAll(p.cfg.PodOwnerQuery, "$HISTORY", history), end)
	if err != nil {
		return nil, err
	}
	for _, s := range pods {
		ns := p.label(s.Metric, p.cfg.NamespaceLabel)
		o := ownerOf(s.Metric)
		if up, ok := rsOwners[podKey{ns, o.Name}]; ok && o.Kind == "ReplicaSet" {
			o = up
		}
		if o.Kind != "" {
			owners[podKey{ns, p.label(s.Metric, p.cfg.PodLabel)}] = o
		}
	}
	return owners, nil
}

// ownerOf is the owner kube-state-metrics names in owner_kind and owner_name (none: "<none>").
func ownerOf(m model.Metric) Owner {
	kind, name := string(m["owner_kind"]), string(m["owner_name"])
	if kind == "" || kind == "<none>" || name == "" || name == "<none>" {
		return Owner{}
	}
	return Owner{Kind: kind, Name: name}
}

func (p *Prometheus) rangeQuery(ctx context.Context, q string, r promv1.Range) (model.Matrix, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	v, _, err := p.api.QueryRange(ctx, q, r)
	if err != nil {
		return nil, fmt.Errorf("prometheus query %q: %w", q, err)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("prometheus query %q: want a matrix, got %s", q, v.Type())
	}
	return m, nil
}

func (p *Prometheus) instantQuery(ctx context.Context, q string, t time.Time) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	v, _, err := p.api.Query(ctx, q, t)
	if err != nil {
		return nil, fmt.Errorf("prometheus query %q: %w", q, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("prometheus query %q: want a vector, got %s", q, v.Type())
	}
	return vec, nil
}

func points(vs []model.SamplePair) []HistorySample {
	out := make([]HistorySample, 0, len(vs))
	for _, v := range vs {
		out = append(out, HistorySample{Time: v.Timestamp.Time().UTC(), Value: float64(v.Value)})
	}
	return out
}
