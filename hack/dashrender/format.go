package main

import (
	"math"
	"strconv"
	"strings"
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
