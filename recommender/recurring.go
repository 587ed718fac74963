package recommender

import (
	"math"
	"sort"
	"time"
)

// A recurring burst (docs/design/scaling.md section 2a): when the CPU usage of a workload total (its pods'
// whole usage, summed: WorkloadTotal.AddLoadUsage) rose, at this time of each of its last RecurTimes periods
// (a period of RecurPeriods: every hour, every few hours, every day), within RecurLead to RecurRise times the
// usage of the RecurBefore before it (and by RecurMinRise at least), and held that rise for RecurHold after
// (an hourly batch job, a cron schedule), the largest of those bursts' peaks over their first RecurSpan is the
// usage ahead now: the Hvpa's total rises before the burst comes, instead of a reaction time (the metrics
// window, the recommender's run, the resize) into it.
const (
	// RecurTimes: the burst came at this time of each of the last RecurTimes periods.
	RecurTimes = 3
	// RecurBefore: the load before a burst is the peak of the RecurBefore before its time.
	RecurBefore = 2 * time.Minute
	// RecurLead: a burst that starts within RecurLead is the load ahead now (a reaction time and more: the
	// resize applies within the updater's period after the run that sees it).
	RecurLead = 4 * time.Minute
	// RecurHold: the burst held its rise over the RecurHold after RecurLead (a spike does not, and rising for
	// it ahead of time would hold a total up for the whole scale-down stabilization).
	RecurHold = 5 * time.Minute
	// RecurSpan: a burst's level is its peak over the RecurSpan after the times it was ahead of (the CPU
	// estimate's up window: what the decision reads once the burst is there).
	RecurSpan = 10 * time.Minute
	// RecurRise and RecurMinRise: a burst is at least RecurRise times the load before it, and RecurMinRise
	// millicores above it (a load of a few millicores above the pods' base doubles with its noise).
	RecurRise    = 1.5
	RecurMinRise = 100.0
	// RecurBeforeWindow: the usage before a recurring burst is the peak of this window before the first
	// minute it was ahead (the CPU estimate's down window: what the decision read before it).
	RecurBeforeWindow = 15 * time.Minute
	// RecurNextWithin: how far ahead the next time a recurring burst is ahead is looked for (RecurringNext).
	RecurNextWithin = 15 * time.Minute
	// RecurEnd: a recurring burst seen ahead has ended when the usage of each of the last RecurEnd
	// minutes, all after the latest time it could have started (RecurLead after the last minute it was
	// ahead), is at most halfway from the usage before it to its level; it is so read for RecurEndWithin after
	// that minute at most.
	RecurEnd       = 3 * time.Minute
	RecurEndWithin = 24 * time.Hour
	// RecurSampleEvery: the above reads a sample every RecurSampleEvery at least (the recommender's interval).
	// With fewer, the minutes before a burst may have none, and nothing is anticipated (a burst seen ahead
	// still ends: noteEnd).
	RecurSampleEvery = 2 * time.Minute
)

// RecurPeriods are the periods a recurring burst may have, shortest first (the shortest that fits is the
// burst's): every hour (a burst every 15 or 30 minutes comes at this time of every hour too), every 2, 3, 4,
// 6, 8 or 12 hours, and every day (a cron schedule's).
var RecurPeriods = [...]time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 4 * time.Hour, 6 * time.Hour, 8 * time.Hour, 12 * time.Hour, 24 * time.Hour}

const (
	// recurRing is how many minutes a minuteLoad holds: a time is judged from the RecurBefore before it to the
	// RecurSpan after, once those minutes have passed, and a few more.
	recurRing = 16
	// recurRuns is how many runs of burst times a minuteLoad keeps: three days of two bursts an hour (with more,
	// fewer days: the oldest runs go first).
	recurRuns = 150
	// recurKeep is how far back a burst time can be read: RecurTimes of the longest period.
	recurKeep = RecurTimes * 24 * time.Hour
)

// minuteLoad is the CPU usage of a workload total's last minutes (the largest sample of each) and the times of
// its bursts over the last days: each time a burst started within RecurLead of, judged once its minutes have
// passed, kept as runs of consecutive minutes with the burst's peak. 1.5 KiB per workload total, whatever the
// recommender's interval and the bursts' period.
type minuteLoad struct {
	stamp [recurRing]int32 // the minute the slot holds (Unix time / 60, until the year 6000), plus 1 (0: empty)
	cpu   [recurRing]float32
	last  int64 // the newest minute added
	// judged: every time up to this minute has been judged (0: none)
	judged int64
	// the runs of burst times, oldest first in a ring from head: from the minute from-1, n minutes, peak the
	// largest load of the RecurSpan after any of them
	from        [recurRuns]int32
	n           [recurRuns]uint8
	peak        [recurRuns]float32
	head, count int
	// the recurring burst ahead last (noteAhead; zero: none since the process started)
	burstAhead
}

// burstAhead is a recurring burst seen ahead: the first and the last minute of the run of minutes it was ahead
// (Unix time / 60), the first minute of its end (noteEnd; 0: not yet) and the earliest it may have been
// (minutes without a sample before it), its largest level and the peak usage of the RecurBeforeWindow before
// it (-1: no sample). 24 bytes: every workload total keeps one.
type burstAhead struct {
	aheadFrom, aheadTo, endedAt, endedEarliest int32
	aheadLevel, aheadBefore                    float32
}

// slot is the index of minute m.
func slot(m int64) int { return int((m%recurRing + recurRing) % recurRing) }

func minuteOf(t time.Time) int64 { return t.Unix() / 60 }

func minutes(d time.Duration) int64 { return int64(d / time.Minute) }

// add takes a CPU sample (millicores) at t. A sample of a new minute first judges the times whose minutes
// have all passed.
func (l *minuteLoad) add(t time.Time, cpu float64) {
	m := minuteOf(t)
	if m > l.last {
		l.judge(m)
		l.last = m
		l.noteAhead(m)
	}
	i := slot(m)
	if l.stamp[i] != int32(m+1) {
		l.stamp[i], l.cpu[i] = int32(m+1), float32(cpu)
	} else {
		l.cpu[i] = max(l.cpu[i], float32(cpu))
	}
	l.noteEnd(m)
}

// halfway is the usage that tells the end of the recurring burst ahead last: halfway from the usage before
// it (0 when unknown) to its level.
func (l *minuteLoad) halfway() float32 { return (max(l.aheadBefore, 0) + l.aheadLevel) / 2 }

// judge judges every time not judged yet whose RecurSpan after it ended before minute m (and whose minutes
// the ring may still hold).
func (l *minuteLoad) judge(m int64) {
	to := m - 1 - minutes(RecurSpan)
	for p := max(l.judged+1, to-recurRing); p <= to; p++ {
		if peak, ok := l.burstFrom(p); ok {
			l.mark(p, peak)
		}
	}
	l.judged = max(l.judged, to)
}

// burstFrom reports whether a burst started within RecurLead of minute p: the load rose to at least RecurRise
// and RecurMinRise above the peak of the RecurBefore before p, and held that over RecurHold; peak is its
// largest load over the RecurSpan after p.
func (l *minuteLoad) burstFrom(p int64) (float64, bool) {
	_, before, ok1 := l.span(p-minutes(RecurBefore), p)
	_, lead, ok2 := l.span(p, p+minutes(RecurLead))
	held, _, ok3 := l.span(p+minutes(RecurLead), p+minutes(RecurLead+RecurHold))
	_, peak, _ := l.span(p, p+minutes(RecurSpan))
	rise := max(before*RecurRise, before+RecurMinRise)
	return peak, ok1 && ok2 && ok3 && lead >= rise && held >= rise
}

// span is the smallest and the largest load of the minutes (from, to]; false when none has a sample.
func (l *minuteLoad) span(from, to int64) (low, peak float64, ok bool) {
	for m := from + 1; m <= to; m++ {
		i := slot(m)
		if l.stamp[i] != int32(m+1) {
			continue
		}
		v := float64(l.cpu[i])
		if !ok {
			low, peak, ok = v, v, true
			continue
		}
		low, peak = min(low, v), max(peak, v)
	}
	return low, peak, ok
}

// run is the index of the i-th oldest run.
func (l *minuteLoad) run(i int) int { return (l.head + i) % recurRuns }

// mark records minute p as a burst time of peak: the newest run grows when p follows it, else p starts a run
// (the oldest goes when all recurRuns are taken). A p the runs already reach (judged again after a restore)
// only raises its run's peak.
func (l *minuteLoad) mark(p int64, peak float64) {
	if l.count > 0 {
		r := l.run(l.count - 1)
		switch end := int64(l.from[r]) - 1 + int64(l.n[r]); {
		case p < end:
			if p >= int64(l.from[r])-1 {
				l.peak[r] = max(l.peak[r], float32(peak))
			}
			return
		case p == end && l.n[r] < math.MaxUint8:
			l.n[r]++
			l.peak[r] = max(l.peak[r], float32(peak))
			return
		}
	}
	l.push(p, 1, float32(peak))
}

// push adds the run of n minutes from minute from as the newest (the oldest goes when all recurRuns are
// taken).
func (l *minuteLoad) push(from int64, n uint8, peak float32) {
	r := l.run(l.count)
	if l.count == recurRuns {
		l.head = (l.head + 1) % recurRuns
	} else {
		l.count++
	}
	l.from[r], l.n[r], l.peak[r] = int32(from+1), n, peak
}

// burstAt is the peak of the burst that started within RecurLead of minute q; false when none did (or q is
// not judged yet).
func (l *minuteLoad) burstAt(q int64) (float64, bool) {
	// the first run that starts after q (a binary search; sort.Search's closure would escape, an allocation at
	// every lookup); the one before it holds q if any does
	i, j := 0, l.count
	for i < j {
		h := int(uint(i+j) >> 1)
		if int64(l.from[l.run(h)])-1 > q {
			j = h
		} else {
			i = h + 1
		}
	}
	if i == 0 {
		return 0, false
	}
	r := l.run(i - 1)
	if q >= int64(l.from[r])-1+int64(l.n[r]) {
		return 0, false
	}
	return float64(l.peak[r]), true
}

// recurring is the CPU load (millicores) of a burst that recurs at now's time of the period, and the period:
// for the shortest period of RecurPeriods at each of whose last RecurTimes times a burst started within
// RecurLead, the largest of those bursts' peaks; a longer period's when each of its bursts is RecurRise times
// that level at least (a nightly job that starts with an hourly one: a burst of its own on top); 0 when no
// period has one at every time.
func (l *minuteLoad) recurring(now time.Time) (float64, time.Duration) {
	m := minuteOf(now)
	level, every := 0.0, time.Duration(0)
	for _, period := range RecurPeriods {
		high, low, each := 0.0, math.Inf(1), true
		for k := int64(1); k <= RecurTimes && each; k++ {
			peak, ok := l.burstAt(m - k*minutes(period))
			high, low, each = max(high, peak), min(low, peak), ok
		}
		if each && (every == 0 || low >= level*RecurRise) {
			level, every = high, period
		}
	}
	return level, every
}

// noteAhead keeps the run of minutes up to m at which a recurring burst was ahead, and its largest level. A
// burst ahead again within the hour before the last one has ended (a dip and a rise within a burst, read as
// bursts of their own) is that one still.
func (l *minuteLoad) noteAhead(m int64) {
	level, _ := l.recurring(time.Unix(m*60, 0))
	if level <= 0 {
		return
	}
	if l.aheadTo != 0 && int64(l.aheadTo) == m-1 {
		l.aheadTo, l.aheadLevel = int32(m), max(l.aheadLevel, float32(level))
		return
	}
	if l.aheadTo != 0 && l.endedAt <= l.aheadTo && m-int64(l.aheadTo) < minutes(RecurPeriods[0]) {
		if _, _, seen := l.span(int64(l.aheadTo), m-1); !seen {
			// no minute since the last one it was ahead was sampled (a restart from its checkpoint, a gap in
			// the metrics): it may have been ahead all along, and its end is read after this minute
			l.aheadTo, l.aheadLevel = int32(m), max(l.aheadLevel, float32(level))
		}
		return
	}
	l.aheadFrom, l.aheadTo, l.aheadLevel, l.aheadBefore = int32(m), int32(m), float32(level), -1
	if _, before, ok := l.span(m-1-minutes(RecurBeforeWindow), m-1); ok {
		l.aheadBefore = float32(before)
	}
}

// noteEnd marks the end of the recurring burst ahead last, once, at minute m: the first sampled of the RecurEnd
// minutes up to m when each sampled one (two at least: a sample every 2 minutes ends it too) has a usage at
// most halfway from the one before the burst to its level and all come more than RecurLead after the last
// minute it was ahead (when the bursts it recurs from had all started). A later sample of one of those minutes
// above halfway (more than one sample a minute) takes the end back.
func (l *minuteLoad) noteEnd(m int64) {
	if l.aheadTo == 0 {
		return
	}
	if l.endedAt > l.aheadTo {
		if m < int64(l.endedAt)+minutes(RecurEnd) && l.cpu[slot(m)] > l.halfway() {
			l.endedAt = 0
		}
		return
	}
	first := m - minutes(RecurEnd) + 1
	if first <= int64(l.aheadTo)+minutes(RecurLead) || m-int64(l.aheadTo) > minutes(RecurEndWithin) {
		return
	}
	end, n := int64(0), 0
	for q := first; q <= m; q++ {
		switch i := slot(q); {
		case l.stamp[i] != int32(q+1):
			continue // no sample (a recommender interval of 2 minutes, a gap in the metrics)
		case l.cpu[i] > l.halfway():
			return
		case n == 0:
			end = q
		}
		n++
	}
	// one sample in those minutes (a recommender interval of 3 minutes or more, a gap in the metrics): the
	// sample before them, when it came after the lead too, is the second; the end stays the one in those
	// minutes, and the earliest it may have been goes back to that sample (below)
	for q := first - 1; n == 1 && q > max(int64(l.aheadTo)+minutes(RecurLead), m-recurRing); q-- {
		switch i := slot(q); {
		case l.stamp[i] != int32(q+1):
			continue
		case l.cpu[i] > l.halfway():
			return
		}
		n = 2
	}
	if n < 2 {
		return
	}
	l.endedAt, l.endedEarliest = int32(end), int32(end)
	// minutes without a sample before them (a restart, a gap in the metrics) may have been its end already,
	// and so may low ones before those (the minutes a checkpoint's writer sampled low before it could note the
	// end): the earliest it can be is the first minute after the last one sampled above halfway (a scale made
	// in those minutes, the fall back of the process that saw them, may be after its end)
	low := max(int64(l.aheadTo)+minutes(RecurLead)+1, m-recurRing+1)
	for e := int64(l.endedEarliest); e > low; e-- {
		if i := slot(e - 1); l.stamp[i] == int32(e) && l.cpu[i] > l.halfway() {
			break
		}
		l.endedEarliest = int32(e - 1)
	}
}

// earliestEnd is the earliest minute the recurring burst ahead last may have ended, when ended reports its
// end: its end, or the first minute after the last one sampled before it (zero: not ended).
func (l *minuteLoad) earliestEnd() time.Time {
	if l.endedAt <= l.aheadTo {
		return time.Time{}
	}
	return time.Unix(int64(min(l.endedEarliest, l.endedAt))*60, 0)
}

// ended reports the recurring burst ahead last as of now (section 2a): the first minute it was ahead (from;
// zero: none), the first minute of its end (noteEnd; zero: it has not ended) and the peak usage of the
// RecurBeforeWindow before from (-1: none). A burst that ended more than RecurEndWithin ago, or has not ended
// RecurEndWithin after it was last ahead, is none.
func (l *minuteLoad) ended(now time.Time) (from, end time.Time, before float64) {
	m := minuteOf(now)
	switch {
	case l.aheadTo == 0:
		return time.Time{}, time.Time{}, -1
	case l.endedAt > l.aheadTo:
		if m-int64(l.endedAt) > minutes(RecurEndWithin) {
			return time.Time{}, time.Time{}, -1
		}
		end = time.Unix(int64(l.endedAt)*60, 0)
	case m-int64(l.aheadTo) > minutes(RecurEndWithin):
		return time.Time{}, time.Time{}, -1
	}
	return time.Unix(int64(l.aheadFrom)*60, 0), end, float64(l.aheadBefore)
}

// next is the first minute from now on, within RecurNextWithin, at which a recurring burst is ahead (zero:
// none): any burst of any period, not only the one ahead last.
func (l *minuteLoad) next(now time.Time) time.Time {
	if l.count == 0 {
		return time.Time{}
	}
	m := minuteOf(now)
	for k := int64(0); k <= minutes(RecurNextWithin); k++ {
		if level, _ := l.recurring(time.Unix((m+k)*60, 0)); level > 0 {
			return time.Unix((m+k)*60, 0)
		}
	}
	return time.Time{}
}

// MinutesCheckpoint is what a checkpoint keeps of a workload total's minutes: the CPU usage (millicores) of
// each of its last minutes from Start on (-1 for a minute without a sample), whose bursts are not all judged
// yet, the times of the bursts of the last days, and the recurring burst ahead last (nil: none).
type MinutesCheckpoint struct {
	Start      time.Time
	MilliCores []int32
	Bursts     []BurstCheckpoint
	Ahead      *AheadCheckpoint
}

// AheadCheckpoint is the recurring burst a workload total saw ahead last (section 2a): ahead from the minute
// From to the minute To, ended at the minute Ended (zero: not yet), at a level of LevelMilliCores, after a
// usage of BeforeMilliCores (-1: none sampled). The decision's return from the burst and its scale-downs held
// while the burst is under way read it.
type AheadCheckpoint struct {
	From, To, Ended                   time.Time
	LevelMilliCores, BeforeMilliCores int32
	// EndedEarliest is the earliest minute it may have ended (minutes without a sample before Ended; zero:
	// Ended).
	EndedEarliest time.Time
}

// BurstCheckpoint is a run of burst times: from Start on, for Minutes minutes, a burst of PeakMilliCores
// started within RecurLead.
type BurstCheckpoint struct {
	Start          time.Time
	Minutes        int
	PeakMilliCores int32
}

// save encodes the minutes held, from the oldest minute with a sample to the newest, and the runs of burst
// times that may still be read (RecurTimes of the longest period); false when it holds neither.
func (l *minuteLoad) save() (MinutesCheckpoint, bool) {
	var c MinutesCheckpoint
	newest := int64(-1)
	for _, s := range l.stamp {
		newest = max(newest, int64(s)-1)
	}
	if newest >= 0 {
		first := newest - recurRing + 1
		for m := first; m <= newest && l.stamp[slot(m)] != int32(m+1); m++ {
			first = m + 1 // a leading minute without a sample
		}
		c.Start, c.MilliCores = time.Unix(first*60, 0).UTC(), make([]int32, 0, newest-first+1)
		for m := first; m <= newest; m++ {
			v := int32(-1)
			if i := slot(m); l.stamp[i] == int32(m+1) {
				v = int32(math.Round(float64(l.cpu[i])))
			}
			c.MilliCores = append(c.MilliCores, v)
		}
	}
	for i := range l.count {
		r := l.run(i)
		from := int64(l.from[r]) - 1
		if from+int64(l.n[r]) > l.last-minutes(recurKeep)-minutes(RecurSpan) {
			c.Bursts = append(c.Bursts, BurstCheckpoint{Start: time.Unix(from*60, 0).UTC(), Minutes: int(l.n[r]),
				PeakMilliCores: int32(math.Round(float64(l.peak[r])))})
		}
	}
	if from, end, before := l.ended(time.Unix(l.last*60, 0)); !from.IsZero() && l.aheadLevel >= 1 && l.aheadLevel < math.MaxInt32 {
		c.Ahead = &AheadCheckpoint{From: from.UTC(), To: time.Unix(int64(l.aheadTo)*60, 0).UTC(), Ended: end.UTC(),
			LevelMilliCores: int32(math.Round(float64(l.aheadLevel))), BeforeMilliCores: int32(math.Round(min(before, math.MaxInt32)))}
		if !end.IsZero() {
			c.Ahead.EndedEarliest = l.earliestEnd().UTC()
		}
	}
	return c, newest >= 0 || len(c.Bursts) > 0 || c.Ahead != nil
}

// load takes a checkpoint's minutes and bursts up to now. A minute is taken when it is not older than the
// minutes held (a minute this process sampled too keeps the larger load, a slot holding a newer minute keeps
// it); the times the checkpoint's minutes had judged are not judged again. The bursts join this process'
// (runs that meet become one, with the larger peak); the newest recurRuns stay.
func (l *minuteLoad) load(c MinutesCheckpoint, now time.Time) {
	last := minuteOf(now)
	l.loadMinutes(c.Start, c.MilliCores, last)
	l.mergeRuns(c.Bursts, last)
	if c.Ahead != nil {
		l.loadAhead(*c.Ahead, last)
	}
}

// loadAhead takes the recurring burst a checkpoint's writer saw ahead last, as of minute last (a checkpoint's
// burst ahead after it is none, its end after it not yet). Where this process has noted one too, the later
// stays, unless they are one run of minutes ahead (they meet, or no minute between them was sampled: a
// restart): then one, from the earlier's first minute (with the usage before it) to the later's last, at the
// larger level, with the later's end (none when it came before the other's last minute ahead).
func (l *minuteLoad) loadAhead(a AheadCheckpoint, last int64) {
	from, to := minuteOf(a.From), min(minuteOf(a.To), last)
	if from <= 0 || to < from || a.LevelMilliCores <= 0 { // to < from: a burst ahead after now too
		return // none (or a hand-edited checkpoint)
	}
	ended, earliest := int64(0), int64(0)
	if e := minuteOf(a.Ended); !a.Ended.IsZero() && e > to && e <= last {
		ended, earliest = e, e
		if !a.EndedEarliest.IsZero() {
			earliest = min(e, max(to+1, minuteOf(a.EndedEarliest)))
		}
	}
	cp := burstAhead{aheadFrom: int32(from), aheadTo: int32(to), endedAt: int32(ended), endedEarliest: int32(earliest),
		aheadLevel: float32(a.LevelMilliCores), aheadBefore: float32(max(a.BeforeMilliCores, -1))}
	if l.aheadTo == 0 {
		l.burstAhead = cp
		return
	}
	first, second := cp, l.burstAhead
	if l.aheadFrom < cp.aheadFrom {
		first, second = l.burstAhead, cp
	}
	if !l.joins(int64(first.aheadTo), int64(second.aheadFrom)) {
		if cp.aheadTo >= l.aheadTo {
			l.burstAhead = cp
		}
		return
	}
	merged := burstAhead{aheadFrom: first.aheadFrom, aheadBefore: first.aheadBefore, aheadTo: max(first.aheadTo, second.aheadTo),
		aheadLevel: max(first.aheadLevel, second.aheadLevel)}
	for _, r := range [...]burstAhead{first, second} { // the later end after the run's last minute ahead
		if r.endedAt > merged.aheadTo && r.endedAt > merged.endedAt {
			merged.endedAt, merged.endedEarliest = r.endedAt, r.endedEarliest
		}
	}
	l.burstAhead = merged
}

// joins reports whether a run of minutes ahead that ends at minute to and one that starts at minute from are
// one: they meet, or none of the minutes between them has a sample, all of them within the minutes the ring
// holds (older ones it cannot tell: not one).
func (l *minuteLoad) joins(to, from int64) bool {
	if from <= to+1 {
		return true
	}
	_, _, seen := l.span(to, from-1)
	return from-to <= recurRing && to >= l.last-recurRing && !seen
}

// loadMinutes takes the load of the minutes from start on (-1: none) that are neither after minute last nor
// older than the ring holds then.
func (l *minuteLoad) loadMinutes(start time.Time, vals []int32, last int64) {
	first := minuteOf(start)
	if n := int64(len(vals)); n > recurRing { // only the newest recurRing can be held
		first += n - recurRing
		vals = vals[n-recurRing:]
	}
	newest := int64(-1)
	for k, v := range vals {
		m := first + int64(k)
		if v < 0 || m > last || m < last-recurRing+1 {
			continue
		}
		newest = max(newest, m)
		i := slot(m)
		switch s := int64(l.stamp[i]); {
		case s < m+1:
			l.stamp[i], l.cpu[i] = int32(m+1), float32(v)
		case s == m+1:
			l.cpu[i] = max(l.cpu[i], float32(v))
		}
	}
	if newest >= 0 {
		// the process that wrote them judged every time whose RecurSpan ended before its newest minute
		l.last = max(l.last, newest)
		l.judged = max(l.judged, newest-1-minutes(RecurSpan))
	}
}

// mergeRuns joins bursts (none starting after minute last) to the runs held: runs that meet become one with
// the larger peak, the newest recurRuns stay.
func (l *minuteLoad) mergeRuns(bursts []BurstCheckpoint, last int64) {
	type span struct {
		from, to int64 // minutes [from, to)
		peak     float32
	}
	var all []span
	for i := range l.count {
		r := l.run(i)
		all = append(all, span{int64(l.from[r]) - 1, int64(l.from[r]) - 1 + int64(l.n[r]), l.peak[r]})
	}
	for _, b := range bursts {
		if from := minuteOf(b.Start); b.Minutes > 0 && from <= last && b.PeakMilliCores >= 0 {
			all = append(all, span{from, from + int64(min(b.Minutes, math.MaxUint8)), float32(b.PeakMilliCores)})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].from < all[j].from })
	var runs []span
	for _, s := range all {
		if k := len(runs) - 1; k >= 0 && s.from <= runs[k].to {
			runs[k].to, runs[k].peak = max(runs[k].to, s.to), max(runs[k].peak, s.peak)
			continue
		}
		runs = append(runs, s)
	}
	if len(runs) > recurRuns {
		runs = runs[len(runs)-recurRuns:]
	}
	l.head, l.count = 0, 0
	for _, s := range runs {
		for s.from < s.to { // a run longer than a run's count holds is kept as several
			n := min(s.to-s.from, math.MaxUint8)
			l.push(s.from, uint8(n), s.peak)
			s.from += n
		}
	}
	if len(runs) > 0 { // every time up to the last marked one was judged (by whichever process marked it)
		l.judged = max(l.judged, runs[len(runs)-1].to-1)
	}
}
