package grafana

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// MaxPoints bounds the points of a range query (in Grafana: the panel's width in pixels, maxDataPoints).
const MaxPoints = 300

// Range is the time range of a dashboard's queries and the intervals Grafana derives from it.
type Range struct {
	Start, End time.Time
	// Scrape is the data source's scrape interval (Grafana's data source setting "Scrape interval").
	Scrape time.Duration
	// Step is the range queries' resolution, Grafana's $__interval.
	Step time.Duration
	// RateInterval is Grafana's $__rate_interval.
	RateInterval time.Duration
}

// NewRange is [start, end] on a Prometheus that scrapes every scrape, with Grafana's intervals: $__interval
// is the span over MaxPoints rounded up to a second, at least the scrape interval; $__rate_interval is
// max($__interval + scrape, 4 x scrape), the shortest window a rate() needs to see four scrapes.
func NewRange(start, end time.Time, scrape time.Duration) Range {
	if scrape <= 0 {
		scrape = 15 * time.Second // Grafana's default
	}
	step := ceilSecond(end.Sub(start) / MaxPoints)
	step = max(scrape, step)
	return Range{Start: start, End: end, Scrape: scrape, Step: step, RateInterval: max(step+scrape, 4*scrape)}
}

// Builtins are Grafana's built-in variables for the range: $__range is the span rounded up to a second.
func (r Range) Builtins() map[string]string {
	span := max(ceilSecond(r.End.Sub(r.Start)), time.Second)
	return map[string]string{
		"__interval":      PromDuration(r.Step),
		"__interval_ms":   strconv.FormatInt(r.Step.Milliseconds(), 10),
		"__rate_interval": PromDuration(r.RateInterval),
		"__range":         PromDuration(span),
		"__range_s":       strconv.FormatInt(int64(span/time.Second), 10),
		"__range_ms":      strconv.FormatInt(span.Milliseconds(), 10),
	}
}

// ceilSecond rounds d up to a whole second.
func ceilSecond(d time.Duration) time.Duration {
	if d%time.Second != 0 {
		d = d.Truncate(time.Second) + time.Second
	}
	return d
}

// PromDuration writes a duration for PromQL: whole seconds as "90s", else milliseconds.
func PromDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

// Values are the values Grafana gives the dashboard's variables over r: the built-ins, and every query or
// custom variable its "All" value (allValue, else .*), so that it must be used with =~ or !~. Other variable
// types (interval, textbox, ...) are an error: the dashboards do not use them.
func (d *Dashboard) Values(r Range) (map[string]string, error) {
	vars := r.Builtins()
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
			return nil, fmt.Errorf("%s: template variable %s: type %q is not supported", d.File, v.Name, v.Type)
		}
	}
	return vars, nil
}

// VariableRef matches a reference to a template variable: $name, ${name}, ${name:format} or [[name]].
var VariableRef = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)(?::[A-Za-z]+)?\}|\$([A-Za-z0-9_]+)|\[\[([A-Za-z0-9_]+)\]\]`)

// VariableName is the variable a VariableRef match names.
func VariableName(ref string) string {
	m := VariableRef.FindStringSubmatch(ref)
	if m == nil {
		return ""
	}
	return m[1] + m[2] + m[3]
}

// Substitute replaces every variable reference in expr by its value; an unknown variable is an error.
func Substitute(expr string, vars map[string]string) (string, error) {
	var missing []string
	out := VariableRef.ReplaceAllStringFunc(expr, func(ref string) string {
		v, ok := vars[VariableName(ref)]
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
