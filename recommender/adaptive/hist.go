package adaptive

import (
	"math"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
)

// maxExponent: when a sample is more than this many half-lives after a histogram's reference, its weights
// are rescaled to a newer reference (they stay finite).
const maxExponent = 50

// decaying is one decaying histogram over shared buckets: a sample one half-life newer weighs twice as
// much. Its weights are a fixed array (no allocation per sample).
type decaying struct {
	halfLife  float64 // seconds
	reference int64   // unix seconds
	factorAt  int64   // the time factor was computed for
	factor    float64
	total     float64
	w         []float64
}

// multiHist feeds the same samples into one decaying histogram per half-life: the bucket is found once.
type multiHist struct {
	opts  recommender.HistogramOptions
	hists []decaying
}

func newMultiHist(opts recommender.HistogramOptions, halfLives []time.Duration) multiHist {
	m := multiHist{opts: opts, hists: make([]decaying, len(halfLives))}
	for i, h := range halfLives {
		m.hists[i] = decaying{halfLife: h.Seconds(), factorAt: math.MinInt64, w: make([]float64, opts.NumBuckets())}
	}
	return m
}

// add adds one sample of value at t (unix seconds) to every histogram.
func (m *multiHist) add(value float64, t int64) {
	if len(m.hists) == 0 {
		return
	}
	b := m.opts.Bucket(value)
	for i := range m.hists {
		h := &m.hists[i]
		if t != h.factorAt {
			h.setFactor(t)
		}
		h.w[b] += h.factor
		h.total += h.factor
	}
}

// setFactor computes the weight of a sample at t, moving the reference forward first if needed.
func (h *decaying) setFactor(t int64) {
	if h.total == 0 {
		h.reference = t
	}
	if e := float64(t-h.reference) / h.halfLife; e > maxExponent {
		f := math.Exp2(-e)
		for i := range h.w {
			h.w[i] *= f
		}
		h.total *= f
		h.reference = t
	}
	h.factorAt = t
	h.factor = math.Exp2(float64(t-h.reference) / h.halfLife)
}

// percentiles writes into out, for each of ps (ascending), the end of the bucket where the cumulative weight
// reaches p x total (the start for the last bucket), as recommender.Histogram.Percentile does; 0 when empty.
func (m *multiHist) percentiles(i int, ps, out []float64) {
	h := &m.hists[i]
	for k := range out {
		out[k] = 0
	}
	if h.total <= 0 {
		return
	}
	k, sum, last := 0, 0.0, 0
	for b, w := range h.w {
		if w > 0 {
			last = b
		}
		sum += w
		for k < len(ps) && sum >= ps[k]*h.total {
			out[k] = m.end(b)
			k++
		}
		if k == len(ps) {
			return
		}
	}
	for ; k < len(ps); k++ { // rounding left the threshold above the sum
		out[k] = m.end(last)
	}
}

func (m *multiHist) end(b int) float64 {
	if b < m.opts.NumBuckets()-1 {
		return m.opts.Start(b + 1)
	}
	return m.opts.Start(b)
}
