package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakePrometheus speaks the Prometheus HTTP API's query_range endpoint with the JSON Prometheus returns.
type fakePrometheus struct {
	mu      sync.Mutex
	queries []string
	auth    []string
	series  map[string][]map[string]any // query substring -> result series
	fail    bool
}

func (f *fakePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f.mu.Lock()
	f.queries = append(f.queries, r.Form.Get("query"))
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if f.fail {
		w.WriteHeader(http.StatusUnprocessableEntity)
		fmt.Fprint(w, `{"status":"error","errorType":"execution","error":"query timed out in expression evaluation"}`)
		return
	}
	if r.URL.Path != "/api/v1/query_range" || r.Form.Get("start") == "" || r.Form.Get("step") == "" {
		http.Error(w, "unexpected request "+r.URL.String(), 400)
		return
	}
	result := []map[string]any{}
	for sub, s := range f.series {
		if strings.Contains(r.Form.Get("query"), sub) {
			result = s
		}
	}
	json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "matrix", "result": result}})
}

func series(labels map[string]string, start time.Time, values ...string) map[string]any {
	pts := [][]any{}
	for i, v := range values {
		pts = append(pts, []any{float64(start.Add(time.Duration(i) * time.Hour).Unix()), v})
	}
	return map[string]any{"metric": labels, "values": pts}
}

func TestPrometheusHistory(t *testing.T) {
	now := time.Date(2025, 1, 14, 0, 0, 0, 0, time.UTC)
	start := now.Add(-3 * time.Hour)
	web := map[string]string{"namespace": "shop", "pod": "web-1", "container": "app"}
	fp := &fakePrometheus{series: map[string][]map[string]any{
		"container_cpu_usage_seconds_total":  {series(web, start, "0.25", "0.5", "0.75")},
		"container_memory_working_set_bytes": {series(web, start, "104857600", "209715200")},
		"kube_pod_labels":                    {series(map[string]string{"__name__": "kube_pod_labels", "namespace": "shop", "pod": "web-1", "label_app": "web", "label_tier": "front"}, start, "1")},
	}}
	srv := httptest.NewServer(fp)
	defer srv.Close()
	cfg := DefaultPrometheusConfig()
	cfg.Address, cfg.BearerToken = srv.URL, "s3cret"
	p, err := NewPrometheus(cfg, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	h, err := p.History(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 {
		t.Fatalf("history %+v, want one container", h)
	}
	c := h[0]
	if c.Namespace != "shop" || c.Pod != "web-1" || c.Container != "app" || c.Labels["app"] != "web" || c.Labels["tier"] != "front" {
		t.Errorf("container %+v", c)
	}
	if len(c.CPU) != 3 || c.CPU[2].Value != 0.75 || !c.CPU[0].Time.Equal(start) || len(c.Memory) != 2 || c.Memory[1].Value != 209715200 {
		t.Errorf("series cpu %+v memory %+v", c.CPU, c.Memory)
	}
	if !strings.Contains(fp.queries[0], "[1h]") {
		t.Errorf("the CPU query %q does not use the resolution", fp.queries[0])
	}
	for _, a := range fp.auth {
		if a != "Bearer s3cret" {
			t.Errorf("Authorization %q", a)
		}
	}

	fp.fail = true
	if _, err := p.History(context.Background()); err == nil || !strings.Contains(err.Error(), "query timed out") {
		t.Errorf("a failing Prometheus: %v", err)
	}
	if _, err := NewPrometheus(DefaultPrometheusConfig(), time.Now); err == nil || !strings.Contains(err.Error(), "--prometheus-address") {
		t.Errorf("no address: %v", err)
	}
}
