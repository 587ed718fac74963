package main

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// formatValue formats a value in a Grafana unit: s, bytes, percentunit, percent; anything else (short,
// none) with SI suffixes.
func formatValue(v float64, unit string, decimals *int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	num := func(x float64) string {
		if decimals != nil {
			return strconv.FormatFloat(x, 'f', *decimals, 64)
		}
		return sig3(x)
	}
	switch unit {
	case "s":
		a := math.Abs(v)
		switch {
		case a == 0:
			return "0s"
		case a < 1e-3:
			return num(v*1e6) + "us"
		case a < 1:
			return num(v*1e3) + "ms"
		case a < 60:
			return num(v) + "s"
		case a < 3600:
			return num(v/60) + "min"
		default:
			return num(v/3600) + "h"
		}
	case "bytes":
		units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
		i := 0
		for math.Abs(v) >= 1024 && i < len(units)-1 {
			v /= 1024
			i++
		}
		return num(v) + " " + units[i]
	case "percentunit":
		return num(v*100) + "%"
	case "percent":
		return num(v) + "%"
	}
	suffixes := []string{"", "K", "M", "G", "T", "P"}
	i := 0
	for math.Abs(v) >= 1000 && i < len(suffixes)-1 {
		v /= 1000
		i++
	}
	return num(v) + suffixes[i]
}

// sig3 formats x with three significant digits, without trailing zeros.
func sig3(x float64) string {
	if x == 0 {
		return "0"
	}
	d := 2 - int(math.Floor(math.Log10(math.Abs(x))))
	d = max(0, min(d, 6))
	s := strconv.FormatFloat(x, 'f', d, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// promDuration renders a duration for PromQL: whole seconds as "90s", else milliseconds.
func promDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// niceRange widens [lo, hi] to multiples of a round step giving about four intervals, and returns the ticks:
// 1-2-2.5-5 times a power of ten, or for bytes a power of two times a power of 1024.
func niceRange(lo, hi float64, unit string) []float64 {
	if lo == hi {
		if lo == 0 {
			hi = 1
		} else {
			lo, hi = lo-math.Abs(lo)*0.1, hi+math.Abs(hi)*0.1
		}
	}
	raw := (hi - lo) / 4
	var step float64
	if unit == "bytes" && raw >= 1 {
		step = math.Pow(1024, math.Floor(math.Log(raw)/math.Log(1024)))
		for step < raw {
			step *= 2
		}
	} else {
		mag := math.Pow(10, math.Floor(math.Log10(raw)))
		for _, m := range []float64{1, 2, 2.5, 5, 10} {
			if step = m * mag; step >= raw {
				break
			}
		}
	}
	start := math.Floor(lo/step) * step
	end := math.Ceil(hi/step) * step
	var ticks []float64
	for i := 0; ; i++ {
		t := start + float64(i)*step
		if t > end+step/2 {
			break
		}
		if math.Abs(t) < step*1e-9 {
			t = 0
		}
		ticks = append(ticks, t)
	}
	return ticks
}
