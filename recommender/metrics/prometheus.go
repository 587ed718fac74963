package metrics

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// PrometheusConfig configures the Prometheus history provider. Defaults() gives today's cAdvisor and
// kube-state-metrics names.
type PrometheusConfig struct {
	// Address of the Prometheus HTTP API, e.g. http://prometheus.monitoring:9090.
	Address string
	// BearerToken, or Username and Password (basic auth), authenticate the queries; both empty: none.
	BearerToken        string
	Username, Password string
	// HistoryLength is how far back to read (8 days), Resolution the step of the range queries (1h).
	HistoryLength, Resolution time.Duration
	// CPUQuery gives CPU usage in cores per container; "$RESOLUTION" is replaced by the resolution (e.g. 1h).
	CPUQuery string
	// MemoryQuery gives the working set in bytes per container.
	MemoryQuery string
	// PodLabelsQuery gives one series per pod whose labels (with PodLabelPrefix) are the pod's labels;
	// empty: pod labels are not read.
	PodLabelsQuery, PodLabelPrefix string
	// Label names of namespace, pod and container in the series.
	NamespaceLabel, PodLabel, ContainerLabel string
	// Timeout of each query (--prometheus-timeout, 1m).
	Timeout time.Duration
}

// DefaultPrometheusConfig returns the defaults (address unset).
func DefaultPrometheusConfig() PrometheusConfig {
	return PrometheusConfig{
		HistoryLength: 8 * 24 * time.Hour, Resolution: time.Hour,
		CPUQuery:       `sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{container!="", container!="POD", pod!=""}[$RESOLUTION]))`,
		MemoryQuery:    `max by (namespace, pod, container) (container_memory_working_set_bytes{container!="", container!="POD", pod!=""})`,
		PodLabelsQuery: `kube_pod_labels`, PodLabelPrefix: "label_",
		NamespaceLabel: "namespace", PodLabel: "pod", ContainerLabel: "container",
		Timeout: time.Minute,
	}
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
	rt := promapi.DefaultRoundTripper
	switch {
	case cfg.BearerToken != "":
		rt = headerRoundTripper{next: rt, name: "Authorization", value: "Bearer " + cfg.BearerToken}
	case cfg.Username != "":
		rt = basicAuthRoundTripper{next: rt, user: cfg.Username, password: cfg.Password}
	}
	c, err := promapi.NewClient(promapi.Config{Address: cfg.Address, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	return &Prometheus{cfg: cfg, api: promv1.NewAPI(c), now: now}, nil
}

type podKey struct{ ns, pod string }
type containerKey struct{ ns, pod, container string }

// History runs the CPU, memory and pod-label range queries over the history length.
func (p *Prometheus) History(ctx context.Context) ([]ContainerHistory, error) {
	end := p.now()
	r := promv1.Range{Start: end.Add(-p.cfg.HistoryLength), End: end, Step: p.cfg.Resolution}
	byKey := map[containerKey]*ContainerHistory{}
	get := func(m model.Metric) *ContainerHistory {
		k := containerKey{string(m[model.LabelName(p.cfg.NamespaceLabel)]), string(m[model.LabelName(p.cfg.PodLabel)]), string(m[model.LabelName(p.cfg.ContainerLabel)])}
		if k.ns == "" || k.pod == "" || k.container == "" {
			return nil
		}
		h, ok := byKey[k]
		if !ok {
			h = &ContainerHistory{Namespace: k.ns, Pod: k.pod, Container: k.container}
			byKey[k] = h
		}
		return h
	}
	cpuQuery := strings.ReplaceAll(p.cfg.CPUQuery, "$RESOLUTION", model.Duration(p.cfg.Resolution).String())
	cpu, err := p.rangeQuery(ctx, cpuQuery, r)
	if err != nil {
		return nil, err
	}
	for _, s := range cpu {
		if h := get(s.Metric); h != nil {
			h.CPU = append(h.CPU, points(s.Values)...)
		}
	}
	mem, err := p.rangeQuery(ctx, p.cfg.MemoryQuery, r)
	if err != nil {
		return nil, err
	}
	for _, s := range mem {
		if h := get(s.Metric); h != nil {
			h.Memory = append(h.Memory, points(s.Values)...)
		}
	}
	labels, err := p.podLabels(ctx, r)
	if err != nil {
		return nil, err
	}
	out := make([]ContainerHistory, 0, len(byKey))
	for k, h := range byKey {
		h.Labels = labels[podKey{k.ns, k.pod}]
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
	for _, s := range series {
		k := podKey{string(s.Metric[model.LabelName(p.cfg.NamespaceLabel)]), string(s.Metric[model.LabelName(p.cfg.PodLabel)])}
		l := labels[k]
		if l == nil {
			l = map[string]string{}
			labels[k] = l
		}
		for name, v := range s.Metric {
			if n := string(name); strings.HasPrefix(n, p.cfg.PodLabelPrefix) && p.cfg.PodLabelPrefix != "" {
				l[strings.TrimPrefix(n, p.cfg.PodLabelPrefix)] = string(v)
			}
		}
	}
	return labels, nil
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

func points(vs []model.SamplePair) []HistorySample {
	out := make([]HistorySample, 0, len(vs))
	for _, v := range vs {
		out = append(out, HistorySample{Time: v.Timestamp.Time().UTC(), Value: float64(v.Value)})
	}
	return out
}

type headerRoundTripper struct {
	next        http.RoundTripper
	name, value string
}

func (h headerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.next.RoundTrip(r)
}

type basicAuthRoundTripper struct {
	next           http.RoundTripper
	user, password string
}

func (b basicAuthRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.SetBasicAuth(b.user, b.password)
	return b.next.RoundTrip(r)
}
