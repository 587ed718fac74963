package prometheus

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// TestBackfillAndQuery: a backfilled day of a gauge is there to query, with its values, after start.
func TestBackfillAndQuery(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a Prometheus server; runs in `make test`, not under -short")
	}
	end := time.Now().Truncate(time.Hour).Add(-2 * time.Hour)
	var om strings.Builder
	om.WriteString("# TYPE demo_value gauge\n")
	for i := 24 * 60; i >= 0; i-- {
		ts := end.Add(-time.Duration(i) * time.Minute)
		fmt.Fprintf(&om, "demo_value{pod=\"p\"} %d %d\n", i%60, ts.Unix())
	}
	om.WriteString("# EOF\n")
	ctx := context.Background()
	s, err := Start(ctx, t.TempDir(), Options{Backfill: []byte(om.String())})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	v, err := s.Query(ctx, `max_over_time(demo_value[1d])`, end)
	if err != nil {
		t.Fatal(err)
	}
	vec, ok := v.(model.Vector)
	if !ok || len(vec) != 1 || vec[0].Value != 59 {
		t.Fatalf("max over the backfilled day: %v, want 59", v)
	}
}
