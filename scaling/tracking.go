package scaling

import (
	"math"
	"slices"
	"time"
)

// SourceLoad is the total that follows the workload's current load (section 2a).
const SourceLoad Source = "Load"

// Tracking are the parameters of the load-following total (section 2a).
type Tracking struct {
	// Headroom is the fraction a CPU total is set above its recent load estimate; Trigger (below Headroom) the
	// fraction above the estimate at which the total in force is too small: the total rises when the estimate
	// plus Trigger is above it, to the estimate plus Headroom.
	Headroom, Trigger float64
	// UpWindow: the CPU estimate is at least the peak over this window.
	UpWindow time.Duration
	// DownWindow and DownQuantile: the CPU estimate is at least this quantile of the load over this window.
	DownWindow   time.Duration
	DownQuantile float64
	// Band: a total falls when its estimate plus headroom is more than this fraction below the total in force;
	// SettledBand when the last scaling is SettledAfter ago or more (a workload whose pods have not changed for
	// that long may move by less: at most one such change per SettledAfter).
	Band, SettledBand float64
	SettledAfter      time.Duration
	// SettledWindow: a CPU fall that only SettledBand allows sets the level of the peak over this window (at
	// least the estimate's), and waits while that is inside the band.
	SettledWindow time.Duration
	// MemorySettledBand is SettledBand for memory (0: SettledBand): a settled memory total held above its
	// level costs memory and saves no risk, while a settled CPU move may change the replicas.
	MemorySettledBand float64
	// MinStep: a total rises by at least this fraction of the total in force, or not at all.
	MinStep float64
	// MemoryHeadroom and MemoryTrigger are Headroom and Trigger for memory, whose estimate is the peak over
	// MemoryWindow.
	MemoryHeadroom, MemoryTrigger float64
	MemoryWindow                  time.Duration
	// MemoryFloor: memory never goes below this fraction of the long history's target.
	MemoryFloor float64
	// JumpRise: a memory that has risen by more than this fraction within one reaction time (its rise) jumps:
	// while the history is young it does not fall (a smoother memory falls to the long history's target).
	JumpRise float64
	// TrendWindow: memory that grew over this window is expected to grow as much again (0: no trend).
	TrendWindow time.Duration
	// TrendMax: the expected growth is at most this fraction.
	TrendMax float64
	// MinSamples is how many recent samples the load-following total needs (fewer: the long history decides).
	MinSamples int
}

// DefaultTracking are the load-following total's parameters.
var DefaultTracking = Tracking{Headroom: 0.04, Trigger: 0, UpWindow: 10 * time.Minute, DownWindow: 15 * time.Minute, DownQuantile: 0.9, Band: 0.15, SettledBand: 0.1, SettledAfter: 12 * time.Hour, SettledWindow: time.Hour, MemorySettledBand: 0.05,
	MinStep: 0.1, MemoryHeadroom: 0.15, MemoryTrigger: 0.05, MemoryWindow: time.Hour, MemoryFloor: 0.5, JumpRise: 0.3, TrendWindow: 3 * time.Minute, TrendMax: 0.5, MinSamples: 1}

// trackedLoad is what a total that follows the recent load of resource r needs (section 2a), in load terms:
// the level a move sets (the recent estimate plus headroom) and the trigger (the estimate plus Trigger: the
// total in force is too small below it). The CPU estimate is the high quantile of the down window, the peak of
// the up window and the last sample (so a last sample above the total in force is above the trigger, which
// is the estimate plus Trigger >= 0); the memory estimate is the peak of the memory window, at least the
// window's median plus the rise (the largest fraction by which memory rose within one reaction time), that
// part no higher than the long history's load (long, its margin included) or the peak plus headroom, and at
// least the trend (a new high's growth, extrapolated); a memory level is at most long when long is at least its
// trigger, and never below MemoryFloor of long. The CPU estimate is at least recurring, the load of a burst
// that recurs at this time of its period (0: none). False when there are too few recent samples.
func trackedLoad(tr Tracking, recent []LoadSample, r Resource, rise, long, recurring float64) (tracked, bool) {
	// an hour of samples, one per recommender run, fits the buffers on the stack (a decision of every
	// workload every minute allocates nothing here); a longer recent load grows them on the heap
	var valBuf [recentBuf]float64
	var atBuf [recentBuf]int64
	vals, ats := valBuf[:0], atBuf[:0] // ats: Unix nanoseconds, in time order as recent is
	// by index: a sample is a time and every resource's value, read here for one
	for i := range recent {
		if v, ok := recent[i].Load.Get(r); ok {
			vals = append(vals, v)
			ats = append(ats, recent[i].At.UnixNano())
		}
	}
	if len(vals) == 0 || len(vals) < tr.MinSamples {
		return tracked{}, false
	}
	last := ats[len(ats)-1]
	// window is the samples less than d before the last (the last at least), found by binary search: a
	// decision reads five windows of up to an hour of samples
	window := func(d time.Duration) []float64 {
		i, _ := slices.BinarySearch(ats, last-int64(d)+1)
		return vals[min(i, len(ats)-1):]
	}
	lastV := vals[len(vals)-1]
	if r == Memory {
		w := window(tr.MemoryWindow)
		peak := slices.Max(w)
		// a memory that is rising goes on rising for as long again: the growth of the last sample over the
		// smallest of the trend window, and over the highest of the memory window before it (noise within the
		// range seen is no trend), extrapolated over one more such window
		tw := window(tr.TrendWindow)
		if len(tw) > len(w) { // a trend window longer than the memory window: the memory window
			tw = w
		}
		base := slices.Min(tw)
		if before := w[:len(w)-len(tw)]; len(before) > 0 {
			base = max(base, slices.Max(before))
		}
		trend := lastV * max(1, min(lastV/max(base, 1), 1+tr.TrendMax))
		est := peak
		if rise > 0 && above(w, peak/(1+rise)) >= len(w)-quantileRank(len(w), 0.5) { // the median x (1 + rise) is above the peak
			est = max(peak, quantile(w, 0.5)*(1+rise))
		}
		// the rise never takes the total above the long history's target (its margin included), nor the trend
		// and the recent peak below their headroom
		capAt := func(h float64) float64 { return max(min(est*(1+h), max(long, peak*(1+h))), trend*(1+h)) }
		floor := tr.MemoryFloor * long
		level, trigger := capAt(tr.MemoryHeadroom), capAt(tr.MemoryTrigger)
		if long >= trigger {
			// the long history knows peaks above the recent ones (its margin included) and less than the
			// headroom above them: its margin is the headroom
			level = min(level, long)
		}
		peakAt := ats[len(ats)-len(w)+slices.Index(w, peak)] // the first sample at the peak
		return tracked{level: max(level, floor), trigger: max(trigger, floor), mean: mean(window(tr.DownWindow)), long: long, rise: rise,
			peak: peak, peakAt: time.Unix(0, peakAt)}, true
	}
	down := window(tr.DownWindow)
	now := max(slices.Max(window(tr.UpWindow)), lastV)
	if rank := quantileRank(len(down), tr.DownQuantile); above(down, now) >= len(down)-rank { // the quantile is above now
		now = quantile(down, tr.DownQuantile)
	}
	est := max(now, recurring)
	return tracked{level: est * (1 + tr.Headroom), trigger: est * (1 + tr.Trigger), mean: mean(down), settledLevel: max(est, slices.Max(window(tr.SettledWindow))) * (1 + tr.Headroom),
		ahead: recurring > now, nowLevel: now * (1 + tr.Headroom), nowTrigger: now * (1 + tr.Trigger)}, true
}

// tracked is what a total that follows the recent load needs, in load terms (trackedLoad).
type tracked struct {
	// level is what a move sets; below trigger the total in force is too small; mean is the mean load of the
	// DownWindow (what the HPA floor of section 2a reads, for CPU and memory alike).
	level, trigger, mean float64
	// long is the long history's load and rise the memory rise (memory: what a fall while the history is young
	// may do)
	long, rise float64
	// ahead: a recurring burst ahead is the CPU estimate (more than the recent load's); nowLevel and
	// nowTrigger are then the level and trigger of the recent load alone
	ahead                bool
	nowLevel, nowTrigger float64
	// settledLevel: the CPU level of the peak over SettledWindow, at least the estimate's (what a fall that
	// only the settled band allows sets)
	settledLevel float64
	// whole: level and trigger are the pods' whole usage less the base of the pods in force (the fall back from
	// a recurring burst: returnLoad), so a total from them is that usage, spread without base budgeting (a rise
	// from them too: it is read from the same usage)
	whole bool
	// peak: the memory window's peak (memory only: a total in force below it rises without MinStep)
	peak float64
	// peakAt: when the memory window's peak came (its first sample at it); recurs: that was with a recurring
	// burst (jumpOfBurst), so a memory jump while the history is young is the burst's, whose peak the long
	// history holds
	peakAt time.Time
	recurs bool
}

// jumps reports whether a memory's rise is a jump (above JumpRise) that does not recur: while the history is
// young such a memory does not fall (section 2a, Confidence). A jump whose peak came with a recurring burst is
// the burst's: the long history's target, the young floor, holds its peak, and the burst comes at its time.
func (tl tracked) jumps(tr Tracking) bool { return tl.rise > tr.JumpRise && !tl.recurs }

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// recentBuf is how many recent samples trackedLoad and quantile hold on the stack: two hours of one a minute.
const recentBuf = 120

// quantile is the q-quantile of xs (the value at rank ceil(q x n)); xs is left as it is. It selects the
// value at that rank from a copy (expected linear time) rather than sorting the copy: every decision reads
// the memory window's median and the down window's high quantile.
func quantile(xs []float64, q float64) float64 {
	var buf [recentBuf]float64
	s := append(buf[:0], xs...)
	return selectRank(s, quantileRank(len(s), q))
}

// selectRank is the value of rank k (0-based) of xs in ascending order, which it reorders (Hoare's
// selection: partition around the median of three, keep the side that holds k).
func selectRank(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// the median of xs[lo], xs[mid], xs[hi] as the pivot: sorted or reversed windows stay linear
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for pivot < xs[j] {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		// now xs[lo..j] <= pivot <= xs[i..hi], and any of xs[j+1..i-1] equals the pivot
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return xs[k]
		}
	}
	return xs[k]
}

// quantileRank is the index of the q-quantile in n sorted values (ceil(q x n) - 1, within 0 and n - 1).
func quantileRank(n int, q float64) int {
	return max(0, min(int(math.Ceil(q*float64(n)))-1, n-1))
}

// above is how many of xs are above x: the q-quantile of xs is above x exactly when at least n - quantileRank
// of them are (so a caller selects it only when the quantile can matter).
func above(xs []float64, x float64) int {
	n := 0
	for _, v := range xs {
		if v > x {
			n++
		}
	}
	return n
}
