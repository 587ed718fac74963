package main

import (
	"errors"
	"fmt"
	"math"

	"github.com/hvpa-dev/hvpa/recommender"
)

// flagRange is one flag of hvpa run and whether its value is in the range it must be in.
type flagRange struct {
	flag  string
	value any
	ok    bool
	want  string
}

// rangeErrors is an error per flag out of its range, each naming the flag, its value and the range.
func rangeErrors(checks []flagRange) error {
	var errs []error
	for _, c := range checks {
		if !c.ok {
			errs = append(errs, fmt.Errorf("--%s %v: %s", c.flag, c.value, c.want))
		}
	}
	return errors.Join(errs...)
}

// within: v is a number (not NaN) in [lo, hi].
func within(v, lo, hi float64) bool { return !math.IsNaN(v) && v >= lo && v <= hi }

// finite: v is a number, not NaN or infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// validateRanges refuses the numeric and duration flags of the process, the recommender, Prometheus and the
// updater outside their ranges (negative durations, zero intervals, NaN), naming each flag.
func (o *runOptions) validateRanges() error {
	r, u, p := o.recommender, o.updater, o.prometheus
	return rangeErrors([]flagRange{
		{"kube-api-qps", o.kubeAPIQPS, o.kubeAPIQPS > 0 && within(o.kubeAPIQPS, 0, math.MaxFloat32), "must be a positive rate (queries per second)"},
		{"graceful-shutdown-timeout", o.shutdownTimeout, o.shutdownTimeout >= 0, "must not be negative (0: stop at once)"},
		{"webhook-port", o.webhookPort, o.webhookPort >= 1 && o.webhookPort <= 65535, "must be a port in 1..65535"},
		{"checkpoints-timeout", r.CheckpointBudget, r.CheckpointBudget > 0, "must be positive, e.g. 10s"},
		{"checkpoints-gc-interval", r.CheckpointGCInterval, r.CheckpointGCInterval > 0, "must be positive, e.g. 10m"},
		{"hvpa-low-confidence-days", o.hvpaLowConfidence, o.hvpaLowConfidence > 0 && within(o.hvpaLowConfidence, 0, 365),
			"must be above 0 and at most 365 (a fraction such as 0.25 is 6 hours)"},
		{"history-length", p.HistoryLength, p.HistoryLength > 0, "must be positive, e.g. 8d"},
		{"history-resolution", p.Resolution, p.Resolution > 0 && p.Resolution <= p.HistoryLength, "must be positive and at most --history-length, e.g. 1h"},
		{"pod-update-threshold", u.UpdateThreshold, within(u.UpdateThreshold, 0, math.MaxFloat64), "must be a fraction of at least 0, e.g. 0.1"},
		{"eviction-tolerance", u.EvictionTolerance, within(u.EvictionTolerance, 0, 1), "must be a fraction in [0, 1]"},
		{"eviction-rate-limit", u.EvictionRateLimit, finite(u.EvictionRateLimit), "must be a number of evictions per second (0 or less: unlimited)"},
		{"eviction-rate-burst", u.EvictionBurst, u.EvictionBurst >= 1, "must be at least 1"},
		{"min-replicas", u.MinReplicas, u.MinReplicas >= 0, "must not be negative"},
		{"pod-min-age", u.MinPodAge, u.MinPodAge >= 0, "must not be negative"},
		{"oom-window", u.OOMWindow, u.OOMWindow >= 0, "must not be negative"},
		{"in-place-deferred-timeout", u.DeferredTimeout, u.DeferredTimeout > 0, "must be positive, e.g. 5m"},
		{"in-place-in-progress-timeout", u.InProgressTimeout, u.InProgressTimeout > 0, "must be positive, e.g. 1h"},
		{"update-loop-window", u.LoopWindow, u.LoopWindow >= 0, "must not be negative (0: no loop detection)"},
		{"admission-lease-max-age", u.AdmissionLeaseMaxAge, u.AdmissionLeaseMaxAge > 0, "must be positive, e.g. 1m"},
	})
}

// ranges refuses the model flags outside the ranges recommender.Config.Validate allows, by the flag's name
// (Validate names the configuration's fields).
func (m *modelFlags) ranges() error {
	pct := func(v float64) bool { return v > 0 && within(v, 0, 1) }
	const inPct = "must be a percentile in (0, 1], e.g. 0.9"
	c := m.cfg
	return rangeErrors([]flagRange{
		{"recommendation-margin-fraction", c.SafetyMargin, within(c.SafetyMargin, 0, recommender.MaxSafetyMargin), fmt.Sprintf("must be a fraction in [0, %d]", recommender.MaxSafetyMargin)},
		{"pod-recommendation-min-cpu-millicores", m.podMinCPUMilli, within(m.podMinCPUMilli, 0, recommender.MaxResourceAmount), "must be a number of millicores of at least 0"},
		{"pod-recommendation-min-memory-mb", m.podMinMemoryMB, within(m.podMinMemoryMB, 0, recommender.MaxResourceAmount/(1<<20)), "must be a number of MiB of at least 0"},
		{"target-cpu-percentile", m.targetCPU, pct(m.targetCPU), inPct},
		{"target-memory-percentile", m.targetMemory, pct(m.targetMemory), inPct},
		{"recommendation-lower-bound-cpu-percentile", m.lowerCPU, pct(m.lowerCPU), inPct},
		{"recommendation-lower-bound-memory-percentile", m.lowerMemory, pct(m.lowerMemory), inPct},
		{"recommendation-upper-bound-cpu-percentile", m.upperCPU, pct(m.upperCPU), inPct},
		{"recommendation-upper-bound-memory-percentile", m.upperMemory, pct(m.upperMemory), inPct},
		{"cpu-histogram-decay-half-life", c.CPUHalfLife, c.CPUHalfLife > 0, "must be positive, e.g. 24h"},
		{"memory-histogram-decay-half-life", c.MemoryHalfLife, c.MemoryHalfLife > 0, "must be positive, e.g. 24h"},
		{"memory-aggregation-interval", c.MemoryAggregationInterval, c.MemoryAggregationInterval > 0, "must be positive, e.g. 24h"},
		{"memory-aggregation-interval-count", m.memoryAggregationCount, m.memoryAggregationCount >= 1, "must be at least 1"},
		{"oom-bump-up-ratio", c.OOMBumpUpRatio, within(c.OOMBumpUpRatio, 1, recommender.MaxOOMBumpUpRatio), fmt.Sprintf("must be a number in [1, %d]", recommender.MaxOOMBumpUpRatio)},
		{"oom-min-bump-up-bytes", c.OOMMinBumpUp, within(c.OOMMinBumpUp, 0, recommender.MaxOOMMinBumpUp), "must be a number of bytes in [0, 1Ti]"},
		{"round-cpu-millicores", m.roundCPU, m.roundCPU >= 1, "must be at least 1"},
		{"round-memory-bytes", m.roundMemory, m.roundMemory >= 1, "must be at least 1"},
	})
}
