package metricsdoc

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
)

// TestPromlint runs Prometheus' own metric linter over every metric the binary exports, with one rule of
// ours on top: a value in cores or bytes says so in its name (a name never holds cores and bytes both).
func TestPromlint(t *testing.T) {
	mfs, err := Families()
	if err != nil {
		t.Fatal(err)
	}
	l := promlint.NewWithMetricFamilies(mfs)
	l.AddCustomValidations(unitInName)
	problems, err := l.Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

// unitInName: a metric whose help says it is in cores (or bytes) ends in _cores (or _bytes).
func unitInName(mf *dto.MetricFamily) []error {
	var out []error
	for unit, suffix := range map[string]string{"in cores": "_cores", "in bytes": "_bytes"} {
		if strings.Contains(mf.GetHelp(), unit) && !strings.HasSuffix(mf.GetName(), suffix) {
			out = append(out, promlintError("says it is "+unit+" but its name does not end in "+suffix))
		}
	}
	return out
}

type promlintError string

func (e promlintError) Error() string { return string(e) }

// The rule of ours fails where it should.
func TestUnitInName(t *testing.T) {
	for name, want := range map[string]bool{"hvpa_x_target": true, "hvpa_x_target_cpu_cores": false} {
		mf := &dto.MetricFamily{Name: &name, Help: ptr("Target, in cores or bytes.")}
		if got := len(unitInName(mf)) > 0; got != want {
			t.Errorf("%s: problem %v, want %v", name, got, want)
		}
	}
}

func ptr(s string) *string { return &s }
