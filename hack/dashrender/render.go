package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/hvpa-dev/hvpa/hack/internal/metricsdoc"
	"github.com/hvpa-dev/hvpa/hack/recording"
)

// Layout: Grafana's grid of 24 columns and rows of 30 pixels, under a header with the dashboard's title.
const (
	colW    = 60
	rowH    = 30
	margin  = 8
	gutter  = 3
	headerH = 48
	// maxPoints bounds the evaluation steps per query.
	maxPoints = 360
)

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{r, g, b, 0xff} }

// Colors of Grafana's dark theme and its classic palette for series.
var (
	colBG     = rgb(0x11, 0x12, 0x17)
	colPanel  = rgb(0x18, 0x1b, 0x1f)
	colBorder = rgb(0x2c, 0x30, 0x35)
	colGrid   = rgb(0x26, 0x29, 0x2e)
	colText   = rgb(0xd8, 0xd9, 0xda)
	colDim    = rgb(0x8e, 0x8e, 0x9a)
	palette   = []color.RGBA{
		rgb(0x7e, 0xb2, 0x6d), rgb(0xea, 0xb8, 0x39), rgb(0x6e, 0xd0, 0xe0), rgb(0xef, 0x84, 0x3c), rgb(0xe2, 0x4d, 0x42),
		rgb(0x1f, 0x78, 0xc1), rgb(0xba, 0x43, 0xa9), rgb(0x70, 0x5d, 0xa0), rgb(0x50, 0x86, 0x42), rgb(0xcc, 0xa3, 0x00),
		rgb(0x44, 0x7e, 0xbc), rgb(0xc1, 0x5c, 0x17), rgb(0x89, 0x0f, 0x02), rgb(0x0a, 0x43, 0x7c), rgb(0x6d, 0x1f, 0x62),
		rgb(0x58, 0x44, 0x77),
	}
)

// panelLayout tells where a panel was drawn and what it showed.
type panelLayout struct {
	Title, Type string
	Rect        image.Rectangle // the panel
	Plot        image.Rectangle // the plot (time series) or the values (stat)
	Series      int             // series with at least one finite value
	Colors      []color.RGBA    // the colors of those series
}

// renderer renders dashboards over one recording, for its whole time range.
type renderer struct {
	ev         *evaluator
	start, end time.Time
	step       time.Duration
	builtins   map[string]string
}

func newRenderer(rec *recording.Series) *renderer {
	start, end := rec.Start().UTC(), rec.End().UTC()
	scrape := rec.Interval()
	if scrape <= 0 {
		scrape = 15 * time.Second
	}
	step := max(scrape, (end.Sub(start)/maxPoints).Truncate(time.Second)+time.Second)
	rateInterval := max(4*scrape, step+scrape)
	rng := max(end.Sub(start), time.Second)
	return &renderer{ev: newEvaluator(rec), start: start, end: end, step: step, builtins: map[string]string{
		"__rate_interval": promDuration(rateInterval),
		"__interval":      promDuration(step),
		"__range":         promDuration(rng.Truncate(time.Second) + time.Second),
	}}
}

var variableRef = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(?::[A-Za-z]+)?\}|\$([A-Za-z0-9_]+)|\[\[([A-Za-z0-9_]+)\]\]`)

// variables are the values of a dashboard's template variables: every query or custom variable takes its
// "All" value (allValue, else .*), so it must be used with =~ or !~.
func (r *renderer) variables(d *metricsdoc.Dashboard) (map[string]string, error) {
	vars := map[string]string{}
	for k, v := range r.builtins {
		vars[k] = v
	}
	for _, v := range d.Templating.List {
		switch v.Type {
		case "datasource":
			vars[v.Name] = "prometheus"
		case "query", "custom":
			vars[v.Name] = ".*"
			if v.AllValue != "" {
				vars[v.Name] = v.AllValue
			}
		default:
			return nil, fmt.Errorf("template variable %s: type %q is not supported", v.Name, v.Type)
		}
	}
	return vars, nil
}

func substitute(expr string, vars map[string]string) (string, error) {
	var missing []string
	out := variableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		m := variableRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, ref)
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("unknown template variable %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// drawnSeries is one series of a panel: its legend and points.
type drawnSeries struct {
	legend string
	points []Point
	color  color.RGBA
}

var legendRef = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

func legend(format, expr string, labels map[string]string) string {
	if format == "" || format == "__auto" {
		l := map[string]string{}
		for k, v := range labels {
			if k != "__name__" {
				l[k] = v
			}
		}
		if len(l) == 0 {
			return expr
		}
		return recording.Key("", l)
	}
	return legendRef.ReplaceAllStringFunc(format, func(ref string) string {
		return labels[legendRef.FindStringSubmatch(ref)[1]]
	})
}

// query evaluates a panel's targets into series with legends and colors.
func (r *renderer) query(p metricsdoc.Panel, vars map[string]string) ([]drawnSeries, error) {
	var out []drawnSeries
	for _, t := range p.Targets {
		if t.Hide {
			continue
		}
		expr, err := substitute(t.Expr, vars)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.RefID, err)
		}
		res, err := r.ev.rangeQuery(expr, r.start, r.end, r.step)
		if err != nil {
			return nil, fmt.Errorf("target %s: %s: %w", t.RefID, expr, err)
		}
		for _, s := range res {
			out = append(out, drawnSeries{legend: legend(t.LegendFormat, t.Expr, s.Labels), points: s.Points})
		}
	}
	for i := range out {
		out[i].color = palette[i%len(palette)]
	}
	return out, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// render draws a dashboard.
func (r *renderer) render(d *metricsdoc.Dashboard) (*image.RGBA, []panelLayout, error) {
	vars, err := r.variables(d)
	if err != nil {
		return nil, nil, err
	}
	bottom := 0
	for _, p := range d.Panels {
		if p.Type == "row" && p.Collapsed && len(p.Panels) > 0 {
			return nil, nil, fmt.Errorf("row %q is collapsed: expand it to render its panels", p.Title)
		}
		if p.GridPos.X < 0 || p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H <= 0 {
			return nil, nil, fmt.Errorf("panel %d (%s): gridPos %+v is outside the 24 columns", p.ID, p.Title, p.GridPos)
		}
		bottom = max(bottom, p.GridPos.Y+p.GridPos.H)
	}
	img := image.NewRGBA(image.Rect(0, 0, 2*margin+24*colW, headerH+bottom*rowH+margin))
	fillRect(img, img.Bounds(), colBG)
	drawText(img, margin+4, 10, fitText(d.Title, img.Bounds().Dx()-2*margin, 3), 3, colText)
	sub := fmt.Sprintf("%s - %s UTC, step %s, %d scrapes every %s", r.start.Format("2006-01-02 15:04:05"), r.end.Format("15:04:05"),
		r.step, len(r.ev.rec.Scrapes), r.ev.rec.Interval())
	drawText(img, margin+4, 10+3*glyphH+6, sub, 1, colDim)

	var layouts []panelLayout
	for _, p := range d.Panels {
		g := p.GridPos
		rect := image.Rect(margin+g.X*colW+gutter, headerH+g.Y*rowH+gutter, margin+(g.X+g.W)*colW-gutter, headerH+(g.Y+g.H)*rowH-gutter)
		pimg := img.SubImage(rect).(*image.RGBA) // drawing is clipped to the panel
		l := panelLayout{Title: p.Title, Type: p.Type, Rect: rect}
		switch p.Type {
		case "row":
			drawText(pimg, rect.Min.X+2, rect.Min.Y+(rect.Dy()-2*glyphH)/2, fitText(p.Title, rect.Dx(), 2), 2, colText)
			fillRect(pimg, image.Rect(rect.Min.X, rect.Max.Y-1, rect.Max.X, rect.Max.Y), colBorder)
		case "timeseries", "stat":
			series, err := r.query(p, vars)
			if err != nil {
				return nil, nil, fmt.Errorf("panel %d (%s): %w", p.ID, p.Title, err)
			}
			fillRect(pimg, rect, colPanel)
			strokeRect(pimg, rect, colBorder)
			drawText(pimg, rect.Min.X+8, rect.Min.Y+7, fitText(p.Title, rect.Dx()-16, 2), 2, colText)
			inner := image.Rect(rect.Min.X+8, rect.Min.Y+7+2*glyphH+8, rect.Max.X-8, rect.Max.Y-6)
			var shown []drawnSeries
			for _, s := range series {
				for _, pt := range s.points {
					if finite(pt.V) {
						shown = append(shown, s)
						break
					}
				}
			}
			l.Series = len(shown)
			for _, s := range shown {
				l.Colors = append(l.Colors, s.color)
			}
			if len(shown) == 0 {
				drawText(pimg, inner.Min.X+(inner.Dx()-textWidth("No data", 2))/2, inner.Min.Y+(inner.Dy()-2*glyphH)/2, "No data", 2, colDim)
				l.Plot = inner
				break
			}
			if p.Type == "stat" {
				l.Plot = r.drawStat(pimg, inner, p, shown)
			} else {
				l.Plot = r.drawTimeSeries(pimg, inner, p, shown)
			}
		default:
			return nil, nil, fmt.Errorf("panel %d (%s): type %q is not supported (timeseries, stat, row)", p.ID, p.Title, p.Type)
		}
		layouts = append(layouts, l)
	}
	return img, layouts, nil
}

// drawLegend lays the legend out from the bottom of area, in at most maxLines lines, and returns its top.
func drawLegend(img *image.RGBA, area image.Rectangle, series []drawnSeries, maxLines int) int {
	type entry struct {
		text  string
		color color.RGBA
		more  bool
	}
	var entries []entry
	for _, s := range series {
		entries = append(entries, entry{text: s.legend, color: s.color})
	}
	width := func(e entry) int { return 12 + textWidth(e.text, 1) + 14 }
	// fit: lines of entries; when they do not fit in maxLines, the last one says how many are left out
	layout := func(es []entry) [][]entry {
		var lines [][]entry
		x := 0
		for _, e := range es {
			e.text = fitText(e.text, area.Dx()-26, 1)
			if len(lines) == 0 || x+width(e) > area.Dx() {
				lines = append(lines, nil)
				x = 0
			}
			lines[len(lines)-1] = append(lines[len(lines)-1], e)
			x += width(e)
		}
		return lines
	}
	lines := layout(entries)
	for n := len(entries) - 1; len(lines) > maxLines && n > 0; n-- {
		lines = layout(append(append([]entry{}, entries[:n]...), entry{text: fmt.Sprintf("+%d more", len(entries)-n), color: colDim, more: true}))
	}
	top := area.Max.Y - len(lines)*lineHeight
	for i, line := range lines {
		x, y := area.Min.X, top+i*lineHeight
		for _, e := range line {
			if !e.more {
				fillRect(img, image.Rect(x, y, x+8, y+glyphH), e.color)
				x += 12
			}
			drawText(img, x, y, e.text, 1, colText)
			x += textWidth(e.text, 1) + 14
		}
	}
	return top
}

// drawTimeSeries draws axes, grid lines, the series and the legend into area; it returns the plot.
func (r *renderer) drawTimeSeries(img *image.RGBA, area image.Rectangle, p metricsdoc.Panel, series []drawnSeries) image.Rectangle {
	def := p.FieldConfig.Defaults
	legendTop := drawLegend(img, area, series, max(1, (area.Dy()-60)/(2*lineHeight)))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, pt := range s.points {
			if finite(pt.V) {
				lo, hi = math.Min(lo, pt.V), math.Max(hi, pt.V)
			}
		}
	}
	if def.Min != nil {
		lo = *def.Min
	}
	if def.Max != nil {
		hi = *def.Max
	}
	hi = math.Max(hi, lo)
	ticks := niceRange(lo, hi, def.Unit)
	if def.Min != nil {
		ticks[0] = *def.Min
	}
	if def.Max != nil {
		ticks[len(ticks)-1] = *def.Max
	}
	ymin, ymax := ticks[0], ticks[len(ticks)-1]
	labels := make([]string, len(ticks))
	labelW := 0
	for i, t := range ticks {
		labels[i] = formatValue(t, def.Unit, def.Decimals)
		labelW = max(labelW, textWidth(labels[i], 1))
	}
	plot := image.Rect(area.Min.X+labelW+6, area.Min.Y+4, area.Max.X-4, legendTop-lineHeight-6)
	if plot.Dx() < 10 || plot.Dy() < 10 {
		return plot
	}
	yOf := func(v float64) int {
		return plot.Max.Y - 1 - int(math.Round((v-ymin)/(ymax-ymin)*float64(plot.Dy()-1)))
	}
	for i, t := range ticks {
		y := yOf(t)
		fillRect(img, image.Rect(plot.Min.X, y, plot.Max.X, y+1), colGrid)
		drawText(img, plot.Min.X-6-textWidth(labels[i], 1), y-glyphH/2, labels[i], 1, colDim)
	}
	t0, t1 := r.start.UnixMilli(), r.end.UnixMilli()
	span := max(t1-t0, 1)
	xOf := func(t int64) int {
		return plot.Min.X + int(math.Round(float64(t-t0)/float64(span)*float64(plot.Dx()-1)))
	}
	for i, t := range []int64{t0, t0 + span/2, t1} {
		x := xOf(t)
		fillRect(img, image.Rect(x, plot.Min.Y, x+1, plot.Max.Y), colGrid)
		s := time.UnixMilli(t).UTC().Format("15:04:05")
		tx := x - textWidth(s, 1)/2
		switch i {
		case 0:
			tx = x
		case 2:
			tx = x - textWidth(s, 1)
		}
		drawText(img, tx, plot.Max.Y+4, s, 1, colDim)
	}
	strokeRect(img, plot, colBorder)
	clip := img.SubImage(plot).(*image.RGBA)
	step := p.FieldConfig.Defaults.Custom.LineInterpolation == "stepAfter"
	for _, s := range series {
		prev, have := image.Point{}, false
		lastT := int64(0)
		for _, pt := range s.points {
			if !finite(pt.V) {
				have = false
				continue
			}
			cur := image.Pt(xOf(pt.T), yOf(pt.V))
			gap := have && pt.T-lastT > 2*r.step.Milliseconds()
			switch {
			case have && !gap && step:
				line(clip, prev, image.Pt(cur.X, prev.Y), s.color)
				line(clip, image.Pt(cur.X, prev.Y), cur, s.color)
			case have && !gap:
				line(clip, prev, cur, s.color)
			default:
				line(clip, cur, cur, s.color)
			}
			prev, have, lastT = cur, true, pt.T
		}
	}
	return plot
}

// drawStat shows each series' last value, large, in its color, with its legend under it.
func (r *renderer) drawStat(img *image.RGBA, area image.Rectangle, p metricsdoc.Panel, series []drawnSeries) image.Rectangle {
	def := p.FieldConfig.Defaults
	n := len(series)
	cols := min(n, 4)
	rows := (n + cols - 1) / cols
	cw, ch := area.Dx()/cols, area.Dy()/rows
	for i, s := range series {
		cell := image.Rect(area.Min.X+(i%cols)*cw, area.Min.Y+(i/cols)*ch, area.Min.X+(i%cols+1)*cw, area.Min.Y+(i/cols+1)*ch)
		v := math.NaN()
		for _, pt := range s.points {
			if finite(pt.V) {
				v = pt.V
			}
		}
		text := formatValue(v, def.Unit, def.Decimals)
		showLegend := n > 1 || len(p.Targets) > 1 || (len(p.Targets) == 1 && p.Targets[0].LegendFormat != "")
		legendH := 0
		if showLegend {
			legendH = lineHeight + 4
		}
		scale := max(1, min(8, (cell.Dx()-8)/max(1, textWidth(text, 1)), (cell.Dy()-legendH-4)/glyphH))
		tw, th := textWidth(text, scale), glyphH*scale
		y := cell.Min.Y + (cell.Dy()-legendH-th)/2
		drawText(img, cell.Min.X+(cell.Dx()-tw)/2, y, text, scale, s.color)
		if showLegend {
			lg := fitText(s.legend, cell.Dx()-4, 1)
			drawText(img, cell.Min.X+(cell.Dx()-textWidth(lg, 1))/2, y+th+6, lg, 1, colDim)
		}
	}
	return area
}

func fillRect(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	draw.Draw(img, r, &image.Uniform{c}, image.Point{}, draw.Src)
}

func strokeRect(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	fillRect(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), c)
	fillRect(img, image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y), c)
	fillRect(img, image.Rect(r.Min.X, r.Min.Y, r.Min.X+1, r.Max.Y), c)
	fillRect(img, image.Rect(r.Max.X-1, r.Min.Y, r.Max.X, r.Max.Y), c)
}

// line draws a 2-pixel-wide line from a to b (Bresenham).
func line(img *image.RGBA, a, b image.Point, c color.RGBA) {
	dx, dy := abs(b.X-a.X), -abs(b.Y-a.Y)
	sx, sy := sign(b.X-a.X), sign(b.Y-a.Y)
	e := dx + dy
	x, y := a.X, a.Y
	for {
		fillRect(img, image.Rect(x, y, x+2, y+2), c)
		if x == b.X && y == b.Y {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			x += sx
		} else {
			e += dx
			y += sy
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func sign(x int) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// summary describes what a rendering showed: panels without data are named.
func summary(layouts []panelLayout) string {
	var empty []string
	panels := 0
	for _, l := range layouts {
		if l.Type == "row" {
			continue
		}
		panels++
		if l.Series == 0 {
			empty = append(empty, l.Title)
		}
	}
	sort.Strings(empty)
	s := fmt.Sprintf("%d panels", panels)
	if len(empty) > 0 {
		s += fmt.Sprintf(", %d without data: %s", len(empty), strings.Join(empty, "; "))
	}
	return s
}
