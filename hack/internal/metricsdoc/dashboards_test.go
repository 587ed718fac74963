package metricsdoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"

	"github.com/hvpa-dev/hvpa/test/grafana"

	"github.com/hvpa-dev/hvpa/test/prometheus"
)

var dashboardsDir = filepath.Join("..", "..", "..", grafana.DashboardsDir)

func loadDashboards(t *testing.T) []grafana.Dashboard {
	t.Helper()
	ds, err := grafana.Load(dashboardsDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) < 4 {
		t.Fatalf("%d dashboards in %s, want at least 4", len(ds), grafana.DashboardsDir)
	}
	return ds
}

// checkRange is the range the static checks substitute: the dashboards' default hour, at Grafana's default
// scrape interval.
func checkRange() grafana.Range {
	end := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return grafana.NewRange(end.Add(-time.Hour), end, 0)
}

// targetLabels are the labels a scrape attaches (the Prometheus Operator's, for the chart's ServiceMonitors):
// a query may select on them whatever the metric.
var targetLabels = map[string]bool{"job": true, "instance": true, "namespace": true, "service": true, "pod": true, "container": true, "endpoint": true}

// TestDashboardMetrics: every query parses with Prometheus' own parser (after Grafana's substitutions), and
// every metric its selectors name is one the binary exports (histogram series with _bucket, _sum and _count
// only for histograms), matched only on labels the metric has (le on buckets) or a scrape adds; a
// label_values variable lists a label its metric has.
func TestDashboardMetrics(t *testing.T) {
	all := All()
	used := map[string]bool{}
	for _, d := range loadDashboards(t) {
		vars, err := d.Values(checkRange())
		if err != nil {
			t.Fatal(err)
		}
		qs := d.Queries()
		if len(qs) == 0 {
			t.Errorf("%s has no queries", d.File)
		}
		for _, q := range qs {
			names, problems := queryMetrics(q, vars, all)
			for _, p := range problems {
				t.Errorf("%s %s: %s", d.File, q.Where, p)
			}
			for _, n := range names {
				used[n] = true
			}
		}
	}
	var unused []string
	for _, m := range all {
		if !used[m.Name] {
			unused = append(unused, m.Name)
		}
	}
	if len(unused) > 0 {
		t.Logf("metrics on no dashboard: %s", strings.Join(unused, ", "))
	}
}

// queryMetrics returns the metrics a query uses, and what is wrong with it.
func queryMetrics(q grafana.Query, vars map[string]string, all []Metric) (used, problems []string) {
	expr, err := grafana.Substitute(q.Expr, vars)
	if err != nil {
		return nil, []string{err.Error()}
	}
	e, err := grafana.Parse(expr)
	if err != nil {
		return nil, []string{err.Error()}
	}
	sels := prometheus.Selectors(e)
	if len(sels) == 0 {
		problems = append(problems, fmt.Sprintf("%q names no metric", q.Expr))
	}
	for _, vs := range sels {
		name := prometheus.MetricName(vs)
		m, ok := Lookup(all, name)
		if !ok {
			problems = append(problems, fmt.Sprintf("%q is not a metric the binary exports (see docs/metrics.md)", name))
			continue
		}
		used = append(used, m.Name)
		var names []string
		for _, lm := range vs.LabelMatchers {
			if lm.Name != model.MetricNameLabel {
				names = append(names, lm.Name)
			}
		}
		if q.Label != "" {
			names = append(names, q.Label)
		}
		for _, l := range names {
			if !targetLabels[l] && !slices.Contains(m.Labels, l) && (l != "le" || !strings.HasSuffix(name, "_bucket")) {
				problems = append(problems, fmt.Sprintf("%s has no label %s (labels: %s)", name, l, strings.Join(m.Labels, ", ")))
			}
		}
	}
	return used, problems
}

func TestQueryMetrics(t *testing.T) {
	vars := map[string]string{"namespace": ".*", "__rate_interval": "1m"}
	for _, tc := range []struct {
		q    grafana.Query
		used []string
		bad  string // a part of the one problem; "" none
	}{
		{grafana.Query{Expr: `sum by (le) (rate(hvpa_updater_loop_duration_seconds_bucket{le="1", job="x"}[$__rate_interval]))`}, []string{"hvpa_updater_loop_duration_seconds"}, ""},
		{grafana.Query{Expr: `hvpa_controller_replicas{namespace=~"$namespace"}`, Label: "hvpa"}, []string{"hvpa_controller_replicas"}, ""},
		{grafana.Query{Expr: `hvpa_controller_replicas`, Label: "object"}, []string{"hvpa_controller_replicas"}, "has no label object"},
		{grafana.Query{Expr: `rate(hvpa_updater_resizes_total{reason="x"}[5m])`}, []string{"hvpa_updater_resizes_total"}, "has no label reason"},
		{grafana.Query{Expr: `hvpa_updater_candidates_bucket`}, nil, "not a metric the binary exports"},
		{grafana.Query{Expr: `sum(rate(hvpa_nope_total[5m])) or vector(0)`}, nil, `"hvpa_nope_total" is not a metric`},
		{grafana.Query{Expr: `vector(1)`}, nil, "names no metric"},
		{grafana.Query{Expr: `rate(x[$__range])`}, nil, "unknown template variable $__range"},
		{grafana.Query{Expr: `sum(rate(x[5m])`}, nil, "unclosed left parenthesis"},
	} {
		used, problems := queryMetrics(tc.q, vars, All())
		if !slices.Equal(used, tc.used) {
			t.Errorf("%s: uses %v, want %v", tc.q.Expr, used, tc.used)
		}
		switch {
		case tc.bad == "" && len(problems) > 0:
			t.Errorf("%s: %v", tc.q.Expr, problems)
		case tc.bad != "" && (len(problems) != 1 || !strings.Contains(problems[0], tc.bad)):
			t.Errorf("%s: problems %v, want one with %q", tc.q.Expr, problems, tc.bad)
		}
	}
}

// TestDashboardSchema decodes every dashboard strictly into the dashboard types of the Grafana Foundation
// SDK, which are generated from Grafana's own schema: the dashboard, its panels with their plugins' options
// and field config, the Prometheus queries and the variables (an unknown field, a wrong type or a missing
// required field fails), then runs the SDK's validation. Before that it fills in what Grafana fills when it
// loads a dashboard: the defaults of a panel plugin's options (from the SDK's constructors) and an empty
// current value of a variable. Grafana itself is not run here.
func TestDashboardSchema(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(dashboardsDir, "*.json"))
	if err != nil || len(files) < 4 {
		t.Fatalf("dashboards %v: %v", files, err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := validateSchema(raw); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
	// the decoding is strict: each of these changes of a valid dashboard fails it
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ old, new, want string }{
		{`"legendFormat"`, `"legendFromat"`, "legendFromat"},
		{`"gridPos": {`, `"gridPos": {"depth": 1, `, "depth"},
		{`"schemaVersion": `, `"schemaVersion": "39", "v": `, "schemaVersion"},
		{`"textMode": "auto"`, `"textMode": "auto", "fontSize": 3`, "fontSize"},
		{`"type": "timeseries"`, `"type": "timeseries", "colour": "red"`, "colour"},
	} {
		if !strings.Contains(string(raw), bad.old) {
			t.Fatalf("%s has no %s to change", files[0], bad.old)
		}
		err := validateSchema([]byte(strings.Replace(string(raw), bad.old, bad.new, 1)))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s -> %s: %v, want an error naming %s", bad.old, bad.new, err, bad.want)
		}
	}
}

// validateSchema checks a dashboard against Grafana's schema as the Foundation SDK holds it.
func validateSchema(raw []byte) error {
	plugins.RegisterDefaultPlugins()
	var generic map[string]any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	if err := fillGrafanaDefaults(generic); err != nil {
		return err
	}
	filled, err := json.Marshal(generic)
	if err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	// the classic dashboard JSON model (the SDK's dashboard package), the one the chart ships and Grafana's
	// dashboard sidecar loads; not the SDK's dashboardv2 resource
	d := dashboard.NewDashboard()
	if err := sdkError(d.UnmarshalJSONStrict(filled)); err != nil {
		return fmt.Errorf("grafana's dashboard schema: %w", err)
	}
	if err := sdkError(d.Validate()); err != nil {
		return fmt.Errorf("grafana's dashboard schema: %w", err)
	}
	return nil
}

// emptyOption is the current value of a variable nothing is selected in yet (Grafana then selects the
// default: here All).
var emptyOption = dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: new(string)}, Value: dashboard.StringOrArrayOfString{String: new(string)}}

// sdkError is err, or nil for an empty list of errors (the SDK's strict decoding returns its error list even
// when it is empty).
func sdkError(err error) error {
	var list cog.BuildErrors
	if errors.As(err, &list) && len(list) == 0 {
		return nil
	}
	return err
}

// pluginDefaults are the options' defaults of the panel plugins the dashboards use.
var pluginDefaults = map[string]func() any{
	"stat":       func() any { return stat.NewOptions() },
	"timeseries": func() any { return timeseries.NewOptions() },
}

// fillGrafanaDefaults fills what Grafana fills on load, where the dashboard leaves it out: each panel's
// options get their plugin's defaults, a variable's current value the empty option's fields.
func fillGrafanaDefaults(d map[string]any) error {
	var panels func(v any) error
	panels = func(v any) error {
		list, _ := v.([]any)
		for _, p := range list {
			p, _ := p.(map[string]any)
			if t, _ := p["type"].(string); t != "row" {
				def, ok := pluginDefaults[t]
				if !ok {
					return fmt.Errorf("panel type %q: no defaults known (add its SDK package to pluginDefaults)", t)
				}
				if err := mergeDefaults(p, "options", def()); err != nil {
					return err
				}
			}
			if err := panels(p["panels"]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := panels(d["panels"]); err != nil {
		return err
	}
	templating, _ := d["templating"].(map[string]any)
	vars, _ := templating["list"].([]any)
	for _, v := range vars {
		if v, _ := v.(map[string]any); v != nil && v["current"] != nil {
			if err := mergeDefaults(v, "current", emptyOption); err != nil {
				return err
			}
		}
	}
	return nil
}

// mergeDefaults fills obj[key] with the JSON of defaults, keeping every value obj[key] has.
func mergeDefaults(obj map[string]any, key string, defaults any) error {
	raw, err := json.Marshal(defaults)
	if err != nil {
		return fmt.Errorf("defaults of %s: %w", key, err)
	}
	var def any
	if err := json.Unmarshal(raw, &def); err != nil {
		return fmt.Errorf("defaults of %s: %w", key, err)
	}
	obj[key] = merged(obj[key], def)
	return nil
}

func merged(have, def any) any {
	h, ok1 := have.(map[string]any)
	d, ok2 := def.(map[string]any)
	switch {
	case have == nil:
		return def
	case !ok1 || !ok2:
		return have
	}
	for k, v := range d {
		h[k] = merged(h[k], v)
	}
	return h
}

// TestDashboardModel checks the dashboards' structure: the top-level fields Grafana needs, the ${datasource}
// variable used by every panel and query, unique panel ids, panels inside the 24 columns without overlaps,
// the panel types the renderer draws, and template variables only in regular-expression matchers (their
// "All" value is .*).
func TestDashboardModel(t *testing.T) {
	uids := map[string]string{}
	for _, d := range loadDashboards(t) {
		raw, err := os.ReadFile(filepath.Join(dashboardsDir, d.File))
		if err != nil {
			t.Fatal(err)
		}
		var generic map[string]any
		if err := json.Unmarshal(raw, &generic); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"uid", "title", "schemaVersion", "panels", "templating", "time"} {
			if _, ok := generic[k]; !ok {
				t.Errorf("%s: no %s", d.File, k)
			}
		}
		if d.SchemaVersion < 36 {
			t.Errorf("%s: schemaVersion %d, want 36 or later", d.File, d.SchemaVersion)
		}
		if other, dup := uids[d.UID]; dup || d.UID == "" {
			t.Errorf("%s: uid %q (also %s)", d.File, d.UID, other)
		}
		uids[d.UID] = d.File
		if want := strings.TrimSuffix(d.File, ".json"); d.UID != want {
			t.Errorf("%s: uid %q, want the file name %q", d.File, d.UID, want)
		}
		hasDS := false
		for _, v := range d.Templating.List {
			if v.Type == "datasource" && v.Name == "datasource" && v.QueryString() == "prometheus" {
				hasDS = true
			}
			if v.Type == "query" {
				if v.Datasource == nil || v.Datasource.UID != "${datasource}" {
					t.Errorf("%s: variable %s does not query ${datasource}", d.File, v.Name)
				}
				if !v.IncludeAll || (v.AllValue != "" && v.AllValue != ".*") {
					t.Errorf("%s: variable %s: want includeAll with the All value .*", d.File, v.Name)
				}
			}
		}
		if !hasDS {
			t.Errorf("%s: no template variable datasource of type datasource (prometheus)", d.File)
		}
		for _, q := range d.Queries() {
			for _, p := range checkVariables(q.Expr, &d) {
				t.Errorf("%s: %s: %s", d.File, q.Where, p)
			}
		}
		checkPanels(t, &d)
	}
}

// checkPanels checks the panels of a dashboard.
func checkPanels(t *testing.T, d *grafana.Dashboard) {
	t.Helper()
	ids := map[int]bool{}
	occupied := map[[2]int]string{}
	for _, p := range d.AllPanels() {
		if ids[p.ID] || p.ID <= 0 {
			t.Errorf("%s: panel id %d (%s) is not unique and positive", d.File, p.ID, p.Title)
		}
		ids[p.ID] = true
		g := p.GridPos
		if g.X < 0 || g.W <= 0 || g.H <= 0 || g.X+g.W > 24 {
			t.Errorf("%s: panel %d (%s): gridPos %+v is outside the 24 columns", d.File, p.ID, p.Title, g)
		}
		if o := occupy(occupied, g, p.Title); o != "" {
			t.Errorf("%s: panel %s overlaps %s", d.File, p.Title, o)
		}
		switch p.Type {
		case "row":
			if p.Collapsed {
				t.Errorf("%s: row %s is collapsed (the renderer draws expanded rows)", d.File, p.Title)
			}
			continue
		case "timeseries", "stat":
		default:
			t.Errorf("%s: panel %d (%s): type %q; the renderer draws timeseries and stat", d.File, p.ID, p.Title, p.Type)
		}
		if p.Title == "" || p.Description == "" {
			t.Errorf("%s: panel %d needs a title and a description", d.File, p.ID)
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("%s: panel %d (%s) does not use ${datasource}", d.File, p.ID, p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("%s: panel %d (%s) has no query", d.File, p.ID, p.Title)
		}
		for _, tg := range p.Targets {
			if tg.Datasource == nil || tg.Datasource.UID != "${datasource}" {
				t.Errorf("%s: panel %d (%s) target %s does not use ${datasource}", d.File, p.ID, p.Title, tg.RefID)
			}
		}
	}
}

// occupy marks the grid cells of a panel, and returns the title of a panel that had one of them ("" none).
func occupy(cells map[[2]int]string, g grafana.GridPos, title string) string {
	for x := g.X; x < g.X+g.W; x++ {
		for y := g.Y; y < g.Y+g.H; y++ {
			if o, ok := cells[[2]int{x, y}]; ok {
				return o
			}
			cells[[2]int{x, y}] = title
		}
	}
	return ""
}

// variableMark stands for a dashboard variable's value in checkVariables.
const variableMark = "GRAFANA_VARIABLE_"

// checkVariables: every variable in expr is a Grafana built-in or a variable of d, and a variable of d is only
// in the value of a =~ or !~ matcher (its All value and multiple values are regular expressions).
func checkVariables(expr string, d *grafana.Dashboard) []string {
	vars, err := d.Values(checkRange())
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, ref := range grafana.VariableRef.FindAllString(expr, -1) {
		if _, ok := vars[grafana.VariableName(ref)]; !ok {
			problems = append(problems, "unknown variable "+ref)
		}
	}
	for _, v := range d.Templating.List {
		vars[v.Name] = variableMark + v.Name
	}
	sub, err := grafana.Substitute(expr, vars)
	if err != nil {
		return problems // the unknown variables, above
	}
	e, err := grafana.Parse(sub)
	if err != nil {
		return append(problems, err.Error())
	}
	for _, vs := range prometheus.Selectors(e) {
		for _, m := range vs.LabelMatchers {
			if strings.Contains(m.Value, variableMark) && (m.Type == labels.MatchEqual || m.Type == labels.MatchNotEqual) {
				problems = append(problems, fmt.Sprintf("%s%s%q uses a template variable: use =~ or !~ (All and multiple values are regular expressions)",
					m.Name, m.Type, strings.ReplaceAll(m.Value, variableMark, "$")))
			}
		}
	}
	return problems
}

func TestCheckVariables(t *testing.T) {
	var d grafana.Dashboard
	d.Templating.List = []grafana.TemplateVariable{{Name: "namespace", Type: "query"}, {Name: "datasource", Type: "datasource"}}
	for expr, want := range map[string]string{
		`rate(x{namespace=~"$namespace"}[$__rate_interval])`: "",
		`x{namespace!~"${namespace:regex}", a="b"}`:          "",
		`x{namespace="$namespace"}`:                          `namespace="$namespace" uses a template variable: use =~ or !~`,
		`x{namespace!="$namespace"}`:                         `namespace!="$namespace" uses a template variable`,
		`x{namespace=~"$hvpa"}`:                              "unknown variable $hvpa",
		`rate(x[$namespace])`:                                "unexpected character in duration expression",
	} {
		problems := checkVariables(expr, &d)
		switch {
		case want == "" && len(problems) > 0:
			t.Errorf("%s: %v", expr, problems)
		case want != "" && (len(problems) != 1 || !strings.Contains(problems[0], want)):
			t.Errorf("%s: %v, want one problem with %q", expr, problems, want)
		}
	}
}
