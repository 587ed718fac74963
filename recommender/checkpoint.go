package recommender

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// maxCheckpointWeight is the weight of the largest bucket in a checkpoint; the others are scaled with it.
const maxCheckpointWeight uint32 = 10000

// HistogramCheckpoint is the compact form of a decaying histogram: bucket weights scaled so that the largest
// is 10000 (empty buckets left out), the true total weight, and the reference time. It maps one to one onto
// VerticalPodAutoscalerCheckpoint's cpuHistogram and memoryHistogram.
type HistogramCheckpoint struct {
	Reference     time.Time
	BucketWeights map[int]uint32
	TotalWeight   float64
}

// SaveCheckpoint encodes h.
func (h *DecayingHistogram) SaveCheckpoint() HistogramCheckpoint {
	cp := HistogramCheckpoint{Reference: h.reference, BucketWeights: map[int]uint32{}, TotalWeight: h.total}
	if h.IsEmpty() {
		cp.TotalWeight = 0
		return cp
	}
	maxW := 0.0
	h.buckets(func(_ int, w float64) { maxW = max(maxW, w) })
	f := float64(maxCheckpointWeight) / maxW
	h.buckets(func(b int, w float64) {
		if v := uint32(math.Round(w * f)); v > 0 {
			cp.BucketWeights[b] = v
		}
	})
	return cp
}

// LoadCheckpoint replaces h's content with cp: the bucket weights are rescaled so that they sum to the
// checkpoint's total weight.
func (h *DecayingHistogram) LoadCheckpoint(cp HistogramCheckpoint) error {
	if cp.TotalWeight < 0 || math.IsNaN(cp.TotalWeight) || math.IsInf(cp.TotalWeight, 0) {
		return fmt.Errorf("checkpoint: totalWeight %v is not a finite weight of at least 0", cp.TotalWeight)
	}
	keys := make([]int, 0, len(cp.BucketWeights))
	sum := 0.0
	for b, w := range cp.BucketWeights {
		if b < 0 || b >= h.opts.NumBuckets() {
			return fmt.Errorf("checkpoint: bucket %d is outside 0..%d", b, h.opts.NumBuckets()-1)
		}
		keys = append(keys, b)
		sum += float64(w)
	}
	sort.Ints(keys) // the same sums in the same order on every load
	h.w, h.lo, h.total = h.w[:0], 0, 0
	h.reference = cp.Reference
	if sum == 0 || cp.TotalWeight == 0 {
		return nil
	}
	f := cp.TotalWeight / sum
	for _, b := range keys {
		if w := cp.BucketWeights[b]; w > 0 {
			h.addToBucket(b, float64(w)*f)
		}
	}
	return nil
}

// AggregateCheckpoint is everything a VerticalPodAutoscalerCheckpoint holds for one container aggregate.
type AggregateCheckpoint struct {
	CPU, Memory             HistogramCheckpoint
	FirstSample, LastSample time.Time
	TotalSamples            int
}

// SaveAggregate encodes a at now. feeding are the pod containers whose samples a holds (directly, or through
// a Merge); their memory windows still open at now are left out: after a restart their peaks come back from
// new samples, so saving them would count them twice. Closed windows stay.
func (m *Model) SaveAggregate(a *Aggregate, feeding []*Container, now time.Time) AggregateCheckpoint {
	mem := a.Memory
	mem.Histogram.w = append([]float64(nil), a.Memory.w...)
	for _, c := range feeding {
		if peak, end := c.OpenWindowPeak(); peak > 0 && now.Before(end) {
			mem.SubtractSample(peak, 1, end)
		}
	}
	return AggregateCheckpoint{
		CPU: a.CPU.SaveCheckpoint(), Memory: mem.SaveCheckpoint(),
		FirstSample: a.FirstSample, LastSample: a.LastSample, TotalSamples: a.TotalSamples,
	}
}

// MaxClockSkew is how far in the future a checkpoint's times may lie (clocks of two recommenders apart).
const MaxClockSkew = time.Hour

// MaxSampleSkew is how far ahead of the recommender's clock a usage sample may be dated (a node's clock ahead
// of the recommender's).
const MaxSampleSkew = time.Minute

// SampleTime is the time a usage sample dated at, read at now, is recorded at: at itself, now when at is
// ahead of now by at most MaxSampleSkew, and refused (false) beyond that. A sample dated in the future would
// date its histogram weight there, outweighing every real sample, and make the container refuse every later
// sample until that date (samples must be newer than the last one).
func SampleTime(at, now time.Time) (time.Time, bool) {
	if !at.After(now) {
		return at, true
	}
	return now, !at.After(now.Add(MaxSampleSkew))
}

// LoadAggregate restores an aggregate from a checkpoint read at now. A checkpoint dated in the future (its
// samples beyond now + MaxClockSkew, a histogram's reference beyond what a memory window's end and the
// half-life steps allow) is refused: a decaying histogram referenced far ahead would outweigh every real
// sample and pin the target.
func (m *Model) LoadAggregate(cp AggregateCheckpoint, now time.Time) (*Aggregate, error) {
	if cp.TotalSamples < 0 {
		return nil, fmt.Errorf("checkpoint: totalSamplesCount %d is negative", cp.TotalSamples)
	}
	// samples are never ahead of now; a histogram's reference may be: memory peaks count at their window's
	// end, and a reference moves in steps of the half-life
	samples := now.Add(MaxClockSkew)
	reference := samples.Add(m.Config.MemoryAggregationInterval + max(m.Config.CPUHalfLife, m.Config.MemoryHalfLife))
	for _, t := range []struct {
		field     string
		at, limit time.Time
	}{{"firstSampleStart", cp.FirstSample, samples}, {"lastSampleStart", cp.LastSample, samples},
		{"cpuHistogram.referenceTimestamp", cp.CPU.Reference, reference}, {"memoryHistogram.referenceTimestamp", cp.Memory.Reference, reference}} {
		if t.at.After(t.limit) {
			return nil, fmt.Errorf("checkpoint: %s %s is in the future (now %s): delete the checkpoint, or fix the clock of the recommender that wrote it",
				t.field, t.at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
		}
	}
	a := m.NewAggregate()
	if err := a.CPU.LoadCheckpoint(cp.CPU); err != nil {
		return nil, fmt.Errorf("cpuHistogram: %w", err)
	}
	if err := a.Memory.LoadCheckpoint(cp.Memory); err != nil {
		return nil, fmt.Errorf("memoryHistogram: %w", err)
	}
	a.FirstSample, a.LastSample, a.TotalSamples = cp.FirstSample, cp.LastSample, cp.TotalSamples
	a.LastUpdate = cp.LastSample
	return a, nil
}
