package main

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	hvpactrl "github.com/hvpa-dev/hvpa/controllers/hvpa"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	vpactrl "github.com/hvpa-dev/hvpa/controllers/vpa"
	"github.com/hvpa-dev/hvpa/hack/internal/metricsdoc"
	"github.com/hvpa-dev/hvpa/hack/recording"
	"github.com/hvpa-dev/hvpa/webhooks/pod"
)

var out = flag.String("out", "", "also write the synthetic recording and the PNGs of the dashboards to this folder")

// writeSyntheticRecording plays 30 minutes of an hvpa process, scraped every 15s, through the components'
// real Metrics (so every series has its real name, type and labels): an Hvpa whose load rises and falls,
// a VPA, the updater resizing and evicting, the webhook sizing pods. Deterministic.
func writeSyntheticRecording(t *testing.T, path string) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	rec, ctl, upd, wh := vpactrl.NewMetrics(reg), hvpactrl.NewMetrics(reg), updater.NewMetrics(reg), pod.NewMetrics(reg)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := recording.NewWriter(f)
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	const scrapes, every = 120, 15 * time.Second
	const gi = 1 << 30
	replicas, prevReplicas := 2, 2
	for i := 0; i < scrapes; i++ {
		now := start.Add(time.Duration(i) * every)
		x := float64(i) / scrapes                                 // 0 .. 1
		load := 0.4 + 1.6*math.Sin(math.Pi*x)*math.Sin(math.Pi*x) // cores per pod of demand at 2 replicas
		wave := 0.5 + 0.5*math.Sin(float64(i)/5)

		// recommender: a run every minute
		if i%4 == 0 {
			for j, step := range []string{"resolve", "pods", "usage", "oom", "status", "checkpoints"} {
				rec.StepDuration.WithLabelValues(step).Observe(0.002 * float64(j+1) * (1 + wave))
			}
			rec.StepDuration.WithLabelValues("total").Observe(0.05 * (1 + wave))
			rec.Aggregates.Set(float64(12 + i/20))
			rec.Objects.Reset()
			rec.Objects.WithLabelValues("Auto", "true").Set(2)
			rec.Objects.WithLabelValues("InPlaceOrRecreate", "true").Set(1)
			rec.Objects.WithLabelValues("Off", "false").Set(float64(i / 60))
			rec.CheckpointsWritten.Add(3)
			if i%28 == 8 {
				rec.MetricsAPIErrors.Inc()
			}
			if i/4 < 3 {
				rec.RecommendationLatency.Observe(40 + 30*float64(i/4))
			}
			target := 0.25 + 0.5*load
			for k := range 3 {
				usage := load * (0.7 + 0.25*float64(k) + 0.1*wave)
				rec.Quality.WithLabelValues("cpu").Observe(usage / (target * 2 / float64(replicas)))
				rec.Quality.WithLabelValues("memory").Observe(0.6 + 0.15*float64(k) + 0.3*x)
			}
			rec.TargetCPU.WithLabelValues("demo", "Hvpa", "web", "app").Set(target)
			rec.TargetMemory.WithLabelValues("demo", "Hvpa", "web", "app").Set((0.5 + 0.5*x) * gi)
			rec.TargetCPU.WithLabelValues("demo", "VerticalPodAutoscaler", "api", "server").Set(0.3)
			rec.TargetMemory.WithLabelValues("demo", "VerticalPodAutoscaler", "api", "server").Set(0.75 * gi)
		}
		rec.UsageCPU.WithLabelValues("demo", "Hvpa", "web", "app").Set(load * 2 / float64(replicas) * (0.9 + 0.2*wave))
		rec.UsageMemory.WithLabelValues("demo", "Hvpa", "web", "app").Set((0.4 + 0.4*x + 0.05*wave) * gi)
		rec.UsageCPU.WithLabelValues("demo", "VerticalPodAutoscaler", "api", "server").Set(0.2 + 0.05*wave)
		rec.UsageMemory.WithLabelValues("demo", "VerticalPodAutoscaler", "api", "server").Set(0.6 * gi)
		if i == 70 {
			rec.OOMs.Inc()
		}

		// Hvpa controller: a decision every 30s
		if i%2 == 0 {
			desired := 2 + int(load*1.5)
			ctl.Decisions.WithLabelValues("demo", "web").Inc()
			ctl.Decisions.WithLabelValues("demo", "broken").Inc()
			if desired != replicas && i%8 == 0 {
				prevReplicas, replicas = replicas, desired
				ctl.Scalings.WithLabelValues("demo", "web").Inc()
			} else if desired != replicas {
				ctl.Blocked.WithLabelValues("demo", "web", "StabilizationWindow").Inc()
			}
			if i%10 == 4 {
				ctl.Blocked.WithLabelValues("demo", "web", "MinChange").Inc()
			}
			ctl.Replicas.WithLabelValues("demo", "web", "current").Set(float64(prevReplicas))
			ctl.Replicas.WithLabelValues("demo", "web", "desired").Set(float64(desired))
			ctl.Replicas.WithLabelValues("demo", "web", "applied").Set(float64(replicas))
			ctl.Replicas.WithLabelValues("demo", "web", "hpa").Set(float64(2 + int(load)))
			prevReplicas = replicas
			ctl.PerPodCPU.WithLabelValues("demo", "web", "app").Set(math.Round(20*(0.25+0.5*load)*2/float64(replicas)) / 20)
			ctl.PerPodMemory.WithLabelValues("demo", "web", "app").Set(math.Round(8*(0.5+0.5*x)) / 8 * gi)
			ctl.WorkloadCPU.WithLabelValues("demo", "web", "app", "VPA").Set((0.25 + 0.5*load) * 2)
			ctl.WorkloadCPU.WithLabelValues("demo", "web", "app", "HPA").Set(load * 2)
			ctl.WorkloadMemory.WithLabelValues("demo", "web", "app", "VPA").Set((0.5 + 0.5*x) * 2 * gi)
			ctl.Unsupported.WithLabelValues("demo", "web").Set(0)
			ctl.Unsupported.WithLabelValues("demo", "broken").Set(1)
			ctl.Interval.WithLabelValues("demo", "web").Set(float64(min(replicas-2, 2)))
		}

		// updater: a loop every minute
		if i%4 == 0 {
			upd.Loop.Observe(0.004 * (1 + 3*wave))
		}
		pending := 0
		if replicas != 2 && i%8 < 3 {
			pending = 2
		}
		upd.Candidates.WithLabelValues("Hvpa").Set(float64(pending))
		upd.Candidates.WithLabelValues("VerticalPodAutoscaler").Set(float64(i % 3 / 2))
		if pending > 0 {
			upd.Resizes.WithLabelValues("requested").Add(float64(pending))
		}
		if i%9 == 0 {
			upd.Resizes.WithLabelValues("refused").Inc()
			upd.Evictions.WithLabelValues("fallback").Inc()
		}
		if i%13 == 0 {
			upd.Evictions.WithLabelValues("evicted").Inc()
			upd.Convergence.WithLabelValues("VerticalPodAutoscaler").Observe(60 + 20*wave)
		}
		if i%17 == 5 {
			upd.Evictions.WithLabelValues("blocked_by_pdb").Inc()
		}
		if i%8 == 3 && replicas != 2 {
			upd.Convergence.WithLabelValues("Hvpa").Observe(20 + 15*wave)
		}
		upd.Skips.WithLabelValues("within_bounds").Add(3)
		if i%5 == 0 {
			upd.Skips.WithLabelValues("in_progress").Inc()
		}

		// webhook: pods created while scaling, and object validations
		for k := 0; k < 1+pending+i%3; k++ {
			outcome := []string{pod.OutcomeSized, pod.OutcomeUntargeted, pod.OutcomeUnchanged}[k%3]
			wh.Observe("pods", outcome, time.Duration(300+400*k+int(500*wave))*time.Microsecond)
		}
		if i%6 == 0 {
			wh.Observe("hvpas", pod.OutcomeAllowed, 200*time.Microsecond)
		}
		if i == 40 || i == 90 { // a counter's first increment creates it: increase() sees the second one
			wh.Observe("verticalpodautoscalers", pod.OutcomeRejected, 150*time.Microsecond)
			wh.Observe("pods", pod.OutcomeError, 2*time.Millisecond)
		}

		text, err := recording.Exposition(reg)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteScrape(now, text); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRenderDashboards renders the real dashboards over the synthetic recording: every panel shows data
// (pixels of its series' colors in its plot), the images have the grid's size, and rendering is
// deterministic. `go test ./hack/dashrender -run TestRenderDashboards -out DIR` also writes the recording
// and the images to DIR.
func TestRenderDashboards(t *testing.T) {
	dir := t.TempDir()
	if *out != "" {
		dir = *out
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	recPath := filepath.Join(dir, "synthetic.prom.gz")
	writeSyntheticRecording(t, recPath)
	series, err := recording.Read(recPath)
	if err != nil {
		t.Fatal(err)
	}
	dashboards, err := metricsdoc.LoadDashboards(filepath.Join("..", "..", metricsdoc.DashboardsDir))
	if err != nil {
		t.Fatal(err)
	}
	r := newRenderer(series)
	for i := range dashboards {
		d := &dashboards[i]
		img, layouts, err := r.render(d)
		if err != nil {
			t.Fatalf("%s: %v", d.File, err)
		}
		bottom := 0
		for _, p := range d.Panels {
			bottom = max(bottom, p.GridPos.Y+p.GridPos.H)
		}
		if want := image.Rect(0, 0, 2*margin+24*colW, headerH+bottom*rowH+margin); img.Bounds() != want {
			t.Errorf("%s: image %v, want %v", d.File, img.Bounds(), want)
		}
		for _, l := range layouts {
			if l.Type == "row" {
				continue
			}
			if l.Series == 0 {
				t.Errorf("%s: panel %q shows no data", d.File, l.Title)
				continue
			}
			drawn := false // series can hide each other: at least one shows
			for _, c := range l.Colors {
				drawn = drawn || hasColor(img, l.Plot, c)
			}
			if !drawn {
				t.Errorf("%s: panel %q: no pixel of a series color in its plot %v", d.File, l.Title, l.Plot)
			}
		}
		var a, b bytes.Buffer
		if err := png.Encode(&a, img); err != nil {
			t.Fatal(err)
		}
		again, _, _ := newRenderer(series).render(d)
		_ = png.Encode(&b, again)
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two renderings differ", d.File)
		}
		if a.Len() > 200<<10 {
			t.Errorf("%s: the PNG has %d KB, want at most 200", d.File, a.Len()>>10)
		}
		if *out != "" {
			if err := os.WriteFile(filepath.Join(dir, strings.TrimSuffix(d.File, ".json")+".png"), a.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s", d.File, summary(layouts))
		}
	}
}

func hasColor(img *image.RGBA, r image.Rectangle, c interface {
	RGBA() (uint32, uint32, uint32, uint32)
}) bool {
	cr, cg, cb, _ := c.RGBA()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if pr == cr && pg == cg && pb == cb {
				return true
			}
		}
	}
	return false
}

// TestRun runs the command's path: a recording and a folder of dashboards in, PNGs out.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	recPath := filepath.Join(dir, "rec.prom.gz")
	writeSyntheticRecording(t, recPath)
	dash := filepath.Join(dir, "dashboards")
	if err := os.MkdirAll(dash, 0o755); err != nil {
		t.Fatal(err)
	}
	const board = `{"uid": "t", "title": "Test", "schemaVersion": 39, "templating": {"list": [{"name": "ns", "type": "query", "query": "label_values(x, ns)"}]},
	  "panels": [
	    {"id": 1, "type": "row", "title": "A row", "gridPos": {"x": 0, "y": 0, "w": 24, "h": 1}},
	    {"id": 2, "type": "timeseries", "title": "Replicas", "gridPos": {"x": 0, "y": 1, "w": 12, "h": 8},
	     "targets": [{"refId": "A", "expr": "max by (state) (hvpa_controller_replicas{namespace=~\"$ns\"})", "legendFormat": "{{state}}"}]},
	    {"id": 3, "type": "stat", "title": "Decisions", "gridPos": {"x": 12, "y": 1, "w": 12, "h": 8},
	     "targets": [{"refId": "A", "expr": "sum(increase(hvpa_controller_decisions_total[$__range]))"}]}]}`
	if err := os.WriteFile(filepath.Join(dash, "test.json"), []byte(board), 0o644); err != nil {
		t.Fatal(err)
	}
	pngs := filepath.Join(dir, "png")
	if err := run(recPath, dash, pngs); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(pngs, "test.png"))
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

	// a query outside the subset is an error that names the dashboard, the panel and the target
	bad := strings.Replace(board, `max by (state)`, `topk(2, `, 1)
	bad = strings.Replace(bad, `"legendFormat": "{{state}}"`, `"legendFormat": ""`, 1)
	bad = strings.Replace(bad, `\"$ns\"})"`, `\"$ns\"}))"`, 1)
	if err := os.WriteFile(filepath.Join(dash, "test.json"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(recPath, dash, pngs)
	if err == nil || !strings.Contains(err.Error(), "test.json") || !strings.Contains(err.Error(), "panel 2 (Replicas)") || !strings.Contains(err.Error(), "topk") {
		t.Errorf("an unsupported query: %v", err)
	}
}
