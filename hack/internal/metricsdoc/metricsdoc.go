// Package metricsdoc describes the Prometheus metrics the hvpa binary exports and renders them as
// docs/metrics.md. Its tests check that the page is current, and that the Grafana dashboards
// (charts/hvpa/dashboards) follow Grafana's dashboard schema and only use metrics and labels that exist
// (their queries read with Prometheus' own PromQL parser).
package metricsdoc

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	hvpactrl "github.com/hvpa-dev/hvpa/controllers/hvpa"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/internal/version"
	"github.com/hvpa-dev/hvpa/webhooks/pod"
)

// Metric is one metric the binary exports.
type Metric struct {
	Component string   // build, recommender, controller, updater, webhook
	Name      string   // e.g. hvpa_updater_resizes_total
	Type      string   // counter, gauge, histogram or summary
	Labels    []string // in the order the code declares them (without le and quantile)
	Help      string
}

// component is one component's metrics: its name, a title for the page, and its constructor.
type component struct {
	name, title string
	build       func(prometheus.Registerer) any
}

// components are the four components of the binary, and the build's own metric, in the order of the page.
var components = []component{
	{"build", "Build", func(r prometheus.Registerer) any { return version.NewMetrics(r) }},
	{"recommender", "Recommender", func(r prometheus.Registerer) any { return recommenderctrl.NewMetrics(r) }},
	{"controller", "Hvpa controller", func(r prometheus.Registerer) any { return hvpactrl.NewMetrics(r) }},
	{"updater", "Updater", func(r prometheus.Registerer) any { return updater.NewMetrics(r) }},
	{"webhook", "Admission webhook", func(r prometheus.Registerer) any { return pod.NewMetrics(r) }},
}

// maxLabels bounds the label count tried on a vector.
const maxLabels = 32

// All returns every hvpa_* metric the binary exports, by component (in the order of components) and name.
// Each component's metrics are created by its NewMetrics with a fresh registry; vectors get one child with
// the label values "0", "1", ... (a vector without children is not gathered), which also gives the label
// order.
func All() []Metric {
	var out []Metric
	for _, c := range components {
		ms, err := describe(c)
		if err != nil {
			panic(fmt.Sprintf("metricsdoc: %s: %v", c.name, err))
		}
		out = append(out, ms...)
	}
	return out
}

// Families gathers every hvpa_* metric family, each vector with one child (see All).
func Families() ([]*dto.MetricFamily, error) {
	var out []*dto.MetricFamily
	for _, c := range components {
		mfs, err := gather(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		out = append(out, mfs...)
	}
	return out, nil
}

func gather(c component) ([]*dto.MetricFamily, error) {
	reg := prometheus.NewPedanticRegistry()
	m := c.build(reg)
	for _, vec := range vectors(m) {
		instantiate(vec)
	}
	return reg.Gather()
}

func describe(c component) ([]Metric, error) {
	mfs, err := gather(c)
	if err != nil {
		return nil, err
	}
	var out []Metric
	for _, mf := range mfs {
		if len(mf.Metric) != 1 {
			return nil, fmt.Errorf("%s: %d series gathered, want 1", mf.GetName(), len(mf.Metric))
		}
		out = append(out, Metric{Component: c.name, Name: mf.GetName(), Type: typeName(mf.GetType()), Labels: labelOrder(mf.Metric[0].Label),
			Help: mf.GetHelp()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// collectors are the exported fields of a component's Metrics struct that are collectors.
func collectors(m any) []prometheus.Collector {
	v := reflect.ValueOf(m).Elem()
	var out []prometheus.Collector
	for i := 0; i < v.NumField(); i++ {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		if c, ok := v.Field(i).Interface().(prometheus.Collector); ok && !v.Field(i).IsNil() {
			out = append(out, c)
		}
	}
	return out
}

// vectors are the metric vectors among a component's collectors (each *XxxVec embeds a *MetricVec).
func vectors(m any) []*prometheus.MetricVec {
	var out []*prometheus.MetricVec
	for _, c := range collectors(m) {
		v := reflect.ValueOf(c)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			continue
		}
		if f := v.Elem().FieldByName("MetricVec"); f.IsValid() {
			if mv, ok := f.Interface().(*prometheus.MetricVec); ok {
				out = append(out, mv)
			}
		}
	}
	return out
}

// instantiate creates the child of vec whose label values are their positions: "0", "1", ...
func instantiate(vec *prometheus.MetricVec) {
	values := []string{}
	for len(values) <= maxLabels {
		if _, err := vec.GetMetricWithLabelValues(values...); err == nil {
			return
		}
		values = append(values, strconv.Itoa(len(values)))
	}
}

// labelOrder sorts the label names by their positional values (constant labels, if any, last).
func labelOrder(pairs []*dto.LabelPair) []string {
	type label struct {
		name string
		pos  int
	}
	var ls []label
	for _, p := range pairs {
		pos, err := strconv.Atoi(p.GetValue())
		if err != nil {
			pos = maxLabels + 1
		}
		ls = append(ls, label{p.GetName(), pos})
	}
	sort.SliceStable(ls, func(i, j int) bool {
		if ls[i].pos != ls[j].pos {
			return ls[i].pos < ls[j].pos
		}
		return ls[i].name < ls[j].name
	})
	out := []string{}
	for _, l := range ls {
		out = append(out, l.name)
	}
	return out
}

func typeName(t dto.MetricType) string {
	switch t {
	case dto.MetricType_COUNTER:
		return "counter"
	case dto.MetricType_GAUGE:
		return "gauge"
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		return "histogram"
	case dto.MetricType_SUMMARY:
		return "summary"
	}
	return "untyped"
}

// Lookup finds a metric by the name a query uses: its own name, or for a histogram (summary) name_bucket,
// name_sum or name_count (name_sum, name_count). It returns the metric and whether the name is valid.
func Lookup(all []Metric, name string) (Metric, bool) {
	byName := map[string]Metric{}
	for _, m := range all {
		byName[m.Name] = m
	}
	if m, ok := byName[name]; ok {
		return m, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			m, ok := byName[base]
			switch {
			case !ok:
			case m.Type == "histogram":
				return m, true
			case m.Type == "summary" && suffix != "_bucket":
				return m, true
			}
		}
	}
	return Metric{}, false
}

// Markdown renders docs/metrics.md: one table per component, sorted by name.
func Markdown() string {
	all := All()
	var b strings.Builder
	b.WriteString(`# Metrics

_Generated by ` + "`hack/run.sh metricsdoc > docs/metrics.md`" + `; checked by a test
(` + "`go -C hack test ./internal/metricsdoc -run TestMetricsPage`" + `; ` + "`-update`" + ` rewrites this page). Do not edit by hand._

The ` + "`hvpa`" + ` binary serves Prometheus metrics on ` + "`--metrics-bind-address`" + ` (default ` + "`:8080`" + `, path
` + "`/metrics`" + `), by default over HTTPS to clients the API server authenticates and authorizes to get ` + "`/metrics`" + `
(` + "`--metrics-secure`" + `; the chart's ` + "`<release>-metrics-reader`" + ` ClusterRole allows it). Its own metrics are below: namespace ` + "`hvpa`" + `, a subsystem per component, counters end in
` + "`_total`" + `, and every name ends in its unit: seconds, ` + "`_cpu_cores`" + `, ` + "`_memory_bytes`" + ` (a test runs
Prometheus' own metric linter over them). Histograms are exported as ` + "`<name>_bucket`" + ` (with the ` + "`le`" + ` label),
` + "`<name>_sum`" + ` and ` + "`<name>_count`" + `. The label ` + "`kind`" + ` is always the kind of the object that sizes pods
(` + "`VerticalPodAutoscaler`" + ` or ` + "`Hvpa`" + `).

Series per object (labels ` + "`namespace`" + ` with ` + "`object`" + ` or ` + "`hvpa`" + `) grow with the number of VPAs and Hvpas.
` + "`--metrics-per-object=false`" + ` (chart: ` + "`extraArgs`" + `) drops them for large clusters: the per-object gauges are
not exported and the per-Hvpa counters add up over all Hvpas (empty ` + "`namespace`" + ` and ` + "`hvpa`" + `).

controller-runtime's standard metrics are exported too: ` + "`controller_runtime_*`" + ` (reconciles, reconcile errors and
time per controller, webhook requests), ` + "`workqueue_*`" + ` (depth, latency, retries), ` + "`rest_client_*`" + ` (requests to
the API server), ` + "`leader_election_*`" + `, and the Go and process collectors (` + "`go_*`" + `, ` + "`process_*`" + `).

The Grafana dashboards in ` + "`charts/hvpa/dashboards`" + ` use only the metrics on this page (a test checks it).
`)
	for _, c := range components {
		fmt.Fprintf(&b, "\n## %s (`hvpa_%s_*`)\n\n", c.title, c.name)
		b.WriteString("| Name | Type | Labels | Help |\n|---|---|---|---|\n")
		for _, m := range all {
			if m.Component != c.name {
				continue
			}
			labels := "none"
			if len(m.Labels) > 0 {
				labels = "`" + strings.Join(m.Labels, "`, `") + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.Name, m.Type, labels, cell(m.Help))
		}
	}
	return b.String()
}

// cell escapes text for a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
