package metricsdoc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func loadDashboards(t *testing.T) []Dashboard {
	t.Helper()
	ds, err := LoadDashboards(filepath.Join("..", "..", "..", DashboardsDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) < 4 {
		t.Fatalf("%d dashboards in %s, want at least 4", len(ds), DashboardsDir)
	}
	return ds
}

// TestDashboardMetrics: every metric a dashboard's query names is one the binary exports (histogram series
// with _bucket, _sum and _count only for histograms).
func TestDashboardMetrics(t *testing.T) {
	all := All()
	used := map[string]bool{}
	for _, d := range loadDashboards(t) {
		qs := d.Queries()
		if len(qs) == 0 {
			t.Errorf("%s has no queries", d.File)
		}
		for _, q := range qs {
			names, err := MetricNames(q.Expr)
			if err != nil {
				t.Errorf("%s %s: %q: %v", d.File, q.Where, q.Expr, err)
				continue
			}
			if len(names) == 0 {
				t.Errorf("%s %s: %q names no metric", d.File, q.Where, q.Expr)
			}
			for _, n := range names {
				m, ok := Lookup(all, n)
				if !ok {
					t.Errorf("%s %s: %s is not a metric the binary exports (see docs/metrics.md)", d.File, q.Where, n)
				}
				used[m.Name] = true
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

// TestDashboardModel checks the dashboards' structure: Grafana's schema, the ${datasource} variable used by
// every panel and query, unique panel ids, panels inside the 24 columns without overlaps, the panel types
// the renderer draws, and template variables only in regular-expression matchers (their "All" value is .*).
func TestDashboardModel(t *testing.T) {
	uids := map[string]string{}
	for _, d := range loadDashboards(t) {
		raw, err := os.ReadFile(filepath.Join("..", "..", "..", DashboardsDir, d.File))
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
		vars := map[string]bool{}
		hasDS := false
		for _, v := range d.Templating.List {
			vars[v.Name] = true
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
				checkVariables(t, d.File, p.Title, tg.Expr, vars)
			}
		}
	}
}

// occupy marks the grid cells of a panel, and returns the title of a panel that had one of them ("" none).
func occupy(cells map[[2]int]string, g GridPos, title string) string {
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

// checkVariables: a template variable in a label matcher's value needs =~ or !~; a variable elsewhere must be
// a Grafana built-in or a dashboard variable.
func checkVariables(t *testing.T, file, panel, expr string, vars map[string]bool) {
	t.Helper()
	toks, err := Lex(expr)
	if err != nil {
		t.Errorf("%s: %s: %v", file, panel, err)
		return
	}
	builtins := map[string]bool{"__rate_interval": true, "__interval": true, "__range": true}
	for i, tk := range toks {
		switch tk.Kind {
		case String:
			if strings.Contains(tk.Text, "$") && i > 0 && toks[i-1].Kind == Op && (toks[i-1].Text == "=" || toks[i-1].Text == "!=") {
				t.Errorf("%s: %s: %s %s uses a template variable: use =~ or !~ (All and multiple values are regular expressions)", file, panel, toks[i-1].Text, tk.Text)
			}
		case Variable:
			name := strings.Trim(tk.Text, "${}")
			name, _, _ = strings.Cut(name, ":")
			if !builtins[name] && !vars[name] {
				t.Errorf("%s: %s: unknown variable %s", file, panel, tk.Text)
			}
		}
	}
}

func TestQueries(t *testing.T) {
	var d Dashboard
	if err := json.Unmarshal([]byte(`{"panels": [
		{"id": 1, "type": "row", "collapsed": true, "panels": [{"id": 2, "title": "inner", "targets": [{"refId": "A", "expr": "a"}]}]},
		{"id": 3, "title": "outer", "targets": [{"refId": "A", "expr": "b"}, {"refId": "B", "expr": "c"}]}],
		"templating": {"list": [
			{"name": "ds", "type": "datasource", "query": "prometheus"},
			{"name": "ns", "type": "query", "query": {"query": "label_values(d{x=\"y\"}, namespace)", "refId": "X"}},
			{"name": "all", "type": "query", "query": "label_values(namespace)"},
			{"name": "res", "type": "query", "query": "query_result(topk(3, e))"},
			{"name": "c", "type": "custom", "query": "a,b"}]}}`), &d); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, q := range d.Queries() {
		got = append(got, q.Where+": "+q.Expr)
	}
	sort.Strings(got)
	want := []string{"panel 2 (inner) target A: a", "panel 3 (outer) target A: b", "panel 3 (outer) target B: c",
		`variable ns: d{x="y"}`, "variable res: topk(3, e)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}
