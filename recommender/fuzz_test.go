package recommender

import (
	"math"
	"testing"
	"time"
)

// FuzzWithOverrides: any annotation values give either an error or a configuration that validates, with
// every parameter finite, and a model whose OOM bump is finite.
func FuzzWithOverrides(f *testing.F) {
	f.Add("1.2", "100Mi", "24h", "8", "0.9", "0.15")
	f.Add("Inf", "8Ei", "-1h", "0", "NaN", "infinity")
	f.Add("1e308", "1e19", "9999999h", "2147483648", "1e-300", "1e300")
	f.Fuzz(func(t *testing.T, ratio, bump, interval, count, percentile, margin string) {
		c, err := WithOverrides(Defaults(), map[string]string{AnnotationOOMBumpUpRatio: ratio, AnnotationOOMMinBumpUp: bump,
			AnnotationMemoryAggregationInterval: interval, AnnotationMemoryAggregationIntervalCount: count,
			AnnotationTargetPercentile: percentile, AnnotationSafetyMargin: margin})
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("accepted overrides do not validate: %v", err)
		}
		m, err := NewModel(c)
		if err != nil {
			t.Fatalf("accepted overrides make no model: %v", err)
		}
		if got := m.Config.OOMBump(1 << 40); math.IsNaN(got) || math.IsInf(got, 0) || got < 1<<40 {
			t.Fatalf("OOM bump of 1Ti: %v", got)
		}
	})
}

// FuzzLoadAggregate: any checkpoint is refused or restores an aggregate whose recommendation is finite and
// not negative.
func FuzzLoadAggregate(f *testing.F) {
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	f.Add(int64(0), int64(0), 3, uint32(10000), 1.5, 0, uint32(10000), 2.0, 10)
	f.Add(int64(1<<40), int64(-1<<40), 500, uint32(1), math.Inf(1), -1, uint32(0), math.NaN(), -5)
	f.Fuzz(func(t *testing.T, cpuRef, memRef int64, cpuBucket int, cpuWeight uint32, cpuTotal float64, memBucket int, memWeight uint32, memTotal float64, samples int) {
		m, err := NewModel(Defaults())
		if err != nil {
			t.Fatal(err)
		}
		cp := AggregateCheckpoint{
			CPU:         HistogramCheckpoint{Reference: now.Add(time.Duration(cpuRef)), BucketWeights: map[int]uint32{cpuBucket: cpuWeight}, TotalWeight: cpuTotal},
			Memory:      HistogramCheckpoint{Reference: now.Add(time.Duration(memRef)), BucketWeights: map[int]uint32{memBucket: memWeight}, TotalWeight: memTotal},
			FirstSample: now.Add(-time.Hour), LastSample: now, TotalSamples: samples,
		}
		a, err := m.LoadAggregate(cp, now)
		if err != nil {
			return
		}
		r, _ := m.Recommend(a, 1, DefaultPolicy())
		for _, x := range []int64{r.Target.CPUMilli, r.Target.MemoryBytes, r.LowerBound.CPUMilli, r.UpperBound.MemoryBytes} {
			if x < -1 {
				t.Fatalf("a restored checkpoint recommends %+v", r)
			}
		}
	})
}
