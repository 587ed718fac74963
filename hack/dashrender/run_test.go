package main

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hvpa-dev/hvpa/test/prometheus"
)

// TestRun runs the command's path against a real Prometheus: half an hour of backfilled data, the small
// board, a PNG out; a query Prometheus refuses is an error naming the dashboard, the panel and the target.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Prometheus server; runs in `make test`, not under -short")
	}
	ctx := context.Background()
	dir := t.TempDir()
	end := time.Now().UTC().Truncate(time.Minute).Add(-3 * time.Hour)
	start := end.Add(-30 * time.Minute)
	var om strings.Builder
	om.WriteString("# TYPE demo_replicas gauge\n")
	for ts := start; !ts.After(end); ts = ts.Add(15 * time.Second) {
		i := int(ts.Sub(start) / (15 * time.Second))
		fmt.Fprintf(&om, "demo_replicas{namespace=\"n\",state=\"desired\"} %d %d\n", 1+i/30, ts.Unix())
		fmt.Fprintf(&om, "demo_replicas{namespace=\"n\",state=\"current\"} %d %d\n", 1+max(i-4, 0)/30, ts.Unix())
	}
	om.WriteString("# TYPE demo_decisions counter\n")
	for ts := start; !ts.After(end); ts = ts.Add(15 * time.Second) {
		fmt.Fprintf(&om, "demo_decisions_total %d %d\n", int(ts.Sub(start)/time.Second)/5, ts.Unix())
	}
	om.WriteString("# EOF\n")
	promDir := filepath.Join(dir, "prometheus")
	s, err := prometheus.Start(ctx, promDir, prometheus.Options{Backfill: []byte(om.String())})
	if err != nil {
		t.Fatal(err)
	}
	s.Stop() // run starts its own server on the data
	dash := filepath.Join(dir, "dashboards")
	if err := os.MkdirAll(dash, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dash, "test.json"), []byte(board), 0o644); err != nil {
		t.Fatal(err)
	}
	o := options{prometheus: promDir, dashboards: dash, out: filepath.Join(dir, "png"), start: start, end: end, scrape: 15 * time.Second}
	if err := run(ctx, o); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(o.out, "test.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := image.Rect(0, 0, 2*margin+24*colW, headerH+9*rowH+margin); img.Bounds() != want {
		t.Errorf("image %v, want %v", img.Bounds(), want)
	}

	// rate() of a gauge selector without a range: Prometheus refuses the query
	bad := strings.Replace(board, `max by (state) (demo_replicas{namespace=~\"$ns\"})`, `rate(demo_replicas{namespace=~\"$ns\"})`, 1)
	if err := os.WriteFile(filepath.Join(dash, "test.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(ctx, o)
	if err == nil || !strings.Contains(err.Error(), "test.json: panel 2 (Replicas) target A") || !strings.Contains(err.Error(), "range vector") {
		t.Errorf("a query Prometheus refuses: %v", err)
	}
}

// TestRunWithoutData: a folder without Prometheus data says what to run.
func TestRunWithoutData(t *testing.T) {
	err := run(context.Background(), options{prometheus: t.TempDir(), dashboards: filepath.Join("..", "..", "charts", "hvpa", "dashboards"), out: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "make dashboards") {
		t.Errorf("no data: %v", err)
	}
}
