package main

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"time"

	"github.com/prometheus/common/model"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/hvpa-dev/hvpa/test/grafana"
)

// Legend entries: text size, line height, swatch width and the space after an entry, in pixels.
const (
	legendText   = 11
	legendLine   = 16
	legendSwatch = 12
	legendGap    = 14
)

// timeSeries draws a time series panel: a gonum line plot of its series over the range, its legend under it.
func (pg *page) timeSeries(r image.Rectangle, p panelData, rng grafana.Range) ([]color.RGBA, error) {
	area := pg.frame(r, p.Title)
	shown, colors := visible(p.series)
	if len(shown) == 0 {
		pg.noData(area)
		return nil, nil
	}
	top := pg.legend(area, shown, colors, max(1, (area.Dy()-60)/(2*legendLine)))
	plotArea := image.Rect(area.Min.X, area.Min.Y, area.Max.X, top-4)
	pl, err := linePlot(p, shown, colors, rng, plotArea.Dx(), plotArea.Dy())
	if err != nil {
		return nil, err
	}
	pl.Draw(pg.canvas(plotArea))
	return colors, nil
}

// linePlot is the plot of a panel's series: a line per series (broken where samples are missing), the time
// axis over the whole range, the value axis in the panel's unit.
func linePlot(p panelData, shown []series, colors []color.RGBA, rng grafana.Range, width, height int) (*plot.Plot, error) {
	pl := plot.New()
	pl.BackgroundColor = colPanel
	for _, a := range []*plot.Axis{&pl.X, &pl.Y} {
		a.Color, a.Tick.Color = colBorder, colBorder
		a.Tick.Label = textStyle(10, false, colDim)
		a.Padding = 2
	}
	pl.X.Min, pl.X.Max = seconds(rng.Start), seconds(rng.End)
	pl.X.Tick.Marker = timeTicks{labels: max(2, width/110)}
	def := p.FieldConfig.Defaults
	yTicks := unitTicks{unit: def.Unit, decimals: def.Decimals, labels: max(2, height/35)}
	pl.Y.Tick.Marker = yTicks
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = colGrid, colGrid
	pl.Add(grid)
	stepAfter := def.Custom.LineInterpolation == "stepAfter"
	for i, s := range shown {
		for _, seg := range segments(s.points, rng.Step) {
			if err := addSegment(pl, seg, colors[i], stepAfter); err != nil {
				return nil, fmt.Errorf("series %s: %w", s.legend, err)
			}
		}
	}
	pl.Y.Min, pl.Y.Max = yTicks.bounds(pl.Y.Min, pl.Y.Max)
	if def.Min != nil {
		pl.Y.Min = *def.Min
	}
	if def.Max != nil {
		pl.Y.Max = *def.Max
	}
	return pl, nil
}

func seconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

// segments splits samples where one is not finite or the next is more than two steps later (Grafana breaks
// the line there).
func segments(points []model.SamplePair, step time.Duration) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	last := model.Time(0)
	for _, pt := range points {
		v := float64(pt.Value)
		gap := len(cur) > 0 && pt.Timestamp.Sub(last) > 2*step
		if !finite(v) || gap {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
		}
		if finite(v) {
			cur = append(cur, plotter.XY{X: float64(pt.Timestamp) / 1000, Y: v})
			last = pt.Timestamp
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// addSegment adds one unbroken piece of a series: a line, or a dot for a single sample.
func addSegment(pl *plot.Plot, xys plotter.XYs, c color.RGBA, stepAfter bool) error {
	if len(xys) == 1 {
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return fmt.Errorf("plot: %w", err)
		}
		s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: 1.5, Shape: draw.CircleGlyph{}}
		pl.Add(s)
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("plot: %w", err)
	}
	l.LineStyle = draw.LineStyle{Color: c, Width: 1.5}
	if stepAfter {
		l.StepStyle = plotter.PostStep
	}
	pl.Add(l)
	return nil
}

// niceSteps are the intervals between the labels of the time axis.
var niceSteps = []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour,
	3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour}

// timeTicks labels a time axis (unix seconds, UTC) at a round interval, with at most about labels labels.
type timeTicks struct{ labels int }

func (t timeTicks) Ticks(lo, hi float64) []plot.Tick {
	span := time.Duration((hi - lo) * float64(time.Second))
	step := niceSteps[len(niceSteps)-1]
	for _, s := range niceSteps {
		if s*time.Duration(t.labels) >= span {
			step = s
			break
		}
	}
	format := "15:04:05"
	if step%time.Minute == 0 {
		format = "15:04"
	}
	var out []plot.Tick
	for v := math.Ceil(lo/step.Seconds()) * step.Seconds(); v <= hi; v += step.Seconds() {
		out = append(out, plot.Tick{Value: v, Label: time.Unix(int64(v), 0).UTC().Format(format)})
	}
	return out
}

// unitTicks are gonum's default ticks labelled in a Grafana unit, the minor ones too when all fit in labels
// labels; bytes are ticked in their power of 1024.
type unitTicks struct {
	unit     string
	decimals *int
	labels   int
}

func (t unitTicks) Ticks(lo, hi float64) []plot.Tick {
	scale := t.scale(lo, hi)
	ticks := plot.DefaultTicks{}.Ticks(lo/scale, hi/scale)
	all := len(ticks) <= t.labels
	for i := range ticks {
		ticks[i].Value *= scale
		if all || ticks[i].Label != "" {
			ticks[i].Label = formatValue(ticks[i].Value, t.unit, t.decimals)
		}
	}
	return ticks
}

// scale is the power of 1024 bytes are ticked in (1 for other units).
func (t unitTicks) scale(lo, hi float64) float64 {
	scale := 1.0
	if t.unit == "bytes" {
		for scale*1024 <= math.Max(math.Abs(lo), math.Abs(hi)) {
			scale *= 1024
		}
	}
	return scale
}

// bounds widens the data's range [lo, hi] to the value axis Grafana would show: from zero (or the negative
// minimum), to whole steps between the major ticks.
func (t unitTicks) bounds(lo, hi float64) (float64, float64) {
	lo = math.Min(lo, 0)
	if hi <= lo {
		hi = lo + 1
	}
	scale := t.scale(lo, hi)
	var majors []float64
	for _, tk := range (plot.DefaultTicks{}).Ticks(lo/scale, hi/scale) {
		if tk.Label != "" {
			majors = append(majors, tk.Value)
		}
	}
	if len(majors) < 2 {
		return lo, hi
	}
	step := (majors[1] - majors[0]) * scale
	return math.Floor(lo/step) * step, math.Ceil(hi/step) * step
}

// legendEntry is one entry of a legend: a series (index into the series) or "+N more" (index -1).
type legendEntry struct {
	text  string
	index int
}

// legend draws the legend at the bottom of area, in lines of entries (at most maxLines: the last entry then
// says how many are left out), and returns its top.
func (pg *page) legend(area image.Rectangle, shown []series, colors []color.RGBA, maxLines int) int {
	entries := make([]legendEntry, len(shown))
	for i, s := range shown {
		entries[i] = legendEntry{text: fitText(s.legend, area.Dx()-legendSwatch-legendGap, legendText, false), index: i}
	}
	lines := legendLayout(entries, area.Dx())
	for n := len(entries) - 1; len(lines) > maxLines && n > 0; n-- {
		more := legendEntry{text: fmt.Sprintf("+%d more", len(entries)-n), index: -1}
		lines = legendLayout(append(append([]legendEntry{}, entries[:n]...), more), area.Dx())
	}
	top := area.Max.Y - len(lines)*legendLine
	for i, line := range lines {
		x, y := area.Min.X, top+i*legendLine
		for _, e := range line {
			if e.index >= 0 {
				pg.fill(image.Rect(x, y+legendLine/2-1, x+legendSwatch-4, y+legendLine/2+2), colors[e.index])
				x += legendSwatch
			}
			pg.text(image.Pt(x, y+legendLine/2), e.text, legendText, false, colText, draw.XLeft, draw.YCenter)
			x += textWidth(e.text, legendText, false) + legendGap
		}
	}
	return top
}

// legendLayout breaks entries into lines of at most width pixels.
func legendLayout(entries []legendEntry, width int) [][]legendEntry {
	var lines [][]legendEntry
	x := 0
	for _, e := range entries {
		w := legendSwatch + textWidth(e.text, legendText, false) + legendGap
		if len(lines) == 0 || x+w > width {
			lines = append(lines, nil)
			x = 0
		}
		lines[len(lines)-1] = append(lines[len(lines)-1], e)
		x += w
	}
	return lines
}
