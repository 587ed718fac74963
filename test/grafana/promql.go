package grafana

import (
	"fmt"

	"github.com/prometheus/prometheus/promql/parser"
)

// Parse parses a query (its variables substituted) with Prometheus' own PromQL parser.
func Parse(expr string) (parser.Expr, error) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", expr, err)
	}
	return e, nil
}
