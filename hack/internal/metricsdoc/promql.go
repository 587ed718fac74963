package metricsdoc

import (
	"fmt"
	"strings"
)

// TokenKind is the kind of a PromQL token.
type TokenKind int

// The kinds of PromQL tokens.
const (
	EOF      TokenKind = iota
	Ident              // a metric, label, function or keyword name
	Number             // 1, 0.5, 1e3, 0x1f, Inf, NaN
	Duration           // 5m, 1h30m, 250ms
	String             // "…", '…' or `…`, with the quotes
	Variable           // a Grafana template variable: $name, ${name} or ${name:format}
	Op                 // + - * / % ^ == != < > <= >= = =~ !~ @
	LParen
	RParen
	LBrace
	RBrace
	LBracket
	RBracket
	Comma
	Colon // in a subquery range [5m:1m]
)

var kindNames = [...]string{"end", "identifier", "number", "duration", "string", "variable", "operator", "(", ")", "{", "}", "[", "]", ",", ":"}

func (k TokenKind) String() string { return kindNames[k] }

// Token is one PromQL token; Pos is its byte offset in the expression.
type Token struct {
	Kind TokenKind
	Text string
	Pos  int
}

func (t Token) String() string {
	if t.Kind == EOF {
		return "end of expression"
	}
	return fmt.Sprintf("%s %q at %d", t.Kind, t.Text, t.Pos)
}

// Lex splits a PromQL expression (with Grafana template variables) into tokens, ending with an EOF token.
func Lex(expr string) ([]Token, error) {
	var out []Token
	brackets := 0 // inside [...], "5m:1m" is a duration, a colon and a duration
	i := 0
	emit := func(k TokenKind, start int) { out = append(out, Token{k, expr[start:i], start}) }
	for i < len(expr) {
		c := expr[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			i++
			for i < len(expr) && expr[i] != c {
				if expr[i] == '\\' && c != '`' {
					i++
				}
				i++
			}
			if i >= len(expr) {
				return nil, fmt.Errorf("unterminated string at %d", start)
			}
			i++
			emit(String, start)
		case c == '$':
			i++
			if i < len(expr) && expr[i] == '{' {
				end := strings.IndexByte(expr[i:], '}')
				if end < 0 {
					return nil, fmt.Errorf("unterminated variable at %d", start)
				}
				i += end + 1
			} else {
				for i < len(expr) && isIdentChar(expr[i], false) {
					i++
				}
			}
			if i-start < 2 || expr[start:i] == "${}" {
				return nil, fmt.Errorf("empty variable name at %d", start)
			}
			emit(Variable, start)
		case isDigit(c) || (c == '.' && i+1 < len(expr) && isDigit(expr[i+1])):
			k, err := lexNumber(expr, &i)
			if err != nil {
				return nil, err
			}
			emit(k, start)
		case isIdentChar(c, true) && !(c == ':' && brackets > 0):
			for i < len(expr) && isIdentChar(expr[i], false) && !(expr[i] == ':' && brackets > 0) {
				i++
			}
			switch strings.ToLower(expr[start:i]) {
			case "inf", "nan":
				emit(Number, start)
			default:
				emit(Ident, start)
			}
		default:
			i++
			switch c {
			case '(':
				emit(LParen, start)
			case ')':
				emit(RParen, start)
			case '{':
				emit(LBrace, start)
			case '}':
				emit(RBrace, start)
			case '[':
				brackets++
				emit(LBracket, start)
			case ']':
				brackets--
				emit(RBracket, start)
			case ',':
				emit(Comma, start)
			case ':':
				emit(Colon, start)
			case '+', '-', '*', '/', '%', '^', '@':
				emit(Op, start)
			case '=', '!', '<', '>':
				if i < len(expr) && (expr[i] == '=' || (expr[i] == '~' && (c == '=' || c == '!'))) {
					i++
				} else if c == '!' {
					return nil, fmt.Errorf("unexpected %q at %d", c, start)
				}
				emit(Op, start)
			default:
				return nil, fmt.Errorf("unexpected %q at %d", c, start)
			}
		}
	}
	out = append(out, Token{Kind: EOF, Pos: len(expr)})
	return out, nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWordChar: a letter, a digit or an underscore.
func isWordChar(c byte) bool { return c != ':' && isIdentChar(c, false) }

func isIdentChar(c byte, first bool) bool {
	return c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && isDigit(c))
}

// lexNumber reads a number (decimal, float, hex) or a duration (one or more of <int><unit>) at *i.
func lexNumber(expr string, i *int) (TokenKind, error) {
	start := *i
	if strings.HasPrefix(expr[start:], "0x") || strings.HasPrefix(expr[start:], "0X") {
		*i += 2
		for *i < len(expr) && strings.IndexByte("0123456789abcdefABCDEF", expr[*i]) >= 0 {
			*i++
		}
		return Number, nil
	}
	digits := func() {
		for *i < len(expr) && isDigit(expr[*i]) {
			*i++
		}
	}
	digits()
	if unit := durationUnit(expr[*i:]); unit != "" {
		for unit != "" {
			*i += len(unit)
			n := *i
			digits()
			if *i == n {
				break
			}
			if unit = durationUnit(expr[*i:]); unit == "" {
				return 0, fmt.Errorf("bad duration %q at %d", expr[start:*i], start)
			}
		}
		return Duration, nil
	}
	if *i < len(expr) && expr[*i] == '.' {
		*i++
		digits()
	}
	if *i+1 < len(expr) && (expr[*i] == 'e' || expr[*i] == 'E') {
		j := *i + 1
		if expr[j] == '+' || expr[j] == '-' {
			j++
		}
		if j < len(expr) && isDigit(expr[j]) {
			*i = j
			digits()
		}
	}
	if *i < len(expr) && isWordChar(expr[*i]) {
		return 0, fmt.Errorf("bad number %q at %d", expr[start:*i+1], start)
	}
	return Number, nil
}

// durationUnit is the PromQL duration unit s starts with, if any.
func durationUnit(s string) string {
	for _, u := range []string{"ms", "s", "m", "h", "d", "w", "y"} {
		if strings.HasPrefix(s, u) && (len(s) == len(u) || !isWordChar(s[len(u)]) || isDigit(s[len(u)])) {
			return u
		}
	}
	return ""
}

// Aggregations are PromQL's aggregation operators (case-insensitive).
var Aggregations = map[string]bool{
	"sum": true, "avg": true, "min": true, "max": true, "count": true, "group": true, "stddev": true, "stdvar": true,
	"topk": true, "bottomk": true, "quantile": true, "count_values": true, "limitk": true, "limit_ratio": true,
}

// Functions are PromQL's functions.
var Functions = map[string]bool{}

func init() {
	for _, f := range strings.Fields(`abs absent absent_over_time acos acosh asin asinh atan atanh avg_over_time ceil changes
		clamp clamp_max clamp_min cos cosh count_over_time day_of_month day_of_week day_of_year days_in_month deg delta
		deriv exp floor histogram_avg histogram_count histogram_fraction histogram_quantile histogram_stddev
		histogram_stdvar histogram_sum hour idelta increase irate label_join label_replace last_over_time ln log10 log2
		mad_over_time max_over_time min_over_time minute month pi predict_linear present_over_time quantile_over_time
		rad rate resets round scalar sgn sin sinh sort sort_by_label sort_by_label_desc sort_desc sqrt stddev_over_time
		stdvar_over_time sum_over_time tan tanh time timestamp vector year`) {
		Functions[f] = true
	}
}

// keywords are the PromQL words that are neither metrics nor functions (case-insensitive).
var keywords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
	"bool": true, "offset": true, "and": true, "or": true, "unless": true, "atan2": true,
}

// labelListKeywords are followed by a parenthesized list of label names.
var labelListKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}

// MetricNames returns the metric names an expression selects, in order of appearance, without duplicates:
// the identifiers outside {...} that are not functions, aggregations, keywords or label names (in by(...),
// without(...), on(...), ignoring(...), group_left(...), group_right(...)), and the values of __name__="..."
// matchers. A call of an unknown function is an error.
func MetricNames(expr string) ([]string, error) {
	toks, err := Lex(expr)
	if err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	depth := 0 // of {...}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.Kind == LBrace:
			depth++
		case t.Kind == RBrace:
			if depth--; depth < 0 {
				return nil, fmt.Errorf("unbalanced } at %d", t.Pos)
			}
		case depth > 0:
			if t.Kind == Ident && t.Text == "__name__" && toks[i+1].Kind == Op && toks[i+1].Text == "=" && toks[i+2].Kind == String {
				add(Unquote(toks[i+2].Text))
			}
		case t.Kind != Ident:
		case labelListKeywords[strings.ToLower(t.Text)]:
			if toks[i+1].Kind != LParen {
				continue // group_left without labels
			}
			j := i + 2
			for ; toks[j].Kind != RParen; j++ {
				if toks[j].Kind != Ident && toks[j].Kind != Comma && toks[j].Kind != String {
					return nil, fmt.Errorf("unexpected %s in the label list of %s", toks[j], t.Text)
				}
			}
			i = j
		case keywords[strings.ToLower(t.Text)]:
		case Aggregations[strings.ToLower(t.Text)] && toks[i+1].Kind == Ident && labelListKeywords[strings.ToLower(toks[i+1].Text)]:
			// sum by (...) (...)
		case toks[i+1].Kind == LParen:
			if !Functions[t.Text] && !Aggregations[strings.ToLower(t.Text)] {
				return nil, fmt.Errorf("unknown function %s", t)
			}
		default:
			add(t.Text)
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced {")
	}
	return names, nil
}

// Unquote strips the quotes of a String token's text and undoes the escapes of "…" and '…' strings.
func Unquote(s string) string {
	if len(s) < 2 {
		return s
	}
	q, body := s[0], s[1:len(s)-1]
	if q == '`' {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '\\' && i+1 < len(body) {
			i++
			switch body[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(body[i])
			}
			continue
		}
		b.WriteByte(body[i])
	}
	return b.String()
}
