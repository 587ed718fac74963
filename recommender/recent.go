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
	samples []LoadSample
	// rise is the largest memory rise (a fraction: 0.5 is +50%) seen, as of riseAt
	rise   float64
	riseAt time.Time
	// oomFrom and oomTo are the first and the last OOM kill of the last storm (kills less than RiseWindow
	// apart): the samples after its first kill up to RiseWindow after its last are of containers killed at
	// their limit or restarted, whose memory starts low again, and are no base of a rise
	oomFrom, oomTo time.Time
}

// low is the smallest memory sample within RiseWindow before t, leaving out those of the last storm of OOM
// kills (from its first kill to RiseWindow after its last) (+Inf: none).
func (r *recentLoad) low(t time.Time) float64 {
	low := math.Inf(1)
	for i := len(r.samples) - 1; i >= 0 && t.Sub(r.samples[i].At) <= RiseWindow; i-- {
		s := r.samples[i]
		if restarted := !r.oomTo.IsZero() && s.At.After(r.oomFrom) && s.At.Sub(r.oomTo) <= RiseWindow; s.MemoryBytes > 0 && !restarted {
			low = min(low, s.MemoryBytes)
		}
	}
	return low
}

// add appends a sample newer than the last one, drops those older than RecentWindow before it, and takes its
// memory rise into account.
func (r *recentLoad) add(s LoadSample) {
	if n := len(r.samples); n > 0 && !s.At.After(r.samples[n-1].At) {
		return
	}
	if s.MemoryBytes > 0 {
		r.rose(s.At, s.MemoryBytes)
	}
	r.push(s)
}

// rose takes a memory of mem bytes at t into account for the rise: its factor over the smallest memory of
// the RiseWindow before it.
func (r *recentLoad) rose(t time.Time, mem float64) {
	if low := r.low(t); !math.IsInf(low, 1) {
		r.rise = max(r.riseAsOf(t), mem/low-1)
		r.riseAt = t
	}
}

// push appends a sample newer than the last one and drops those older than RecentWindow before it.
func (r *recentLoad) push(s LoadSample) {
	r.samples = append(r.samples, s)
	cut := 0
	for cut < len(r.samples) && s.At.Sub(r.samples[cut].At) > RecentWindow {
		cut++
	}
	if cut > 0 {
		r.samples = append(r.samples[:0], r.samples[cut:]...)
	}
}

// oom takes an OOM kill at t into account: the memory the next decisions size for (needed bytes, bumped as
// the long history bumps it) counts as a sample's memory, and the rise from the window's smallest memory to
// what the workload's load was (served bytes, at most needed) as a rise: the working set the samples saw
// stopped at the limit. A kill while pods start or wait in back-off needs more than the load was (a pod may
// again carry alone what it carried); that is no growth of the load.
func (r *recentLoad) oom(t time.Time, needed, served float64) {
	r.rose(t, min(served, needed))
	switch {
	case r.oomTo.IsZero() || t.Sub(r.oomTo) > RiseWindow:
		r.oomFrom, r.oomTo = t, t
	case t.After(r.oomTo):
		r.oomTo = t
	case t.Before(r.oomFrom) && r.oomFrom.Sub(t) <= RiseWindow: // kills of several pods may come in any order
		r.oomFrom = t
	}
	if n := len(r.samples); n > 0 && !t.After(r.samples[n-1].At) {
		r.samples[n-1].MemoryBytes = max(r.samples[n-1].MemoryBytes, needed)
		return
	}
	r.push(LoadSample{At: t, CPUMilli: -1, MemoryBytes: needed})
}

// riseAsOf is the memory rise decayed to t.
func (r *recentLoad) riseAsOf(t time.Time) float64 {
	if r.rise <= 0 || !t.After(r.riseAt) {
		return max(r.rise, 0)
	}
	return r.rise * math.Exp2(-float64(t.Sub(r.riseAt))/float64(RiseHalfLife))
}

// snapshot is a copy of the samples.
func (r *recentLoad) snapshot() []LoadSample { return slices.Clone(r.samples) }

// last is the time of the newest sample (zero: none).
func (r *recentLoad) last() time.Time {
	if len(r.samples) == 0 {
		return time.Time{}
	}
	return r.samples[len(r.samples)-1].At
}
