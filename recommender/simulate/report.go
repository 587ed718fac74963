package simulate

import (
	"fmt"
	"html"
	"io"
	"strings"
	"time"
)

// WriteReport writes a self-contained HTML page (inline SVG, no scripts, no network): per container, CPU and
// memory usage (maximum per step) against the target and the band between lower and upper bound, with OOM
// kills marked. A container that ran the adaptive model also shows upstream's target (dashed orange) and
// the page starts with both models' scores.
func WriteReport(w io.Writer, title string, st Stats, series []*Series) error {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html><head><meta charset="utf-8"><title>hvpa simulate: ` + html.EscapeString(title) + `</title>
<style>body{font-family:sans-serif;margin:24px;color:#222}h1{font-size:20px}h2{font-size:16px;margin:28px 0 4px}
.legend span{display:inline-block;margin-right:16px}.sw{display:inline-block;width:14px;height:4px;vertical-align:middle;margin-right:4px}
svg{background:#fafafa;border:1px solid #ddd;margin:4px 12px 4px 0}table{border-collapse:collapse}td{padding:2px 10px 2px 0}</style></head><body>`)
	fmt.Fprintf(&b, "<h1>hvpa simulate: %s</h1>", html.EscapeString(title))
	fmt.Fprintf(&b, `<table><tr><td>usage samples</td><td>%d</td></tr><tr><td>OOM events</td><td>%d</td></tr><tr><td>recommendations</td><td>%d</td></tr>
<tr><td>CPU slack (mean (target-usage)/target)</td><td>%.1f%%</td></tr><tr><td>CPU usage above target</td><td>%.2f%%</td></tr>
<tr><td>memory slack</td><td>%.1f%%</td></tr><tr><td>memory usage above target</td><td>%.2f%%</td></tr><tr><td>target changes over 10%%</td><td>%d</td></tr></table>`,
		st.Samples, st.OOMs, st.Recommendations, 100*st.CPUSlack(), 100*st.CPUAboveFraction(), 100*st.MemorySlack(), 100*st.MemoryAboveFraction(), st.TargetChanges)
	if st.Adaptive > 0 {
		b.WriteString(`<table><tr><td></td><td>cpu slack</td><td>memory slack</td><td>cpu over</td><td>memory over</td><td>OOM events</td><td>applied changes per container-day</td></tr>`)
		for _, r := range []struct {
			name string
			sc   Scores
		}{{"adaptive", st.Scores}, {"upstream", st.Upstream}} {
			fmt.Fprintf(&b, "<tr><td>%s</td><td>%.1f%%</td><td>%.1f%%</td><td>%.2f%%</td><td>%.2f%%</td><td>%d</td><td>%.2f</td></tr>", r.name,
				100*r.sc.CPUSlack(), 100*r.sc.MemorySlack(), 100*r.sc.CPUOverFraction(), 100*r.sc.MemoryOverFraction(), r.sc.OOMs, r.sc.ChangesPerContainerDay())
		}
		b.WriteString(`</table><p class="legend"><span><i class="sw" style="background:#e07b00"></i>upstream's target (dashed)</span></p>`)
	}
	b.WriteString(`<p class="legend"><span><i class="sw" style="background:#888"></i>usage (max per step)</span><span><i class="sw" style="background:#1f6fd1"></i>target</span>
<span><i class="sw" style="background:#cfe0f7;height:10px"></i>lower to upper bound</span><span><i class="sw" style="background:#d12f1f"></i>OOM kill</span></p>`)
	for _, s := range series {
		fmt.Fprintf(&b, "<h2>%s / %s / %s</h2>", html.EscapeString(s.Namespace), html.EscapeString(s.Workload), html.EscapeString(s.Container))
		alt := func(v int64) int64 {
			if !s.Adaptive {
				return -1
			}
			return v
		}
		chart(&b, "CPU (millicores)", s.Points, 1, func(p Point) values {
			return values{p.CPU, p.Target.CPUMilli, p.Lower.CPUMilli, p.Upper.CPUMilli, alt(p.Upstream.CPUMilli)}
		})
		chart(&b, "memory (MiB)", s.Points, 1<<20, func(p Point) values {
			return values{p.Memory, p.Target.MemoryBytes, p.Lower.MemoryBytes, p.Upper.MemoryBytes, alt(p.Upstream.MemoryBytes)}
		})
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// values of one resource at one point: usage (-1 none), target, lower and upper bound, and upstream's target
// beside an adaptive one (-1 none).
type values struct{ usage, target, lower, upper, upstream int64 }

// chart draws one SVG of one resource; unit divides values for the axis labels. An upper bound above the
// chart (as "no upper bound yet" is) is clipped to its top.
func chart(b *strings.Builder, label string, pts []Point, unit float64, get func(Point) values) {
	const W, H, L, R, T, B = 560.0, 200.0, 56.0, 10.0, 18.0, 22.0
	if len(pts) == 0 {
		return
	}
	top := 0.0 // usage and target, with headroom
	for _, p := range pts {
		v := get(p)
		top = max(top, float64(v.usage), float64(v.target), float64(v.upstream))
	}
	if top <= 0 {
		top = 1
	}
	top *= 1.3
	t0, t1 := float64(pts[0].Time), float64(pts[len(pts)-1].Time)
	if t1 == t0 {
		t1 = t0 + 1
	}
	x := func(t int64) float64 { return L + (float64(t)-t0)/(t1-t0)*(W-L-R) }
	y := func(v float64) float64 { return T + (1-min(v, top)/top)*(H-T-B) }
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" role="img" aria-label="%s">`, W, H, W, H, html.EscapeString(label))
	fmt.Fprintf(b, `<text x="%.0f" y="12" font-size="11">%s</text>`, L, html.EscapeString(label))
	for i := 0; i <= 4; i++ {
		v := top * float64(i) / 4
		fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#e4e4e4"/><text x="%.0f" y="%.1f" font-size="10" text-anchor="end">%.0f</text>`,
			L, W-R, y(v), y(v), L-4, y(v)+3, v/unit)
	}
	days := (t1 - t0) / 86400
	for d := 0.0; d <= days; d++ {
		t := int64(t0 + d*86400)
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" font-size="10" text-anchor="middle">%s</text>`, x(t), H-6, time.Unix(t, 0).UTC().Format("01-02"))
	}
	// band lower..upper
	var band strings.Builder
	for i, p := range pts {
		fmt.Fprintf(&band, "%s%.1f,%.1f", sep(i), x(p.Time), y(float64(get(p).upper)))
	}
	for i := len(pts) - 1; i >= 0; i-- {
		fmt.Fprintf(&band, " %.1f,%.1f", x(pts[i].Time), y(float64(get(pts[i]).lower)))
	}
	fmt.Fprintf(b, `<polygon points="%s" fill="#cfe0f7" stroke="none"/>`, band.String())
	var usage, target, upstream strings.Builder
	n, nu := 0, 0
	for i, p := range pts {
		v := get(p)
		if v.usage >= 0 {
			fmt.Fprintf(&usage, "%s%.1f,%.1f", sep(n), x(p.Time), y(float64(v.usage)))
			n++
		}
		if v.upstream >= 0 {
			fmt.Fprintf(&upstream, "%s%.1f,%.1f", sep(nu), x(p.Time), y(float64(v.upstream)))
			nu++
		}
		fmt.Fprintf(&target, "%s%.1f,%.1f", sep(i), x(p.Time), y(float64(v.target)))
		if p.OOM {
			fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="#d12f1f" stroke-width="1.5"/>`, x(p.Time), x(p.Time), T, H-B)
		}
	}
	fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="#888" stroke-width="1"/>`, usage.String())
	dashed(b, nu, upstream.String())
	fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="#1f6fd1" stroke-width="1.8"/>`, target.String())
	b.WriteString("</svg>")
}

// dashed draws upstream's target beside an adaptive one (n points; none: nothing).
func dashed(b *strings.Builder, n int, points string) {
	if n > 0 {
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="#e07b00" stroke-width="1.4" stroke-dasharray="4 3"/>`, points)
	}
}

func sep(i int) string {
	if i == 0 {
		return ""
	}
	return " "
}
