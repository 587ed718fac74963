package metricsdoc

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLex(t *testing.T) {
	for expr, want := range map[string]string{
		`rate(x_total{a="b",c=~"$ns"}[$__rate_interval])`:           `ident:rate ( ident:x_total { ident:a op:= string:"b" , ident:c op:=~ string:"$ns" } [ variable:$__rate_interval ] )`,
		`sum by (le) (rate(h_bucket[5m:1m] offset 1h30m)) * 1e3`:    `ident:sum ident:by ( ident:le ) ( ident:rate ( ident:h_bucket [ duration:5m : duration:1m ] ident:offset duration:1h30m ) ) op:* number:1e3`,
		`a:b:rate5m != -.5 or on() NaN >= 0x1F`:                     `ident:a:b:rate5m op:!= op:- number:.5 ident:or ident:on ( ) number:NaN op:>= number:0x1F`,
		"x{l='it\\'s'} # comment\n/ `raw\\` ^ ${var:regex} % 250ms": "ident:x { ident:l op:= string:'it\\'s' } op:/ string:`raw\\` op:^ variable:${var:regex} op:% duration:250ms",
		`vector(1) @ 100 <= x < y > z`:                              `ident:vector ( number:1 ) op:@ number:100 op:<= ident:x op:< ident:y op:> ident:z`,
	} {
		toks, err := Lex(expr)
		if err != nil {
			t.Errorf("Lex(%s): %v", expr, err)
			continue
		}
		var got []string
		for _, tk := range toks {
			if tk.Kind == EOF {
				break
			}
			if prefix, ok := map[TokenKind]string{Ident: "ident:", Number: "number:", Duration: "duration:", String: "string:", Variable: "variable:", Op: "op:"}[tk.Kind]; ok {
				got = append(got, prefix+tk.Text)
			} else {
				got = append(got, tk.Text)
			}
		}
		g := strings.Join(got, " ")
		if g != want {
			t.Errorf("Lex(%s):\n got %s\nwant %s", expr, g, want)
		}
	}
	for _, bad := range []string{`x{a="b}`, `x ! y`, `5mx`, `1.5m`, `${x`, `x ? y`, `$`} {
		if _, err := Lex(bad); err == nil {
			t.Errorf("Lex(%s): no error", bad)
		}
	}
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`hvpa_controller_replicas{namespace=~"$namespace", kind="current"}`: {"hvpa_controller_replicas"},
		`histogram_quantile(0.9, sum by (le, step) (rate(hvpa_recommender_loop_step_duration_seconds_bucket[$__rate_interval])))`: {
			"hvpa_recommender_loop_step_duration_seconds_bucket"},
		`sum(rate(a_total[5m])) by (outcome) / ignoring(outcome) group_left sum(rate(b_total[5m])) without (x, y)`: {"a_total", "b_total"},
		`(sum(rate(errors_total{outcome="error"}[5m])) or vector(0)) / sum(rate(errors_total[5m]))`:                {"errors_total"},
		`max_over_time(x[1h:5m]) > on(a) group_right(b) count_values("value", y) unless {__name__="z", le="1"}`:    {"x", "y", "z"},
		`SUM BY (le) (rate(x[5m])) + Sum(y)`:                          {"x", "y"}, // aggregations and keywords are case-insensitive
		`1 - sum(foo:bar:ratio) and bool 2 offset 5m`:                 {"foo:bar:ratio"},
		`label_replace(up, "dst", "$1", "src", "(.*)") * topk(3, up)`: {"up"},
	} {
		got, err := MetricNames(expr)
		if err != nil {
			t.Errorf("MetricNames(%s): %v", expr, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("MetricNames(%s) (-want +got):\n%s", expr, diff)
		}
	}
	for _, bad := range []string{`no_such_function(x)`, `Rate(x[5m])` /* functions are case-sensitive */, `x{a="b"`, `x}`, `sum by (a, 1) (x)`} {
		if _, err := MetricNames(bad); err == nil {
			t.Errorf("MetricNames(%s): no error", bad)
		}
	}
}
