package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hvpa-dev/hvpa/test/grafana"
)

var out = flag.String("out", "", "also write the PNGs of the dashboards over synthetic series to this folder")

// synthetic stands in for Prometheus: every query returns two deterministic series over the range, with every
// label a legend names, a gap and a NaN; a query containing "nothing" returns no series and one containing
// "fail" an error.
type synthetic struct{ queries []string }

func (s *synthetic) QueryRange(_ context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	s.queries = append(s.queries, q)
	switch {
	case strings.Contains(q, "fail"):
		return nil, errors.New("bad_data: parse error")
	case strings.Contains(q, "nothing"):
		return nil, nil
	}
	var m model.Matrix
	for k := range 2 {
		metric := model.Metric{}
		for _, l := range []string{"hvpa", "state", "container", "object", "source", "reason", "step", "mode", "supported", "resource", "outcome", "kind"} {
			metric[model.LabelName(l)] = model.LabelValue(fmt.Sprintf("%s-%d", l, k))
		}
		ss := &model.SampleStream{Metric: metric}
		for i, t := 0, start; !t.After(end); i, t = i+1, t.Add(step) {
			v := 1 + float64(k) + math.Sin(float64(i)/7)
			switch {
			case i > 20 && i < 25: // a gap: no samples
				continue
			case i == 40:
				v = math.NaN()
			}
			ss.Values = append(ss.Values, model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: model.SampleValue(v)})
		}
		m = append(m, ss)
	}
	return m, nil
}

func testRange() grafana.Range {
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	return grafana.NewRange(start, start.Add(5*time.Minute), time.Second)
}

func loadDashboards(t *testing.T) []grafana.Dashboard {
	t.Helper()
	ds, err := grafana.Load(filepath.Join("..", "..", grafana.DashboardsDir))
	if err != nil || len(ds) < 4 {
		t.Fatalf("dashboards: %d, %v", len(ds), err)
	}
	return ds
}

// TestRenderDashboards renders the real dashboards over synthetic series: every query is asked for with its
// variables substituted, every panel shows its series (pixels of their colors inside it), the images have
// the grid's size, and rendering is deterministic. `go -C hack test ./dashrender -run TestRenderDashboards
// -out DIR` also writes the images to DIR.
func TestRenderDashboards(t *testing.T) {
	rng := testRange()
	for _, d := range loadDashboards(t) {
		q := &synthetic{}
		panels, err := fetch(context.Background(), q, &d, rng)
		if err != nil {
			t.Fatalf("%s: %v", d.File, err)
		}
		for _, expr := range q.queries {
			if strings.Contains(expr, "$") {
				t.Errorf("%s: a query with a variable left: %s", d.File, expr)
			}
		}
		img, layouts, err := render(&d, panels, rng)
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
		checkPanelsDrawn(t, d.File, img, layouts)
		var a, b bytes.Buffer
		if err := png.Encode(&a, img); err != nil {
			t.Fatal(err)
		}
		again, _, _ := render(&d, panels, rng)
		_ = png.Encode(&b, again)
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two renderings differ", d.File)
		}
		if a.Len() > 400<<10 {
			t.Errorf("%s: the PNG has %d KB, want at most 400", d.File, a.Len()>>10)
		}
		if *out != "" {
			if err := os.WriteFile(filepath.Join(*out, strings.TrimSuffix(d.File, ".json")+".png"), a.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checkPanelsDrawn: every panel but a row drew series, and a pixel of one of their colors is inside it.
func checkPanelsDrawn(t *testing.T, file string, img image.Image, layouts []panelLayout) {
	t.Helper()
	for _, l := range layouts {
		if l.Type == "row" {
			continue
		}
		if len(l.Colors) == 0 {
			t.Errorf("%s: panel %q shows no data", file, l.Title)
			continue
		}
		drawn := false // series can hide each other: at least one shows
		for _, c := range l.Colors {
			drawn = drawn || hasColor(img, l.Rect, c)
		}
		if !drawn {
			t.Errorf("%s: panel %q: no pixel of a series color in %v", file, l.Title, l.Rect)
		}
	}
}

func hasColor(img image.Image, r image.Rectangle, c color.RGBA) bool {
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

// board is a small dashboard: a row, a time series with a legend format, a stat of the whole range.
const board = `{"uid": "t", "title": "Test", "schemaVersion": 39, "templating": {"list": [{"name": "ns", "type": "query", "query": "label_values(x, ns)"}]},
  "panels": [
    {"id": 1, "type": "row", "title": "A row", "gridPos": {"x": 0, "y": 0, "w": 24, "h": 1}},
    {"id": 2, "type": "timeseries", "title": "Replicas", "gridPos": {"x": 0, "y": 1, "w": 12, "h": 8},
     "targets": [{"refId": "A", "expr": "max by (state) (demo_replicas{namespace=~\"$ns\"})", "legendFormat": "{{state}}"}]},
    {"id": 3, "type": "stat", "title": "Decisions", "gridPos": {"x": 12, "y": 1, "w": 12, "h": 8},
     "targets": [{"refId": "A", "expr": "sum(increase(demo_decisions_total[$__range]))"}]}]}`

func parseBoard(t *testing.T, s string) *grafana.Dashboard {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "test.json"), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := grafana.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &ds[0]
}

// TestFetchErrors: what cannot be rendered is an error that names the panel and the target.
func TestFetchErrors(t *testing.T) {
	for _, tc := range []struct{ old, new, want string }{
		{`demo_replicas{`, `fail{`, "panel 2 (Replicas) target A: bad_data"},
		{`$ns`, `$nope`, "panel 2 (Replicas) target A: unknown template variable $nope"},
		{`"type": "stat"`, `"type": "table"`, `panel 3 (Decisions): type "table" is not supported`},
		{`"w": 12, "h": 8},
     "targets": [{"refId": "A", "expr": "sum`, `"w": 13, "h": 8},
     "targets": [{"refId": "A", "expr": "sum`, "outside the 24 columns"},
		{`"type": "row", "title": "A row"`, `"type": "row", "collapsed": true, "panels": [{"id": 4}], "title": "A row"`, "collapsed"},
		{`"type": "query"`, `"type": "textbox"`, `type "textbox" is not supported`},
	} {
		if !strings.Contains(board, tc.old) {
			t.Fatalf("the board has no %s", tc.old)
		}
		_, err := fetch(context.Background(), &synthetic{}, parseBoard(t, strings.Replace(board, tc.old, tc.new, 1)), testRange())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s -> %s: %v, want %q", tc.old, tc.new, err, tc.want)
		}
	}
}

// TestNoData: a panel whose query returns nothing says "No data" and draws no series; the others draw theirs.
func TestNoData(t *testing.T) {
	d := parseBoard(t, strings.Replace(board, "demo_replicas", "nothing", 1))
	panels, err := fetch(context.Background(), &synthetic{}, d, testRange())
	if err != nil {
		t.Fatal(err)
	}
	img, layouts, err := render(d, panels, testRange())
	if err != nil {
		t.Fatal(err)
	}
	if len(layouts) != 3 || len(layouts[1].Colors) != 0 || len(layouts[2].Colors) != 2 || !hasColor(img, layouts[2].Rect, layouts[2].Colors[0]) {
		t.Errorf("layouts %+v", layouts)
	}
	if got := summary(panels); got != "2 panels, 1 without data: Replicas" {
		t.Errorf("summary %q", got)
	}
}

func TestLegend(t *testing.T) {
	m := model.Metric{"__name__": "x", "state": "desired", "hvpa": "web"}
	for _, tc := range []struct{ format, want string }{
		{"{{hvpa}} {{ state }}", "web desired"},
		{"{{missing}}!", "!"},
		{"", `x{hvpa="web", state="desired"}`},
		{"__auto", `x{hvpa="web", state="desired"}`},
	} {
		if got := legend(tc.format, "expr", m); got != tc.want {
			t.Errorf("legend(%q) = %q, want %q", tc.format, got, tc.want)
		}
	}
	if got := legend("", "vector(1)", model.Metric{}); got != "vector(1)" {
		t.Errorf("a series without labels: %q", got)
	}
}

func TestSegments(t *testing.T) {
	at := func(s int, v float64) model.SamplePair {
		return model.SamplePair{Timestamp: model.Time(s * 1000), Value: model.SampleValue(v)}
	}
	segs := segments([]model.SamplePair{at(0, 1), at(1, 2), at(2, math.NaN()), at(3, 3), at(4, 4), at(10, 5), at(11, math.Inf(1))}, time.Second)
	var got []string
	for _, s := range segs {
		got = append(got, fmt.Sprint(s))
	}
	if want := "[{0 1} {1 2}] [{3 3} {4 4}] [{10 5}]"; strings.Join(got, " ") != want {
		t.Errorf("segments %s, want %s", strings.Join(got, " "), want)
	}
}

func TestTicks(t *testing.T) {
	start := float64(time.Date(2026, 1, 1, 10, 0, 7, 0, time.UTC).Unix())
	var got []string
	for _, tk := range (timeTicks{labels: 4}).Ticks(start, start+100) {
		got = append(got, tk.Label)
	}
	if want := "10:00:30 10:01:00 10:01:30"; strings.Join(got, " ") != want {
		t.Errorf("time ticks %v, want %s", got, want)
	}
	got = nil
	for _, tk := range (unitTicks{unit: "bytes", labels: 2}).Ticks(0, 3<<30) {
		if tk.Label != "" {
			got = append(got, tk.Label)
		}
	}
	if want := "0 B 1 GiB 2 GiB 3 GiB"; strings.Join(got, " ") != want {
		t.Errorf("byte ticks %v, want %s", got, want)
	}
	for _, tc := range []struct {
		unit             string
		lo, hi, lo2, hi2 float64
	}{
		// whole steps of gonum's major ticks (Talbot, Lin and Hanrahan's labelling), from zero
		{"", 0.3, 4.6, 0, 6}, {"", 0, 0, 0, 1}, {"", -3, 17, -8, 24}, {"bytes", 100 << 20, 700 << 20, 0, 900 << 20},
	} {
		if lo, hi := (unitTicks{unit: tc.unit}).bounds(tc.lo, tc.hi); lo != tc.lo2 || hi != tc.hi2 {
			t.Errorf("bounds(%v, %v) in %q = %v, %v, want %v, %v", tc.lo, tc.hi, tc.unit, lo, hi, tc.lo2, tc.hi2)
		}
	}
}

func TestFormatValue(t *testing.T) {
	two := 2
	for _, tc := range []struct {
		v        float64
		unit     string
		decimals *int
		want     string
	}{
		{0.0123, "s", nil, "12.3ms"}, {90, "s", nil, "1.5min"}, {3 << 20, "bytes", nil, "3 MiB"}, {0.256, "percentunit", nil, "25.6%"},
		{12345, "short", nil, "12.3K"}, {1.5, "none", &two, "1.50"}, {math.NaN(), "", nil, "NaN"}, {math.Inf(-1), "", nil, "-Inf"},
	} {
		if got := formatValue(tc.v, tc.unit, tc.decimals); got != tc.want {
			t.Errorf("formatValue(%v, %s) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}
