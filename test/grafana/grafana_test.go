package grafana

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hvpa-dev/hvpa/test/prometheus"
)

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
		got = append(got, q.Where+": "+q.Expr+" "+q.Label)
	}
	sort.Strings(got)
	want := []string{"panel 2 (inner) target A: a ", "panel 3 (outer) target A: b ", "panel 3 (outer) target B: c ",
		`variable ns: d{x="y"} namespace`, "variable res: topk(3, e) "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queries (-want +got):\n%s", diff)
	}
}

func TestRangeAndBuiltins(t *testing.T) {
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		span, scrape time.Duration
		want         map[string]string
	}{
		// a short e2e run scraped every second: one point per second, four scrapes per rate window
		{100*time.Second + 300*time.Millisecond, time.Second, map[string]string{"__interval": "1s", "__rate_interval": "4s", "__range": "101s", "__range_s": "101"}},
		// an hour at Grafana's default 15s: the span over MaxPoints (12s) is below the scrape interval
		{time.Hour, 0, map[string]string{"__interval": "15s", "__rate_interval": "60s", "__range": "3600s", "__interval_ms": "15000"}},
		// a day at 30s: 288s steps (86400/300), the rate window one step plus a scrape
		{24 * time.Hour, 30 * time.Second, map[string]string{"__interval": "288s", "__rate_interval": "318s", "__range_ms": "86400000"}},
		// 301s over 300 points: rounded up to 2s
		{301 * time.Second, time.Second, map[string]string{"__interval": "2s", "__rate_interval": "4s"}},
	} {
		b := NewRange(start, start.Add(tc.span), tc.scrape).Builtins()
		for k, v := range tc.want {
			if b[k] != v {
				t.Errorf("span %s, scrape %s: %s = %q, want %q", tc.span, tc.scrape, k, b[k], v)
			}
		}
	}
}

func TestValuesAndSubstitute(t *testing.T) {
	var d Dashboard
	if err := json.Unmarshal([]byte(`{"templating": {"list": [
		{"name": "datasource", "type": "datasource", "query": "prometheus"},
		{"name": "namespace", "type": "query", "includeAll": true, "allValue": ".*"},
		{"name": "hvpa", "type": "query", "includeAll": true},
		{"name": "mode", "type": "custom", "allValue": "Off|Auto"}]}}`), &d); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	vars, err := d.Values(NewRange(start, start.Add(time.Minute), time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Substitute(`sum(rate(x{namespace=~"$namespace", hvpa=~"${hvpa}", mode=~"[[mode]]"}[$__rate_interval])) / ${__range_s:raw}`, vars)
	if err != nil {
		t.Fatal(err)
	}
	if want := `sum(rate(x{namespace=~".*", hvpa=~".*", mode=~"Off|Auto"}[4s])) / 60`; got != want {
		t.Errorf("substituted:\n got %s\nwant %s", got, want)
	}
	if _, err := Substitute(`x{a=~"$nope"}[$__rate_interval]`, vars); err == nil || !strings.Contains(err.Error(), "$nope") {
		t.Errorf("an unknown variable: %v", err)
	}
	d.Templating.List = append(d.Templating.List, TemplateVariable{Name: "i", Type: "interval"})
	if _, err := d.Values(NewRange(start, start.Add(time.Minute), time.Second)); err == nil || !strings.Contains(err.Error(), `"interval"`) {
		t.Errorf("an interval variable: %v", err)
	}
}

func TestSelectors(t *testing.T) {
	e, err := Parse(`histogram_quantile(0.9, sum by (le) (rate(a_bucket{x="1"}[5m]))) / on() group_left max_over_time(b[10m:1m]) or {__name__="c", y=~".*"} or vector(0)`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, vs := range prometheus.Selectors(e) {
		got = append(got, prometheus.MetricName(vs)+" "+vs.String())
	}
	want := []string{`a_bucket a_bucket{x="1"}`, "b b", `c {__name__="c",y=~".*"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("selectors (-want +got):\n%s", diff)
	}
	if _, err := Parse(`sum(rate(x[$__rate_interval]))`); err == nil {
		t.Error("an unsubstituted variable parses")
	}
}
