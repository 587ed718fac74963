package main

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hvpa-dev/hvpa/hack/recording"
)

// testRecording has 13 scrapes, every 10s from t=0: x_total{a="1"} counts 0, 1, 2, ... and x_total{a="2"}
// twice that; y_total resets to 0 at t=60s; gauges g by kind; z only until t=50s; a histogram h.
func testRecording(t *testing.T) *recording.Series {
	t.Helper()
	var buf bytes.Buffer
	w := recording.NewWriter(&buf)
	for i := 0; i <= 12; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "# TYPE x_total counter\nx_total{a=\"1\"} %d\nx_total{a=\"2\"} %d\n", i, 2*i)
		y := i
		if i >= 6 {
			y = i - 6
		}
		fmt.Fprintf(&b, "# TYPE y_total counter\ny_total %d\n", y)
		fmt.Fprintf(&b, "# TYPE g gauge\ng{kind=\"current\",ns=\"a\"} 3\ng{kind=\"desired\",ns=\"a\"} 5\ng{kind=\"current\",ns=\"b\"} 7\n")
		if i <= 5 {
			fmt.Fprintf(&b, "# TYPE z gauge\nz 1\n")
		}
		fmt.Fprintf(&b, "# TYPE h histogram\nh_bucket{le=\"1\"} %d\nh_bucket{le=\"2\"} %d\nh_bucket{le=\"+Inf\"} %d\nh_sum 0\nh_count %d\n", 2*i, 6*i, 8*i, 8*i)
		if err := w.WriteScrape(time.Unix(int64(10*i), 0), []byte(b.String())); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := recording.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// at evaluates expr at one time: "labels=value" sorted.
func at(e *evaluator, expr string, sec int64) ([]string, error) {
	t := time.Unix(sec, 0)
	res, err := e.rangeQuery(expr, t, t, time.Second)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, r := range res {
		out = append(out, fmt.Sprintf("%s=%s", recording.Key("", r.Labels), sig3(r.Points[0].V)))
	}
	return out, nil
}

func TestEvaluate(t *testing.T) {
	e := newEvaluator(testRecording(t))
	for expr, want := range map[string][]string{
		`x_total{a="1"}`:                         {`{__name__="x_total",a="1"}=12`},
		`x_total{a=~"1|2"} * 2`:                  {`{a="1"}=24`, `{a="2"}=48`},
		`rate(x_total[1m])`:                      {`{a="1"}=0.1`, `{a="2"}=0.2`},
		`increase(x_total{a="1"}[1m])`:           {`{a="1"}=6`},
		`irate(x_total{a="2"}[1m])`:              {`{a="2"}=0.2`},
		`sum(rate(x_total[1m]))`:                 {`{}=0.3`},
		`sum by (a) (rate(x_total[1m])) * 60`:    {`{a="1"}=6`, `{a="2"}=12`},
		`sum(rate(x_total[1m])) by (a) / 2`:      {`{a="1"}=0.05`, `{a="2"}=0.1`},
		`increase(y_total[2m])`:                  {`{}=10.9`}, // 4 + 6 over the 110s between the first and last sample, extrapolated to 120s
		`max by (kind) (g)`:                      {`{kind="current"}=7`, `{kind="desired"}=5`},
		`min by (kind) (g)`:                      {`{kind="current"}=3`, `{kind="desired"}=5`},
		`avg(g)`:                                 {`{}=5`},
		`count by (ns) (g)`:                      {`{ns="a"}=2`, `{ns="b"}=1`},
		`sum by (nolabel) (g)`:                   {`{}=15`},
		`g{kind!="current"}`:                     {`{__name__="g",kind="desired",ns="a"}=5`},
		`g{kind!~"c.*", ns=~"a"}`:                {`{__name__="g",kind="desired",ns="a"}=5`},
		`{__name__="g", kind="current", ns="b"}`: {`{__name__="g",kind="current",ns="b"}=7`},
		`-g{ns="b"}`:                             {`{kind="current",ns="b"}=-7`},
		`z`:                                      {}, // gone from the scrapes since t=60s: stale
		`histogram_quantile(0.5, sum by (le) (h_bucket))`:              {`{}=1.5`},
		`histogram_quantile(0.99, sum by (le) (rate(h_bucket[1m])))`:   {`{}=2`},
		`histogram_quantile(0.1, h_bucket)`:                            {`{}=0.4`},
		`1 - sum(rate(h_bucket{le="2"}[1m])) / sum(rate(h_count[1m]))`: {`{}=0.25`},
		`x_total / x_total`:         {`{a="1"}=1`, `{a="2"}=1`},
		`sum(missing) or vector(0)`: {`{}=0`},
		`sum(z) or sum(g)`:          {`{}=15`},
		`(1 + 2) * 3 - 4 / 2`:       {`{}=7`},
		`2 * -1`:                    {`{}=-2`},
		`vector(1) + 0x10`:          {`{}=17`},
	} {
		got, err := at(e, expr, 120)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", expr, diff)
		}
	}
	if got, _ := at(e, "z", 50); len(got) != 1 {
		t.Errorf("z at 50s: %v, want its sample", got)
	}
	if got, _ := at(e, "x_total", 500); len(got) != 0 {
		t.Errorf("x_total at 500s (past the 5m lookback after the last scrape): %v", got)
	}
	if got, _ := at(e, `histogram_quantile(0.5, sum by (le) (h_bucket * 0))`, 120); !cmp.Equal(got, []string{`{}=NaN`}) {
		t.Errorf("a quantile without observations in the window: %v, want NaN", got)
	}
}

func TestEvaluateErrors(t *testing.T) {
	e := newEvaluator(testRecording(t))
	for expr, want := range map[string]string{
		`rate(x_total)`:                            "needs a range selector",
		`x_total offset 5m`:                        "not supported",
		`x_total @ 100`:                            "not supported",
		`foo(x_total)`:                             "function foo is not supported",
		`sum without (a) (x_total)`:                "without",
		`x_total > 1`:                              `operator ">" is not supported`,
		`x_total and g`:                            `operator "and" is not supported`,
		`x_total / on(a) x_total`:                  "matching modifier",
		`x_total[5m]`:                              "outside rate",
		`rate(x_total[5m:1m])`:                     "subqueries",
		`rate(x_total{a="$ns"}[$__rate_interval])`: "variable",
		`topk(3, x_total)`:                         `aggregation "topk" is not supported`,
		`histogram_quantile(g, h_bucket)`:          "must be a number",
		`histogram_quantile(0.5)`:                  "takes 2 arguments",
		`sum(x_total`:                              "expected )",
		`x_total{a=~"("}`:                          "matcher a",
		`rate(x_total[1m])[5m]`:                    "range or subquery",
		`{a="1"}`:                                  "without a metric name",
		`x_total / sum(x_total) by (a) + x_total`:  "",
		`sum(g) / g`:                               "",
		`g / ignoring(ns) g`:                       "matching modifier",
		`sum(x_total, 1)`:                          "one argument",
		`x_total{a="1"} / x_total{a="1"} or x_total{a="1"} / sum(x_total)`: "",
		`x_total{a="1"} + {__name__="x_total", a="1"} * g`:                 "",
	} {
		_, err := at(e, expr, 120)
		if want == "" {
			continue // valid: either result is fine, the point is not to panic
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one with %q", expr, err, want)
		}
	}
}

func TestOneToOne(t *testing.T) {
	// after the metric names are dropped, two series of one side can have the same labels
	l := vector{{map[string]string{"__name__": "x", "a": "1"}, 1}, {map[string]string{"__name__": "y", "a": "1"}, 2}}
	r := vector{{map[string]string{"a": "1"}, 4}}
	if _, err := arith("/", l, r); err == nil || !strings.Contains(err.Error(), "several series on the left side") {
		t.Errorf("left duplicates: %v", err)
	}
	if _, err := arith("/", r, l); err == nil || !strings.Contains(err.Error(), "several series on the right side") {
		t.Errorf("right duplicates: %v", err)
	}
	if _, err := or(scalar(1), r); err == nil {
		t.Errorf("or with a scalar: no error")
	}
}

func TestExtrapolatedDelta(t *testing.T) {
	s := func(pairs ...float64) []recording.Sample {
		var out []recording.Sample
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, recording.Sample{T: int64(pairs[i] * 1000), V: pairs[i+1]})
		}
		return out
	}
	for name, c := range map[string]struct {
		w        []recording.Sample
		t        int64
		rng      time.Duration
		increase float64
	}{
		"aligned":                  {s(50, 5, 60, 6, 70, 7, 80, 8, 90, 9, 100, 10), 100_000, time.Minute, 6},
		"late start: half a step":  {s(70, 7, 80, 8, 90, 9, 100, 10), 100_000, time.Minute, 3.5},
		"never below zero":         {s(45, 1, 55, 11, 65, 21), 65_000, time.Minute, 21},
		"a reset":                  {s(10, 8, 20, 9, 30, 1, 40, 2), 40_000, 40 * time.Second, 3 * 40 / 30.0},
		"one sample: no value (0)": {s(10, 1), 10_000, time.Minute, -1},
	} {
		got, ok := extrapolatedDelta(c.w, c.t, c.rng, false)
		if c.increase < 0 {
			if ok {
				t.Errorf("%s: a value from one sample", name)
			}
			continue
		}
		if !ok || math.Abs(got-c.increase) > 1e-9 {
			t.Errorf("%s: increase %v, %v; want %v", name, got, ok, c.increase)
		}
		if r, _ := extrapolatedDelta(c.w, c.t, c.rng, true); math.Abs(r-c.increase/c.rng.Seconds()) > 1e-9 {
			t.Errorf("%s: rate %v, want %v", name, r, c.increase/c.rng.Seconds())
		}
	}
}

func TestSubstituteAndLegend(t *testing.T) {
	vars := map[string]string{"namespace": ".*", "__rate_interval": "1m"}
	got, err := substitute(`rate(x{ns=~"$namespace"}[${__rate_interval}]) + [[namespace]]`, vars)
	if err != nil || got != `rate(x{ns=~".*"}[1m]) + .*` {
		t.Errorf("substitute: %q, %v", got, err)
	}
	if _, err := substitute(`x{ns=~"$nope"}`, vars); err == nil || !strings.Contains(err.Error(), "$nope") {
		t.Errorf("an unknown variable: %v", err)
	}
	l := map[string]string{"__name__": "x", "a": "1", "b": "2"}
	for format, want := range map[string]string{
		"{{a}}/{{ b }} p50": "1/2 p50",
		"{{missing}}x":      "x",
		"":                  `{a="1",b="2"}`,
		"__auto":            `{a="1",b="2"}`,
	} {
		if got := legend(format, "expr", l); got != want {
			t.Errorf("legend(%q) = %q, want %q", format, got, want)
		}
	}
	if got := legend("", "sum(x)", map[string]string{}); got != "sum(x)" {
		t.Errorf("legend of a series without labels: %q, want the expression", got)
	}
}

func TestFormatValue(t *testing.T) {
	two := 2
	for _, c := range []struct {
		v        float64
		unit     string
		decimals *int
		want     string
	}{
		{0.000123, "s", nil, "123us"}, {0.0456, "s", nil, "45.6ms"}, {1.5, "s", nil, "1.5s"}, {90, "s", nil, "1.5min"},
		{7200, "s", nil, "2h"}, {0, "s", nil, "0s"}, {1536, "bytes", nil, "1.5 KiB"}, {3 << 30, "bytes", nil, "3 GiB"},
		{0.256, "percentunit", nil, "25.6%"}, {1234567, "short", nil, "1.23M"}, {0.1234, "short", nil, "0.123"},
		{5, "short", &two, "5.00"}, {math.NaN(), "short", nil, "NaN"}, {-2500, "", nil, "-2.5K"},
	} {
		if got := formatValue(c.v, c.unit, c.decimals); got != c.want {
			t.Errorf("formatValue(%v, %s) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
	const mi = 1 << 20
	for _, c := range []struct {
		lo, hi float64
		unit   string
		want   []float64
	}{
		{0, 7, "short", []float64{0, 2, 4, 6, 8}}, {3, 3, "", []float64{2.6, 2.8, 3, 3.2, 3.4}},
		{0, 0, "s", []float64{0, 0.25, 0.5, 0.75, 1}}, {0.013, 0.094, "", []float64{0, 0.025, 0.05, 0.075, 0.1}},
		{0, 1400 * mi, "bytes", []float64{0, 512 * mi, 1024 * mi, 1536 * mi}}, {0, 3, "bytes", []float64{0, 1, 2, 3}},
	} {
		if got := niceRange(c.lo, c.hi, c.unit); !cmp.Equal(got, c.want, cmpopts.EquateApprox(0, 1e-12)) {
			t.Errorf("niceRange(%v, %v, %s) = %v, want %v", c.lo, c.hi, c.unit, got, c.want)
		}
	}
}
