package adaptive

import (
	"math"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
)

// downFraction is the share of ChangesPerDay that may be saved for changes that lower a target: a target
// lowered at most about once a day goes up about as often, so a day's budget is not spent at once.
const downFraction = 1.0 / 3

// Result is the adaptive model's recommendation of one container and the candidates whose targets it
// publishes.
type Result struct {
	recommender.Recommendation
	// CPUModel and MemoryModel name the winning candidates, e.g. "p95-m5-h6" or "upstream".
	CPUModel, MemoryModel string
}

// Recommend scores the candidates on the samples so far, picks the winners and returns the recommendation
// at now. upstream is the upstream model's recommendation of the same container (recommender.Model.Recommend
// with the same pod-minimum split numContainers and policy p): the upstream candidate's target, and the
// bounds the adaptive target is widened into. Call it at every recommendation interval: a candidate's
// target is in force for the samples after the call.
func (s *State) Recommend(now time.Time, upstream recommender.Recommendation, numContainers int, p recommender.Policy) Result {
	u := now.Unix()
	s.start(u)
	s.decay(u)
	refresh := !s.refreshed || u-s.lastRefresh >= int64(s.m.cfg.Refresh/time.Second) || u < s.lastRefresh
	if refresh {
		s.refresh(u)
	}
	s.warm = u-s.first >= int64(s.m.cfg.Warmup/time.Second)
	s.trackUpstream(upstream)
	s.rate = s.changeRate(u)
	s.setTargets(u, upstream)
	if refresh && s.warm { // the winners are chosen every Refresh
		s.cpuWin = s.pick(s.cpu, s.cpuWin, s.cpuLedger.limit(s.m.weights.Over, s.m.weights.Gain))
		s.memWin = s.pick(s.mem, s.memWin, s.memLedger.limit(s.m.weights.MemoryOver, s.m.weights.Gain))
	}
	s.publish(u)
	rec := s.m.finalize(s.pubCPU, s.pubMem, numContainers, p, upstream)
	return Result{Recommendation: rec, CPUModel: s.cpu[s.cpuWin].name, MemoryModel: s.mem[s.memWin].name}
}

// decay ages the scores to u. Scores are not multiplied every interval: a sample at u weighs
// 2^((u - reference) / half-life), so older ones weigh less; every weight is rescaled when that grows large.
func (s *State) decay(u int64) {
	dt := float64(u - s.lastDecay)
	if dt <= 0 {
		return
	}
	lf := math.Exp2(-dt / s.m.cfg.LedgerHalfLife.Seconds())
	s.cpuLedger.decay(lf)
	s.memLedger.decay(lf)
	hl := s.m.cfg.ScoreHalfLife.Seconds()
	if s.weight == 0 {
		s.scoreRef, s.weight = u, 1
	}
	if e := float64(u-s.scoreRef) / hl; e > maxExponent {
		f := math.Exp2(-e)
		for i := range s.cpu {
			s.cpu[i].decay(f)
		}
		for i := range s.mem {
			s.mem[i].decay(f)
		}
		s.scoredDays *= f
		s.scoreRef = u
	}
	s.weight = math.Exp2(float64(u-s.scoreRef) / hl)
	s.scoredDays += s.weight * dt / 86400
	s.lastDecay = u
}

// refresh recomputes what the candidates' targets are made of: the percentiles of the histograms, the daily
// schedules (once an hour) and the memory peaks.
func (s *State) refresh(u int64) {
	s.refreshed, s.lastRefresh = true, u
	for h := range s.m.cfg.HalfLives {
		s.hist.percentiles(h, s.m.cfg.Percentiles, s.pcts)
		for i := range s.cpu {
			if c := &s.cpu[i]; c.kind == kindHist && c.index == h {
				c.base = s.pcts[c.pct] * 1000
			}
		}
	}
	if hour := floorDiv(u, 3600); hour != s.schedHour {
		s.schedHour = hour
		var prof [24]float64
		for i, sp := range s.specs {
			if s.hours.profile(hour, sp.days, sp.z, &prof) {
				schedule(&prof, sp.segs, &s.sched[i])
			} else {
				s.sched[i] = [24]float64{}
			}
		}
	}
	window, peak := -1, 0.0
	for i := range s.mem { // candidates of one window are made one after the other
		if c := &s.mem[i]; c.kind == kindMemPeak {
			if c.index != window {
				window, peak = c.index, s.hours.memPeak(floorDiv(u, 3600), c.index)
			}
			c.base = peak
		}
	}
}

// setTargets sets every candidate's target in force from now on.
func (s *State) setTargets(u int64, up recommender.Recommendation) {
	db, w := s.m.cfg.DeadBand, s.weight
	b := s.budget(u)
	lead := int64(s.m.cfg.Lead / time.Second)
	floor := s.floorAt(u)
	cur := floorDiv(u, 3600)
	for i := range s.specs {
		lvl := s.dailyLevel(i, u, lead)
		if lvl > 0 { // never below what the current and the last hour need
			lvl = max(lvl, s.hours.recent(cur, s.specs[i].z))
		}
		s.level[i] = lvl
	}
	for i := range s.cpu {
		c := &s.cpu[i]
		switch c.kind {
		case kindUpstream:
			c.setTarget(float64(up.UncappedTarget.CPUMilli), db, w, &b)
		case kindHist:
			c.setTarget(c.base*(1+c.margin), db, w, &b)
		case kindDaily:
			c.setTarget(s.level[c.index]*(1+c.margin), db, w, &b)
		}
	}
	for i := range s.mem {
		c := &s.mem[i]
		switch c.kind {
		case kindUpstream:
			c.setTarget(float64(up.UncappedTarget.MemoryBytes), db, w, &b)
		case kindMemPeak:
			c.setTarget(max(c.base*(1+c.margin), floor), db, w, &b)
		}
	}
}

// trackUpstream applies upstream's target as an updater with the dead band would, without a budget (when
// its CPU or its memory differs from the applied one by more than the dead band, both are applied), and
// counts its changes after the warmup.
func (s *State) trackUpstream(up recommender.Recommendation) {
	c, m := float64(up.Target.CPUMilli), float64(up.Target.MemoryBytes)
	if s.upCPU == 0 && s.upMem == 0 {
		s.upCPU, s.upMem = c, m
		return
	}
	db := s.m.cfg.DeadBand
	if math.Abs(c-s.upCPU) > db*s.upCPU || math.Abs(m-s.upMem) > db*s.upMem {
		s.upCPU, s.upMem = c, m
		if s.warm {
			s.upChanges++
		}
	}
}

// changeRate is the change budget a day at u: ChangesPerDay, or upstream's own applied changes a day since
// the warmup (after a day of them) when that is higher; 0 (no budget) when ChangesPerDay is 0.
func (s *State) changeRate(u int64) float64 {
	r := s.m.cfg.ChangesPerDay
	if r == 0 {
		return 0
	}
	if days := float64(u-s.first)/86400 - s.m.cfg.Warmup.Hours()/24; days >= 1 {
		r = max(r, s.upChanges/days)
	}
	return r
}

// budget is the change budget of the candidates' own targets from the last call to u.
func (s *State) budget(u int64) budget {
	cfg := &s.m.cfg
	b := budget{limit: cfg.ChangesPerDay * downFraction, free: cfg.ChangesPerDay == 0}
	if s.lastSet != 0 && u > s.lastSet {
		b.refill = float64(u-s.lastSet) / 86400 * s.rate
	}
	if s.lastSet == 0 {
		b.refill = b.limit
	}
	s.lastSet = u
	return b
}

// dailyLevel is the largest level of schedule i over the hours from u to u + lead.
func (s *State) dailyLevel(i int, u, lead int64) float64 {
	sc := &s.sched[i]
	a, b := floorDiv(u, 3600), floorDiv(u+lead, 3600)
	v := 0.0
	for h := a; h <= b; h++ {
		v = max(v, sc[mod(h, 24)])
	}
	return v
}

// pick returns the index of the winner: among the eligible candidates (over share at most tol x
// upstream's, no more OOMs than upstream's; upstream always is), the cheapest. The current winner stays while
// it is eligible unless the challenger costs at least Hysteresis less.
func (s *State) pick(cs []candidate, cur int, limit float64) int {
	w, days, unit := &s.m.weights, s.scoredDays, s.weight
	up := &cs[0]
	best, bestCost := 0, up.cost(w, days, unit)
	for i := 1; i < len(cs); i++ {
		if !cs[i].eligible(up, limit, unit) {
			continue
		}
		if c := cs[i].cost(w, days, unit); c < bestCost {
			best, bestCost = i, c
		}
	}
	if best == cur || !cs[cur].eligible(up, limit, unit) {
		return best
	}
	if curCost := cs[cur].cost(w, days, unit); bestCost >= curCost*(1-s.m.cfg.Hysteresis) {
		return cur
	}
	return best
}

// publish applies the winners' applied targets: at once without a budget (ChangesPerDay 0). Otherwise a
// rise (nothing goes down by more than the dead band) is applied at once: holding it back costs overruns.
// A change that lowers a target waits for the budget (changeRate a day, at most downFraction x
// ChangesPerDay saved; a rise takes one too, owed when none is left), so the target changes at most about
// changeRate times a day. Memory that must rise (an OOM floor, usage within MemoryGuard of the target)
// never waits; before the warmup (upstream wins) a rise of upstream's memory target is published even
// within the dead band.
func (s *State) publish(u int64) {
	cfg := &s.m.cfg
	if cfg.ChangesPerDay == 0 {
		s.pubCPU, s.pubMem = s.cpu[s.cpuWin].target, s.mem[s.memWin].target
		return
	}
	wc, wm := s.cpu[s.cpuWin].applied, s.mem[s.memWin].applied
	s.refill(u)
	if s.pubCPU <= 0 || s.pubMem <= 0 {
		s.pubCPU, s.pubMem = wc, wm
		return
	}
	differs := func(w, p float64) bool { return w > 0 && math.Abs(w-p) > cfg.DeadBand*p }
	// memory never waits for the budget when it must rise: to an OOM floor, or when usage came within
	// MemoryGuard of the applied target
	memUrgent := wm > s.pubMem && (s.floorAt(u) > s.pubMem || s.hours.memPeak(floorDiv(u, 3600), 1) > s.pubMem*(1-cfg.MemoryGuard))
	dc, dm := differs(wc, s.pubCPU), differs(wm, s.pubMem)
	if !dc && !dm && !memUrgent {
		return
	}
	rise := (!dc || wc > s.pubCPU) && (!dm || wm > s.pubMem) // nothing goes down by more than the dead band
	switch {
	case rise:
		s.pubCPU, s.pubMem = max(wc, s.pubCPU), max(wm, s.pubMem)
		s.tokens--
	case memUrgent: // memory rises now, CPU keeps its target
		s.pubMem = wm
		s.tokens--
	case s.tokens >= 1:
		s.tokens--
		s.pubCPU, s.pubMem = wc, wm
	}
}

// refill adds the budget since the last publication (changeRate a day, at most downFraction x ChangesPerDay
// saved) and, before the warmup, publishes a rise of upstream's memory target even within the dead band.
func (s *State) refill(u int64) {
	if !s.warm && s.pubMem > 0 && s.mem[0].target > s.pubMem {
		s.pubMem = s.mem[0].target
	}
	if s.lastPublish != 0 || s.pubCPU > 0 || s.pubMem > 0 {
		s.tokens = min(s.m.cfg.ChangesPerDay*downFraction, s.tokens+float64(u-s.lastPublish)/86400*s.rate)
	}
	s.lastPublish = u
}

// finalize makes the published targets a recommendation as upstream's are made: at least the pod minimum
// split across numContainers, capped by the policy, uncontrolled resources left out, rounded up. The bounds
// are upstream's, widened to hold the target. When the published targets are upstream's own, the result is
// upstream's recommendation as it is.
func (m *Model) finalize(cpu, mem float64, numContainers int, p recommender.Policy, up recommender.Recommendation) recommender.Recommendation {
	if int64(cpu) == up.UncappedTarget.CPUMilli && int64(mem) == up.UncappedTarget.MemoryBytes {
		return up
	}
	b := m.cfg.Base
	n := float64(max(numContainers, 1))
	minCPU, minMem := whole(float64(whole(b.PodMinCPU*1000))*(1/n)), whole(float64(whole(b.PodMinMemory))*(1/n))
	uc, um := max(whole(cpu), minCPU), max(whole(mem), minMem)
	// rounded and capped as the upstream model's amounts (recommender.Policy.Amounts): a target stays within
	// maxAllowed
	out := recommender.Recommendation{
		Target:         p.Amounts(b, uc, um, true),
		LowerBound:     up.LowerBound,
		UpperBound:     up.UpperBound,
		UncappedTarget: p.Amounts(b, uc, um, false),
	}
	if p.ControlCPU {
		out.LowerBound.CPUMilli = min(out.LowerBound.CPUMilli, out.Target.CPUMilli)
		out.UpperBound.CPUMilli = max(out.UpperBound.CPUMilli, out.Target.CPUMilli)
	}
	if p.ControlMem {
		out.LowerBound.MemoryBytes = min(out.LowerBound.MemoryBytes, out.Target.MemoryBytes)
		out.UpperBound.MemoryBytes = max(out.UpperBound.MemoryBytes, out.Target.MemoryBytes)
	}
	return out
}

// whole truncates to a whole amount in [0, MaxResourceAmount], as upstream's arithmetic does.
func whole(v float64) int64 {
	if math.IsNaN(v) || v <= 0 {
		return 0
	}
	if v >= recommender.MaxResourceAmount {
		return recommender.MaxResourceAmount
	}
	return int64(v)
}
