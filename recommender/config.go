package recommender

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Config holds the model's parameters. Defaults() gives the values of the upstream VPA model; every field
// can be overridden per object (see Validate for the allowed ranges).
type Config struct {
	// CPU histogram, in cores: first bucket size, bucket growth ratio, largest value.
	CPUFirstBucket, CPUBucketRatio, CPUMax float64
	// Memory histogram, in bytes.
	MemoryFirstBucket, MemoryBucketRatio, MemoryMax float64
	// Epsilon is the weight below which a bucket counts as empty.
	Epsilon float64
	// CPUHalfLife and MemoryHalfLife: a sample this much newer weighs twice as much.
	CPUHalfLife, MemoryHalfLife time.Duration
	// CPUSampleWeight is the weight of one CPU sample.
	CPUSampleWeight float64
	// MemoryAggregationInterval is the window of one memory peak; MemoryAggregationIntervalCount windows make
	// the memory history (and an aggregate without samples for that long expires).
	MemoryAggregationInterval      time.Duration
	MemoryAggregationIntervalCount int
	// OOM: memory needed = max(used + OOMMinBumpUp, used x OOMBumpUpRatio), used = max(request, window peak).
	OOMBumpUpRatio float64
	OOMMinBumpUp   float64 // bytes
	// Percentiles of the target, lower and upper bound, and the safety margin added to each (0.15 = +15%).
	TargetPercentile, LowerBoundPercentile, UpperBoundPercentile float64
	SafetyMargin                                                 float64
	// Confidence multipliers: bound x (1 + multiplier/confidence)^exponent.
	LowerBoundMultiplier, LowerBoundExponent float64
	UpperBoundMultiplier, UpperBoundExponent float64
	// PodMinCPU (cores) and PodMinMemory (bytes) are the smallest recommendation for a whole pod, split evenly
	// across its containers (PodMinShare).
	PodMinCPU, PodMinMemory float64
	// RoundCPUMillicores and RoundMemoryBytes round every recommended amount up to a multiple (1: none).
	RoundCPUMillicores, RoundMemoryBytes int64
}

// Defaults returns the upstream VPA model's parameters.
func Defaults() Config {
	return Config{
		CPUFirstBucket: 0.01, CPUBucketRatio: 1.05, CPUMax: 1000,
		MemoryFirstBucket: 1e7, MemoryBucketRatio: 1.05, MemoryMax: 1e12,
		Epsilon:     1e-4,
		CPUHalfLife: 24 * time.Hour, MemoryHalfLife: 24 * time.Hour,
		CPUSampleWeight:                0.1,
		MemoryAggregationInterval:      24 * time.Hour,
		MemoryAggregationIntervalCount: 8,
		OOMBumpUpRatio:                 1.2,
		OOMMinBumpUp:                   100 << 20,
		TargetPercentile:               0.9, LowerBoundPercentile: 0.5, UpperBoundPercentile: 0.95,
		SafetyMargin:         0.15,
		LowerBoundMultiplier: 0.001, LowerBoundExponent: -2,
		UpperBoundMultiplier: 1, UpperBoundExponent: 1,
		PodMinCPU: 0.025, PodMinMemory: 250 << 20,
		RoundCPUMillicores: 1, RoundMemoryBytes: 1,
	}
}

// Upper limits of the parameters users set (flags, override annotations).
const (
	MaxOOMBumpUpRatio = 10
	MaxOOMMinBumpUp   = 1 << 40 // 1Ti
	MaxSafetyMargin   = 10
)

// Validate reports every parameter outside its range, by name.
func (c Config) Validate() error {
	var errs []error
	check := func(ok bool, name string, v any, want string) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s %v: %s", name, v, want))
		}
	}
	for name, f := range map[string]float64{"cpuFirstBucket": c.CPUFirstBucket, "memoryFirstBucket": c.MemoryFirstBucket, "cpuBucketRatio": c.CPUBucketRatio,
		"memoryBucketRatio": c.MemoryBucketRatio, "cpuMax": c.CPUMax, "memoryMax": c.MemoryMax, "epsilon": c.Epsilon, "cpuSampleWeight": c.CPUSampleWeight,
		"oomBumpUpRatio": c.OOMBumpUpRatio, "oomMinBumpUp": c.OOMMinBumpUp, "targetPercentile": c.TargetPercentile,
		"lowerBoundPercentile": c.LowerBoundPercentile, "upperBoundPercentile": c.UpperBoundPercentile, "safetyMargin": c.SafetyMargin,
		"lowerBoundMultiplier": c.LowerBoundMultiplier, "lowerBoundExponent": c.LowerBoundExponent, "upperBoundMultiplier": c.UpperBoundMultiplier,
		"upperBoundExponent": c.UpperBoundExponent, "podMinCPU": c.PodMinCPU, "podMinMemory": c.PodMinMemory} {
		check(!math.IsNaN(f) && !math.IsInf(f, 0), name, f, "must be a finite number")
	}
	// the largest values that still make sense; beyond them a recommendation overflows or pins
	check(c.OOMBumpUpRatio <= MaxOOMBumpUpRatio, "oomBumpUpRatio", c.OOMBumpUpRatio, fmt.Sprintf("must be at most %d", MaxOOMBumpUpRatio))
	check(c.OOMMinBumpUp <= MaxOOMMinBumpUp, "oomMinBumpUp", c.OOMMinBumpUp, "must be at most 1Ti")
	check(c.SafetyMargin <= MaxSafetyMargin, "safetyMargin", c.SafetyMargin, fmt.Sprintf("must be at most %d (+%d%%)", MaxSafetyMargin, MaxSafetyMargin*100))
	check(c.CPUFirstBucket > 0 && c.MemoryFirstBucket > 0, "first bucket size", []float64{c.CPUFirstBucket, c.MemoryFirstBucket}, "must be positive")
	check(c.CPUBucketRatio > 1 && c.MemoryBucketRatio > 1, "bucket ratio", []float64{c.CPUBucketRatio, c.MemoryBucketRatio}, "must be greater than 1")
	check(c.CPUMax > c.CPUFirstBucket && c.MemoryMax > c.MemoryFirstBucket, "histogram max", []float64{c.CPUMax, c.MemoryMax}, "must exceed the first bucket")
	check(c.Epsilon > 0, "epsilon", c.Epsilon, "must be positive")
	check(c.CPUHalfLife > 0 && c.MemoryHalfLife > 0, "half-life", []time.Duration{c.CPUHalfLife, c.MemoryHalfLife}, "must be positive")
	check(c.CPUSampleWeight > 0, "cpuSampleWeight", c.CPUSampleWeight, "must be positive")
	check(c.MemoryAggregationInterval > 0, "memoryAggregationInterval", c.MemoryAggregationInterval, "must be positive")
	check(c.MemoryAggregationIntervalCount > 0, "memoryAggregationIntervalCount", c.MemoryAggregationIntervalCount, "must be at least 1")
	check(c.OOMBumpUpRatio >= 1, "oomBumpUpRatio", c.OOMBumpUpRatio, "must be at least 1")
	check(c.OOMMinBumpUp >= 0, "oomMinBumpUp", c.OOMMinBumpUp, "must not be negative")
	for name, p := range map[string]float64{"targetPercentile": c.TargetPercentile, "lowerBoundPercentile": c.LowerBoundPercentile, "upperBoundPercentile": c.UpperBoundPercentile} {
		check(p > 0 && p <= 1, name, p, "must be in (0, 1]")
	}
	check(c.LowerBoundPercentile <= c.TargetPercentile && c.TargetPercentile <= c.UpperBoundPercentile, "percentiles",
		[]float64{c.LowerBoundPercentile, c.TargetPercentile, c.UpperBoundPercentile}, "must be ordered lowerBound <= target <= upperBound")
	check(c.SafetyMargin >= 0, "safetyMargin", c.SafetyMargin, "must not be negative")
	check(c.RoundCPUMillicores >= 1 && c.RoundMemoryBytes >= 1, "rounding multiples", []int64{c.RoundCPUMillicores, c.RoundMemoryBytes}, "must be at least 1")
	check(c.PodMinCPU >= 0 && c.PodMinMemory >= 0, "pod minimum", []float64{c.PodMinCPU, c.PodMinMemory}, "must not be negative")
	return errors.Join(errs...)
}

// OOMBump is the memory an OOM kill asks for, given the memory the container used (bytes): max(used +
// OOMMinBumpUp, used x OOMBumpUpRatio). It is the one bump rule: the per-pod model (Model.RecordOOM), the
// Hvpas' workload totals (WorkloadTotal.RecordPodOOM) and the adaptive model all call it.
func (c Config) OOMBump(used float64) float64 {
	return max(used+c.OOMMinBumpUp, used*c.OOMBumpUpRatio)
}

// MemoryHistory is how long memory peaks are kept: interval x count (8 days by default).
func (c Config) MemoryHistory() time.Duration {
	return c.MemoryAggregationInterval * time.Duration(c.MemoryAggregationIntervalCount)
}

// PodMinShare is one container's share of the pod minimum (PodMinCPU, PodMinMemory) in a pod of numContainers
// recommended containers (at least 1): split evenly, each step truncated to whole millicores and bytes, as
// upstream's recommender does.
func (c Config) PodMinShare(numContainers int) Amounts {
	n := float64(max(numContainers, 1))
	return Amounts{CPUMilli: scaleAmount(amount(c.PodMinCPU*1000), 1/n), MemoryBytes: scaleAmount(amount(c.PodMinMemory), 1/n)}
}
