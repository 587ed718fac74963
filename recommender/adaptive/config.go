package adaptive

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
)

// AnnotationModel selects the model of one VerticalPodAutoscaler: "upstream" (the default, or
// --default-model) or "adaptive"; the winning candidates are named in its RecommendationProvided condition
// and in hvpa_recommender_adaptive_winner_info. An unknown value is InvalidOverride. `hvpa simulate` also
// takes it on Hvpas; in the cluster an Hvpa asking for adaptive gets no embedded recommendation in this
// version (like an invalid override). It is not a recommender.WithOverrides override.
const AnnotationModel = recommender.AnnotationPrefix + "model"

// The model names AnnotationModel, `hvpa simulate --model` and the default-model flag take.
const (
	ModelUpstream = "upstream"
	ModelAdaptive = "adaptive"
)

// ParseModel checks a model name ("" means upstream).
func ParseModel(v string) (string, error) {
	switch v {
	case "", ModelUpstream:
		return ModelUpstream, nil
	case ModelAdaptive:
		return ModelAdaptive, nil
	}
	return "", fmt.Errorf("model %q: use %s or %s", v, ModelUpstream, ModelAdaptive)
}

// Weights are the selection's constraints and costs (see the package comment): the order of the goals is
// OOMs (a memory candidate may not have missed more than upstream), then overruns (a candidate may not have
// run over more often than the limit), then idle capacity and changes (the cost of the eligible ones).
type Weights struct {
	// Over and MemoryOver are the tolerances of the over limit of CPU and of memory: a candidate is eligible
	// when its recent share of samples above its target is at most Over x upstream's long-run share (1: no
	// higher; below 1 keeps a margin), corrected by Gain.
	Over, MemoryOver float64
	// Gain corrects the limit by what the published target ran over in the long run: limit = Over x up +
	// Gain x (Over x up - published), within [0, 2 x up] (up, published: the long-run over shares of
	// upstream's applied target and of the published one).
	Gain float64
	// Idle is the cost of the mean idle share of the target, max(target - usage, 0) / target.
	Idle float64
	// Change is the cost of one applied change (10% dead band) per day.
	Change float64
}

// Config is the adaptive model's ensemble and its scoring. Base is the upstream model's configuration:
// its histogram buckets, OOM bump, pod minimum and rounding apply to every candidate.
type Config struct {
	Base recommender.Config
	// CPU histogram candidates: every half-life x percentile x margin.
	HalfLives   []time.Duration
	Percentiles []float64
	Margins     []float64
	// Daily-curve CPU candidates: per hour of the day, the largest (mean + z x sd) of that hour over the last
	// DailyDays days, made into a daily schedule of at most Segments levels, plus a margin.
	DailyDays     []int
	DailyZ        []float64
	DailySegments []int
	DailyMargins  []float64
	// Lead: a daily candidate's target covers the schedule from now to now + Lead.
	Lead time.Duration
	// Memory candidates: the largest hourly peak of the last window, plus a margin; never below the OOM
	// bumps of the last OOMHold.
	MemoryWindows []time.Duration
	MemoryMargins []float64
	OOMHold       time.Duration
	// Scoring: costs decay with ScoreHalfLife; a challenger must cost Hysteresis (0.1 = 10%) less than the
	// winner to replace it; no candidate but upstream wins before Warmup of history.
	ScoreHalfLife  time.Duration
	LedgerHalfLife time.Duration
	Weights        Weights
	Hysteresis     float64
	Warmup         time.Duration
	// Publication: a new target is applied when it differs from the applied one by more than DeadBand: a
	// rise at once, a cut when a change is left in the budget (ChangesPerDay a day, or upstream's own
	// applied changes a day since the warmup when higher; refilled continuously, at most ChangesPerDay/3
	// saved; a rise takes one too, owed when none is left). Every candidate's own applied target follows the
	// same rule. ChangesPerDay 0: every target is published as it is (no dead band, no budget).
	DeadBand      float64
	ChangesPerDay float64
	// MemoryGuard: when memory usage comes within this share of the applied memory target, a higher winning
	// memory target is applied at once, budget or not (0.05 = within 5%).
	MemoryGuard float64
	// Refresh is how often the candidates' targets are recomputed (the scores are kept per sample).
	Refresh time.Duration
}

// Defaults returns the adaptive model's default ensemble over base.
func Defaults(base recommender.Config) Config {
	return Config{
		Base:      base,
		HalfLives: []time.Duration{2 * time.Hour, 6 * time.Hour, 24 * time.Hour}, Percentiles: []float64{0.95, 0.98, 0.99},
		Margins:   []float64{0, 0.05, 0.1},
		DailyDays: []int{2, 7}, DailyZ: []float64{2.5, 3}, DailySegments: []int{2, 3}, DailyMargins: []float64{0, 0.05, 0.1},
		Lead:          15 * time.Minute,
		MemoryWindows: []time.Duration{24 * time.Hour, 72 * time.Hour, 7 * 24 * time.Hour}, MemoryMargins: []float64{0.15, 0.2, 0.3},
		OOMHold:       24 * time.Hour,
		ScoreHalfLife: 12 * time.Hour, LedgerHalfLife: 7 * 24 * time.Hour,
		Weights:    Weights{Over: 0.8, MemoryOver: 0.8, Gain: 1, Idle: 1, Change: 0.01},
		Hysteresis: 0.1,
		Warmup:     24 * time.Hour,
		DeadBand:   0.1, ChangesPerDay: 3, MemoryGuard: 0.15,
		Refresh: 5 * time.Minute,
	}
}

// UpstreamOnly is a configuration whose only candidate is the upstream model, published as it is: its
// recommendations are upstream's, number for number.
func UpstreamOnly(base recommender.Config) Config {
	c := Defaults(base)
	c.HalfLives, c.Percentiles, c.Margins = nil, nil, nil
	c.DailyDays, c.DailyZ, c.DailySegments, c.DailyMargins = nil, nil, nil, nil
	c.MemoryWindows, c.MemoryMargins = nil, nil
	c.ChangesPerDay = 0
	return c
}

// maxDailyDays bounds the hour slots kept (the state's size).
const maxDailyDays = 7

// Validate reports every setting outside its range.
func (c Config) Validate() error {
	errs := []error{c.Base.Validate()}
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	for _, h := range c.HalfLives {
		check(h > 0, "half-life %s: must be positive", h)
	}
	for _, p := range c.Percentiles {
		check(p > 0 && p <= 1, "percentile %v: must be in (0, 1]", p)
	}
	for _, m := range append(append(append([]float64{}, c.Margins...), c.DailyMargins...), c.MemoryMargins...) {
		check(m >= 0 && m <= recommender.MaxSafetyMargin, "margin %v: must be in [0, %d]", m, recommender.MaxSafetyMargin)
	}
	for _, d := range c.DailyDays {
		check(d >= 1 && d <= maxDailyDays, "daily days %d: must be in [1, %d]", d, maxDailyDays)
	}
	for _, s := range c.DailySegments {
		check(s >= 1 && s <= 4, "daily segments %d: must be in [1, 4]", s)
	}
	for _, z := range c.DailyZ {
		check(z >= 0 && !math.IsInf(z, 0), "daily z %v: must be a finite number >= 0", z)
	}
	for _, w := range c.MemoryWindows {
		check(w >= time.Hour && w <= maxDailyDays*24*time.Hour, "memory window %s: must be in [1h, %dd]", w, maxDailyDays)
	}
	return errors.Join(append(errs, c.validateScoring())...)
}

// validateScoring reports the scoring and publication settings outside their range.
func (c Config) validateScoring() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.Lead >= 0, "lead %s: must not be negative", c.Lead)
	check(c.ScoreHalfLife > 0 && c.LedgerHalfLife > 0 && c.Refresh > 0 && c.OOMHold >= 0 && c.Warmup >= 0,
		"score half-life %s, ledger half-life %s, refresh %s, OOM hold %s, warmup %s: must be positive",
		c.ScoreHalfLife, c.LedgerHalfLife, c.Refresh, c.OOMHold, c.Warmup)
	w := c.Weights
	check(w.Over >= 0 && w.MemoryOver >= 0 && w.Gain >= 0 && w.Idle >= 0 && w.Change >= 0, "weights %+v: must not be negative", w)
	check(c.Hysteresis >= 0 && c.Hysteresis < 1, "hysteresis %v: must be in [0, 1)", c.Hysteresis)
	check(c.DeadBand >= 0 && c.ChangesPerDay >= 0 && c.MemoryGuard >= 0 && c.MemoryGuard < 1, "dead band %v, changes per day %v, memory guard %v: must not be negative (the guard below 1)",
		c.DeadBand, c.ChangesPerDay, c.MemoryGuard)
	return errors.Join(errs...)
}
