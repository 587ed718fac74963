package main

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hvpa-dev/hvpa/hack/internal/metricsdoc"
	"github.com/hvpa-dev/hvpa/hack/recording"
)

// The PromQL subset the evaluator implements (anything else is a parse or evaluation error):
//
//	selectors        name, name{l="v", l!="v", l=~"re", l!~"re"}, and name{...}[5m] as a function argument
//	functions        rate, irate, increase (over a range selector), histogram_quantile(q, v), vector(s)
//	aggregations     sum, avg, min, max, count, with an optional by (l, ...) before or after the argument
//	binary operators + - * / between scalars and vectors (vector-vector: one-to-one on identical labels),
//	                 and or; unary minus; parentheses
//	numbers          1, 0.5, 1e3, Inf, NaN
//
// Semantics follow Prometheus: an instant selector takes the series' sample of the latest scrape at or
// before the evaluation time, if that scrape has it and is at most 5m old (a series missing from a scrape
// is stale); rate and increase extrapolate like Prometheus; arithmetic and functions drop the metric name.

// lookback is how far back an instant selector looks for the latest scrape.
const lookback = 5 * time.Minute

// node is a parsed expression.
type node interface{ String() string }

type numberLit struct{ v float64 }

type matcher struct {
	label, op, value string
	re               *regexp.Regexp
}

type selector struct {
	name     string
	matchers []matcher
	rng      time.Duration // > 0: a range selector
}

type call struct {
	fn   string
	args []node
}

type aggregation struct {
	op   string
	by   []string
	expr node
}

type binary struct {
	op   string
	l, r node
}

type unaryMinus struct{ x node }

func (n numberLit) String() string { return strconv.FormatFloat(n.v, 'g', -1, 64) }
func (s *selector) String() string {
	var ms []string
	for _, m := range s.matchers {
		ms = append(ms, fmt.Sprintf("%s%s%q", m.label, m.op, m.value))
	}
	out := s.name + "{" + strings.Join(ms, ",") + "}"
	if s.rng > 0 {
		out += "[" + s.rng.String() + "]"
	}
	return out
}
func (c *call) String() string {
	var as []string
	for _, a := range c.args {
		as = append(as, a.String())
	}
	return c.fn + "(" + strings.Join(as, ", ") + ")"
}
func (a *aggregation) String() string {
	return fmt.Sprintf("%s by (%s) (%s)", a.op, strings.Join(a.by, ", "), a.expr)
}
func (b *binary) String() string     { return "(" + b.l.String() + " " + b.op + " " + b.r.String() + ")" }
func (u *unaryMinus) String() string { return "-" + u.x.String() }

// parser is a recursive-descent parser over metricsdoc's PromQL tokens.
type parser struct {
	toks []metricsdoc.Token
	pos  int
}

// parse parses an expression whose template variables have been substituted.
func parse(expr string) (node, error) {
	toks, err := metricsdoc.Lex(expr)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	n, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.Kind != metricsdoc.EOF {
		return nil, fmt.Errorf("unexpected %s", t)
	}
	return n, nil
}

func (p *parser) peek() metricsdoc.Token { return p.toks[p.pos] }
func (p *parser) next() metricsdoc.Token {
	t := p.toks[p.pos]
	if t.Kind != metricsdoc.EOF {
		p.pos++
	}
	return t
}

func (p *parser) expect(k metricsdoc.TokenKind) (metricsdoc.Token, error) {
	t := p.next()
	if t.Kind != k {
		return t, fmt.Errorf("expected %s, found %s", k, t)
	}
	return t, nil
}

// binaryOp returns the precedence of the binary operator at t (0: none). unsupported names one that
// PromQL has and the evaluator does not.
func binaryOp(t metricsdoc.Token) (op string, prec int, unsupported bool) {
	switch {
	case t.Kind == metricsdoc.Ident && strings.EqualFold(t.Text, "or"):
		return "or", 1, false
	case t.Kind == metricsdoc.Ident && (strings.EqualFold(t.Text, "and") || strings.EqualFold(t.Text, "unless")):
		return strings.ToLower(t.Text), 2, true
	case t.Kind == metricsdoc.Ident && strings.EqualFold(t.Text, "atan2"):
		return "atan2", 5, true
	case t.Kind != metricsdoc.Op:
		return "", 0, false
	}
	switch t.Text {
	case "==", "!=", "<", ">", "<=", ">=":
		return t.Text, 3, true
	case "+", "-":
		return t.Text, 4, false
	case "*", "/", "%":
		return t.Text, 5, t.Text == "%"
	case "^":
		return t.Text, 6, true
	}
	return "", 0, false
}

// expr parses a binary expression whose operators bind tighter than minPrec (precedence climbing).
func (p *parser) expr(minPrec int) (node, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		op, prec, unsupported := binaryOp(t)
		if prec == 0 || prec <= minPrec {
			return l, nil
		}
		if unsupported {
			return nil, fmt.Errorf("operator %q is not supported by this evaluator", t.Text)
		}
		p.next()
		if m := p.peek(); m.Kind == metricsdoc.Ident {
			switch strings.ToLower(m.Text) {
			case "on", "ignoring", "group_left", "group_right", "bool":
				return nil, fmt.Errorf("vector matching modifier %q is not supported by this evaluator", m.Text)
			}
		}
		r, err := p.expr(prec)
		if err != nil {
			return nil, err
		}
		l = &binary{op: op, l: l, r: r}
	}
}

func (p *parser) unary() (node, error) {
	if t := p.peek(); t.Kind == metricsdoc.Op && (t.Text == "-" || t.Text == "+") {
		p.next()
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		if t.Text == "+" {
			return x, nil
		}
		if n, ok := x.(numberLit); ok {
			return numberLit{-n.v}, nil
		}
		return &unaryMinus{x}, nil
	}
	return p.primary()
}

func (p *parser) primary() (node, error) {
	t := p.next()
	var n node
	switch t.Kind {
	case metricsdoc.Number:
		v, err := strconv.ParseFloat(t.Text, 64)
		if err != nil {
			if i, ierr := strconv.ParseInt(t.Text, 0, 64); ierr == nil {
				v, err = float64(i), nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("number %s: %w", t, err)
		}
		n = numberLit{v}
	case metricsdoc.LParen:
		x, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(metricsdoc.RParen); err != nil {
			return nil, err
		}
		n = x
	case metricsdoc.LBrace:
		p.pos--
		s, err := p.selector("")
		if err != nil {
			return nil, err
		}
		n = s
	case metricsdoc.Ident:
		lower := strings.ToLower(t.Text)
		switch {
		case metricsdoc.Aggregations[lower] && (p.peek().Kind == metricsdoc.LParen || isWord(p.peek(), "by", "without")):
			a, err := p.aggregation(lower)
			if err != nil {
				return nil, err
			}
			n = a
		case p.peek().Kind == metricsdoc.LParen:
			c, err := p.call(t)
			if err != nil {
				return nil, err
			}
			n = c
		default:
			s, err := p.selector(t.Text)
			if err != nil {
				return nil, err
			}
			n = s
		}
	case metricsdoc.Variable:
		return nil, fmt.Errorf("template variable %s has no value", t.Text)
	default:
		return nil, fmt.Errorf("unexpected %s", t)
	}
	if isWord(p.peek(), "offset") || (p.peek().Kind == metricsdoc.Op && p.peek().Text == "@") {
		return nil, fmt.Errorf("%s is not supported by this evaluator", p.peek())
	}
	if p.peek().Kind == metricsdoc.LBracket {
		return nil, fmt.Errorf("a range or subquery after %s is not supported by this evaluator (only after a selector)", n)
	}
	return n, nil
}

func isWord(t metricsdoc.Token, words ...string) bool {
	if t.Kind != metricsdoc.Ident {
		return false
	}
	for _, w := range words {
		if strings.EqualFold(t.Text, w) {
			return true
		}
	}
	return false
}

func (p *parser) selector(name string) (node, error) {
	s := &selector{name: name}
	if p.peek().Kind == metricsdoc.LBrace {
		p.next()
		for p.peek().Kind != metricsdoc.RBrace {
			l, err := p.expect(metricsdoc.Ident)
			if err != nil {
				return nil, err
			}
			op, err := p.expect(metricsdoc.Op)
			if err != nil {
				return nil, err
			}
			if op.Text != "=" && op.Text != "!=" && op.Text != "=~" && op.Text != "!~" {
				return nil, fmt.Errorf("bad matcher operator %s", op)
			}
			v, err := p.expect(metricsdoc.String)
			if err != nil {
				return nil, err
			}
			m := matcher{label: l.Text, op: op.Text, value: metricsdoc.Unquote(v.Text)}
			if op.Text == "=~" || op.Text == "!~" {
				if m.re, err = regexp.Compile("^(?:" + m.value + ")$"); err != nil {
					return nil, fmt.Errorf("matcher %s: %w", l.Text, err)
				}
			}
			if m.label == "__name__" && m.op == "=" {
				s.name = m.value
			} else {
				s.matchers = append(s.matchers, m)
			}
			if p.peek().Kind == metricsdoc.Comma {
				p.next()
			} else if p.peek().Kind != metricsdoc.RBrace {
				return nil, fmt.Errorf("expected , or } in a selector, found %s", p.peek())
			}
		}
		p.next()
	}
	if s.name == "" {
		return nil, fmt.Errorf("a selector without a metric name is not supported by this evaluator")
	}
	if p.peek().Kind == metricsdoc.LBracket {
		p.next()
		d, err := p.expect(metricsdoc.Duration)
		if err != nil {
			return nil, err
		}
		if p.peek().Kind == metricsdoc.Colon {
			return nil, fmt.Errorf("subqueries are not supported by this evaluator")
		}
		if _, err := p.expect(metricsdoc.RBracket); err != nil {
			return nil, err
		}
		if s.rng, err = parseDuration(d.Text); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (p *parser) labelList() ([]string, error) {
	if _, err := p.expect(metricsdoc.LParen); err != nil {
		return nil, err
	}
	var out []string
	for p.peek().Kind != metricsdoc.RParen {
		l, err := p.expect(metricsdoc.Ident)
		if err != nil {
			return nil, err
		}
		out = append(out, l.Text)
		if p.peek().Kind == metricsdoc.Comma {
			p.next()
		}
	}
	p.next()
	return out, nil
}

func (p *parser) aggregation(op string) (node, error) {
	a := &aggregation{op: op}
	switch op {
	case "sum", "avg", "min", "max", "count":
	default:
		return nil, fmt.Errorf("aggregation %q is not supported by this evaluator", op)
	}
	clause := func() error {
		if isWord(p.peek(), "without") {
			return fmt.Errorf("without (...) is not supported by this evaluator: use by (...)")
		}
		if isWord(p.peek(), "by") {
			if a.by != nil {
				return fmt.Errorf("two by clauses")
			}
			p.next()
			by, err := p.labelList()
			if err != nil {
				return err
			}
			a.by = append([]string{}, by...)
		}
		return nil
	}
	if err := clause(); err != nil {
		return nil, err
	}
	if _, err := p.expect(metricsdoc.LParen); err != nil {
		return nil, err
	}
	x, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if p.peek().Kind == metricsdoc.Comma {
		return nil, fmt.Errorf("%s takes one argument", op)
	}
	if _, err := p.expect(metricsdoc.RParen); err != nil {
		return nil, err
	}
	a.expr = x
	if err := clause(); err != nil {
		return nil, err
	}
	return a, nil
}

// functions are the supported functions and their argument kinds: 'r' range selector, 's' scalar
// (a number), 'v' instant vector.
var functions = map[string]string{"rate": "r", "irate": "r", "increase": "r", "histogram_quantile": "sv", "vector": "s"}

func (p *parser) call(fn metricsdoc.Token) (node, error) {
	kinds, ok := functions[fn.Text]
	if !ok {
		return nil, fmt.Errorf("function %s is not supported by this evaluator", fn.Text)
	}
	p.next() // (
	c := &call{fn: fn.Text}
	for p.peek().Kind != metricsdoc.RParen {
		x, err := p.expr(0)
		if err != nil {
			return nil, err
		}
		c.args = append(c.args, x)
		if p.peek().Kind == metricsdoc.Comma {
			p.next()
		} else if p.peek().Kind != metricsdoc.RParen {
			return nil, fmt.Errorf("expected , or ) in %s(...), found %s", fn.Text, p.peek())
		}
	}
	p.next()
	if len(c.args) != len(kinds) {
		return nil, fmt.Errorf("%s takes %d arguments, got %d", fn.Text, len(kinds), len(c.args))
	}
	for i, k := range kinds {
		s, isSel := c.args[i].(*selector)
		_, isNum := c.args[i].(numberLit)
		switch {
		case k == 'r' && (!isSel || s.rng == 0):
			return nil, fmt.Errorf("%s needs a range selector such as x[5m], got %s", fn.Text, c.args[i])
		case k == 's' && !isNum:
			return nil, fmt.Errorf("argument %d of %s must be a number in this evaluator, got %s", i+1, fn.Text, c.args[i])
		case k == 'v' && isSel && s.rng > 0:
			return nil, fmt.Errorf("argument %d of %s must be an instant vector, got %s", i+1, fn.Text, c.args[i])
		}
	}
	return c, nil
}

// parseDuration parses a PromQL duration: 1h30m, 5m, 250ms, 1d, 1w, 1y.
func parseDuration(s string) (time.Duration, error) {
	units := map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute, "h": time.Hour,
		"d": 24 * time.Hour, "w": 7 * 24 * time.Hour, "y": 365 * 24 * time.Hour}
	var total time.Duration
	rest := s
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		j := i
		for j < len(rest) && (rest[j] < '0' || rest[j] > '9') {
			j++
		}
		n, err := strconv.Atoi(rest[:i])
		u, ok := units[rest[i:j]]
		if err != nil || !ok {
			return 0, fmt.Errorf("bad duration %q", s)
		}
		total += time.Duration(n) * u
		rest = rest[j:]
	}
	if total <= 0 {
		return 0, fmt.Errorf("duration %q: want a positive duration", s)
	}
	return total, nil
}

// sample is one element of an instant vector.
type sample struct {
	labels map[string]string // with __name__ while the metric name is kept
	v      float64
}

// vector is an instant vector; a scalar is a value of its own.
type vector []sample

type scalar float64

// evaluator evaluates expressions over a recording.
type evaluator struct {
	rec    *recording.Series
	byName map[string][]*recording.TimeSeries
}

func newEvaluator(rec *recording.Series) *evaluator {
	e := &evaluator{rec: rec, byName: map[string][]*recording.TimeSeries{}}
	for _, ts := range rec.List {
		e.byName[ts.Name] = append(e.byName[ts.Name], ts)
	}
	return e
}

// Point is a value at a time of a range evaluation.
type Point struct {
	T int64 // unix milliseconds
	V float64
}

// Result is one series of a range evaluation.
type Result struct {
	Labels map[string]string
	Points []Point
}

// rangeQuery evaluates expr at start, start+step, ... up to end, and returns the series sorted by labels.
func (e *evaluator) rangeQuery(expr string, start, end time.Time, step time.Duration) ([]Result, error) {
	n, err := parse(expr)
	if err != nil {
		return nil, err
	}
	byKey := map[string]*Result{}
	for t := start; !t.After(end); t = t.Add(step) {
		v, err := e.eval(n, t.UnixMilli())
		if err != nil {
			return nil, err
		}
		var vec vector
		switch x := v.(type) {
		case scalar:
			vec = vector{{labels: map[string]string{}, v: float64(x)}}
		case vector:
			vec = x
		}
		for _, s := range vec {
			k := recording.Key("", s.labels)
			r := byKey[k]
			if r == nil {
				r = &Result{Labels: s.labels}
				byKey[k] = r
			}
			r.Points = append(r.Points, Point{t.UnixMilli(), s.v})
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Result, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out, nil
}

func (e *evaluator) eval(n node, t int64) (any, error) {
	switch x := n.(type) {
	case numberLit:
		return scalar(x.v), nil
	case *selector:
		if x.rng > 0 {
			return nil, fmt.Errorf("range selector %s outside rate, irate or increase", x)
		}
		return e.instant(x, t), nil
	case *unaryMinus:
		v, err := e.eval(x.x, t)
		if err != nil {
			return nil, err
		}
		return arith("*", scalar(-1), v)
	case *binary:
		l, err := e.eval(x.l, t)
		if err != nil {
			return nil, err
		}
		r, err := e.eval(x.r, t)
		if err != nil {
			return nil, err
		}
		if x.op == "or" {
			return or(l, r)
		}
		return arith(x.op, l, r)
	case *aggregation:
		v, err := e.eval(x.expr, t)
		if err != nil {
			return nil, err
		}
		vec, ok := v.(vector)
		if !ok {
			return nil, fmt.Errorf("%s needs a vector, got a scalar", x.op)
		}
		return aggregate(x.op, x.by, vec), nil
	case *call:
		return e.call(x, t)
	}
	return nil, fmt.Errorf("cannot evaluate %s", n)
}

func (s *selector) matches(ts *recording.TimeSeries) bool {
	for _, m := range s.matchers {
		v := ts.Labels[m.label]
		var ok bool
		switch m.op {
		case "=":
			ok = v == m.value
		case "!=":
			ok = v != m.value
		case "=~":
			ok = m.re.MatchString(v)
		case "!~":
			ok = !m.re.MatchString(v)
		}
		if !ok {
			return false
		}
	}
	return true
}

// latestScrape is the time of the latest scrape at or before t (ok false: none within the lookback).
func (e *evaluator) latestScrape(t int64) (int64, bool) {
	sc := e.rec.Scrapes
	i := sort.Search(len(sc), func(i int) bool { return sc[i] > t }) - 1
	if i < 0 || t-sc[i] > lookback.Milliseconds() {
		return 0, false
	}
	return sc[i], true
}

func withName(name string, l map[string]string) map[string]string {
	out := make(map[string]string, len(l)+1)
	for k, v := range l {
		out[k] = v
	}
	out["__name__"] = name
	return out
}

func (e *evaluator) instant(s *selector, t int64) vector {
	at, ok := e.latestScrape(t)
	if !ok {
		return nil
	}
	var out vector
	for _, ts := range e.byName[s.name] {
		if !s.matches(ts) {
			continue
		}
		i := sort.Search(len(ts.Samples), func(i int) bool { return ts.Samples[i].T > at }) - 1
		if i >= 0 && ts.Samples[i].T == at { // in the latest scrape: not stale
			out = append(out, sample{withName(ts.Name, ts.Labels), ts.Samples[i].V})
		}
	}
	return out
}

// window returns the samples of ts in (t-rng, t].
func window(ts *recording.TimeSeries, t int64, rng time.Duration) []recording.Sample {
	from := t - rng.Milliseconds()
	lo := sort.Search(len(ts.Samples), func(i int) bool { return ts.Samples[i].T > from })
	hi := sort.Search(len(ts.Samples), func(i int) bool { return ts.Samples[i].T > t })
	return ts.Samples[lo:hi]
}

func (e *evaluator) call(c *call, t int64) (any, error) {
	switch c.fn {
	case "vector":
		return vector{{labels: map[string]string{}, v: c.args[0].(numberLit).v}}, nil
	case "histogram_quantile":
		v, err := e.eval(c.args[1], t)
		if err != nil {
			return nil, err
		}
		vec, ok := v.(vector)
		if !ok {
			return nil, fmt.Errorf("histogram_quantile needs a vector")
		}
		return histogramQuantile(c.args[0].(numberLit).v, vec), nil
	}
	s := c.args[0].(*selector)
	var out vector
	for _, ts := range e.byName[s.name] {
		if !s.matches(ts) {
			continue
		}
		w := window(ts, t, s.rng)
		var v float64
		var ok bool
		switch c.fn {
		case "rate":
			v, ok = extrapolatedDelta(w, t, s.rng, true)
		case "increase":
			v, ok = extrapolatedDelta(w, t, s.rng, false)
		case "irate":
			v, ok = instantRate(w)
		}
		if ok {
			out = append(out, sample{copyLabels(ts.Labels), v})
		}
	}
	return out, nil
}

func copyLabels(l map[string]string) map[string]string {
	out := make(map[string]string, len(l))
	for k, v := range l {
		if k != "__name__" {
			out[k] = v
		}
	}
	return out
}

// extrapolatedDelta is Prometheus' rate (per second) and increase of a counter over the window (t-rng, t]:
// the difference between the first and the last sample corrected for resets, extrapolated towards the
// window's edges (by at most half an average sample interval where the samples stop early, and never
// below zero at the start).
func extrapolatedDelta(w []recording.Sample, t int64, rng time.Duration, perSecond bool) (float64, bool) {
	if len(w) < 2 {
		return 0, false
	}
	first, last := w[0], w[len(w)-1]
	delta := last.V - first.V
	for i := 1; i < len(w); i++ {
		if w[i].V < w[i-1].V { // a counter reset
			delta += w[i-1].V
		}
	}
	rangeStart := float64(t-rng.Milliseconds()) / 1000
	rangeEnd := float64(t) / 1000
	toStart := float64(first.T)/1000 - rangeStart
	toEnd := rangeEnd - float64(last.T)/1000
	sampled := float64(last.T-first.T) / 1000
	avg := sampled / float64(len(w)-1)
	if delta > 0 && first.V >= 0 {
		if toZero := sampled * (first.V / delta); toZero < toStart {
			toStart = toZero
		}
	}
	threshold := avg * 1.1
	extrapolated := sampled
	if toStart < threshold {
		extrapolated += toStart
	} else {
		extrapolated += avg / 2
	}
	if toEnd < threshold {
		extrapolated += toEnd
	} else {
		extrapolated += avg / 2
	}
	delta *= extrapolated / sampled
	if perSecond {
		delta /= rng.Seconds()
	}
	return delta, true
}

// instantRate is irate: the per-second change between the last two samples.
func instantRate(w []recording.Sample) (float64, bool) {
	if len(w) < 2 {
		return 0, false
	}
	a, b := w[len(w)-2], w[len(w)-1]
	d := b.V - a.V
	if d < 0 {
		d = b.V // a reset
	}
	dt := float64(b.T-a.T) / 1000
	if dt <= 0 {
		return 0, false
	}
	return d / dt, true
}

// groupKey is the identity of a label set without the metric name (and without the labels in drop).
func groupKey(l map[string]string, drop ...string) (string, map[string]string) {
	out := make(map[string]string, len(l))
	for k, v := range l {
		if k != "__name__" && !contains(drop, k) {
			out[k] = v
		}
	}
	return recording.Key("", out), out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func aggregate(op string, by []string, vec vector) vector {
	type group struct {
		labels map[string]string
		vals   []float64
	}
	groups := map[string]*group{}
	var order []string
	for _, s := range vec {
		l := map[string]string{}
		for _, b := range by {
			if v, ok := s.labels[b]; ok && v != "" {
				l[b] = v
			}
		}
		k := recording.Key("", l)
		g := groups[k]
		if g == nil {
			g = &group{labels: l}
			groups[k] = g
			order = append(order, k)
		}
		g.vals = append(g.vals, s.v)
	}
	sort.Strings(order)
	out := vector{}
	for _, k := range order {
		g := groups[k]
		var v float64
		switch op {
		case "sum", "avg":
			for _, x := range g.vals {
				v += x
			}
			if op == "avg" {
				v /= float64(len(g.vals))
			}
		case "count":
			v = float64(len(g.vals))
		case "min", "max":
			v = g.vals[0]
			for _, x := range g.vals[1:] {
				if (op == "min" && (x < v || math.IsNaN(v))) || (op == "max" && (x > v || math.IsNaN(v))) {
					v = x
				}
			}
		}
		out = append(out, sample{g.labels, v})
	}
	return out
}

func applyOp(op string, a, b float64) float64 {
	switch op {
	case "+":
		return a + b
	case "-":
		return a - b
	case "*":
		return a * b
	case "/":
		return a / b
	}
	return math.NaN()
}

// arith applies + - * / to scalars and vectors; vector-vector matches identical label sets one-to-one.
func arith(op string, l, r any) (any, error) {
	switch lv := l.(type) {
	case scalar:
		switch rv := r.(type) {
		case scalar:
			return scalar(applyOp(op, float64(lv), float64(rv))), nil
		case vector:
			out := make(vector, 0, len(rv))
			for _, s := range rv {
				_, lbl := groupKey(s.labels)
				out = append(out, sample{lbl, applyOp(op, float64(lv), s.v)})
			}
			return out, nil
		}
	case vector:
		switch rv := r.(type) {
		case scalar:
			out := make(vector, 0, len(lv))
			for _, s := range lv {
				_, lbl := groupKey(s.labels)
				out = append(out, sample{lbl, applyOp(op, s.v, float64(rv))})
			}
			return out, nil
		case vector:
			right := map[string]float64{}
			for _, s := range rv {
				k, _ := groupKey(s.labels)
				if _, dup := right[k]; dup {
					return nil, fmt.Errorf("%s: several series on the right side have the labels %s (one-to-one matching)", op, k)
				}
				right[k] = s.v
			}
			out := vector{}
			seen := map[string]bool{}
			for _, s := range lv {
				k, lbl := groupKey(s.labels)
				if seen[k] {
					return nil, fmt.Errorf("%s: several series on the left side have the labels %s (one-to-one matching)", op, k)
				}
				seen[k] = true
				if v, ok := right[k]; ok {
					out = append(out, sample{lbl, applyOp(op, s.v, v)})
				}
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("operator %s: unsupported operands", op)
}

// or returns the left vector and the elements of the right one whose label sets the left lacks.
func or(l, r any) (any, error) {
	lv, lok := l.(vector)
	rv, rok := r.(vector)
	if !lok || !rok {
		return nil, fmt.Errorf("or needs vectors on both sides")
	}
	out := append(vector{}, lv...)
	have := map[string]bool{}
	for _, s := range lv {
		k, _ := groupKey(s.labels)
		have[k] = true
	}
	for _, s := range rv {
		if k, _ := groupKey(s.labels); !have[k] {
			out = append(out, s)
		}
	}
	return out, nil
}

// histogramQuantile is Prometheus' histogram_quantile over classic buckets: per label set without le,
// linear interpolation inside the bucket where the rank falls (the +Inf bucket: the highest finite bound).
func histogramQuantile(q float64, vec vector) vector {
	type bucket struct{ upper, count float64 }
	type hist struct {
		labels  map[string]string
		buckets []bucket
	}
	hs := map[string]*hist{}
	var order []string
	for _, s := range vec {
		le, ok := s.labels["le"]
		if !ok {
			continue
		}
		upper, err := strconv.ParseFloat(le, 64)
		if err != nil {
			continue
		}
		k, lbl := groupKey(s.labels, "le")
		h := hs[k]
		if h == nil {
			h = &hist{labels: lbl}
			hs[k] = h
			order = append(order, k)
		}
		h.buckets = append(h.buckets, bucket{upper, s.v})
	}
	sort.Strings(order)
	out := vector{}
	for _, k := range order {
		h := hs[k]
		b := h.buckets
		sort.Slice(b, func(i, j int) bool { return b[i].upper < b[j].upper })
		v := math.NaN()
		switch {
		case q < 0:
			v = math.Inf(-1)
		case q > 1:
			v = math.Inf(1)
		case len(b) < 2 || !math.IsInf(b[len(b)-1].upper, 1):
		default:
			for i := 1; i < len(b); i++ { // counts never decrease with the bound
				b[i].count = math.Max(b[i].count, b[i-1].count)
			}
			total := b[len(b)-1].count
			if total == 0 || math.IsNaN(q) {
				break
			}
			rank := q * total
			i := sort.Search(len(b), func(i int) bool { return b[i].count >= rank })
			switch {
			case i == len(b)-1:
				v = b[len(b)-2].upper
			case i == 0 && b[0].upper <= 0:
				v = b[0].upper
			default:
				start, count := 0.0, b[i].count
				if i > 0 {
					start = b[i-1].upper
					count -= b[i-1].count
					rank -= b[i-1].count
				}
				v = start + (b[i].upper-start)*(rank/count)
			}
		}
		out = append(out, sample{h.labels, v})
	}
	return out
}
