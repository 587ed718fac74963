package usage

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
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
	// CPUMetric and MemoryMetric are the cAdvisor metrics CadvisorQueries reads (upstream VPA's
	// --history-cpu-metric and --history-memory-metric).
	CPUMetric, MemoryMetric string
	// Namespaces narrows CadvisorQueries to these namespaces (the recommender's --namespaces, as upstream VPA
	// narrows its queries to --vpa-object-namespace); none: every namespace.
	Namespaces []string
	// PodLabelsQuery gives series whose labels (with PodLabelPrefix) are the pods' labels, the newest series
	// of a pod counting; empty: pod labels are not read. kube-state-metrics v2 exports them only for the labels
	// its --metric-labels-allowlist names (e.g. pods=[*]). A range vector (upstream VPA's form,
	// kube_pod_labels[8d]) is evaluated at the end of the history, anything else over it as a range query.
	PodLabelsQuery, PodLabelPrefix string
	// PodOwnerQuery gives one series per pod naming its controller (labels owner_kind, owner_name);
	// ReplicaSetOwnerQuery one per ReplicaSet (label replicaset) naming its controller. They let history of
	// pods whose labels are unknown (gone pods, without the allow-list) count for their workload. "$HISTORY"
	// is replaced by the history length. Empty: owners are not read. Their series carry kube-state-metrics'
	// label names (namespace, pod, replicaset), whatever the label names below say.
	PodOwnerQuery, ReplicaSetOwnerQuery string
	// Label names of namespace, pod and container in the CPU and memory series (CadvisorQueries writes the
	// default queries with them).
	NamespaceLabel, PodLabel, ContainerLabel string
	// PodLabelsNamespaceLabel and PodLabelsPodLabel name the namespace and pod labels of the pod-labels series
	// when they differ from NamespaceLabel and PodLabel (upstream VPA's --pod-namespace-label and
	// --pod-name-label, for a pod-labels query such as up{job="kubernetes-pods"}); empty: the same.
	PodLabelsNamespaceLabel, PodLabelsPodLabel string
	// Timeout of each query (--prometheus-timeout, 5m as upstream VPA's --prometheus-query-timeout).
	Timeout time.Duration
}

// DefaultPrometheusAddress is upstream VPA's default --prometheus-address, so that its args start the same.
const DefaultPrometheusAddress = "http://prometheus.monitoring.svc"

// DefaultPrometheusConfig returns the defaults.
func DefaultPrometheusConfig() PrometheusConfig {
	c := PrometheusConfig{
		Address:       DefaultPrometheusAddress,
		HTTP:          promconfig.DefaultHTTPClientConfig,
		HistoryLength: 8 * 24 * time.Hour, Resolution: time.Hour,
		CPUMetric: "container_cpu_usage_seconds_total", MemoryMetric: "container_memory_working_set_bytes",
		PodLabelsQuery:       `kube_pod_labels`,
		PodLabelPrefix:       "label_",
		PodOwnerQuery:        `max by (namespace, pod, owner_kind, owner_name) (last_over_time(kube_pod_owner{owner_is_controller="true"}[$HISTORY]))`,
		ReplicaSetOwnerQuery: `max by (namespace, replicaset, owner_kind, owner_name) (last_over_time(kube_replicaset_owner{owner_is_controller="true"}[$HISTORY]))`,
		NamespaceLabel:       "namespace", PodLabel: "pod", ContainerLabel: "container",
		Timeout: 5 * time.Minute,
	}
	c.CPUQuery, c.MemoryQuery = c.CadvisorQueries("")
	return c
}

// CadvisorQueries are the default CPU and memory queries on cAdvisor's series, written with c's namespace,
// pod and container label names (in the selectors and the grouping: a series without them would be read
// with an empty key and dropped) and restricted to the scrape job named job (upstream VPA's
// --prometheus-cadvisor-job-name; "": every job).
//
// Both keep the largest of a container's series at each step, never their sum: a container's usage scraped
// twice (the kubelet's /metrics/cadvisor and /metrics/resource, or two jobs, which the default of every job
// reads) is the same usage, and a sum would double it. Upstream VPA, which keeps one sample per timestamp,
// does not double it either.
func (c PrometheusConfig) CadvisorQueries(job string) (cpu, memory string) {
	ns, pod, ctr := promLabel(c.NamespaceLabel), promLabel(c.PodLabel), promLabel(c.ContainerLabel)
	sel := fmt.Sprintf(`%s!="", %s!="POD", %s!=""`, ctr, ctr, pod)
	switch len(c.Namespaces) {
	case 0:
	case 1:
		sel += fmt.Sprintf(`, %s=%q`, ns, c.Namespaces[0])
	default:
		quoted := make([]string, len(c.Namespaces))
		for i, n := range c.Namespaces {
			quoted[i] = regexp.QuoteMeta(n)
		}
		sel += fmt.Sprintf(`, %s=~%q`, ns, strings.Join(quoted, "|"))
	}
	if job != "" {
		sel = fmt.Sprintf(`job=%q, `, job) + sel
	}
	by := fmt.Sprintf("max by (%s, %s, %s)", ns, pod, ctr)
	return by + " (rate(" + c.CPUMetric + "{" + sel + "}[$RESOLUTION]))",
		by + " (max_over_time(" + c.MemoryMetric + "{" + sel + "}[$RESOLUTION]))"
}

// promLabel is a label name as PromQL writes it: bare when it is a classic name, else quoted (Prometheus
// 3's UTF-8 names, such as OpenTelemetry's k8s.pod.name).
func promLabel(name string) string {
	if model.LegacyValidation.IsValidLabelName(name) {
		return name
	}
	return strconv.Quote(name)
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

// kube-state-metrics' label names in its owner series (the default owner queries group by them).
const ksmNamespaceLabel, ksmPodLabel = "namespace", "pod"

// History runs the CPU, memory, pod-label and owner queries over the history length, ending at the last
// whole step (so that each step's window is one whole hour of the clock at the default resolution, as
// dashboards align them). CPU and memory queries that give no container are an error: an empty history
// read as a success would stand in for the checkpoints, which are loaded when the read fails.
func (p *Prometheus) History(ctx context.Context) ([]ContainerHistory, error) {
	end := p.now().Truncate(p.cfg.Resolution)
	r := promv1.Range{Start: end.Add(-p.cfg.HistoryLength), End: end, Step: p.cfg.Resolution}
	byKey := map[containerKey]*ContainerHistory{}
	read, skipped, err := p.usage(ctx, r, byKey)
	if err != nil {
		return nil, err
	}
	if len(byKey) == 0 {
		return nil, p.noContainers(read, skipped)
	}
	labels, err := p.podLabels(ctx, r)
	if err != nil {
		return nil, err
	}
	owners, err := p.podOwners(ctx, end)
	if err != nil {
		// the owners only add history upstream VPA leaves out (gone pods whose labels are unknown): their
		// failure costs that history, not the rest
		logf.FromContext(ctx).Error(err, "reading the pods' owners from Prometheus; the history of pods whose labels are unknown is left out")
		owners = nil
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

// noContainers is the error of CPU and memory queries that gave no container: read series, all skipped
// (skipped is one of them) for a missing namespace, pod or container label, or none at all.
func (p *Prometheus) noContainers(read int, skipped model.Metric) error {
	if read == 0 {
		return fmt.Errorf("prometheus: the CPU and memory queries gave no series over the last %s: check that Prometheus scrapes cAdvisor (the kubelet's /metrics/cadvisor), that --prometheus-cadvisor-job-name names its job, and --prometheus-cpu-query and --prometheus-memory-query",
			model.Duration(p.cfg.HistoryLength))
	}
	return fmt.Errorf("prometheus: the CPU and memory queries gave %d series, none labelled with a namespace (%q), pod (%q) and container (%q), e.g. %s: set --prometheus-namespace-label, --prometheus-pod-label and --prometheus-container-label (upstream VPA's --container-namespace-label, --container-pod-name-label and --container-name-label) to the labels the series carry",
		read, p.cfg.NamespaceLabel, p.cfg.PodLabel, p.cfg.ContainerLabel, skipped)
}

// usage reads the CPU and memory series into byKey. It returns how many series the queries gave and one of
// those skipped for a missing namespace, pod or container label (nil: none skipped).
func (p *Prometheus) usage(ctx context.Context, r promv1.Range, byKey map[containerKey]*ContainerHistory) (int, model.Metric, error) {
	read, skipped := 0, model.Metric(nil)
	get := func(m model.Metric) *ContainerHistory {
		k := containerKey{p.label(m, p.cfg.NamespaceLabel), p.label(m, p.cfg.PodLabel), p.label(m, p.cfg.ContainerLabel)}
		if k.ns == "" || k.pod == "" || k.container == "" {
			skipped = m
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
			return read, skipped, err
		}
		read += len(series)
		for _, s := range series {
			if h := get(s.Metric); h != nil {
				q.add(h, points(s.Values))
			}
		}
	}
	return read, skipped, nil
}

func (p *Prometheus) label(m model.Metric, name string) string {
	return string(m[model.LabelName(name)])
}

// podLabels reads the pods' labels from the pod-labels series (none without PodLabelsQuery). Of a pod's
// series it takes the newest (with the latest sample), as upstream VPA does: a pod relabelled during the
// history has a series per set of labels, and only the last set selects it now.
func (p *Prometheus) podLabels(ctx context.Context, r promv1.Range) (map[podKey]map[string]string, error) {
	labels := map[podKey]map[string]string{}
	if p.cfg.PodLabelsQuery == "" {
		return labels, nil
	}
	series, err := p.podLabelSeries(ctx, r)
	if err != nil {
		return nil, err
	}
	nsLabel, podLabel := cmp.Or(p.cfg.PodLabelsNamespaceLabel, p.cfg.NamespaceLabel), cmp.Or(p.cfg.PodLabelsPodLabel, p.cfg.PodLabel)
	newest := map[podKey]*model.SampleStream{}
	for _, s := range series {
		k := podKey{p.label(s.Metric, nsLabel), p.label(s.Metric, podLabel)}
		if k.ns == "" || k.pod == "" || len(s.Values) == 0 {
			continue
		}
		if cur, ok := newest[k]; !ok || newerSeries(s, cur) {
			newest[k] = s
		}
	}
	if len(series) > 0 && len(newest) == 0 {
		// not an error: the labels come from the live pods and the owners instead; but say why none came
		logf.FromContext(ctx).Info("warning: no pod-labels series names its pod: set --pod-namespace-label and --pod-name-label to the labels that hold them",
			"query", p.cfg.PodLabelsQuery, "series", len(series), "namespaceLabel", nsLabel, "podLabel", podLabel, "example", series[0].Metric.String())
	}
	for k, s := range newest {
		if l := p.prefixed(s.Metric); len(l) > 0 {
			labels[k] = l
		}
	}
	return labels, nil
}

// prefixed are the labels of m named with PodLabelPrefix, without it (none without a prefix).
func (p *Prometheus) prefixed(m model.Metric) map[string]string {
	out := map[string]string{}
	for name, v := range m {
		if n, ok := strings.CutPrefix(string(name), p.cfg.PodLabelPrefix); ok && p.cfg.PodLabelPrefix != "" {
			out[n] = string(v)
		}
	}
	return out
}

// newerSeries: a's last sample is later than b's; at the same time the one whose labels sort first, so that
// the choice does not depend on the order of the series.
func newerSeries(a, b *model.SampleStream) bool {
	ta, tb := a.Values[len(a.Values)-1].Timestamp, b.Values[len(b.Values)-1].Timestamp
	if ta != tb {
		return ta.After(tb)
	}
	return a.Metric.Before(b.Metric)
}

// podLabelSeries runs the pod-labels query. Upstream VPA runs it as an instant query, so the form its users
// give is a range vector (kube_pod_labels{job="kube-state-metrics"}[8d]), which Prometheus refuses in a range
// query ("invalid expression type range vector for range query"): a range vector is evaluated at the end of
// the history and gives its samples; any other query runs over the history as a range query.
func (p *Prometheus) podLabelSeries(ctx context.Context, r promv1.Range) (model.Matrix, error) {
	if rangeVector(p.cfg.PodLabelsQuery) {
		return instantQuery[model.Matrix](ctx, p, p.cfg.PodLabelsQuery, r.End)
	}
	return p.rangeQuery(ctx, p.cfg.PodLabelsQuery, r)
}

// promql parses queries as leniently as a Prometheus with every feature on: it only tells their type.
var promql = parser.NewParser(parser.Options{EnableExperimentalFunctions: true, ExperimentalDurationExpr: true,
	EnableExtendedRangeSelectors: true, EnableBinopFillModifiers: true})

// rangeVector: q is a range vector (a range selector, a subquery, or one in parentheses). A query the parser
// refuses runs as a range query, and Prometheus' error says what is wrong with it.
func rangeVector(q string) bool {
	e, err := promql.ParseExpr(q)
	return err == nil && e.Type() == parser.ValueTypeMatrix
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
		rs, err := instantQuery[model.Vector](ctx, p, strings.ReplaceAll(p.cfg.ReplicaSetOwnerQuery, "$HISTORY", history), end)
		if err != nil {
			// the pods' own owners still count: a ReplicaSet's pods then count for the ReplicaSet, which no
			// workload resolves, and the rest (StatefulSets, DaemonSets, Jobs) as before
			logf.FromContext(ctx).Error(err, "reading the ReplicaSets' owners from Prometheus; pods of ReplicaSets are not attributed to their Deployments")
		}
		for _, s := range rs {
			if o := ownerOf(s.Metric); o.Kind != "" {
				rsOwners[podKey{p.label(s.Metric, ksmNamespaceLabel), string(s.Metric["replicaset"])}] = o
			}
		}
	}
	pods, err := instantQuery[model.Vector](ctx, p, strings.ReplaceAll(p.cfg.PodOwnerQuery, "$HISTORY", history), end)
	if err != nil {
		return nil, err
	}
	for _, s := range pods {
		ns := p.label(s.Metric, ksmNamespaceLabel)
		o := ownerOf(s.Metric)
		if up, ok := rsOwners[podKey{ns, o.Name}]; ok && o.Kind == "ReplicaSet" {
			o = up
		}
		if o.Kind != "" {
			owners[podKey{ns, p.label(s.Metric, ksmPodLabel)}] = o
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

// instantQuery evaluates q at t; its result must be a T (model.Vector or model.Matrix).
func instantQuery[T model.Value](ctx context.Context, p *Prometheus, q string, t time.Time) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	var want T
	v, _, err := p.api.Query(ctx, q, t)
	if err != nil {
		return want, fmt.Errorf("prometheus query %q: %w", q, err)
	}
	got, ok := v.(T)
	if !ok {
		return want, fmt.Errorf("prometheus query %q: want a %s, got %s", q, want.Type(), v.Type())
	}
	return got, nil
}

func points(vs []model.SamplePair) []HistorySample {
	out := make([]HistorySample, 0, len(vs))
	for _, v := range vs {
		out = append(out, HistorySample{Time: v.Timestamp.Time().UTC(), Value: float64(v.Value)})
	}
	return out
}
