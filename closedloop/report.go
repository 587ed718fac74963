package closedloop

import (
	"fmt"
	"html"
	"io"
	"strings"
	"time"
)

// WriteReport writes a self-contained HTML page (inline SVG, no scripts, no network): per workload, the
// summary of each run, then the runs side by side, one column each, on common axes per row: CPU and memory
// demand (grey) against the requests of every pod (blue) and of the serving pods (green), replicas, and the
// mean per-pod requests; OOM kills are red marks.
func WriteReport(w io.Writer, title string, sums []Summary, series []*Series) error {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>hvpa simulate --closed-loop: ` + html.EscapeString(title) + `</title>
<style>body{font-family:sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin:28px 0 4px}
.legend span{display:inline-block;margin-right:16px}.sw{display:inline-block;width:14px;height:4px;vertical-align:middle;margin-right:4px}
.row{white-space:nowrap}svg{background:#fafafa;border:1px solid #ddd;margin:2px 6px 2px 0}table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:right}</style></head><body>`)
	fmt.Fprintf(&b, "<h1>hvpa simulate --closed-loop: %s</h1>", html.EscapeString(title))
	b.WriteString(`<p class="legend"><span><i class="sw" style="background:#888"></i>demand</span><span><i class="sw" style="background:#1f6fd1"></i>requests of every pod</span>` +
		`<span><i class="sw" style="background:#2a9d3f"></i>requests of the serving pods</span><span><i class="sw" style="background:#d12f1f"></i>OOM kill</span></p>`)
	byWorkload := map[string][]*Series{}
	var order []string
	for _, s := range series {
		k := s.Namespace + "/" + s.Workload
		if byWorkload[k] == nil {
			order = append(order, k)
		}
		byWorkload[k] = append(byWorkload[k], s)
	}
	for _, k := range order {
		fmt.Fprintf(&b, "<h2>%s</h2>", html.EscapeString(k))
		summaryTable(&b, k, sums)
		sideBySide(&b, byWorkload[k])
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// summaryTable writes the summaries of workload k, one row per run.
func summaryTable(b *strings.Builder, k string, sums []Summary) {
	b.WriteString("<table><tr><th>policy</th><th>final replicas</th><th>max</th><th>cpu provided/demand</th><th>cpu shortfall</th><th>memory provided/demand</th>" +
		"<th>memory shortfall</th><th>OOM kills</th><th>restarts</th><th>evictions</th><th>replica changes/day</th><th>per-pod changes/day</th></tr>")
	for _, s := range sums {
		if s.Namespace+"/"+s.Workload == k {
			fmt.Fprintf(b, "<tr><td>%s</td><td>%d</td><td>%d</td><td>%.3f</td><td>%.2f%%</td><td>%.3f</td><td>%.2f%%</td><td>%d</td><td>%d</td><td>%d</td><td>%.2f</td><td>%.2f</td></tr>",
				html.EscapeString(s.Policy), s.FinalReplicas, s.MaxReplicas, s.CPUProvidedOverDemand, 100*s.CPUShortfall, s.MemoryProvidedOverDemand, 100*s.MemoryShortfall,
				s.OOMEvents, s.Restarts, s.Evictions, s.ReplicaChangesPerDay, s.PerPodChangesPerDay)
		}
	}
	b.WriteString("</table>")
}

// line is one polyline of a chart.
type line struct {
	color string
	value func(Point) float64
}

// sideBySide draws one row per quantity, one chart per run, with the same axes along a row.
func sideBySide(b *strings.Builder, runs []*Series) {
	mib := func(x float64) float64 { return x / (1 << 20) }
	rows := []struct {
		title string
		lines []line
	}{
		{"CPU (millicores)", []line{{"#888", func(p Point) float64 { return p.CPUDemand }}, {"#1f6fd1", func(p Point) float64 { return p.CPUProvided }},
			{"#2a9d3f", func(p Point) float64 { return p.CPUServing }}}},
		{"memory (MiB)", []line{{"#888", func(p Point) float64 { return mib(p.MemoryDemand) }}, {"#1f6fd1", func(p Point) float64 { return mib(p.MemoryProvided) }},
			{"#2a9d3f", func(p Point) float64 { return mib(p.MemoryServing) }}}},
		{"replicas", []line{{"#1f6fd1", func(p Point) float64 { return float64(p.Replicas) }}}},
		{"CPU request per pod (millicores)", []line{{"#1f6fd1", func(p Point) float64 { return p.CPUPerPod }}}},
		{"memory request per pod (MiB)", []line{{"#1f6fd1", func(p Point) float64 { return mib(p.MemoryPerPod) }}}},
	}
	for _, row := range rows {
		top := 0.0
		for _, s := range runs {
			for _, p := range s.Points {
				for _, l := range row.lines {
					top = max(top, l.value(p))
				}
			}
		}
		b.WriteString(`<div class="row">`)
		for _, s := range runs {
			chart(b, s.Policy+": "+row.title, s.Points, row.lines, top)
		}
		b.WriteString("</div>")
	}
}

// chart draws lines on axes from 0 to top, time on the x axis, OOM kills as red marks.
func chart(b *strings.Builder, title string, points []Point, lines []line, top float64) {
	const width, height, pad = 360.0, 160.0, 30.0
	if len(points) < 2 || top <= 0 {
		return
	}
	t0, t1 := points[0].Time, points[len(points)-1].Time
	top *= 1.05
	x := func(t int64) float64 { return pad + (width-2*pad)*float64(t-t0)/float64(t1-t0) }
	y := func(v float64) float64 { return height - pad/2 - (height-pad)*v/top }
	fmt.Fprintf(b, `<svg width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f"><text x="%.0f" y="12" font-size="11">%s</text>`, width, height, width, height, pad, html.EscapeString(title))
	fmt.Fprintf(b, `<text x="2" y="%.0f" font-size="9">%.4g</text><text x="2" y="%.0f" font-size="9">0</text>`, y(top/1.05)+4, top/1.05, y(0))
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="9">%s</text><text x="%.0f" y="%.0f" font-size="9" text-anchor="end">%s</text>`,
		pad, height-2, time.Unix(t0, 0).UTC().Format("01-02 15:04"), width-pad, height-2, time.Unix(t1, 0).UTC().Format("01-02 15:04"))
	for _, l := range lines {
		var pts strings.Builder
		for _, p := range points {
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(p.Time), y(l.value(p)))
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1" points="%s"/>`, l.color, pts.String())
	}
	for _, p := range points {
		if p.OOM {
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#d12f1f"/>`, x(p.Time), height-pad/2, x(p.Time), height-pad/2-6)
		}
	}
	b.WriteString("</svg>")
}
