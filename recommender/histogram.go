package recommender

import (
	"fmt"
	"math"
)

// HistogramOptions define the buckets of a histogram: bucket i covers [Start(i), Start(i+1)).
type HistogramOptions interface {
	NumBuckets() int
	// Bucket returns the bucket holding value (values below the first boundary go to bucket 0, values above
	// the last to the last bucket).
	Bucket(value float64) int
	// Start returns the lower boundary of bucket i.
	Start(i int) float64
	// Epsilon is the weight below which a bucket (or the whole histogram) counts as empty.
	Epsilon() float64
}

type linearOptions struct {
	n       int
	size    float64
	epsilon float64
}

// NewLinearOptions returns buckets of equal size from 0 to maxValue.
func NewLinearOptions(maxValue, bucketSize, epsilon float64) (HistogramOptions, error) {
	if maxValue <= 0 || bucketSize <= 0 || epsilon <= 0 {
		return nil, fmt.Errorf("linear histogram: maxValue %v, bucketSize %v and epsilon %v must be positive", maxValue, bucketSize, epsilon)
	}
	return &linearOptions{n: int(math.Ceil(maxValue/bucketSize)) + 1, size: bucketSize, epsilon: epsilon}, nil
}

func (o *linearOptions) NumBuckets() int     { return o.n }
func (o *linearOptions) Epsilon() float64    { return o.epsilon }
func (o *linearOptions) Start(i int) float64 { return float64(i) * o.size }
func (o *linearOptions) Bucket(v float64) int {
	b := int(v / o.size)
	if b < 0 || v != v {
		return 0
	}
	return min(b, o.n-1)
}

type exponentialOptions struct {
	n        int
	first    float64
	ratio    float64
	logRatio float64
	epsilon  float64
	starts   []float64
}

// NewExponentialOptions returns buckets whose sizes grow by ratio: bucket i starts at
// first * (ratio^i - 1) / (ratio - 1), and the last bucket holds maxValue.
func NewExponentialOptions(maxValue, firstBucketSize, ratio, epsilon float64) (HistogramOptions, error) {
	if maxValue <= 0 || firstBucketSize <= 0 || ratio <= 1 || epsilon <= 0 {
		return nil, fmt.Errorf("exponential histogram: want maxValue > 0, firstBucketSize > 0, ratio > 1, epsilon > 0; got %v, %v, %v, %v",
			maxValue, firstBucketSize, ratio, epsilon)
	}
	o := &exponentialOptions{first: firstBucketSize, ratio: ratio, logRatio: math.Log(ratio), epsilon: epsilon}
	o.n = int(math.Ceil(math.Log(maxValue*(ratio-1)/firstBucketSize+1)/o.logRatio)) + 1
	o.starts = make([]float64, o.n+1)
	for i := range o.starts {
		o.starts[i] = firstBucketSize * (math.Pow(ratio, float64(i)) - 1) / (ratio - 1)
	}
	return o, nil
}

func (o *exponentialOptions) NumBuckets() int     { return o.n }
func (o *exponentialOptions) Epsilon() float64    { return o.epsilon }
func (o *exponentialOptions) Start(i int) float64 { return o.starts[i] }

// Bucket uses the upstream VPA formula floor(log(v (ratio-1) / first + 1) / log(ratio)) as it is, so that
// values on a bucket edge land where upstream puts them.
func (o *exponentialOptions) Bucket(v float64) int {
	if v < o.first || v != v {
		return 0
	}
	b := int(math.Floor(math.Log(v*(o.ratio-1)/o.first+1) / o.logRatio))
	return max(0, min(b, o.n-1))
}

// Histogram is a weighted histogram over fixed buckets. It stores only the weights of the buckets from the
// lowest to the highest non-empty one, so a container whose usage spans few buckets costs few bytes.
type Histogram struct {
	opts  HistogramOptions
	lo    int       // bucket index of weights[0]
	w     []float64 // weights of buckets lo .. lo+len(w)-1
	total float64
}

// NewHistogram returns an empty histogram over opts.
func NewHistogram(opts HistogramOptions) *Histogram { return &Histogram{opts: opts} }

// Options returns the bucket options.
func (h *Histogram) Options() HistogramOptions { return h.opts }

// AddSample adds weight to the bucket of value. Negative weights are ignored.
func (h *Histogram) AddSample(value, weight float64) {
	if weight <= 0 {
		return
	}
	h.addToBucket(h.opts.Bucket(value), weight)
}

func (h *Histogram) addToBucket(b int, weight float64) {
	switch {
	case len(h.w) == 0:
		h.lo = b
		h.w = append(h.w[:0], weight)
	case b < h.lo:
		grow := h.lo - b
		nw := make([]float64, len(h.w)+grow, len(h.w)+grow+2)
		copy(nw[grow:], h.w)
		nw[0] = weight
		h.w, h.lo = nw, b
	case b >= h.lo+len(h.w):
		for len(h.w) < b-h.lo {
			h.w = append(h.w, 0)
		}
		h.w = append(h.w, weight)
	default:
		h.w[b-h.lo] += weight
	}
	h.total += weight
}

// SubtractSample removes weight from the bucket of value (down to zero).
func (h *Histogram) SubtractSample(value, weight float64) {
	if weight <= 0 || len(h.w) == 0 {
		return
	}
	b := h.opts.Bucket(value)
	if b < h.lo || b >= h.lo+len(h.w) {
		return
	}
	i := b - h.lo
	weight = min(weight, h.w[i])
	h.w[i] -= weight
	h.total -= weight
	if h.w[i] < h.opts.Epsilon() {
		h.total -= h.w[i]
		h.w[i] = 0
	}
	h.trim()
}

// trim drops empty buckets at both ends.
func (h *Histogram) trim() {
	eps := h.opts.Epsilon()
	start, end := 0, len(h.w)
	for start < end && h.w[start] < eps {
		start++
	}
	for end > start && h.w[end-1] < eps {
		end--
	}
	if start == end {
		h.w, h.lo, h.total = h.w[:0], 0, 0
		return
	}
	if start > 0 || end < len(h.w) {
		h.w = append(h.w[:0], h.w[start:end]...)
		h.lo += start
	}
}

// IsEmpty reports whether the total weight is below epsilon.
func (h *Histogram) IsEmpty() bool { return h.total < h.opts.Epsilon() }

// TotalWeight is the sum of all bucket weights.
func (h *Histogram) TotalWeight() float64 { return h.total }

// Percentile returns the end of the bucket where the cumulative weight reaches p x total (the start for the
// last bucket), or 0 for an empty histogram. No interpolation.
func (h *Histogram) Percentile(p float64) float64 {
	if h.IsEmpty() {
		return 0
	}
	threshold := p * h.total
	sum := 0.0
	b := h.lo + len(h.w) - 1
	for i, w := range h.w {
		sum += w
		if sum >= threshold {
			b = h.lo + i
			break
		}
	}
	if b < h.opts.NumBuckets()-1 {
		return h.opts.Start(b + 1)
	}
	return h.opts.Start(b)
}

// Percentiles3 returns three percentiles (given in increasing order) in one pass over the buckets; each is
// what Percentile returns.
func (h *Histogram) Percentiles3(p0, p1, p2 float64) (float64, float64, float64) {
	if h.IsEmpty() {
		return 0, 0, 0
	}
	th := [3]float64{p0 * h.total, p1 * h.total, p2 * h.total}
	last := h.lo + len(h.w) - 1
	b := [3]int{last, last, last}
	k, sum := 0, 0.0
	for i, w := range h.w {
		sum += w
		for k < 3 && sum >= th[k] {
			b[k] = h.lo + i
			k++
		}
		if k == 3 {
			break
		}
	}
	end := func(x int) float64 {
		if x < h.opts.NumBuckets()-1 {
			return h.opts.Start(x + 1)
		}
		return h.opts.Start(x)
	}
	return end(b[0]), end(b[1]), end(b[2])
}

// Merge adds the weights of other (with the same options) to h.
func (h *Histogram) Merge(other *Histogram) {
	for i, w := range other.w {
		if w > 0 {
			h.addToBucket(other.lo+i, w)
		}
	}
}

// scale multiplies every weight by f.
func (h *Histogram) scale(f float64) {
	for i := range h.w {
		h.w[i] *= f
	}
	h.total *= f
	h.trim()
}

// buckets calls fn for every non-empty bucket.
func (h *Histogram) buckets(fn func(bucket int, weight float64)) {
	for i, w := range h.w {
		if w >= h.opts.Epsilon() {
			fn(h.lo+i, w)
		}
	}
}
