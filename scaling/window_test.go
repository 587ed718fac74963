package scaling

import (
	"testing"
	"time"
)

func TestWindow(t *testing.T) {
	at := func(h, m int) time.Time { return time.Date(2026, 11, 21, h, m, 0, 0, time.UTC) }
	cases := map[string]struct {
		begin, end string
		t          time.Time
		want       bool
	}{
		"inside a day window":               {"080000+0000", "170000+0000", at(12, 0), true},
		"before a day window":               {"080000+0000", "170000+0000", at(7, 59), false},
		"end is exclusive":                  {"080000+0000", "170000+0000", at(17, 0), false},
		"wrapping: late evening":            {"220000+0000", "060000+0000", at(23, 0), true},
		"wrapping: early morning":           {"220000+0000", "060000+0000", at(5, 0), true},
		"wrapping: midday is outside":       {"220000+0000", "060000+0000", at(12, 0), false},
		"offset: 22:00+0200 is 20:00 UTC":   {"220000+0200", "230000+0200", at(20, 30), true},
		"offset: negative wraps to UTC day": {"230000-0300", "010000-0300", at(2, 30), true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w, err := NewWindow(tc.begin, tc.end)
			if err != nil {
				t.Fatal(err)
			}
			if got := w.Contains(tc.t); got != tc.want {
				t.Errorf("Contains(%s) = %v, want %v (window %+v)", tc.t.Format(time.TimeOnly), got, tc.want, w)
			}
		})
	}
	for _, bad := range []string{"22:00", "240000+0000", "226000+0000", "220000+2500", "220000"} {
		if _, err := NewWindow(bad, "060000+0000"); err == nil {
			t.Errorf("NewWindow(%q) accepted a malformed time", bad)
		}
	}
	if _, err := NewWindow("220000+0000", "220000+0000"); err == nil {
		t.Error("a window whose begin equals its end was accepted")
	}
}
