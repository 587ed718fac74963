package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hvpa-dev/hvpa/test/grafana"
	"github.com/hvpa-dev/hvpa/test/prometheus"
)

// querier evaluates range queries: a real Prometheus (test/prometheus.Server), or a test's stand-in.
type querier interface {
	QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error)
}

// series is one series of a panel: its legend and samples.
type series struct {
	legend string
	points []model.SamplePair
}

// panelData is a panel with the series its queries returned (none for a row).
type panelData struct {
	grafana.Panel
	series []series
}

// run starts Prometheus on o.prometheus and renders every dashboard of o.dashboards into o.out.
func run(ctx context.Context, o options) error {
	dashboards, err := grafana.Load(o.dashboards)
	if err != nil {
		return err
	}
	if len(dashboards) == 0 {
		return fmt.Errorf("no dashboards in %s", o.dashboards)
	}
	if _, err := os.Stat(filepath.Join(o.prometheus, "data")); err != nil {
		return fmt.Errorf("no Prometheus data in %s (run `make dashboards`, which runs the e2e suite first): %w", o.prometheus, err)
	}
	srv, err := prometheus.Start(ctx, o.prometheus, prometheus.Options{Retention: 10 * 365 * 24 * time.Hour})
	if err != nil {
		return err
	}
	defer srv.Stop()
	if o.start.IsZero() {
		if o.start, o.end, err = srv.HeadRange(ctx); err != nil {
			return err
		}
	}
	rng := grafana.NewRange(o.start, o.end, o.scrape)
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("dashrender: %w", err)
	}
	for i := range dashboards {
		if err := renderFile(ctx, srv, &dashboards[i], rng, o.out); err != nil {
			return err
		}
	}
	return nil
}

// renderFile renders one dashboard into out/<name>.png and says what it showed.
func renderFile(ctx context.Context, q querier, d *grafana.Dashboard, rng grafana.Range, out string) error {
	panels, err := fetch(ctx, q, d, rng)
	if err != nil {
		return fmt.Errorf("%s: %w", d.File, err)
	}
	img, _, err := render(d, panels, rng)
	if err != nil {
		return fmt.Errorf("%s: %w", d.File, err)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return fmt.Errorf("%s: %w", d.File, err)
	}
	path := filepath.Join(out, strings.TrimSuffix(d.File, ".json")+".png")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("dashrender: %w", err)
	}
	fmt.Printf("%s: %dx%d, %d KB, %s\n", path, img.Bounds().Dx(), img.Bounds().Dy(), b.Len()/1024, summary(panels))
	return nil
}

// fetch evaluates the queries of every panel of d over rng.
func fetch(ctx context.Context, q querier, d *grafana.Dashboard, rng grafana.Range) ([]panelData, error) {
	vars, err := d.Values(rng)
	if err != nil {
		return nil, err
	}
	var out []panelData
	for _, p := range d.Panels {
		where := fmt.Sprintf("panel %d (%s)", p.ID, p.Title)
		switch {
		case p.Type == "row" && p.Collapsed && len(p.Panels) > 0:
			return nil, fmt.Errorf("row %q is collapsed: expand it to render its panels", p.Title)
		case p.GridPos.X < 0 || p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H <= 0:
			return nil, fmt.Errorf("%s: gridPos %+v is outside the 24 columns", where, p.GridPos)
		case p.Type == "row":
			out = append(out, panelData{Panel: p})
		case p.Type == "timeseries" || p.Type == "stat":
			s, err := panelSeries(ctx, q, p, vars, rng)
			if err != nil {
				return nil, fmt.Errorf("%s %w", where, err)
			}
			out = append(out, panelData{Panel: p, series: s})
		default:
			return nil, fmt.Errorf("%s: type %q is not supported (timeseries, stat, row)", where, p.Type)
		}
	}
	return out, nil
}

// panelSeries evaluates a panel's visible targets as range queries, in order.
func panelSeries(ctx context.Context, q querier, p grafana.Panel, vars map[string]string, rng grafana.Range) ([]series, error) {
	var out []series
	for _, t := range p.Targets {
		if t.Hide {
			continue
		}
		expr, err := grafana.Substitute(t.Expr, vars)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.RefID, err)
		}
		m, err := q.QueryRange(ctx, expr, rng.Start, rng.End, rng.Step)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.RefID, err)
		}
		for _, s := range m {
			out = append(out, series{legend: legend(t.LegendFormat, expr, s.Metric), points: s.Values})
		}
	}
	return out, nil
}

var legendRef = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// legend is a series' name as Grafana shows it: legendFormat with {{label}} filled in; without one, the
// series' labels (or the query, for a series without labels).
func legend(format, expr string, m model.Metric) string {
	if format == "" || format == "__auto" {
		if len(m) == 0 {
			return expr
		}
		return m.String()
	}
	return legendRef.ReplaceAllStringFunc(format, func(ref string) string {
		return string(m[model.LabelName(legendRef.FindStringSubmatch(ref)[1])])
	})
}

// summary describes what a rendering showed: the panels without data are named.
func summary(panels []panelData) string {
	var empty []string
	n := 0
	for _, p := range panels {
		if p.Type == "row" {
			continue
		}
		n++
		if !hasData(p.series) {
			empty = append(empty, p.Title)
		}
	}
	s := fmt.Sprintf("%d panels", n)
	if len(empty) > 0 {
		s += fmt.Sprintf(", %d without data: %s", len(empty), strings.Join(empty, "; "))
	}
	return s
}
