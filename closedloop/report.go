package closedloop

import (
	"fmt"
	"html"
	"io"
	"strings"
	"time"
)

// modelColors are the line colours of the models' provided totals; demand is grey.
var modelColors = map[Model]string{ModelTotal: "#1f6fd1", ModelPerPod: "#d1861f"}

// line is one polyline of a chart.
type line struct {
	name, color string
	points      []Point
	value       func(Point) float64
}

// WriteReport writes a self-contained HTML page (inline SVG, no scripts, no network): per workload, the
// summary of each model, then demand against provided CPU and memory, replicas, and per-pod requests over
// time, every model on the same axes.
func WriteReport(w io.Writer, title string, sums []Summary, series []*Series) error {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>hvpa simulate --closed-loop: ` + html.EscapeString(title) + `</title>
<style>body{font-family:sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin:28px 0 4px}
.legend span{display:inline-block;margin-right:16px}.sw{display:inline-block;width:14px;height:4px;vertical-align:middle;margin-right:4px}
svg{background:#fafafa;border:1px solid #ddd;margin:4px 12px 4px 0}table{border-collapse:collapse}td,th{padding:2px 10px 2px 0;text-align:right}</style></head><body>`)
	fmt.Fprintf(&b, "<h1>hvpa simulate --closed-loop: %s</h1>", html.EscapeString(title))
	b.WriteString(`<p class="legend"><span><i class="sw" style="background:#888"></i>demand</span>`)
	for _, m := range []Model{ModelTotal, ModelPerPod} {
		fmt.Fprintf(&b, `<span><i class="sw" style="background:%s"></i>%s model</span>`, modelColors[m], m)
	}
	b.WriteString("</p>")
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
		fmt.Fprintf(&b, "<h2>%s</h2><table><tr><th>model</th><th>final replicas</th><th>max</th><th>cpu provided/demand</th><th>cpu shortfall</th><th>memory provided/demand</th><th>memory shortfall</th><th>OOM kills</th><th>replica changes/day</th><th>per-pod changes/day</th></tr>", html.EscapeString(k))
		for _, s := range sums {
			if s.Namespace+"/"+s.Workload == k {
				fmt.Fprintf(&b, "<tr><td>%s</td><td>%d</td><td>%d</td><td>%.3f</td><td>%.2f%%</td><td>%.3f</td><td>%.2f%%</td><td>%d</td><td>%.2f</td><td>%.2f</td></tr>",
					s.Model, s.FinalReplicas, s.MaxReplicas, s.CPUProvidedOverDemand, 100*s.CPUShortfall, s.MemoryProvidedOverDemand, 100*s.MemoryShortfall, s.OOMEvents, s.ReplicaChangesPerDay, s.PerPodChangesPerDay)
			}
		}
		b.WriteString("</table>")
		runs := byWorkload[k]
		charts := []struct {
			title  string
			demand func(Point) float64
			value  func(Point) float64
		}{
			{"CPU demand vs provided (millicores)", func(p Point) float64 { return p.CPUDemand }, func(p Point) float64 { return p.CPUProvided }},
			{"memory demand vs provided (MiB)", func(p Point) float64 { return p.MemoryDemand / (1 << 20) }, func(p Point) float64 { return p.MemoryProvided / (1 << 20) }},
			{"replicas", nil, func(p Point) float64 { return float64(p.Replicas) }},
			{"CPU request per pod (millicores)", nil, func(p Point) float64 { return p.CPUPerPod }},
			{"memory request per pod (MiB)", nil, func(p Point) float64 { return p.MemoryPerPod / (1 << 20) }},
		}
		for _, c := range charts {
			var lines []line
			if c.demand != nil && len(runs) > 0 {
				lines = append(lines, line{"demand", "#888", runs[0].Points, c.demand})
			}
			for _, s := range runs {
				lines = append(lines, line{string(s.Model), modelColors[s.Model], s.Points, c.value})
			}
			chart(&b, c.title, lines)
		}
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// chart draws lines on common axes from 0 to the largest value, time on the x axis.
func chart(b *strings.Builder, title string, lines []line) {
	const width, height, pad = 640.0, 180.0, 36.0
	var t0, t1 int64
	top := 0.0
	for _, l := range lines {
		for i, p := range l.points {
			if i == 0 && (t0 == 0 || p.Time < t0) {
				t0 = p.Time
			}
			t1 = max(t1, p.Time)
			top = max(top, l.value(p))
		}
	}
	if t1 <= t0 || top <= 0 {
		return
	}
	top *= 1.05
	x := func(t int64) float64 { return pad + (width-2*pad)*float64(t-t0)/float64(t1-t0) }
	y := func(v float64) float64 { return height - pad/2 - (height-pad)*v/top }
	fmt.Fprintf(b, `<svg width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f"><text x="%.0f" y="14" font-size="12">%s</text>`, width, height, width, height, pad, html.EscapeString(title))
	fmt.Fprintf(b, `<text x="2" y="%.0f" font-size="10">%.4g</text><text x="2" y="%.0f" font-size="10">0</text>`, y(top/1.05)+4, top/1.05, y(0))
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-size="10">%s</text><text x="%.0f" y="%.0f" font-size="10" text-anchor="end">%s</text>`,
		pad, height-2, time.Unix(t0, 0).UTC().Format("01-02 15:04"), width-pad, height-2, time.Unix(t1, 0).UTC().Format("01-02 15:04"))
	for _, l := range lines {
		var pts strings.Builder
		for _, p := range l.points {
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(p.Time), y(l.value(p)))
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.2" points="%s"><title>%s</title></polyline>`, l.color, pts.String(), html.EscapeString(l.name))
	}
	b.WriteString("</svg>")
}
