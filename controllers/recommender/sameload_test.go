package recommender

import (
	"testing"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
)

// TestSameLoad pins what wakes an Hvpa at once when the recommender publishes: a change of a target or bound,
// of the recurring burst ahead (a burst minutes away cannot wait for the next sync), or of one's start, end
// (or the earliest it may have been), usage before it or next time ahead (the fall back from a burst, or the
// hold before one, cannot either); a recent load that moved, as it does at every run, does not.
func TestSameLoad(t *testing.T) {
	base := recommender.ContainerLoad{Container: "app", Target: recommender.Amounts{CPUMilli: 500, MemoryBytes: 1 << 30},
		Recent: []recommender.LoadSample{{At: time.Unix(0, 0), CPUMilli: 400, MemoryBytes: 1 << 29}}}
	with := func(edit func(*recommender.ContainerLoad)) []recommender.ContainerLoad {
		l := base
		edit(&l)
		return []recommender.ContainerLoad{l}
	}
	cases := map[string]struct {
		b    []recommender.ContainerLoad
		same bool
	}{
		"the same":                {b: with(func(*recommender.ContainerLoad) {}), same: true},
		"the recent load moved":   {b: with(func(l *recommender.ContainerLoad) { l.Recent = nil }), same: true},
		"a target moved":          {b: with(func(l *recommender.ContainerLoad) { l.Target.CPUMilli = 600 })},
		"an upper bound moved":    {b: with(func(l *recommender.ContainerLoad) { l.UpperBound.MemoryBytes = 1 })},
		"a recurring burst ahead": {b: with(func(l *recommender.ContainerLoad) { l.RecurringCPU = 2800 })},
		"its period":              {b: with(func(l *recommender.ContainerLoad) { l.RecurringEvery = 24 * time.Hour })},
		"a burst seen ahead":      {b: with(func(l *recommender.ContainerLoad) { l.RecurringFrom = time.Unix(60, 0) })},
		"its end":                 {b: with(func(l *recommender.ContainerLoad) { l.RecurringEnded = time.Unix(600, 0) })},
		"the usage before it":     {b: with(func(l *recommender.ContainerLoad) { l.RecurringBefore = 900 })},
		"its earliest end":        {b: with(func(l *recommender.ContainerLoad) { l.RecurringEndedEarliest = time.Unix(540, 0) })},
		"a burst ahead soon":      {b: with(func(l *recommender.ContainerLoad) { l.RecurringNext = time.Unix(900, 0) })},
		"another container":       {b: with(func(l *recommender.ContainerLoad) { l.Container = "sidecar" })},
	}
	for name, tc := range cases {
		if got := sameLoad([]recommender.ContainerLoad{base}, tc.b); got != tc.same {
			t.Errorf("%s: sameLoad %v, want %v", name, got, tc.same)
		}
	}
}
