// Command dashrender renders the Grafana dashboards (charts/hvpa/dashboards) as static PNG images from a
// recording of the hvpa binary's /metrics (package hack/recording), without Grafana or Prometheus:
//
//	go run ./hack/dashrender --recording rec.prom.gz --dashboards charts/hvpa/dashboards --out docs/dashboards
//
// writes one PNG per dashboard: its title and its panels on Grafana's grid (time series and stat panels),
// each query evaluated over the whole recording by a small evaluator for the PromQL subset the dashboards
// use (see eval.go); template variables take their "All" value. A query outside the subset is an error.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"

	"github.com/hvpa-dev/hvpa/hack/internal/metricsdoc"
	"github.com/hvpa-dev/hvpa/hack/recording"
)

func main() {
	rec := flag.String("recording", "", "recording file (gzip'd blocks of scrapes, see hack/recording)")
	dir := flag.String("dashboards", metricsdoc.DashboardsDir, "folder of the Grafana dashboards (*.json)")
	out := flag.String("out", "", "folder to write the PNG images to")
	flag.Parse()
	if *rec == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: dashrender --recording FILE [--dashboards DIR] --out DIR")
		os.Exit(2)
	}
	if err := run(*rec, *dir, *out); err != nil {
		fmt.Fprintln(os.Stderr, "dashrender:", err)
		os.Exit(1)
	}
}

func run(recPath, dir, out string) error {
	series, err := recording.Read(recPath)
	if err != nil {
		return err
	}
	dashboards, err := metricsdoc.LoadDashboards(dir)
	if err != nil {
		return err
	}
	if len(dashboards) == 0 {
		return fmt.Errorf("no dashboards in %s", dir)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	r := newRenderer(series)
	for i := range dashboards {
		d := &dashboards[i]
		img, layouts, err := r.render(d)
		if err != nil {
			return fmt.Errorf("%s: %w", d.File, err)
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			return err
		}
		path := filepath.Join(out, strings.TrimSuffix(d.File, ".json")+".png")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %dx%d, %d KB, %s\n", path, img.Bounds().Dx(), img.Bounds().Dy(), b.Len()/1024, summary(layouts))
	}
	return nil
}
