package recommender

import (
	"fmt"
	"math"
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
	if cp.TotalWeight < 0 {
		return fmt.Errorf("checkpoint: totalWeight %v is negative", cp.TotalWeight)
	}
	sum := 0.0
	for b, w := range cp.BucketWeights {
		if b < 0 || b >= h.opts.NumBuckets() {
			return fmt.Errorf("checkpoint: bucket %d is outside 0..%d", b, h.opts.NumBuckets()-1)
		}
		sum += float64(w)
	}
	h.w, h.lo, h.total = h.w[:0], 0, 0
	h.reference = cp.Reference
	if sum == 0 || cp.TotalWeight == 0 {
		return nil
	}
	f := cp.TotalWeight / sum
	for b, w := range cp.BucketWeights {
		if w > 0 {
			h.addToBucket(b, float64(w)*f)
		}
	}
	return nil
}
