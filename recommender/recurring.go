package recommender

import (
	"math"
	"time"
)

// A recurring burst (docs/design/scaling.md section 2a): when the CPU load of a workload total rose, at this
// time of each of the last RecurHours hours, within RecurLead to RecurRise times the load of the RecurBefore
// before it (and by RecurMinRise at least), and held that rise for RecurHold after (an hourly batch job, a
// cron schedule), the burst's peak over RecurSpan is the load ahead now: the Hvpa's total rises before the
// burst comes, instead of a reaction time (the metrics window, the recommender's run, the resize) into it.
const (
	// RecurHours: the burst came at this time of each of the last RecurHours hours.
	RecurHours = 3
	// RecurBefore: the load before a burst is the peak of the RecurBefore before its time.
	RecurBefore = 2 * time.Minute
	// RecurLead: a burst that starts within RecurLead is the load ahead now (a reaction time and more: the
	// resize applies within the updater's period after the run that sees it).
	RecurLead = 4 * time.Minute
	// RecurHold: the burst held its rise over the RecurHold after RecurLead (a spike does not, and rising for
	// it ahead of time would hold a total up for the whole scale-down stabilization).
	RecurHold = 5 * time.Minute
	// RecurSpan: the burst's level is its peak over the RecurSpan after its time (the CPU estimate's up
	// window: what the decision reads once the burst is there).
	RecurSpan = 10 * time.Minute
	// RecurRise and RecurMinRise: a burst is at least RecurRise times the load before it, and RecurMinRise
	// millicores above it (a load of a few millicores above the pods' base doubles with its noise).
	RecurRise    = 1.5
	RecurMinRise = 100.0
)

// recurSlots is how many minutes a minuteLoad holds: from the load before the burst RecurHours hours ago to
// now, and a few more.
const recurSlots = RecurHours*60 + int64(RecurBefore/time.Minute) + 8

// minuteLoad is the CPU load of each of the last recurSlots minutes (the largest sample of the minute), in a
// ring indexed by the minute: 1.5 KiB per workload total, whatever the recommender's interval.
type minuteLoad struct {
	stamp [recurSlots]int32 // the minute the slot holds (Unix time / 60, until the year 6000), plus 1 (0: empty)
	cpu   [recurSlots]float32
}

// slot is the index of minute m.
func slot(m int64) int { return int((m%recurSlots + recurSlots) % recurSlots) }

func minuteOf(t time.Time) int64 { return t.Unix() / 60 }

// add takes a CPU sample (millicores) at t.
func (l *minuteLoad) add(t time.Time, cpu float64) {
	m := minuteOf(t)
	i := slot(m)
	if l.stamp[i] != int32(m+1) {
		l.stamp[i], l.cpu[i] = int32(m+1), float32(cpu)
		return
	}
	l.cpu[i] = max(l.cpu[i], float32(cpu))
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

// recurring is the CPU load (millicores) of a burst that recurs at now's time of the hour: the largest peak
// of the last RecurHours hours' bursts, each of which started within RecurLead of that time, at least
// RecurRise and RecurMinRise above the load before it, and held that over RecurHold; 0 when any of those
// hours had no such burst (or no sample).
func (l *minuteLoad) recurring(now time.Time) float64 {
	minutes := func(d time.Duration) int64 { return int64(d / time.Minute) }
	level := 0.0
	for k := 1; k <= RecurHours; k++ {
		p := minuteOf(now) - int64(k)*60
		_, before, ok1 := l.span(p-minutes(RecurBefore), p)
		_, lead, ok2 := l.span(p, p+minutes(RecurLead))
		held, _, ok3 := l.span(p+minutes(RecurLead), p+minutes(RecurLead+RecurHold))
		_, peak, _ := l.span(p, p+minutes(RecurSpan))
		rise := max(before*RecurRise, before+RecurMinRise)
		if !ok1 || !ok2 || !ok3 || lead < rise || held < rise {
			return 0
		}
		level = max(level, peak)
	}
	return level
}

// MinutesCheckpoint is the CPU load of a workload total's last minutes, as a checkpoint keeps it: the load
// (millicores) of each minute from Start on, -1 for a minute without a sample.
type MinutesCheckpoint struct {
	Start      time.Time
	MilliCores []int32
}

// save encodes the minutes held, from the oldest minute with a sample to the newest; false when none has one.
func (l *minuteLoad) save() (MinutesCheckpoint, bool) {
	newest := int64(-1)
	for _, s := range l.stamp {
		newest = max(newest, int64(s)-1)
	}
	if newest < 0 {
		return MinutesCheckpoint{}, false
	}
	first := newest - recurSlots + 1
	for m := first; m <= newest && l.stamp[slot(m)] != int32(m+1); m++ {
		first = m + 1 // a leading minute without a sample
	}
	c := MinutesCheckpoint{Start: time.Unix(first*60, 0).UTC(), MilliCores: make([]int32, 0, newest-first+1)}
	for m := first; m <= newest; m++ {
		v := int32(-1)
		if i := slot(m); l.stamp[i] == int32(m+1) {
			v = int32(math.Round(float64(l.cpu[i])))
		}
		c.MilliCores = append(c.MilliCores, v)
	}
	return c, true
}

// load takes the minutes of a checkpoint that are not after now, and not older than the minutes held: a
// minute this process sampled too keeps the larger load, and a slot holding a newer minute keeps it.
func (l *minuteLoad) load(c MinutesCheckpoint, now time.Time) {
	first, last := minuteOf(c.Start), minuteOf(now)
	vals := c.MilliCores
	if n := int64(len(vals)); n > recurSlots { // only the newest recurSlots can be held
		first += n - recurSlots
		vals = vals[n-recurSlots:]
	}
	for k, v := range vals {
		m := first + int64(k)
		if v < 0 || m > last || m < last-recurSlots+1 {
			continue
		}
		i := slot(m)
		switch s := int64(l.stamp[i]); {
		case s < m+1:
			l.stamp[i], l.cpu[i] = int32(m+1), float32(v)
		case s == m+1:
			l.cpu[i] = max(l.cpu[i], float32(v))
		}
	}
}
