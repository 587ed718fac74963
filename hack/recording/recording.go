// Package recording records a Prometheus text endpoint (the hvpa binary's /metrics) into a file and reads
// such a file back as time series, so that dashboards can be rendered from a run without a Prometheus
// server.
//
// The file is a gzip stream (possibly several members: a new recording appends one) of blocks, each
//
//	# SCRAPE <unix milliseconds>
//	<the text exposition of one scrape>
//
// Every block is flushed when written: a recorder that is killed leaves a file whose complete blocks read.
package recording

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// blockHeader starts every block; a comment to the text format.
const blockHeader = "# SCRAPE "

// acceptText asks for the text exposition format.
const acceptText = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Writer writes blocks to a gzip stream.
type Writer struct {
	gz *gzip.Writer
}

// NewWriter starts a gzip stream on w.
func NewWriter(w io.Writer) *Writer { return &Writer{gz: gzip.NewWriter(w)} }

// WriteScrape writes one block: the scrape time and the exposition text, and flushes it.
func (w *Writer) WriteScrape(t time.Time, exposition []byte) error {
	if _, err := fmt.Fprintf(w.gz, "%s%d\n", blockHeader, t.UnixMilli()); err != nil {
		return err
	}
	if _, err := w.gz.Write(exposition); err != nil {
		return err
	}
	if len(exposition) > 0 && exposition[len(exposition)-1] != '\n' {
		if _, err := w.gz.Write([]byte{'\n'}); err != nil {
			return err
		}
	}
	return w.gz.Flush()
}

// Close ends the gzip stream (not the underlying writer).
func (w *Writer) Close() error { return w.gz.Close() }

// Exposition renders what a gatherer gathers in the text format (for recordings made without HTTP).
func Exposition(g prometheus.Gatherer) ([]byte, error) {
	mfs, err := g.Gather()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// Recorder scrapes a Prometheus text endpoint at an interval into a recording file.
type Recorder struct {
	// Client does the scrapes (nil: a client whose timeout is the interval).
	Client *http.Client
	// OnError is told about failed scrapes, which are skipped (nil: they are only counted).
	OnError func(error)

	mu                sync.Mutex
	scrapes, failures int
}

// Counts returns the scrapes written and the scrapes that failed so far.
func (r *Recorder) Counts() (scrapes, failures int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.scrapes, r.failures
}

// Start scrapes url now and then every interval, appending a block per scrape to the file at path (created
// if needed), until ctx ends; then it closes the file and returns nil. It returns an error only when the
// file cannot be written; a failed scrape is skipped.
func (r *Recorder) Start(ctx context.Context, url, path string, interval time.Duration) (err error) {
	if interval <= 0 {
		return fmt.Errorf("recording: interval %v: want a positive interval", interval)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	w := NewWriter(f)
	defer func() {
		if cerr := w.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("recording: %w", cerr)
		}
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("recording: %w", cerr)
		}
	}()
	client := r.Client
	if client == nil {
		client = &http.Client{Timeout: interval}
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		now := time.Now()
		body, serr := scrape(ctx, client, url)
		switch {
		case serr != nil && ctx.Err() != nil:
			return nil
		case serr != nil:
			r.mu.Lock()
			r.failures++
			r.mu.Unlock()
			if r.OnError != nil {
				r.OnError(serr)
			}
		default:
			if err := w.WriteScrape(now, body); err != nil {
				return fmt.Errorf("recording: %w", err)
			}
			r.mu.Lock()
			r.scrapes++
			r.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func scrape(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", acceptText)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "text/plain") {
		return nil, fmt.Errorf("scraping %s: content type %q, want the text format", url, ct)
	}
	return body, nil
}

// Sample is one value at a time (unix milliseconds).
type Sample struct {
	T int64
	V float64
}

// TimeSeries is one series: a metric name and its labels (without __name__), with samples in time order.
// Histograms and summaries give the series <name>_bucket (label le), <name>_sum and <name>_count
// (summaries: <name> with the label quantile).
type TimeSeries struct {
	Name    string
	Labels  map[string]string
	Samples []Sample
}

// Key is the series' identity: name{a="x",b="y"} with the labels sorted.
func (ts *TimeSeries) Key() string { return Key(ts.Name, ts.Labels) }

// Key renders name{a="x",b="y"} with the labels sorted.
func Key(name string, labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for l := range labels {
		names = append(names, l)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, l := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", l, labels[l])
	}
	b.WriteByte('}')
	return b.String()
}

// Series is a recording read back.
type Series struct {
	// Scrapes are the times of the scrapes (unix milliseconds), ascending.
	Scrapes []int64
	// Types maps a metric family name to its type: counter, gauge, histogram, summary or untyped.
	Types map[string]string
	// List holds every series, sorted by Key.
	List  []*TimeSeries
	index map[string]*TimeSeries
}

// Get returns the series of a name and labels, or nil.
func (s *Series) Get(name string, labels map[string]string) *TimeSeries {
	return s.index[Key(name, labels)]
}

// Start and End are the times of the first and the last scrape.
func (s *Series) Start() time.Time { return time.UnixMilli(s.Scrapes[0]) }

// End is the time of the last scrape.
func (s *Series) End() time.Time { return time.UnixMilli(s.Scrapes[len(s.Scrapes)-1]) }

// Interval is the median time between scrapes (0 with fewer than two).
func (s *Series) Interval() time.Duration {
	if len(s.Scrapes) < 2 {
		return 0
	}
	d := make([]int64, 0, len(s.Scrapes)-1)
	for i := 1; i < len(s.Scrapes); i++ {
		d = append(d, s.Scrapes[i]-s.Scrapes[i-1])
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return time.Duration(d[len(d)/2]) * time.Millisecond
}

// Read reads a recording. A file that ends in the middle (a recorder that was killed) reads up to its last
// complete block.
func Read(path string) (*Series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	return Decode(f)
}

// Decode reads a recording from r.
func Decode(r io.Reader) (*Series, error) {
	gz, err := gzip.NewReader(bufio.NewReader(r))
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	raw, err := io.ReadAll(gz)
	truncated := errors.Is(err, io.ErrUnexpectedEOF)
	if err != nil && !truncated {
		return nil, fmt.Errorf("recording: %w", err)
	}
	blocks, err := split(raw)
	if err != nil {
		return nil, err
	}
	s := &Series{Types: map[string]string{}, index: map[string]*TimeSeries{}}
	for i, b := range blocks {
		if err := s.add(b); err != nil {
			if truncated && i == len(blocks)-1 {
				break // the partial last block of a killed recorder
			}
			return nil, fmt.Errorf("recording: the scrape at %d: %w", b.t, err)
		}
	}
	if len(s.Scrapes) == 0 {
		return nil, fmt.Errorf("recording: no scrapes")
	}
	sort.Slice(s.Scrapes, func(i, j int) bool { return s.Scrapes[i] < s.Scrapes[j] })
	for _, ts := range s.index {
		sort.SliceStable(ts.Samples, func(i, j int) bool { return ts.Samples[i].T < ts.Samples[j].T })
		s.List = append(s.List, ts)
	}
	sort.Slice(s.List, func(i, j int) bool { return s.List[i].Key() < s.List[j].Key() })
	return s, nil
}

type block struct {
	t    int64
	text []byte
}

func split(raw []byte) ([]block, error) {
	var out []block
	for len(raw) > 0 {
		if !bytes.HasPrefix(raw, []byte(blockHeader)) {
			return nil, fmt.Errorf("recording: a block does not start with %q", blockHeader)
		}
		nl := bytes.IndexByte(raw, '\n')
		if nl < 0 {
			nl = len(raw)
		}
		t, err := strconv.ParseInt(string(raw[len(blockHeader):nl]), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("recording: block header %q: %w", raw[:nl], err)
		}
		raw = raw[min(nl+1, len(raw)):]
		end := bytes.Index(raw, []byte("\n"+blockHeader))
		if end < 0 {
			end = len(raw)
		} else {
			end++
		}
		out = append(out, block{t, raw[:end]})
		raw = raw[end:]
	}
	return out, nil
}

// add parses one block into the series.
func (s *Series) add(b block) error {
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b.text))
	if err != nil {
		return err
	}
	s.Scrapes = append(s.Scrapes, b.t)
	for name, mf := range mfs {
		s.Types[name] = strings.ToLower(mf.GetType().String())
		for _, m := range mf.Metric {
			labels := map[string]string{}
			for _, lp := range m.Label {
				labels[lp.GetName()] = lp.GetValue()
			}
			t := b.t
			if m.TimestampMs != nil {
				t = m.GetTimestampMs()
			}
			put := func(n string, extra map[string]string, v float64) {
				l := labels
				if len(extra) > 0 {
					l = make(map[string]string, len(labels)+len(extra))
					for k, v := range labels {
						l[k] = v
					}
					for k, v := range extra {
						l[k] = v
					}
				}
				k := Key(n, l)
				ts := s.index[k]
				if ts == nil {
					ts = &TimeSeries{Name: n, Labels: l}
					s.index[k] = ts
				}
				ts.Samples = append(ts.Samples, Sample{t, v})
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				put(name, nil, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				put(name, nil, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				put(name, nil, m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
				h := m.GetHistogram()
				inf := false
				for _, bk := range h.Bucket {
					inf = inf || math.IsInf(bk.GetUpperBound(), 1)
					put(name+"_bucket", map[string]string{"le": FormatLe(bk.GetUpperBound())}, float64(bk.GetCumulativeCount()))
				}
				if !inf {
					put(name+"_bucket", map[string]string{"le": "+Inf"}, float64(h.GetSampleCount()))
				}
				put(name+"_sum", nil, h.GetSampleSum())
				put(name+"_count", nil, float64(h.GetSampleCount()))
			case dto.MetricType_SUMMARY:
				sm := m.GetSummary()
				for _, q := range sm.Quantile {
					put(name, map[string]string{"quantile": strconv.FormatFloat(q.GetQuantile(), 'g', -1, 64)}, q.GetValue())
				}
				put(name+"_sum", nil, sm.GetSampleSum())
				put(name+"_count", nil, float64(sm.GetSampleCount()))
			}
		}
	}
	return nil
}

// FormatLe formats a bucket's upper bound as the le label: 0.25, 1, +Inf.
func FormatLe(v float64) string {
	if math.IsInf(v, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
