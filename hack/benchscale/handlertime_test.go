package main

import (
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestHandlerHistQuantiles: a histogram's difference between two scrapes, its quantiles interpolated within a
// bucket as histogram_quantile does, and the fraction within a bucket bound.
func TestHandlerHistQuantiles(t *testing.T) {
	var before, after handlerHist
	for _, b := range []struct{ le, n float64 }{{0.001, 10}, {0.005, 10}, {0.01, 10}, {math.Inf(1), 10}} {
		before.add(b.le, b.n)
	}
	// 100 more: 50 within 1 ms, 40 between 1 and 5 ms, 9 between 5 and 10 ms, 1 above
	for _, b := range []struct{ le, n float64 }{{0.001, 60}, {0.005, 100}, {0.01, 109}, {math.Inf(1), 110}} {
		after.add(b.le, b.n)
	}
	d := after.minus(before)
	if d.total() != 100 {
		t.Fatalf("total %v, want 100", d.total())
	}
	for _, tc := range []struct{ q, want float64 }{{0.5, 0.001}, {0.25, 0.0005}, {0.7, 0.001 + 0.004*20/40}, {0.99, 0.01}, {0.995, 0.01}} {
		if got := d.quantile(tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("q%.3f: %v, want %v", tc.q, got, tc.want)
		}
	}
	if got := d.within(0.005); got != 0.9 {
		t.Errorf("within 5 ms: %v, want 0.9", got)
	}
	if !math.IsNaN(d.within(0.004)) {
		t.Errorf("within a bound that is no bucket's: %v, want NaN", d.within(0.004))
	}
}

// TestScrapeHandlerHist: the histogram read from /metrics as the webhook serves it counts each admission once
// (the +Inf bucket is in the text; taking the sample count as well counted every admission twice).
func TestScrapeHandlerHist(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`# HELP hvpa_webhook_admission_duration_seconds x
# TYPE hvpa_webhook_admission_duration_seconds histogram
hvpa_webhook_admission_duration_seconds_bucket{outcome="sized",resource="pods",le="0.005"} 90
hvpa_webhook_admission_duration_seconds_bucket{outcome="sized",resource="pods",le="0.01"} 99
hvpa_webhook_admission_duration_seconds_bucket{outcome="sized",resource="pods",le="+Inf"} 100
hvpa_webhook_admission_duration_seconds_sum{outcome="sized",resource="pods"} 0.4
hvpa_webhook_admission_duration_seconds_count{outcome="sized",resource="pods"} 100
`))
	}))
	defer srv.Close()
	h, err := scrapeHandlerHist([]string{srv.URL, srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if h.total() != 200 || h.within(0.005) != 0.9 || math.Abs(h.quantile(0.99)-0.01) > 1e-12 {
		t.Errorf("two processes of 100 admissions: total %v, within 5 ms %v, p99 %v; want 200, 0.9, 0.01", h.total(), h.within(0.005), h.quantile(0.99))
	}
}
