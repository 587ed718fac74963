package adaptive

import "math"

// hoursKept is the number of hour slots in the ring: the longest daily history plus the current day.
const hoursKept = (maxDailyDays + 1) * 24

// slot is the usage of one hour (all pods of the container): CPU count, sum and sum of squares (millicores),
// and the memory peak (bytes, OOM bumps included).
type slot struct {
	hour       int64 // hours since the epoch; slots of another hour are stale
	n          float64
	sum, sumsq float64
	memPeak    float64
}

// hours is a ring of hour slots.
type hours struct {
	slots [hoursKept]slot
}

// at returns the slot of hour h, cleared if it held an older hour.
func (r *hours) at(h int64) *slot {
	s := &r.slots[mod(h, hoursKept)]
	if s.hour != h {
		*s = slot{hour: h}
	}
	return s
}

// get returns the slot of hour h, or nil when the ring no longer (or not yet) holds it.
func (r *hours) get(h int64) *slot {
	s := &r.slots[mod(h, hoursKept)]
	if s.hour != h {
		return nil
	}
	return s
}

func mod(a, n int64) int64 {
	m := a % n
	if m < 0 {
		m += n
	}
	return m
}

// profile writes into out[0..23] the daily profile of the days before the current hour's day: for each hour
// of the day, the largest mean + z x sd of that hour over the last days days (0 when no day has it). It
// reports whether at least one full hour was found.
func (r *hours) profile(current int64, days int, z float64, out *[24]float64) bool {
	found := false
	dayStart := current - mod(current, 24)
	for h := range out {
		out[h] = 0
	}
	for d := 1; d <= days; d++ {
		for h := int64(0); h < 24; h++ {
			s := r.get(dayStart - int64(d)*24 + h)
			if s == nil || s.n < 2 {
				continue
			}
			mean := s.sum / s.n
			sd := math.Sqrt(max(s.sumsq/s.n-mean*mean, 0))
			out[h] = max(out[h], mean+z*sd)
			found = true
		}
	}
	return found
}

// recent is the largest mean + z x sd of the current and the previous hour (with at least 10 samples).
func (r *hours) recent(current int64, z float64) float64 {
	v := 0.0
	for h := current - 1; h <= current; h++ {
		if s := r.get(h); s != nil && s.n >= 10 {
			mean := s.sum / s.n
			v = max(v, mean+z*math.Sqrt(max(s.sumsq/s.n-mean*mean, 0)))
		}
	}
	return v
}

// memPeak is the largest memory peak of the hours (now-n, now].
func (r *hours) memPeak(current int64, n int) float64 {
	peak := 0.0
	for h := current - int64(n) + 1; h <= current; h++ {
		if s := r.get(h); s != nil {
			peak = max(peak, s.memPeak)
		}
	}
	return peak
}

// schedule turns a daily profile into at most segs levels over the (circular) day: contiguous runs of hours
// whose level is the largest profile value of the run, chosen to minimize the idle share
// sum over hours of (1 - profile / level). Hours with no profile take the neighbouring levels.
func schedule(p *[24]float64, segs int, out *[24]float64) {
	peak := 0.0
	for _, v := range p {
		peak = max(peak, v)
	}
	for h := range out {
		out[h] = peak
	}
	if segs <= 1 || peak <= 0 {
		return
	}
	// cost[s][l]: idle of the run of l hours starting at s (circular), at its own maximum
	var level, cost [24][25]float64
	for s := 0; s < 24; s++ {
		m, c := 0.0, 0.0
		for l := 1; l <= 24; l++ {
			v := p[(s+l-1)%24]
			if v > m { // the run's level rose: the idle of the hours before grows
				c = recost(p, s, l-1, v)
				m = v
			}
			if m > 0 {
				c += 1 - v/m
			}
			level[s][l], cost[s][l] = m, c
		}
	}
	best, cuts := math.Inf(1), [24]int{}
	var cur [24]int
	search(&cost, segs, 0, 0, &cur, &best, &cuts)
	fill(&level, cuts[:segs], out)
}

// recost is the idle of the first n hours of the run starting at s at level m.
func recost(p *[24]float64, s, n int, m float64) float64 {
	c := 0.0
	for i := 0; i < n; i++ {
		c += 1 - p[(s+i)%24]/m
	}
	return c
}

// search tries every set of cut hours (the first cut below 24/segs by symmetry is not assumed: all are
// tried) and keeps the cheapest.
func search(cost *[24][25]float64, segs, k, from int, cur *[24]int, best *float64, cuts *[24]int) {
	if k == segs {
		total := 0.0
		for i := 0; i < segs; i++ {
			s, e := cur[i], cur[(i+1)%segs]
			l := mod64(e-s, 24)
			if l == 0 {
				l = 24
			}
			total += cost[s][l]
		}
		if total < *best {
			*best, *cuts = total, *cur
		}
		return
	}
	for h := from; h < 24; h++ {
		cur[k] = h
		search(cost, segs, k+1, h+1, cur, best, cuts)
	}
}

func mod64(a, n int) int {
	m := a % n
	if m < 0 {
		m += n
	}
	return m
}

// fill writes the levels of the runs that start at cuts.
func fill(level *[24][25]float64, cuts []int, out *[24]float64) {
	n := len(cuts)
	for i := 0; i < n; i++ {
		s, e := cuts[i], cuts[(i+1)%n]
		l := mod64(e-s, 24)
		if l == 0 {
			l = 24
		}
		for j := 0; j < l; j++ {
			out[(s+j)%24] = level[s][l]
		}
	}
}
