package main

import (
	"fmt"
	"image"
	"image/color"
	"math"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/hvpa-dev/hvpa/test/grafana"
)

// Layout: Grafana's grid of 24 columns and rows of 30 pixels, under a header with the dashboard's title. The
// canvas has 72 DPI: one of gonum's points is one pixel.
const (
	colW    = 60
	rowH    = 30
	margin  = 8
	gutter  = 4
	headerH = 56
	pad     = 8 // inside a panel
	dpi     = 72
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
	Rect        image.Rectangle // the panel, in pixels from the image's top left
	Colors      []color.RGBA    // the colors of the series drawn
}

// page is the image being drawn: a gonum canvas, addressed in pixels from the top left as Grafana's grid is.
type page struct {
	c  *vgimg.Canvas
	dc draw.Canvas
	h  int
}

// render draws a dashboard whose panels hold their series: one image, the panels where their gridPos puts them.
func render(d *grafana.Dashboard, panels []panelData, rng grafana.Range) (image.Image, []panelLayout, error) {
	bottom := 0
	for _, p := range panels {
		bottom = max(bottom, p.GridPos.Y+p.GridPos.H)
	}
	w, h := 2*margin+24*colW, headerH+bottom*rowH+margin
	c := vgimg.NewWith(vgimg.UseWH(vg.Length(w), vg.Length(h)), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(colBG))
	pg := &page{c: c, dc: draw.New(c), h: h}
	pg.text(image.Pt(margin+4, 10), fitText(d.Title, w-2*margin, 22, true), 22, true, colText, draw.XLeft, draw.YTop)
	sub := fmt.Sprintf("%s to %s UTC: Prometheus range queries every %s, $__rate_interval %s", rng.Start.UTC().Format("2006-01-02 15:04:05"),
		rng.End.UTC().Format("15:04:05"), rng.Step, rng.RateInterval)
	pg.text(image.Pt(margin+4, 38), sub, 11, false, colDim, draw.XLeft, draw.YTop)
	var layouts []panelLayout
	for _, p := range panels {
		g := p.GridPos
		r := image.Rect(margin+g.X*colW+gutter/2, headerH+g.Y*rowH+gutter/2, margin+(g.X+g.W)*colW-gutter/2, headerH+(g.Y+g.H)*rowH-gutter/2)
		l := panelLayout{Title: p.Title, Type: p.Type, Rect: r}
		var err error
		switch p.Type {
		case "row":
			pg.row(r, p.Title)
		case "stat":
			l.Colors = pg.stat(r, p)
		default:
			l.Colors, err = pg.timeSeries(r, p, rng)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("panel %d (%s): %w", p.ID, p.Title, err)
		}
		layouts = append(layouts, l)
	}
	return c.Image(), layouts, nil
}

// rect is r (pixels from the top left) on the canvas (points from the bottom left).
func (pg *page) rect(r image.Rectangle) vg.Rectangle {
	return vg.Rectangle{Min: vg.Point{X: vg.Length(r.Min.X), Y: vg.Length(pg.h - r.Max.Y)}, Max: vg.Point{X: vg.Length(r.Max.X), Y: vg.Length(pg.h - r.Min.Y)}}
}

// canvas is the part r of the page, for a plot.
func (pg *page) canvas(r image.Rectangle) draw.Canvas {
	return draw.Canvas{Canvas: pg.c, Rectangle: pg.rect(r)}
}

// textStyle is Liberation Sans in a size and color.
func textStyle(size float64, bold bool, c color.Color) draw.TextStyle {
	f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: vg.Length(size)}
	if bold {
		f.Weight = xfont.WeightBold
	}
	return draw.TextStyle{Color: c, Font: f, Handler: plot.DefaultTextHandler}
}

// text draws s at pixel pt, aligned there by xa and ya.
func (pg *page) text(pt image.Point, s string, size float64, bold bool, c color.Color, xa draw.XAlignment, ya draw.YAlignment) {
	sty := textStyle(size, bold, c)
	sty.XAlign, sty.YAlign = xa, ya
	pg.dc.FillText(sty, vg.Point{X: vg.Length(pt.X), Y: vg.Length(pg.h - pt.Y)}, s)
}

// textWidth is the width of s in pixels.
func textWidth(s string, size float64, bold bool) int {
	return int(math.Ceil(float64(textStyle(size, bold, colText).Width(s))))
}

// fitText shortens s with "..." to at most width pixels.
func fitText(s string, width int, size float64, bold bool) string {
	if textWidth(s, size, bold) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && textWidth(string(r)+"...", size, bold) > width {
		r = r[:len(r)-1]
	}
	return string(r) + "..."
}

// fill paints r.
func (pg *page) fill(r image.Rectangle, c color.Color) {
	v := pg.rect(r)
	pg.dc.FillPolygon(c, []vg.Point{v.Min, {X: v.Max.X, Y: v.Min.Y}, v.Max, {X: v.Min.X, Y: v.Max.Y}})
}

// row draws a row's title over a line.
func (pg *page) row(r image.Rectangle, title string) {
	pg.text(image.Pt(r.Min.X+2, r.Min.Y+r.Dy()/2), fitText(title, r.Dx(), 16, true), 16, true, colText, draw.XLeft, draw.YCenter)
	pg.fill(image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y), colBorder)
}

// frame draws a panel's background, border and title, and returns the area inside under the title.
func (pg *page) frame(r image.Rectangle, title string) image.Rectangle {
	pg.fill(r, colBorder)
	pg.fill(r.Inset(1), colPanel)
	pg.text(image.Pt(r.Min.X+pad, r.Min.Y+6), fitText(title, r.Dx()-2*pad, 14, true), 14, true, colText, draw.XLeft, draw.YTop)
	return image.Rect(r.Min.X+pad, r.Min.Y+6+14+10, r.Max.X-pad, r.Max.Y-6)
}

// noData says so in the middle of area.
func (pg *page) noData(area image.Rectangle) {
	pg.text(image.Pt(area.Min.X+area.Dx()/2, area.Min.Y+area.Dy()/2), "No data", 16, false, colDim, draw.XCenter, draw.YCenter)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// visible are the series with a finite sample, and their colors (in the order of all series, as Grafana).
func visible(all []series) ([]series, []color.RGBA) {
	var out []series
	var colors []color.RGBA
	for i, s := range all {
		for _, pt := range s.points {
			if finite(float64(pt.Value)) {
				out = append(out, s)
				colors = append(colors, palette[i%len(palette)])
				break
			}
		}
	}
	return out, colors
}

func hasData(all []series) bool {
	s, _ := visible(all)
	return len(s) > 0
}

// stat shows each series' last value (Grafana's lastNotNull), large, in its color, with its legend under it
// when the panel has several values or a legend format; all values in one size, the largest that fits.
func (pg *page) stat(r image.Rectangle, p panelData) []color.RGBA {
	area := pg.frame(r, p.Title)
	shown, colors := visible(p.series)
	if len(shown) == 0 {
		pg.noData(area)
		return nil
	}
	cols := min(len(shown), 4)
	rows := (len(shown) + cols - 1) / cols
	cw, ch := area.Dx()/cols, area.Dy()/rows
	legendH := 0
	if len(shown) > 1 || len(p.Targets) > 1 || p.Targets[0].LegendFormat != "" {
		legendH = 18
	}
	values := make([]string, len(shown))
	size := math.Min(72, float64(ch-legendH)*0.7)
	for i, s := range shown {
		v := math.NaN()
		for _, pt := range s.points {
			if finite(float64(pt.Value)) {
				v = float64(pt.Value)
			}
		}
		values[i] = formatValue(v, p.FieldConfig.Defaults.Unit, p.FieldConfig.Defaults.Decimals)
		for size > 8 && textWidth(values[i], size, false) > cw-8 {
			size--
		}
	}
	for i, s := range shown {
		cell := image.Rect(area.Min.X+(i%cols)*cw, area.Min.Y+(i/cols)*ch, area.Min.X+(i%cols+1)*cw, area.Min.Y+(i/cols+1)*ch)
		mid := image.Pt(cell.Min.X+cell.Dx()/2, cell.Min.Y+(cell.Dy()-legendH)/2)
		pg.text(mid, values[i], size, false, colors[i], draw.XCenter, draw.YCenter)
		if legendH > 0 {
			pg.text(image.Pt(mid.X, cell.Max.Y-legendH/2), fitText(s.legend, cell.Dx()-4, 11, false), 11, false, colDim, draw.XCenter, draw.YCenter)
		}
	}
	return colors
}
