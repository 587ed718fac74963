package simulate

import (
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/adaptive"
	"github.com/hvpa-dev/hvpa/recommender/trace"
)

// adaptiveFor returns the adaptive state of a new aggregate of a workload whose model is adaptive (Options.Model,
// or Options.ModelFor), or nil when it runs upstream's model. The adaptive model is made over the workload's
// configuration (m's).
func (s *Simulator) adaptiveFor(ns, workload string, m *recommender.Model) *adaptive.State {
	name := s.opts.Model
	if s.opts.ModelFor != nil {
		if v := s.opts.ModelFor(ns, workload); v != "" {
			name = v
		}
	}
	if name != adaptive.ModelAdaptive {
		return nil
	}
	am, ok := s.adModels[m.Config]
	if !ok {
		cfg := adaptive.Defaults(m.Config)
		if s.opts.Adaptive != nil {
			cfg = *s.opts.Adaptive
			cfg.Base = m.Config
		}
		var err error
		if am, err = adaptive.NewModel(cfg); err != nil { // validated in New; fall back rather than stop the run
			return nil
		}
		s.adModels[m.Config] = am
	}
	return am.NewState()
}

// recommendAdaptive makes the recommendation of an aggregate that runs the adaptive model: upstream's (when
// it has new samples), then the adaptive model's from it, every tick.
func (s *Simulator) recommendAdaptive(a *aggregate, now time.Time) {
	if a.dirty {
		a.dirty = false
		if rec, ok := a.model.Recommend(a.agg, a.split, a.policy); ok {
			a.up, a.upHas = rec, true
		}
	}
	if !a.upHas {
		return
	}
	res := a.ad.Recommend(now, a.up, a.split, a.policy)
	if a.has && changedOver(a.rec.Target, res.Target, 0.1) {
		s.Stats.TargetChanges++
	}
	if !a.has || res.Recommendation != a.rec {
		a.row = appendRow(a.row[:0], a, res.Recommendation)
	}
	a.rec, a.has = res.Recommendation, true
	s.Stats.CPUWinners[res.CPUModel]++
	s.Stats.MemoryWinners[res.MemoryModel]++
}

// upstreamTarget is the upstream model's target of an aggregate (its own, or the one beside the adaptive
// model's).
func (a *aggregate) upstreamTarget() recommender.Amounts {
	if a.ad != nil {
		return a.up.Target
	}
	return a.rec.Target
}

// scoreIssue adds a usage row to the scores of the target in force and of upstream's.
func (s *Simulator) scoreIssue(a *aggregate, row *trace.Row) {
	if !a.has {
		return
	}
	s.Stats.Scores.sample(a.rec.Target, row)
	s.Stats.Upstream.sample(a.upstreamTarget(), row)
}
