// Command dashrender renders the Grafana dashboards (charts/hvpa/dashboards) as PNG images from a Prometheus
// TSDB, without Grafana: `make dashboards` runs the e2e suite, which keeps the data of the real Prometheus
// that scraped it, then
//
//	hack/run.sh dashrender --prometheus .cache/e2e-prometheus --dashboards charts/hvpa/dashboards --out docs/dashboards
//
// starts a real Prometheus (test/prometheus, no scrape jobs) on that folder's data, evaluates every panel's
// queries as range queries over the data's time range (the TSDB head's, or --start and --end) with Grafana's
// substitutions (hack/dashrender/grafana: variables at All, $__range, $__rate_interval), and writes one PNG
// per dashboard drawn with gonum.org/v1/plot: its title, its panels on Grafana's grid by their gridPos, time
// series as line plots with their legends (legendFormat), stat panels as a big number.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/hvpa-dev/hvpa/test/grafana"
)

// options are the command's flags.
type options struct {
	prometheus, dashboards, out string
	// start and end bound the range (zero: the TSDB head's).
	start, end time.Time
	// scrape is the data's scrape interval, for Grafana's $__rate_interval.
	scrape time.Duration
}

func main() {
	var o options
	var start, end string
	flag.StringVar(&o.prometheus, "prometheus", "", "folder of the Prometheus data (its TSDB in data/), e.g. the e2e suite's $HVPA_E2E_PROMETHEUS_DATA")
	flag.StringVar(&o.dashboards, "dashboards", grafana.DashboardsDir, "folder of the Grafana dashboards (*.json)")
	flag.StringVar(&o.out, "out", "", "folder to write the PNG images to")
	flag.StringVar(&start, "start", "", "start of the range (RFC 3339; default: the first sample of the TSDB head)")
	flag.StringVar(&end, "end", "", "end of the range (RFC 3339; default: the last sample of the TSDB head)")
	flag.DurationVar(&o.scrape, "scrape-interval", time.Second, "the data's scrape interval (Grafana's data source setting, for $__rate_interval)")
	flag.Parse()
	err := parseTimes(&o, start, end)
	if err == nil && (o.prometheus == "" || o.out == "" || flag.NArg() > 0) {
		err = fmt.Errorf("usage: dashrender --prometheus DIR [--dashboards DIR] --out DIR [--start T --end T] [--scrape-interval D]")
	}
	if err == nil {
		err = run(context.Background(), o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dashrender:", err)
		os.Exit(1)
	}
}

// parseTimes sets o.start and o.end from the flags: both or neither.
func parseTimes(o *options, start, end string) error {
	if (start == "") != (end == "") {
		return fmt.Errorf("--start and --end go together")
	}
	if start == "" {
		return nil
	}
	var err error
	if o.start, err = time.Parse(time.RFC3339, start); err != nil {
		return fmt.Errorf("--start: %w", err)
	}
	if o.end, err = time.Parse(time.RFC3339, end); err != nil {
		return fmt.Errorf("--end: %w", err)
	}
	if !o.end.After(o.start) {
		return fmt.Errorf("--end %s is not after --start %s", end, start)
	}
	return nil
}
