package metricsdoc

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

var update = flag.Bool("update", false, "rewrite docs/metrics.md from this build")

// TestMetricsPage checks that docs/metrics.md is what `hack/run.sh metricsdoc` prints.
// `go -C hack test ./internal/metricsdoc -run TestMetricsPage -update` rewrites it: review the diff.
func TestMetricsPage(t *testing.T) {
	path := filepath.Join("..", "..", "..", "docs", "metrics.md")
	want := Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("docs/metrics.md is not current: run `make generate` (hack/run.sh metricsdoc > docs/metrics.md) (-generated +page):\n%s", diff)
	}
}

// TestAll checks the description of the metrics against the house rules and against the Metrics structs:
// every exported collector field is registered by NewMetrics (so it is on the page and exported).
func TestAll(t *testing.T) {
	all := All()
	if len(all) < 20 {
		t.Fatalf("All() = %d metrics, want at least 20", len(all))
	}
	seen := map[string]bool{}
	for _, m := range all {
		if seen[m.Name] {
			t.Errorf("%s is listed twice", m.Name)
		}
		seen[m.Name] = true
		if !strings.HasPrefix(m.Name, "hvpa_"+m.Component+"_") {
			t.Errorf("%s: want the prefix hvpa_%s_", m.Name, m.Component)
		}
		if (m.Type == "counter") != strings.HasSuffix(m.Name, "_total") {
			t.Errorf("%s (%s): counters, and only counters, end in _total", m.Name, m.Type)
		}
		if m.Help == "" {
			t.Errorf("%s has no help", m.Name)
		}
	}
	for _, c := range components {
		reg := prometheus.NewPedanticRegistry()
		m := c.build(nil)
		for _, vec := range vectors(m) {
			instantiate(vec)
		}
		for _, col := range collectors(m) {
			if err := reg.Register(col); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if m, ok := Lookup(all, mf.GetName()); !ok || m.Name != mf.GetName() || m.Component != c.name {
				t.Errorf("%s: the Metrics field for %s is not registered by NewMetrics", c.name, mf.GetName())
			}
		}
	}
}

func TestAllDetails(t *testing.T) {
	want := map[string]Metric{
		"hvpa_webhook_admission_duration_seconds": {Component: "webhook", Name: "hvpa_webhook_admission_duration_seconds", Type: "histogram",
			Labels: []string{"resource", "outcome"}},
		"hvpa_recommender_aggregates": {Component: "recommender", Name: "hvpa_recommender_aggregates", Type: "gauge", Labels: []string{}},
		"hvpa_controller_replicas": {Component: "controller", Name: "hvpa_controller_replicas", Type: "gauge",
			Labels: []string{"namespace", "hvpa", "state"}},
		"hvpa_build_info":            {Component: "build", Name: "hvpa_build_info", Type: "gauge", Labels: []string{"go_version", "platform", "revision", "version"}},
		"hvpa_updater_resizes_total": {Component: "updater", Name: "hvpa_updater_resizes_total", Type: "counter", Labels: []string{"outcome"}},
	}
	for _, m := range All() {
		if w, ok := want[m.Name]; ok {
			m.Help = ""
			if diff := cmp.Diff(w, m); diff != "" {
				t.Errorf("%s (-want +got):\n%s", m.Name, diff)
			}
			delete(want, m.Name)
		}
	}
	for name := range want {
		t.Errorf("%s is missing", name)
	}
}

func TestLookup(t *testing.T) {
	all := []Metric{{Name: "h_seconds", Type: "histogram"}, {Name: "s_seconds", Type: "summary"}, {Name: "c_total", Type: "counter"}, {Name: "g", Type: "gauge"}}
	for name, want := range map[string]string{
		"h_seconds": "h_seconds", "h_seconds_bucket": "h_seconds", "h_seconds_sum": "h_seconds", "h_seconds_count": "h_seconds",
		"s_seconds_sum": "s_seconds", "s_seconds_count": "s_seconds", "s_seconds_bucket": "",
		"c_total": "c_total", "c_total_count": "", "g": "g", "g_bucket": "", "other": "",
	} {
		m, ok := Lookup(all, name)
		if ok != (want != "") || m.Name != want {
			t.Errorf("Lookup(%s) = %q, %v; want %q", name, m.Name, ok, want)
		}
	}
}
