package recording

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// TestRecorder records a promhttp endpoint whose counter goes up by one per scrape, and reads it back.
func TestRecorder(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "x_total", Help: "x"}, []string{"outcome"})
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "d_seconds", Help: "d", Buckets: []float64{0.5, 1}})
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "g", Help: "g"})
	reg.MustRegister(c, h, g)
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	var served, fail atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() > 0 {
			fail.Add(-1)
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		n := served.Add(1)
		c.WithLabelValues("ok").Inc()
		h.Observe(0.75)
		g.Set(float64(n) * 10)
		metrics.ServeHTTP(w, r)
	}))
	defer srv.Close()

	path := filepath.Join(t.TempDir(), "rec.prom.gz")
	record := func(scrapes int) *Recorder {
		ctx, cancel := context.WithCancel(context.Background())
		r := &Recorder{}
		done := make(chan error, 1)
		go func() { done <- r.Start(ctx, srv.URL, path, 20*time.Millisecond) }()
		for n, _ := r.Counts(); n < scrapes; n, _ = r.Counts() {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		return r
	}
	fail.Store(1) // the first scrape fails: skipped
	r := record(3)
	first, failures := r.Counts()
	if failures != 1 {
		t.Errorf("%d failed scrapes, want 1", failures)
	}
	second, _ := record(2).Counts() // a second recording appends a gzip member

	s, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	n := len(s.Scrapes)
	if n != first+second {
		t.Fatalf("%d scrapes read, %d written", n, first+second)
	}
	ok := s.Get("x_total", map[string]string{"outcome": "ok"})
	if ok == nil || len(ok.Samples) != n {
		t.Fatalf("x_total{outcome=ok}: %+v", ok)
	}
	for i, smp := range ok.Samples {
		if smp.T != s.Scrapes[i] || (i > 0 && smp.V <= ok.Samples[i-1].V) || (i == 0 && smp.V != 1) {
			t.Errorf("sample %d = %+v: want it at %d and above the previous one", i, smp, s.Scrapes[i])
		}
	}
	last := ok.Samples[n-1].V
	wantKeys := []string{`d_seconds_bucket{le="+Inf"}`, `d_seconds_bucket{le="0.5"}`, `d_seconds_bucket{le="1"}`, `d_seconds_count{}`,
		`d_seconds_sum{}`, `g{}`, `x_total{outcome="ok"}`}
	var keys []string
	for _, ts := range s.List {
		keys = append(keys, ts.Key())
	}
	if diff := cmp.Diff(wantKeys, keys); diff != "" {
		t.Errorf("series (-want +got):\n%s", diff)
	}
	if v := s.Get("d_seconds_bucket", map[string]string{"le": "1"}).Samples[n-1].V; v != last {
		t.Errorf("d_seconds_bucket{le=1} = %v, want %v", v, last)
	}
	if v := s.Get("d_seconds_bucket", map[string]string{"le": "0.5"}).Samples[n-1].V; v != 0 {
		t.Errorf("d_seconds_bucket{le=0.5} = %v, want 0", v)
	}
	if diff := cmp.Diff(map[string]string{"x_total": "counter", "d_seconds": "histogram", "g": "gauge"}, s.Types); diff != "" {
		t.Errorf("types (-want +got):\n%s", diff)
	}
	if iv := s.Interval(); iv <= 0 || iv > time.Second {
		t.Errorf("interval %v", iv)
	}
}

// TestTruncated: a recorder killed in the middle of a block leaves a file that reads up to its last block.
func TestTruncated(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range 3 {
		if err := w.WriteScrape(time.UnixMilli(int64(1000*(i+1))), []byte("# TYPE g gauge\ng "+string(rune('1'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	complete := buf.Len()
	if _, err := w.gz.Write([]byte("# SCRAPE 4000\n# TYPE g gauge\ng {")); err != nil { // never flushed: lost
		t.Fatal(err)
	}
	s, err := Decode(bytes.NewReader(buf.Bytes()[:complete]))
	if err != nil {
		t.Fatal(err)
	}
	want := []Sample{{1000, 1}, {2000, 2}, {3000, 3}}
	if diff := cmp.Diff(want, s.Get("g", nil).Samples); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}

	// a partial block that made it to the file is dropped too
	var raw bytes.Buffer
	gz := gzip.NewWriter(&raw)
	_, _ = gz.Write([]byte("# SCRAPE 1000\ng 1\n# SCRAPE 2000\ng{a=\"x"))
	_ = gz.Flush()
	s, err = Decode(bytes.NewReader(raw.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{1000}, s.Scrapes); diff != "" {
		t.Errorf("scrapes (-want +got):\n%s", diff)
	}
}

func TestDecodeErrors(t *testing.T) {
	enc := func(s string) []byte {
		var b bytes.Buffer
		gz := gzip.NewWriter(&b)
		_, _ = gz.Write([]byte(s))
		_ = gz.Close()
		return b.Bytes()
	}
	for name, in := range map[string][]byte{
		"not gzip":      []byte("# SCRAPE 1\ng 1\n"),
		"no header":     enc("g 1\n"),
		"bad time":      enc("# SCRAPE soon\ng 1\n"),
		"bad text":      enc("# SCRAPE 1\ng{ 1\n# SCRAPE 2\ng 2\n"),
		"empty":         enc(""),
		"only a header": enc("# SCRAPE 1"),
	} {
		if s, err := Decode(bytes.NewReader(in)); err == nil && name != "only a header" {
			t.Errorf("%s: no error", name)
		} else if name == "only a header" && (err != nil || len(s.List) != 0) {
			t.Errorf("%s: %v, %d series; want an empty scrape", name, err, len(s.List))
		}
	}
}

func TestExposition(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "g", Help: "g"}, []string{"a"})
	reg.MustRegister(g)
	g.WithLabelValues("x").Set(2)
	text, err := Exposition(reg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "r.gz")
	f, _ := os.Create(path)
	w := NewWriter(f)
	if err := w.WriteScrape(time.UnixMilli(5), text); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	_ = f.Close()
	s, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if ts := s.Get("g", map[string]string{"a": "x"}); ts == nil || ts.Samples[0] != (Sample{5, 2}) || !strings.Contains(string(text), `g{a="x"} 2`) {
		t.Errorf("read %+v from %q", ts, text)
	}
	if !s.Start().Equal(time.UnixMilli(5)) || !s.End().Equal(time.UnixMilli(5)) || s.Interval() != 0 {
		t.Errorf("start %v end %v interval %v", s.Start(), s.End(), s.Interval())
	}
}
