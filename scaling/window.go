package scaling

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// Window is a daily maintenance window in seconds of the UTC day. It may wrap midnight (Begin > End).
type Window struct {
	Begin, End int // seconds since 00:00:00 UTC, 0 <= x < 86400
}

var windowTime = regexp.MustCompile(`^([01][0-9]|2[0-3])([0-5][0-9])([0-5][0-9])([+-])([01][0-9]|2[0-3])([0-5][0-9])$`)

// ParseWindowTime parses HHMMSS+ZZZZ (a time of day and its UTC offset) into seconds of the UTC day.
func ParseWindowTime(s string) (int, error) {
	m := windowTime.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a time of day as HHMMSS+ZZZZ (e.g. 220000+0000)", s)
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	local := n(1)*3600 + n(2)*60 + n(3)
	offset := n(5)*3600 + n(6)*60
	if m[4] == "-" {
		offset = -offset
	}
	return ((local-offset)%86400 + 86400) % 86400, nil
}

// NewWindow parses begin and end (HHMMSS+ZZZZ). Begin and end must differ: an empty or whole-day window is
// ambiguous, so it is refused rather than guessed.
func NewWindow(begin, end string) (*Window, error) {
	b, err := ParseWindowTime(begin)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	e, err := ParseWindowTime(end)
	if err != nil {
		return nil, fmt.Errorf("end: %w", err)
	}
	if b == e {
		return nil, fmt.Errorf("begin %s and end %s are the same time of day; give the window a length", begin, end)
	}
	return &Window{Begin: b, End: e}, nil
}

// Contains reports whether t is inside the window: Begin <= t < End, wrapping midnight when Begin > End.
func (w *Window) Contains(t time.Time) bool {
	u := t.UTC()
	s := u.Hour()*3600 + u.Minute()*60 + u.Second()
	if w.Begin < w.End {
		return s >= w.Begin && s < w.End
	}
	return s >= w.Begin || s < w.End
}
