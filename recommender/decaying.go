package recommender

import (
	"math"
	"time"
)

// maxDecayExponent: when a sample is more than this many half-lives after the reference, the reference moves
// forward (to a whole multiple of the half-life) and every weight is rescaled, so that weights stay finite.
const maxDecayExponent = 100

// DecayingHistogram is a histogram whose samples weigh 2^((t - reference) / halfLife) x weight: a sample one
// half-life newer weighs twice as much, which decays the older ones relative to it.
type DecayingHistogram struct {
	Histogram
	halfLife  time.Duration
	reference time.Time
}

// NewDecayingHistogram returns an empty decaying histogram.
func NewDecayingHistogram(opts HistogramOptions, halfLife time.Duration) *DecayingHistogram {
	return &DecayingHistogram{Histogram: Histogram{opts: opts}, halfLife: halfLife}
}

// Reference returns the time the weights are relative to.
func (h *DecayingHistogram) Reference() time.Time { return h.reference }

// HalfLife returns the half-life.
func (h *DecayingHistogram) HalfLife() time.Duration { return h.halfLife }

// AddSample adds a sample of value with weight at time t.
func (h *DecayingHistogram) AddSample(value, weight float64, t time.Time) {
	h.Histogram.AddSample(value, weight*h.decayFactor(t))
}

// SubtractSample removes a sample added with AddSample(value, weight, t).
func (h *DecayingHistogram) SubtractSample(value, weight float64, t time.Time) {
	h.Histogram.SubtractSample(value, weight*h.decayFactor(t))
}

// Merge adds other's weights, rescaled to this histogram's reference.
func (h *DecayingHistogram) Merge(other *DecayingHistogram) {
	if other.IsEmpty() {
		return
	}
	if h.IsEmpty() || other.reference.After(h.reference) {
		h.shiftReference(other.reference)
	}
	f := math.Exp2(other.reference.Sub(h.reference).Seconds() / h.halfLife.Seconds())
	for i, w := range other.w {
		if w > 0 {
			h.addToBucket(other.lo+i, w*f)
		}
	}
}

func (h *DecayingHistogram) decayFactor(t time.Time) float64 {
	if t.After(h.reference.Add(maxDecayExponent * h.halfLife)) {
		h.shiftReference(t.Round(h.halfLife))
	}
	return math.Exp2(float64(t.Sub(h.reference)) / float64(h.halfLife))
}

func (h *DecayingHistogram) shiftReference(ref time.Time) {
	if len(h.w) > 0 {
		h.scale(math.Exp2(-float64(ref.Sub(h.reference)) / float64(h.halfLife)))
	}
	h.reference = ref
}
