package simulate

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hvpa-dev/hvpa/recommender/trace"
)

// oracleQuantile is, per trace, 1 - upstream's CPU over share on it (docs/simulate.md): a clairvoyant
// target at that quantile of each window's actual usage runs over about as often as upstream's model.
var oracleQuantile = map[string]float64{
	"steady-diurnal.csv.gz": 0.991, "memleak-oom.csv.gz": 0.992, "bursty.csv.gz": 0.915,
	"step.csv.gz": 0.97, "weekly.csv.gz": 0.978, "small-noisy.csv.gz": 0.999,
}

// oracle is the CPU slack and over share of a clairvoyant target: per container (namespace, workload,
// container) and window (aligned to the epoch), the q-quantile of the window's own samples, scored as the
// simulator scores targets (slack = mean of max(target - usage, 0) / target).
func oracle(t *testing.T, path string, q float64, window time.Duration) (slack, over float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: Close has nothing to lose
	type key struct {
		container string
		window    int64
	}
	samples := map[key][]float64{}
	w := int64(window / time.Second)
	err = trace.Each(f, func(r *trace.Row) error {
		if r.HasCPU && !r.OOM {
			k := key{string(r.Namespace) + "/" + string(r.Workload) + "/" + string(r.Container), r.Time / w}
			samples[k] = append(samples[k], float64(r.CPU))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var n, above int
	var sum float64
	for _, s := range samples {
		sort.Float64s(s)
		target := s[min(len(s)-1, int(q*float64(len(s))))]
		for _, u := range s {
			n++
			if u > target {
				above++
			}
			if target > 0 {
				sum += max(target-u, 0) / target
			}
		}
	}
	return sum / float64(n), float64(above) / float64(n)
}

// TestOracleFloor measures what no model can beat on the traces the adaptive model's goals are measured on:
// a clairvoyant per-window target at upstream's over rate. With 6h windows (4 changes a day, more than the
// goal's 3) its median CPU slack across the traces is still above the goal's 20%, so that goal cannot be met
// on these traces (docs/simulate.md quotes this table). The oracle's over share is logged, not asserted: a
// target at the q-quantile of the window's own samples runs over at most 1 - q of them by construction.
func TestOracleFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every trace three times")
	}
	set := traceFiles(t)
	set.skipMissingShared(t, "the oracle floor")
	var six []float64
	for _, path := range set.files {
		q, ok := oracleQuantile[filepath.Base(path)]
		if !ok {
			t.Fatalf("%s: no quantile for the oracle (1 - upstream's CPU over on it)", path)
		}
		for _, w := range []time.Duration{time.Hour, 6 * time.Hour, 24 * time.Hour} {
			slack, over := oracle(t, path, q, w)
			t.Logf("%-22s q=%.3f window %3s: oracle CPU slack %.1f%%, over %.2f%%", filepath.Base(path), q, w, 100*slack, 100*over)
			if w == 6*time.Hour {
				six = append(six, slack)
			}
		}
	}
	sort.Float64s(six)
	median := six[len(six)/2]
	if len(six)%2 == 0 {
		median = (six[len(six)/2-1] + six[len(six)/2]) / 2
	}
	t.Logf("median oracle CPU slack with 6h windows over %s: %.1f%%", strings.Join(set.names(), ", "), 100*median)
	if median <= 0.20 {
		t.Errorf("the oracle's median CPU slack with 6h windows over %s is %.1f%%: the 20%% goal is within reach; update docs/simulate.md",
			strings.Join(set.names(), ", "), 100*median)
	}
}
