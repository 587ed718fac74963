package main

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// handlerMetric is the admission webhook's own time per request (from the decoded AdmissionReview to its
// answer), which the client-side round trip of a burst also holds the API server's and the network's time in.
const handlerMetric = "hvpa_webhook_admission_duration_seconds"

// handlerHist is handlerMetric's histogram summed over processes and label sets: cumulative counts by upper
// bound (the +Inf bucket last).
type handlerHist struct {
	bounds []float64
	counts []float64
}

// scrapeHandlerHist reads handlerMetric from each /metrics URL and sums them.
func scrapeHandlerHist(urls []string) (handlerHist, error) {
	var h handlerHist
	cl := http.Client{Timeout: 5 * time.Second}
	for _, u := range urls {
		resp, err := cl.Get(u)
		if err != nil {
			return h, fmt.Errorf("scraping %s: %w", u, err)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(resp.Body)
		_ = resp.Body.Close() // read whole: nothing left to report
		if err != nil {
			return h, fmt.Errorf("parsing %s: %w", u, err)
		}
		mf := mfs[handlerMetric]
		if mf == nil {
			continue // no admission yet: the histogram has no series
		}
		for _, m := range mf.GetMetric() {
			inf := false
			for _, b := range m.GetHistogram().GetBucket() {
				h.add(b.GetUpperBound(), float64(b.GetCumulativeCount()))
				inf = inf || math.IsInf(b.GetUpperBound(), 1)
			}
			if !inf { // the text format lists le="+Inf"; a parser may leave it to the sample count
				h.add(math.Inf(1), float64(m.GetHistogram().GetSampleCount()))
			}
		}
	}
	return h, nil
}

func (h *handlerHist) add(bound, count float64) {
	i, found := slices.BinarySearch(h.bounds, bound)
	if !found {
		h.bounds = slices.Insert(h.bounds, i, bound)
		h.counts = slices.Insert(h.counts, i, 0)
	}
	h.counts[i] += count
}

// minus is what was observed between an earlier scrape (before) and h.
func (h handlerHist) minus(before handlerHist) handlerHist {
	out := handlerHist{bounds: slices.Clone(h.bounds), counts: slices.Clone(h.counts)}
	for i, b := range before.bounds {
		if j, ok := slices.BinarySearch(out.bounds, b); ok {
			out.counts[j] -= before.counts[i]
		}
	}
	return out
}

// total is the number of observations.
func (h handlerHist) total() float64 {
	if len(h.counts) == 0 {
		return 0
	}
	return h.counts[len(h.counts)-1]
}

// within is the fraction of observations of at most bound (a bucket's upper bound: exact).
func (h handlerHist) within(bound float64) float64 {
	i, ok := slices.BinarySearch(h.bounds, bound)
	if !ok || h.total() == 0 {
		return math.NaN()
	}
	return h.counts[i] / h.total()
}

// quantile estimates the q-quantile as Prometheus' histogram_quantile does: linear within the bucket it falls
// in (from 0 in the first); the last finite bound when it falls in +Inf.
func (h handlerHist) quantile(q float64) float64 {
	n := h.total()
	if n == 0 {
		return math.NaN()
	}
	rank := q * n
	i, _ := slices.BinarySearchFunc(h.counts, rank, func(c, r float64) int {
		if c < r {
			return -1
		}
		return 1
	})
	if i >= len(h.bounds) {
		i = len(h.bounds) - 1
	}
	if math.IsInf(h.bounds[i], 1) {
		if i == 0 {
			return math.NaN()
		}
		return h.bounds[i-1]
	}
	lo, below := 0.0, 0.0
	if i > 0 {
		lo, below = h.bounds[i-1], h.counts[i-1]
	}
	in := h.counts[i] - below
	if in <= 0 {
		return h.bounds[i]
	}
	return lo + (h.bounds[i]-lo)*(rank-below)/in
}

// line says what the webhook itself took over a burst.
func (h handlerHist) line() string {
	return fmt.Sprintf("the webhook's own handling (%s, %d admissions over its processes): p50 %.2fms  p99 %.2fms  within 5ms %.1f%%",
		handlerMetric, int(h.total()), 1000*h.quantile(0.5), 1000*h.quantile(0.99), 100*h.within(0.005))
}
