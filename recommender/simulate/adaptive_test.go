package simulate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/adaptive"
	"github.com/hvpa-dev/hvpa/recommender/trace"
)

// The adaptive model with upstream as its only candidate writes upstream's recommendation file byte for
// byte; and with its ensemble, upstream's scores beside it are the scores of an upstream run.
func TestAdaptiveBesideUpstream(t *testing.T) {
	up, upStats := run(t, smallTrace(), Options{Interval: time.Hour})
	only := adaptive.UpstreamOnly(recommender.Defaults())
	got, st := run(t, smallTrace(), Options{Interval: time.Hour, Model: adaptive.ModelAdaptive, Adaptive: &only})
	if got != up {
		t.Errorf("the adaptive model with upstream as its only candidate writes other recommendations than upstream's")
	}
	if st.Adaptive != 3 || st.CPUWinners[adaptive.ModelUpstream] != st.Recommendations {
		t.Errorf("adaptive aggregates %d, winners %v over %d recommendations", st.Adaptive, st.CPUWinners, st.Recommendations)
	}
	_, ad := run(t, smallTrace(), Options{Interval: time.Minute, Model: adaptive.ModelAdaptive})
	_, upMin := run(t, smallTrace(), Options{Interval: time.Minute})
	if ad.Upstream != upMin.Scores || upMin.Upstream != upMin.Scores {
		t.Errorf("upstream's scores beside the adaptive model %+v, of an upstream run %+v (beside itself %+v)", ad.Upstream, upMin.Scores, upMin.Upstream)
	}
	if upStats.Scores.CPUSamples == 0 || ad.Scores == ad.Upstream {
		t.Errorf("scores: upstream %+v, adaptive %+v", upStats.Scores, ad.Scores)
	}
	// the model chosen per workload: only ns-b/batch runs adaptive
	_, mixed := run(t, smallTrace(), Options{Interval: time.Minute, ModelFor: func(ns, _ string) string {
		if ns == "ns-b" {
			return adaptive.ModelAdaptive
		}
		return ""
	}})
	if mixed.Adaptive != 1 {
		t.Errorf("%d aggregates ran the adaptive model, want 1", mixed.Adaptive)
	}
	if _, err := New(nil, Options{Model: "best"}); err == nil {
		t.Error("model best accepted")
	}
}

// The scores follow their definitions on a hand-made trace: one container, targets known.
func TestScoresDefinitions(t *testing.T) {
	var sc Scores
	var a applied
	target := recommender.Amounts{CPUMilli: 100, MemoryBytes: 1000}
	for _, u := range []struct{ cpu, mem int64 }{{50, 500}, {150, 1000}, {100, 1200}, {0, 0}} {
		sc.sample(target, rowOf(u.cpu, u.mem))
	}
	// slack: (0.5 + 0 + 0 + 1) / 4; over: 150 > 100 only; memory: (0.5 + 0 + 0 + 1) / 4, over: 1200
	if sc.CPUSlack() != 0.375 || sc.CPUOverFraction() != 0.25 || sc.MemorySlack() != 0.375 || sc.MemoryOverFraction() != 0.25 {
		t.Errorf("scores %+v: slack %v/%v, over %v/%v", sc, sc.CPUSlack(), sc.MemorySlack(), sc.CPUOverFraction(), sc.MemoryOverFraction())
	}
	// the dead band: 105 and 95 are within 10% of the applied 100, 111 is not (applied); 101 is within 10% of
	// 111 (9%), 80 is not (applied)
	for _, cpu := range []int64{100, 105, 95, 111, 101, 80} {
		sc.tick(&a, recommender.Amounts{CPUMilli: cpu, MemoryBytes: 1000}, 0.5)
	}
	if sc.Changes != 2 || sc.ContainerDays != 3 || sc.ChangesPerContainerDay() != 2.0/3 {
		t.Errorf("changes %d over %v container-days, want 2 (to 111, to 80) over 3", sc.Changes, sc.ContainerDays)
	}
}

// ownTraces are the traces of testdata/traces (made by hack/gentrace; see docs/simulate.md).
var ownTraces = []string{"bursty", "small-noisy", "step", "weekly"}

// sharedTraces is the folder of the shared traces: ../shared/traces beside the module root (the folder
// holding go.mod, found by walking up from the package's folder).
func sharedTraces(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared", "traces")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod above %s: cannot find the module root", dir)
		}
		dir = parent
	}
}

// traceSet is the traces the goals are measured on: the ones in testdata/traces, and the shared ones when
// the shared folder exists (missing, the test says so and measures the others). The traces read are logged.
type traceSet struct {
	files  []string // paths, the shared ones first
	shared string   // the shared folder; "" when it is missing or empty
}

func traceFiles(t *testing.T) traceSet {
	t.Helper()
	own, err := filepath.Glob(filepath.Join("testdata", "traces", "*.csv.gz"))
	if err != nil || len(own) != len(ownTraces) {
		t.Fatalf("testdata/traces has %d traces (%v), want %v", len(own), err, ownTraces)
	}
	var set traceSet
	dir := sharedTraces(t)
	shared, err := filepath.Glob(filepath.Join(dir, "*.csv.gz"))
	if err != nil {
		t.Fatalf("listing the shared traces in %s: %v", dir, err)
	}
	if len(shared) > 0 {
		set.shared = dir
	}
	set.files = append(shared, own...)
	t.Logf("traces read: %s (shared folder %s: %d traces)", strings.Join(set.names(), ", "), dir, len(shared))
	return set
}

// names are the traces' names (file names without .csv.gz), sorted.
func (s traceSet) names() []string {
	var out []string
	for _, f := range s.files {
		out = append(out, traceName(f))
	}
	sort.Strings(out)
	return out
}

func traceName(path string) string { return strings.TrimSuffix(filepath.Base(path), ".csv.gz") }

// skipMissingShared marks the goals of the shared traces as skipped, by name, when the shared folder is
// missing: a clone without it measures the other traces and says which goals it did not check.
func (s traceSet) skipMissingShared(t *testing.T, what string) {
	t.Helper()
	if s.shared != "" {
		return
	}
	t.Run("shared traces", func(t *testing.T) {
		t.Skipf("no traces in %s (the shared data beside the repository): %s not checked on them (memleak-oom, steady-diurnal)", sharedTraces(t), what)
	})
}

func runFile(t *testing.T, path string) Stats {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: Close has nothing to lose
	s, err := New(nil, Options{Model: adaptive.ModelAdaptive})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(f); err != nil {
		t.Fatal(err)
	}
	return s.Stats
}

// gaps are the goals of issue 20 the adaptive model does not reach, with the value it reaches (the test
// fails if it gets worse; docs/simulate.md lists them). The key is "trace goal".
var gaps = map[string]float64{
	"memleak-oom memory-slack":    0.451,
	"steady-diurnal memory-slack": 0.343,
	"small-noisy memory-slack":    0.788, // the pod minimum (250Mi) is above these containers' memory
}

// medianGaps is the median CPU slack the adaptive model reaches, by the set of traces it is the median of
// (their names, sorted, comma-separated): a median over other traces is another number.
var medianGaps = map[string]float64{
	// upstream 0.391; the oracle floors are about 0.30 (docs/simulate.md)
	"bursty,memleak-oom,small-noisy,steady-diurnal,step,weekly": 0.364,
	"bursty,small-noisy,step,weekly":                            0.387, // without the shared traces
}

// TestGoals is the acceptance test of issue 20: the adaptive model against upstream's beside it on every
// trace. It asserts every goal that is reached and, for the ones in gaps, that the model does not get worse
// than recorded; it logs the table.
func TestGoals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator on every trace")
	}
	set := traceFiles(t)
	set.skipMissingShared(t, "the goals")
	var table strings.Builder
	var slacks []float64
	for _, path := range set.files {
		name := traceName(path)
		st := runFile(t, path)
		ad, up := st.Scores, st.Upstream
		fmt.Fprintf(&table, "%-15s upstream %s\n%-15s adaptive %s\n", name, scoreLine(up), "", scoreLine(ad))
		fmt.Fprintf(&table, "%-15s memory over: upstream %d, adaptive %d of %d samples\n", "", up.MemoryOver, ad.MemoryOver, ad.MemorySamples)
		slacks = append(slacks, ad.CPUSlack())
		goal(t, name+" cpu-over", ad.CPUOverFraction(), up.CPUOverFraction())
		goal(t, name+" memory-over", ad.MemoryOverFraction(), up.MemoryOverFraction())
		goal(t, name+" memory-slack", ad.MemorySlack(), 0.25)
		goal(t, name+" changes", ad.ChangesPerContainerDay(), max(3, up.ChangesPerContainerDay()))
	}
	sort.Float64s(slacks)
	median := (slacks[(len(slacks)-1)/2] + slacks[len(slacks)/2]) / 2
	key := strings.Join(set.names(), ",")
	recorded, known := medianGaps[key]
	if !known {
		t.Errorf("no median CPU slack recorded for the traces %s (measured %.4f): add it to medianGaps", key, median)
		return
	}
	gaps["median cpu-slack"] = recorded
	defer delete(gaps, "median cpu-slack")
	goal(t, "median cpu-slack", median, 0.20)
	t.Logf("scores per trace:\n%s", table.String())
}

// goal checks value <= want, or, for a known gap, value <= the recorded value (logged).
func goal(t *testing.T, key string, value, want float64) {
	t.Helper()
	if value <= want+1e-12 {
		if _, known := gaps[key]; known {
			t.Logf("goal %s is now met (%.4f <= %.4f): remove it from gaps and docs/simulate.md", key, value, want)
		}
		return
	}
	recorded, known := gaps[key]
	if !known {
		t.Errorf("goal %s: %.6f, want <= %.6f", key, value, want)
		return
	}
	t.Logf("goal %s NOT MET: %.6f against %.6f (by %.6f)", key, value, want, value-want)
	if value > recorded {
		t.Errorf("goal %s: %.4f, worse than the recorded %.4f", key, value, recorded)
	}
}

func scoreLine(s Scores) string {
	return fmt.Sprintf("cpu slack %5.1f%%  memory slack %5.1f%%  cpu over %.2f%%  memory over %.2f%%  OOMs %d  changes/container-day %.2f",
		100*s.CPUSlack(), 100*s.MemorySlack(), 100*s.CPUOverFraction(), 100*s.MemoryOverFraction(), s.OOMs, s.ChangesPerContainerDay())
}

// The report of an adaptive run shows upstream's target beside the adaptive one, and both models' scores.
func TestAdaptiveReport(t *testing.T) {
	s, err := New(nil, Options{Interval: time.Minute, Series: true, Model: adaptive.ModelAdaptive})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(bytes.NewReader(smallTrace())); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := WriteReport(&page, "golden", s.Stats, s.Series()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"upstream's target", `stroke-dasharray="4 3"`, "<td>adaptive</td>", "<td>upstream</td>"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func rowOf(cpu, mem int64) *trace.Row {
	return &trace.Row{CPU: cpu, Memory: mem, HasCPU: true, HasMemory: true}
}
