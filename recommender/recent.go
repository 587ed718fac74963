package recommender

import (
	"math"
	"slices"
	"time"
)

// RecentWindow is how long a workload total keeps its recent load samples: the current load that an Hvpa's
// total follows (docs/design/scaling.md section 2), beside the long history the percentiles come from.
const RecentWindow = time.Hour

// RiseWindow and RiseHalfLife: the memory rise of a workload total is the largest factor by which its memory
// load rose within RiseWindow (over the smallest sample of that window), a maximum that decays with
// RiseHalfLife: how fast the memory can outgrow a total that follows it, which one resize cannot catch.
const (
	RiseWindow   = 3 * time.Minute
	RiseHalfLife = 7 * 24 * time.Hour
)

// LoadSample is one sample of a workload's load: the CPU (millicores) and memory (bytes) above the pods'
// base, summed over its pods (-1: not sampled).
type LoadSample struct {
	At                    time.Time
	CPUMilli, MemoryBytes float64
}

// recentLoad is the samples of the last RecentWindow, oldest first, and the decaying memory rise.
type recentLoad struct {
	// samples is the window. Its array is shared with the snapshots handed out (snapshot), so an element once
	// in the window is never written again: a sample is appended past the window's end (into a new, larger
	// array when there is no room, the snapshots keeping the old one), the window moves on by reslicing, and
	// a sample that must change (an OOM kill's memory) is changed in a copy (own)
	samples []LoadSample
	// rise is the largest memory rise (a fraction: 0.5 is +50%) seen, as of riseAt
	rise   float64
	riseAt time.Time
	// storms are the storms of OOM kills (kills less than RiseWindow apart) whose samples, or the samples
	// just past them, the recent load may still hold, oldest first: the samples after a storm's first kill up
	// to RiseWindow after its last are of containers killed at their limit or restarted, whose memory starts
	// low again, and are no base of a rise; the storm hid the rise it answered, so those samples and the
	// ones up to RiseWindow past them rise from the memory before it (low)
	storms []storm
}

// storm is the first and the last OOM kill of a storm.
type storm struct{ from, to time.Time }

// restarted reports whether a sample taken at at is one of a storm's (after its first kill, up to RiseWindow
// after its last).
func (r *recentLoad) restarted(at time.Time) bool {
	for _, s := range r.storms {
		if at.After(s.from) && at.Sub(s.to) <= RiseWindow {
			return true
		}
	}
	return false
}

// low is the base of a rise at t: the smallest memory sample within RiseWindow before it (before), and for a
// t in a storm of OOM kills or up to RiseWindow past its samples (after its first kill, up to 2 x RiseWindow
// after its last), at most the smallest of the RiseWindow before its first kill. A storm hides the rise it
// answered: its kills saw their limits and its restarted containers little, while the memory outgrew what a
// resize caught, so the rise is counted from the memory before it, for its kills and the samples that follow
// (+Inf: none).
func (r *recentLoad) low(t time.Time) float64 {
	low := r.before(t)
	for _, s := range r.storms {
		if t.After(s.from) && t.Sub(s.to) <= 2*RiseWindow {
			low = min(low, r.before(s.from))
		}
	}
	return low
}

// before is the smallest memory sample within RiseWindow before t (samples taken after t, such as the sample
// of the recommender run that records a kill at t, are none), leaving out those of every storm of OOM kills
// (+Inf: none).
func (r *recentLoad) before(t time.Time) float64 {
	low := math.Inf(1)
	for i := len(r.samples) - 1; i >= 0 && t.Sub(r.samples[i].At) <= RiseWindow; i-- {
		if s := r.samples[i]; s.MemoryBytes > 0 && s.At.Before(t) && !r.restarted(s.At) {
			low = min(low, s.MemoryBytes)
		}
	}
	return low
}

// add appends a sample newer than the last one, drops those older than RecentWindow before it, and takes its
// memory rise into account; false (nothing changed) for a sample not newer than the last one.
func (r *recentLoad) add(s LoadSample) bool {
	if n := len(r.samples); n > 0 && !s.At.After(r.samples[n-1].At) {
		return false
	}
	if s.MemoryBytes > 0 {
		r.rose(s.At, s.MemoryBytes)
	}
	r.push(s)
	return true
}

// rose takes a memory of mem bytes at t into account for the rise: its factor over the smallest memory of
// the RiseWindow before it.
func (r *recentLoad) rose(t time.Time, mem float64) {
	low := r.low(t)
	if math.IsInf(low, 1) {
		return
	}
	if t.Before(r.riseAt) { // a kill recorded after later samples: its rise, decayed to the rise's time
		r.rise = max(r.rise, (mem/low-1)*decay(r.riseAt.Sub(t)))
		return
	}
	r.rise = max(r.riseAsOf(t), mem/low-1)
	r.riseAt = t
}

// push appends a sample newer than the last one and drops those older than RecentWindow before it.
func (r *recentLoad) push(s LoadSample) {
	if len(r.samples) == cap(r.samples) {
		r.own()
	}
	r.samples = append(r.samples, s) // past the end of every snapshot: none sees it
	cut := 0
	for cut < len(r.samples) && s.At.Sub(r.samples[cut].At) > RecentWindow {
		cut++
	}
	r.samples = r.samples[cut:]
	// a storm that ended 2 x RiseWindow before the oldest sample is over for every sample held (low)
	for len(r.storms) > 0 && r.samples[0].At.Sub(r.storms[0].to) > 2*RiseWindow {
		r.storms = r.storms[1:]
	}
}

// oom takes an OOM kill at t into account: the memory the next decisions size for (needed bytes, bumped as
// the long history bumps it) counts as a sample's memory, and the rise from the window's smallest memory to
// what the workload's load was (served bytes, at most needed) as a rise: the working set the samples saw
// stopped at the limit. A kill while pods start or wait in back-off needs more than the load was (a pod may
// again carry alone what it carried); that is no growth of the load. The kill joins its storm (storm); a kill
// from before the last run is old news (oldNews) and changes nothing here.
func (r *recentLoad) oom(t time.Time, needed, served float64) {
	if r.oldNews(t) {
		return
	}
	r.rose(t, min(served, needed))
	r.storm(t)
	if n := len(r.samples); n > 0 && !t.After(r.samples[n-1].At) {
		if needed > r.samples[n-1].MemoryBytes {
			r.own() // the snapshots keep the sample as they read it
			r.samples[n-1].MemoryBytes = needed
		}
		return
	}
	r.push(LoadSample{At: t, CPUMilli: -1, MemoryBytes: needed})
}

// oldNews reports whether an OOM kill at t is older than the recent load's last run: more than RiseWindow
// before the sample that preceded the newest one (a recommender run records the kills since its last run
// after its own sample; RiseWindow is the grace for a kill the run before could not see yet, its pod's status
// late), or, with a single sample (the first run of a new process, which reads the kills its pods still
// report, however old), more than RiseWindow before it. The decisions since have answered such a kill, or it
// is older than this process: it goes to the history (the peaks) but is no sample and no rise of the recent
// load.
func (r *recentLoad) oldNews(t time.Time) bool {
	n := len(r.samples)
	return n > 0 && r.samples[max(n-2, 0)].At.Sub(t) > RiseWindow
}

// storm adds an OOM kill at t to the storm it belongs to (one with a kill less than RiseWindow from t; kills
// of several pods may be recorded in any order), or starts a new one.
func (r *recentLoad) storm(t time.Time) {
	for i := range r.storms {
		s := &r.storms[i]
		if t.Sub(s.to) <= RiseWindow && s.from.Sub(t) <= RiseWindow {
			if t.Before(s.from) {
				s.from = t
			}
			if t.After(s.to) {
				s.to = t
			}
			return
		}
	}
	r.storms = append(r.storms, storm{from: t, to: t})
	slices.SortFunc(r.storms, func(a, b storm) int { return a.from.Compare(b.from) })
}

// riseAsOf is the memory rise decayed to t.
func (r *recentLoad) riseAsOf(t time.Time) float64 {
	if r.rise <= 0 || !t.After(r.riseAt) {
		return max(r.rise, 0)
	}
	return r.rise * decay(t.Sub(r.riseAt))
}

// decay is the factor by which a memory rise decays over d (RiseHalfLife).
func decay(d time.Duration) float64 { return math.Exp2(-float64(d) / float64(RiseHalfLife)) }

// snapshot is the samples as they are now: the window itself, which no later change of the recent load
// writes into (samples), with no room to append into (a reader's append copies).
func (r *recentLoad) snapshot() []LoadSample { return r.samples[:len(r.samples):len(r.samples)] }

// own moves the window into a new array with room for recentSlack more samples, which no snapshot shares: a
// change that follows is seen by none of them. With one sample a minute, the window moves every quarter of
// an hour: a copy of it then, instead of one per snapshot (every decision), for a quarter more memory.
func (r *recentLoad) own() {
	grown := make([]LoadSample, len(r.samples), len(r.samples)+recentSlack)
	copy(grown, r.samples)
	r.samples = grown
}

// recentSlack is the room own makes.
const recentSlack = 16

// last is the time of the newest sample (zero: none).
func (r *recentLoad) last() time.Time {
	if len(r.samples) == 0 {
		return time.Time{}
	}
	return r.samples[len(r.samples)-1].At
}
