package e2e_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/hvpa-dev/hvpa/test/grafana"
	"github.com/hvpa-dev/hvpa/test/testadmission"
	"github.com/hvpa-dev/hvpa/test/testenv"

	"github.com/hvpa-dev/hvpa/test/prometheus"
)

// notPassed are the specs that did not pass: the dashboard check needs the whole scenario.
var notPassed []string

var _ = ReportAfterEach(func(r SpecReport) {
	if !r.State.Is(types.SpecStatePassed) {
		notPassed = append(notPassed, fmt.Sprintf("%s (%s)", r.FullText(), r.State))
	}
})

// dashboardProblems evaluates every query of every dashboard in charts/hvpa/dashboards against the
// Prometheus that scraped the run, as Grafana would over the run's time range (variables at All, $__range the
// run's length, $__interval and $__rate_interval for the 1s scrape): a panel query is a range query over the
// run and must return a series with a sample; a label_values(selector, label) variable must list a value;
// every selector in a query must match a series during the run, except the left side of an `or vector(0)`
// (a stat that shows 0 when nothing happened; a miss there is reported, not failed). It also checks the
// labels the scrape gave (scrapeProblems), always; the queries only when every spec passed (the scenario
// makes their series).
func dashboardProblems(ctx context.Context) []string {
	if prom == nil {
		return nil
	}
	end := time.Now()
	// one more scrape of every job after end, so that the run's last state is in, and a range that reaches
	// past it: the 1s grid from runStart has no point between its last one and end, where the series of the
	// last spec may have appeared
	Expect(prom.WaitForSeries(ctx, fmt.Sprintf(`count(timestamp(up) > %d) >= %d`, end.Unix()+1, len(jobs)), 10*time.Second)).To(Succeed())
	rng := grafana.NewRange(runStart, time.Now().Add(time.Second), time.Second)
	problems := scrapeProblems(ctx, rng)
	if len(notPassed) > 0 {
		GinkgoWriter.Printf("dashboard queries not checked: the scenario did not run completely: %s\n", strings.Join(notPassed, "; "))
		return problems
	}
	root, err := testenv.ModuleRoot()
	Expect(err).NotTo(HaveOccurred())
	dashboards, err := grafana.Load(filepath.Join(root, grafana.DashboardsDir))
	Expect(err).NotTo(HaveOccurred())
	Expect(dashboards).NotTo(BeEmpty())
	var notes, counts []string
	for _, d := range dashboards {
		vars, err := d.Values(rng)
		Expect(err).NotTo(HaveOccurred())
		for _, q := range d.Queries() {
			c := checkQuery(ctx, q, vars, rng)
			for _, p := range c.problems {
				problems = append(problems, fmt.Sprintf("%s %s: %s", d.File, q.Where, p))
			}
			for _, n := range c.notes {
				notes = append(notes, fmt.Sprintf("%s %s: %s", d.File, q.Where, n))
			}
			counts = append(counts, fmt.Sprintf("%s %s: %d", d.File, q.Where, c.series))
		}
	}
	AddReportEntry("dashboard queries over the run: series returned", fmt.Sprintf("%s to %s, step %s, $__rate_interval %s\n%s",
		rng.Start.Format(time.TimeOnly), rng.End.Format(time.TimeOnly), rng.Step, rng.RateInterval, strings.Join(counts, "\n")))
	if len(notes) > 0 {
		AddReportEntry("selectors without series (their panels show the `or vector(0)` fallback)", strings.Join(notes, "\n"))
	}
	return problems
}

// checked is what checkQuery found.
type checked struct {
	series          int // series (or label values) the query returned
	problems, notes []string
}

// checkQuery evaluates one query of a dashboard over the run.
func checkQuery(ctx context.Context, q grafana.Query, vars map[string]string, rng grafana.Range) checked {
	var c checked
	expr, err := grafana.Substitute(q.Expr, vars)
	if err != nil {
		c.problems = append(c.problems, err.Error())
		return c
	}
	e, err := grafana.Parse(expr)
	if err != nil {
		c.problems = append(c.problems, err.Error())
		return c
	}
	if q.Label != "" {
		values, warnings, err := prom.API.LabelValues(ctx, q.Label, []string{expr}, rng.Start, rng.End)
		c.series = len(values)
		switch {
		case err != nil || len(warnings) > 0:
			c.problems = append(c.problems, fmt.Sprintf("label_values(%s, %s): %v %v", expr, q.Label, err, warnings))
		case len(values) == 0:
			c.problems = append(c.problems, fmt.Sprintf("label_values(%s, %s) lists no value during the run", expr, q.Label))
		}
	} else {
		m, err := prom.QueryRange(ctx, expr, rng.Start, rng.End, rng.Step)
		c.series = len(m)
		switch {
		case err != nil:
			c.problems = append(c.problems, err.Error())
		case !hasSample(m):
			c.problems = append(c.problems, fmt.Sprintf("%s returned no series during the run", expr))
		}
	}
	optional := fallbackSelectors(e)
	for _, vs := range prometheus.Selectors(e) {
		sel := matchers(vs)
		sets, warnings, err := prom.API.Series(ctx, []string{sel}, rng.Start, rng.End)
		switch {
		case err != nil || len(warnings) > 0:
			c.problems = append(c.problems, fmt.Sprintf("series %s: %v %v", sel, err, warnings))
		case len(sets) > 0:
		case optional[vs]:
			c.notes = append(c.notes, fmt.Sprintf("%s matches no series during the run", sel))
		default:
			c.problems = append(c.problems, fmt.Sprintf("the selector %s matches no series during the run", sel))
		}
	}
	return c
}

func hasSample(m model.Matrix) bool {
	for _, s := range m {
		if len(s.Values) > 0 || len(s.Histograms) > 0 {
			return true
		}
	}
	return false
}

// matchers writes a selector's label matchers as a series selector (without offset or @).
func matchers(vs *parser.VectorSelector) string {
	var ms []string
	for _, m := range vs.LabelMatchers {
		ms = append(ms, m.String())
	}
	return "{" + strings.Join(ms, ", ") + "}"
}

// fallbackSelectors are the selectors on the left of `or vector(<number>)`: when they match nothing, the query
// still returns the number.
func fallbackSelectors(e parser.Expr) map[*parser.VectorSelector]bool {
	out := map[*parser.VectorSelector]bool{}
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		b, ok := n.(*parser.BinaryExpr)
		if !ok || b.Op != parser.LOR {
			return nil
		}
		call, ok := unparen(b.RHS).(*parser.Call)
		if ok && call.Func.Name == "vector" {
			if _, number := unparen(call.Args[0]).(*parser.NumberLiteral); number {
				for _, vs := range prometheus.Selectors(b.LHS) {
					out[vs] = true
				}
			}
		}
		return nil
	})
	return out
}

func unparen(e parser.Expr) parser.Expr {
	for {
		p, ok := e.(*parser.ParenExpr)
		if !ok {
			return e
		}
		e = p.Expr
	}
}

// scrapeProblems checks the labels the scrape gave, as the Prometheus Operator would for the chart's
// ServiceMonitors: each job's target is up with the operator's target labels; the per-object series keep
// hvpa's own namespace and container labels (the objects' namespaces and containers, never the hvpa pods'),
// which is what honorLabels does; and no series has an exported_* label (a conflict the scrape renamed: with
// honorLabels off, hvpa's namespace label would end up as exported_namespace and the dashboards' namespace
// variable would list the hvpa pods' namespace).
func scrapeProblems(ctx context.Context, rng grafana.Range) []string {
	var problems []string
	for _, j := range jobs {
		l := j.StaticConfigs[0].Labels
		up := fmt.Sprintf(`up{job=%q, namespace=%q, service=%q, pod=%q, container=%q, endpoint=%q} == 1`,
			j.JobName, l["namespace"], l["service"], l["pod"], l["container"], l["endpoint"])
		if v, err := prom.Query(ctx, up, rng.End); err != nil || len(v.(model.Vector)) != 1 {
			problems = append(problems, fmt.Sprintf("job %s: %s: %v %v", j.JobName, up, v, err))
		}
	}
	names, _, err := prom.API.LabelNames(ctx, nil, rng.Start, rng.End)
	if err != nil {
		return append(problems, err.Error())
	}
	for _, n := range names {
		if strings.HasPrefix(n, model.ExportedLabelPrefix) {
			problems = append(problems, fmt.Sprintf("label %s: a series' own label conflicted with a target label and was renamed (honor_labels off?)", n))
		}
	}
	var containers []string
	for _, p := range procs {
		containers = append(containers, p.container.Name)
	}
	for label, scrapeValues := range map[string][]string{"namespace": {testadmission.AdmissionNamespace}, "container": containers} {
		values, _, err := prom.API.LabelValues(ctx, label, []string{"hvpa_recommender_target_cpu_cores"}, rng.Start, rng.End)
		got := fmt.Sprint(values)
		switch {
		case err != nil:
			problems = append(problems, err.Error())
		case len(values) == 0 && len(notPassed) == 0, slices.ContainsFunc(values, func(v model.LabelValue) bool { return slices.Contains(scrapeValues, string(v)) }):
			problems = append(problems, fmt.Sprintf("hvpa_recommender_target_cpu_cores: %s %s, want the described objects' (not the target's %v)", label, got, scrapeValues))
		}
	}
	sort.Strings(problems)
	return problems
}
