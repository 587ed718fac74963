package adaptive

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// kind is what makes a candidate's target.
type kind uint8

const (
	kindUpstream kind = iota // the upstream model's target, as the caller computed it
	kindHist                 // a percentile of a decaying histogram of CPU samples, plus a margin
	kindDaily                // the daily schedule of a profile, plus a margin
	kindMemPeak              // the largest memory peak of a window, plus a margin
)

// candidate is one estimator of the ensemble and its running score. Scores are sums that decay with the
// score half-life: n samples scored, over of them above the target, idle the sum of max(target - usage, 0)
// / target, changes the applied changes (dead band) of the candidate's own target, ooms the OOM kills it
// would not have prevented.
type candidate struct {
	name   string
	kind   kind
	index  int // histogram (kindHist), daily spec (kindDaily), hours of the window (kindMemPeak)
	pct    int // percentile index (kindHist)
	margin float64

	base, target, inv, applied   float64
	n, over, idle, changes, ooms float64
	tokens                       float64 // the change budget left of the candidate's own applied target
}

// dailySpec is one daily profile and its schedule.
type dailySpec struct {
	days, segs int
	z          float64
}

// name of a percentile, margin and half-life: "p95-m5-h6".
func histName(p, m float64, h time.Duration) string {
	return fmt.Sprintf("p%s-m%s-h%s", pctString(p), pctString(m), strconv.FormatFloat(h.Hours(), 'f', -1, 64))
}

func pctString(f float64) string { return strconv.FormatFloat(math.Round(f*1000)/10, 'f', -1, 64) }

// cpuCandidates is the CPU ensemble of cfg: upstream first, then the histogram and daily candidates.
func cpuCandidates(cfg *Config) ([]candidate, []dailySpec) {
	out := []candidate{{name: ModelUpstream, kind: kindUpstream}}
	for h, hl := range cfg.HalfLives {
		for p, pv := range cfg.Percentiles {
			for _, m := range cfg.Margins {
				out = append(out, candidate{name: histName(pv, m, hl), kind: kindHist, index: h, pct: p, margin: m})
			}
		}
	}
	var specs []dailySpec
	for _, d := range cfg.DailyDays {
		for _, z := range cfg.DailyZ {
			for _, s := range cfg.DailySegments {
				specs = append(specs, dailySpec{days: d, segs: s, z: z})
				for _, m := range cfg.DailyMargins {
					name := fmt.Sprintf("daily-d%d-z%s-s%d-m%s", d, strconv.FormatFloat(z, 'f', -1, 64), s, pctString(m))
					out = append(out, candidate{name: name, kind: kindDaily, index: len(specs) - 1, margin: m})
				}
			}
		}
	}
	return out, specs
}

// memCandidates is the memory ensemble of cfg: upstream first, then the peak candidates.
func memCandidates(cfg *Config) []candidate {
	out := []candidate{{name: ModelUpstream, kind: kindUpstream}}
	for _, w := range cfg.MemoryWindows {
		for _, m := range cfg.MemoryMargins {
			out = append(out, candidate{name: fmt.Sprintf("peak-w%s-m%s", strconv.FormatFloat(w.Hours(), 'f', -1, 64)+"h", pctString(m)),
				kind: kindMemPeak, index: int(w / time.Hour), margin: m})
		}
	}
	return out
}

// score adds one sample of usage with weight w (the score's decay) to the candidate's score against its
// applied target (what an updater with the dead band would have applied of its targets).
func (c *candidate) score(usage, w float64) {
	if c.applied <= 0 {
		return
	}
	c.n += w
	if usage > c.applied {
		c.over += w
		return
	}
	c.idle += w * (1 - usage*c.inv)
}

// budget is the change budget a candidate's own applied target follows (as the published one does): refill
// changes added since the last target, at most limit saved, rises take one even when none is left (the
// budget then owes it: the cuts wait until it is paid back); free: no budget (ChangesPerDay 0).
type budget struct {
	refill, limit float64
	free          bool
}

// setTarget sets the candidate's target and applies it as an updater with dead band db and budget b would:
// when it differs from the applied one by more than db (a change), a rise at once, a cut when the budget
// has a change left.
func (c *candidate) setTarget(v, db, w float64, b *budget) {
	if v <= 0 {
		return
	}
	c.target = v
	c.tokens = min(b.limit, c.tokens+b.refill)
	if c.applied <= 0 {
		c.applied, c.inv = v, 1/v
		return
	}
	if math.Abs(v-c.applied) <= db*c.applied {
		return
	}
	switch {
	case b.free:
	case v > c.applied:
		c.tokens--
	case c.tokens >= 1:
		c.tokens--
	default:
		return
	}
	c.applied, c.inv = v, 1/v
	c.changes += w
}

// decay multiplies the score sums by f.
func (c *candidate) decay(f float64) {
	c.n *= f
	c.over *= f
	c.idle *= f
	c.changes *= f
	c.ooms *= f
}

// minScored is the (decayed) number of samples a candidate needs before it can win.
const minScored = 60

// scored reports whether the candidate has scored minScored samples (unit: the weight of a sample now).
func (c *candidate) scored(unit float64) bool { return c.n >= minScored*unit && c.n > 0 }

// eligible reports whether the candidate meets the constraints against up (the upstream candidate): its
// recent over share at most limit, and (memory) no more OOM kills it would not have prevented than up.
func (c *candidate) eligible(up *candidate, limit, unit float64) bool {
	if c == up {
		return true
	}
	return c.scored(unit) && c.over <= limit*c.n && c.ooms <= up.ooms
}

// ledger is the long-run over account of one resource: the samples, and those above upstream's applied
// target and above the published one, in sums that decay with Config.LedgerHalfLife.
type ledger struct {
	n, up, pub float64
}

func (l *ledger) add(usage, up, pub float64) {
	if up <= 0 || pub <= 0 {
		return
	}
	l.n++
	if usage > up {
		l.up++
	}
	if usage > pub {
		l.pub++
	}
}

func (l *ledger) decay(f float64) {
	l.n *= f
	l.up *= f
	l.pub *= f
}

// limit is the over share a candidate may have had recently to be eligible: tol x upstream's long-run over
// share, plus gain x what the published target's long-run over share is below that (minus what it is
// above), within [0, 2 x upstream's].
func (l *ledger) limit(tol, gain float64) float64 {
	if l.n <= 0 {
		return 0
	}
	up, pub := l.up/l.n, l.pub/l.n
	return min(max(tol*up+gain*(tol*up-pub), 0), 2*up)
}

// cost is what an eligible candidate costs under w: its mean idle share plus change x its applied changes a
// day (days: the decayed days its score covers); +Inf before it has minScored samples.
func (c *candidate) cost(w *Weights, days, unit float64) float64 {
	if !c.scored(unit) || days <= 0 {
		return math.Inf(1)
	}
	return w.Idle*c.idle/c.n + w.Change*c.changes/days
}
