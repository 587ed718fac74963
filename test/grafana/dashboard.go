// Package grafana reads the chart's Grafana dashboards (charts/hvpa/dashboards) and prepares their queries
// the way Grafana does before it sends them to Prometheus: template variables take their "All" value and the
// built-in intervals ($__range, $__interval, $__rate_interval) are filled in. The dashboard image renderer
// (hack/dashrender), the e2e suite's check of every dashboard query against a real Prometheus, and the
// dashboard tests of hack/internal/metricsdoc share it: it lives in the test kit of the product module, which
// the e2e suite imports, not in the hack module (hack/go.mod). It holds no PromQL of its own: the queries go to
// Prometheus, and Selectors reads them with Prometheus' own parser.
package grafana

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// DashboardsDir is the folder of the Grafana dashboards, from the repository root.
const DashboardsDir = "charts/hvpa/dashboards"

// Dashboard is the part of a Grafana dashboard (JSON model) that the checks and the renderer read.
type Dashboard struct {
	File          string  `json:"-"`
	UID           string  `json:"uid"`
	Title         string  `json:"title"`
	Description   string  `json:"description"`
	SchemaVersion int     `json:"schemaVersion"`
	Panels        []Panel `json:"panels"`
	Templating    struct {
		List []TemplateVariable `json:"list"`
	} `json:"templating"`
}

// Panel is a Grafana panel; a collapsed row holds its panels in Panels.
type Panel struct {
	ID          int         `json:"id"`
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	GridPos     GridPos     `json:"gridPos"`
	Datasource  *Datasource `json:"datasource"`
	Targets     []Target    `json:"targets"`
	Panels      []Panel     `json:"panels"`
	Collapsed   bool        `json:"collapsed"`
	FieldConfig struct {
		Defaults struct {
			Unit     string   `json:"unit"`
			Min      *float64 `json:"min"`
			Max      *float64 `json:"max"`
			Decimals *int     `json:"decimals"`
			Custom   struct {
				LineInterpolation string `json:"lineInterpolation"` // linear, smooth, stepBefore, stepAfter
			} `json:"custom"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

// GridPos places a panel on Grafana's grid: 24 columns, rows of 30 pixels.
type GridPos struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"w"`
	H int `json:"h"`
}

// Datasource references a data source, here always the ${datasource} variable.
type Datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// Target is one query of a panel.
type Target struct {
	RefID        string      `json:"refId"`
	Expr         string      `json:"expr"`
	LegendFormat string      `json:"legendFormat"`
	Hide         bool        `json:"hide"`
	Datasource   *Datasource `json:"datasource"`
}

// TemplateVariable is a template variable of a dashboard.
type TemplateVariable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"` // datasource, query, custom, interval, ...
	Query      json.RawMessage `json:"query"`
	Datasource *Datasource     `json:"datasource"`
	IncludeAll bool            `json:"includeAll"`
	AllValue   string          `json:"allValue"`
	Multi      bool            `json:"multi"`
}

// QueryString is the variable's query: the query field, a string or an object with a query string.
func (v TemplateVariable) QueryString() string {
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	if json.Unmarshal(v.Query, &o) == nil {
		return o.Query
	}
	return ""
}

// Load reads every *.json file of dir, sorted by file name.
func Load(dir string) ([]Dashboard, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("dashboards in %s: %w", dir, err)
	}
	sort.Strings(files)
	var out []Dashboard
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("dashboard: %w", err)
		}
		var d Dashboard
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		d.File = filepath.Base(f)
		out = append(out, d)
	}
	return out, nil
}

// AllPanels lists the panels in order, with the panels of collapsed rows after their row.
func (d *Dashboard) AllPanels() []Panel {
	var out []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// Query is one PromQL expression of a dashboard and where it is.
type Query struct {
	Where string // "panel 3 (Replicas) target A" or "variable namespace"
	Expr  string
	// Label is set for a variable's label_values(Expr, Label): Grafana lists the values of Label on the
	// series Expr selects.
	Label string
}

var (
	labelValues = regexp.MustCompile(`^\s*label_values\(\s*(.*?)\s*(?:,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*)?\)\s*$`)
	queryResult = regexp.MustCompile(`^\s*query_result\((.*)\)\s*$`)
)

// Queries lists the PromQL expressions of the dashboard: the panels' targets' expr (hidden ones too), and
// the PromQL inside the query variables (label_values(selector, label), query_result(expr), a plain expr).
func (d *Dashboard) Queries() []Query {
	var out []Query
	for _, p := range d.AllPanels() {
		for _, t := range p.Targets {
			out = append(out, Query{Where: fmt.Sprintf("panel %d (%s) target %s", p.ID, p.Title, t.RefID), Expr: t.Expr})
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q := v.QueryString()
		switch m := labelValues.FindStringSubmatch(q); {
		case m != nil && m[2] != "":
			out = append(out, Query{Where: "variable " + v.Name, Expr: m[1], Label: m[2]})
		case m != nil: // label_values(label): every series, no PromQL
		case queryResult.MatchString(q):
			out = append(out, Query{Where: "variable " + v.Name, Expr: queryResult.FindStringSubmatch(q)[1]})
		default:
			if strings.TrimSpace(q) != "" {
				out = append(out, Query{Where: "variable " + v.Name, Expr: q})
			}
		}
	}
	return out
}
