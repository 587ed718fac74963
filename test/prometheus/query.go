package prometheus

import (
	"context"
	"fmt"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// QueryRange evaluates q over [start, end] every step (what a Grafana panel asks for); warnings are errors.
func (s *Server) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) (model.Matrix, error) {
	v, warnings, err := s.API.QueryRange(ctx, q, promv1.Range{Start: start, End: end, Step: step})
	if err != nil {
		return nil, fmt.Errorf("query_range %q: %w", q, err)
	}
	if len(warnings) > 0 {
		return nil, fmt.Errorf("query_range %q: warnings %v", q, warnings)
	}
	m, ok := v.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("query_range %q: a %s, not a matrix", q, v.Type())
	}
	return m, nil
}

// HeadRange is the time range of the samples in the TSDB's head block: on a server started on the data of a
// run shorter than two hours (no block cut yet), the run's first and last sample.
func (s *Server) HeadRange(ctx context.Context) (start, end time.Time, err error) {
	st, err := s.API.TSDB(ctx)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("tsdb status: %w", err)
	}
	h := st.HeadStats
	if h.NumSeries == 0 || h.MaxTime < h.MinTime {
		return time.Time{}, time.Time{}, fmt.Errorf("the TSDB in %s has no samples", s.DataDir)
	}
	return time.UnixMilli(int64(h.MinTime)), time.UnixMilli(int64(h.MaxTime)), nil
}
