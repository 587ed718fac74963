package recommender

import (
	"fmt"
	"math"
	"time"
)

// Model holds the histogram options of one configuration; aggregates and container states are made from it.
type Model struct {
	Config    Config
	cpuOpts   HistogramOptions
	memOpts   HistogramOptions
	cpuWeight float64
}

// NewModelOrDefaults is NewModel of *cfg, or of Defaults() when cfg is nil (a simulator's options leave the
// configuration out to mean upstream's defaults). The configuration used is the model's Config.
func NewModelOrDefaults(cfg *Config) (*Model, error) {
	if cfg == nil {
		return NewModel(Defaults())
	}
	return NewModel(*cfg)
}

// NewModel validates cfg and prepares the histogram options.
func NewModel(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cpu, err := NewExponentialOptions(cfg.CPUMax, cfg.CPUFirstBucket, cfg.CPUBucketRatio, cfg.Epsilon)
	if err != nil {
		return nil, err
	}
	mem, err := NewExponentialOptions(cfg.MemoryMax, cfg.MemoryFirstBucket, cfg.MemoryBucketRatio, cfg.Epsilon)
	if err != nil {
		return nil, err
	}
	return &Model{Config: cfg, cpuOpts: cpu, memOpts: mem, cpuWeight: cfg.CPUSampleWeight}, nil
}

// Aggregate is the usage history of one container name across the pods of one workload (or one
// (namespace, container name, pod labels) group): a decaying CPU histogram, a decaying histogram of memory
// peaks, and the CPU sample span and count that make the confidence.
type Aggregate struct {
	CPU, Memory             DecayingHistogram
	FirstSample, LastSample time.Time
	TotalSamples            int
	LastUpdate              time.Time // any sample, for expiry
}

// NewAggregate returns an empty aggregate.
func (m *Model) NewAggregate() *Aggregate {
	return &Aggregate{
		CPU:    DecayingHistogram{Histogram: Histogram{opts: m.cpuOpts}, halfLife: m.Config.CPUHalfLife},
		Memory: DecayingHistogram{Histogram: Histogram{opts: m.memOpts}, halfLife: m.Config.MemoryHalfLife},
	}
}

// Merge adds other's history to a (for a VPA whose selector matches several aggregates).
func (a *Aggregate) Merge(other *Aggregate) {
	a.CPU.Merge(&other.CPU)
	a.Memory.Merge(&other.Memory)
	if !other.FirstSample.IsZero() && (a.FirstSample.IsZero() || other.FirstSample.Before(a.FirstSample)) {
		a.FirstSample = other.FirstSample
	}
	if other.LastSample.After(a.LastSample) {
		a.LastSample = other.LastSample
	}
	if other.LastUpdate.After(a.LastUpdate) {
		a.LastUpdate = other.LastUpdate
	}
	a.TotalSamples += other.TotalSamples
}

// IsEmpty reports whether the aggregate has no history at all: no CPU sample and no memory peak. An OOM kill
// before the container's first CPU sample is history: it makes a memory recommendation (see HasCPU).
func (a *Aggregate) IsEmpty() bool { return a.TotalSamples == 0 && a.Memory.IsEmpty() }

// HasCPU reports whether the aggregate has a CPU sample; without one it recommends memory only.
func (a *Aggregate) HasCPU() bool { return a.TotalSamples > 0 }

// Expired reports whether the aggregate had no sample for the memory history (8 days by default).
func (m *Model) Expired(a *Aggregate, now time.Time) bool {
	return now.Sub(a.LastUpdate) > m.Config.MemoryHistory()
}

// Confidence is min(sample span in days, sample count / 1440): roughly the days of history.
func (a *Aggregate) Confidence() float64 {
	span := float64(a.LastSample.Sub(a.FirstSample)) / float64(24*time.Hour) // upstream's arithmetic
	return min(span, float64(a.TotalSamples)/(60*24))
}

// Container is the state of one container of one pod: it feeds its aggregate and keeps the pod-level
// memory peak of the current aggregation window.
type Container struct {
	agg        *Aggregate
	lastCPU    time.Time
	lastMemory time.Time
	windowEnd  time.Time
	memPeak    float64 // usage peak of the current window
	oomPeak    float64 // OOM-derived peak of the current window
	// MemoryRequest is the container's last known memory request (bytes), for OOMs without one.
	MemoryRequest float64
}

// NewContainer returns the state of a container that feeds agg.
func (m *Model) NewContainer(agg *Aggregate) *Container { return &Container{agg: agg} }

// Aggregate returns the aggregate the container feeds.
func (c *Container) Aggregate() *Aggregate { return c.agg }

// moveTo makes the container feed agg from now on; its open memory window's peak stays in the aggregate it
// fed, and the window's next sample is agg's first peak of it.
func (c *Container) moveTo(agg *Aggregate) {
	c.agg = agg
	c.memPeak, c.oomPeak = 0, 0
}

// AddCPU adds a CPU sample (cores, averaged over the window starting at t). Samples not newer than the
// container's last CPU sample are rejected.
func (m *Model) AddCPU(c *Container, t time.Time, cores float64) bool {
	return m.AddCPUSpan(c, t, cores, time.Minute)
}

// AddCPUSpan adds a CPU sample that is the mean over span (a history step, e.g. an hour of Prometheus'
// rate): the histogram gets it once, and the confidence counts it as the per-minute samples it stands for,
// so that history read at a coarse step is as confident as the same days of live samples.
func (m *Model) AddCPUSpan(c *Container, t time.Time, cores float64, span time.Duration) bool {
	if cores < 0 || (!c.lastCPU.IsZero() && !t.After(c.lastCPU)) {
		return false
	}
	c.lastCPU = t
	a := c.agg
	a.CPU.AddSample(cores, m.cpuWeight, t)
	a.TotalSamples += max(1, int(span/time.Minute))
	if a.FirstSample.IsZero() || t.Before(a.FirstSample) {
		a.FirstSample = t
	}
	if t.After(a.LastSample) {
		a.LastSample = t
	}
	if t.After(a.LastUpdate) {
		a.LastUpdate = t
	}
	return true
}

// AddMemory adds a memory working-set sample (bytes) at t. Samples older than the last one are rejected.
func (m *Model) AddMemory(c *Container, t time.Time, bytes float64) bool {
	if bytes < 0 || t.Before(c.lastMemory) {
		return false
	}
	c.lastMemory = t
	m.addPeak(c, t, bytes, false)
	return true
}

// RecordOOM records an OOM kill at t with the container's memory request at that time (bytes; 0 means the
// last known request): memory needed = Config.OOMBump(used), used = max(request, current window's usage
// peak). It counts as a peak of the window that later smaller OOMs do not lower. An
// OOM older than one aggregation interval before the container's last memory sample is rejected.
func (m *Model) RecordOOM(c *Container, t time.Time, request float64) error {
	if !c.lastMemory.IsZero() && t.Before(c.lastMemory.Add(-m.Config.MemoryAggregationInterval)) {
		return fmt.Errorf("OOM at %s is older than one aggregation interval before the last memory sample (%s)",
			t.Format(time.RFC3339), c.lastMemory.Format(time.RFC3339))
	}
	if request <= 0 {
		request = c.MemoryRequest
	}
	used := max(request, c.memPeak) // the usage peak before the OOM (even if the OOM opens a new window)
	m.addPeak(c, t, m.Config.OOMBump(used), true)
	return nil
}

// rollWindow opens the window holding t (the first window ends one interval after the first sample; later
// ones follow on whole intervals) and forgets the previous window's peaks, which stay in the histogram.
func (m *Model) rollWindow(c *Container, t time.Time) {
	iv := m.Config.MemoryAggregationInterval
	if c.windowEnd.IsZero() {
		c.windowEnd = t.Add(iv)
		return
	}
	if !t.Before(c.windowEnd) {
		c.windowEnd = c.windowEnd.Add(t.Sub(c.windowEnd).Truncate(iv) + iv)
		c.memPeak, c.oomPeak = 0, 0
	}
}

// addPeak keeps the histogram holding the window's peak, max(usage peak, OOM peak), with weight 1 at the
// window end. A sample replaces the peak only when it beats it; then it becomes the usage peak or the OOM peak
// (as upstream: a usage sample below an earlier OOM's bump does not raise the usage peak).
func (m *Model) addPeak(c *Container, t time.Time, v float64, oom bool) {
	m.rollWindow(c, t)
	old := max(c.memPeak, c.oomPeak)
	if v <= old {
		return
	}
	if oom {
		c.oomPeak = v
	} else {
		c.memPeak = v
	}
	a := c.agg
	if old > 0 {
		a.Memory.SubtractSample(old, 1, c.windowEnd)
	}
	a.Memory.AddSample(v, 1, c.windowEnd)
	if t.After(a.LastUpdate) {
		a.LastUpdate = t
	}
}

// OpenWindowPeak is the peak of the container's still-open memory window (what a checkpoint subtracts so that
// a restore does not count it twice) and that window's end.
func (c *Container) OpenWindowPeak() (float64, time.Time) {
	return max(c.memPeak, c.oomPeak), c.windowEnd
}

// Estimate is a per-container estimate in whole millicores and bytes.
type Estimate struct {
	CPUMilli, MemoryBytes int64
}

// Estimates are the target, lower and upper bound of one container.
type Estimates struct {
	Target, LowerBound, UpperBound Estimate
}

// scaleAmount multiplies a whole amount and truncates to a whole amount again, as upstream's ScaleResource
// does; beyond MaxResourceAmount (or for an infinite factor) it is MaxResourceAmount.
func scaleAmount(a int64, f float64) int64 {
	v := float64(a) * f
	if math.IsNaN(v) || v >= MaxResourceAmount {
		return MaxResourceAmount
	}
	if v <= 0 {
		return 0
	}
	return int64(v)
}

// amount truncates a value (millicores or bytes) to a whole amount, capped at MaxResourceAmount.
func amount(v float64) int64 { return scaleAmount(1, v) }

// Estimate computes the estimates of an aggregate for a pod of numContainers scaled containers, with the
// upstream arithmetic: every step (percentile, safety margin, confidence multiplier) is truncated to whole
// millicores and bytes; each estimate is at least the pod minimum split evenly (also truncated).
func (m *Model) Estimate(a *Aggregate, numContainers int) Estimates {
	floor := m.Config.PodMinShare(numContainers)
	return m.estimate(a, floor.CPUMilli, floor.MemoryBytes)
}

// estimate computes the estimates of an aggregate, each at least minCPU millicores and minMem bytes.
func (m *Model) estimate(a *Aggregate, minCPU, minMem int64) Estimates {
	cfg := m.Config
	conf := a.Confidence()
	cpuLo, cpuTarget, cpuUp := a.CPU.Percentiles3(cfg.LowerBoundPercentile, cfg.TargetPercentile, cfg.UpperBoundPercentile)
	memLo, memTarget, memUp := a.Memory.Percentiles3(cfg.LowerBoundPercentile, cfg.TargetPercentile, cfg.UpperBoundPercentile)
	est := func(cpuCores, memBytes, mult, exp float64, withConf bool) Estimate {
		// the margin is added truncated (upstream's arithmetic: x + trunc(x * margin), which trunc(x * (1 +
		// margin)) misses by one where the float product falls just below a whole amount)
		c, mb := amount(cpuCores*1000), amount(memBytes)
		c, mb = c+scaleAmount(c, cfg.SafetyMargin), mb+scaleAmount(mb, cfg.SafetyMargin)
		if withConf {
			f := math.Pow(1+mult/conf, exp)
			c, mb = scaleAmount(c, f), scaleAmount(mb, f)
		}
		return Estimate{max(c, minCPU), max(mb, minMem)}
	}
	return Estimates{
		Target:     est(cpuTarget, memTarget, 0, 0, false),
		LowerBound: est(cpuLo, memLo, cfg.LowerBoundMultiplier, cfg.LowerBoundExponent, true),
		UpperBound: est(cpuUp, memUp, cfg.UpperBoundMultiplier, cfg.UpperBoundExponent, true),
	}
}
