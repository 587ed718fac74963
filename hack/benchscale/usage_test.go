package main

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/simulate"
)

// The seeded checkpoints come due at the steady rate of checkpoint writes: after k intervals, k x N x interval
// / period of them are older than the period (ceil(N x interval / period) a run: 50 at N=1000, 30 s, 10 min).
func TestSeededCheckpointsComeDueAtTheSteadyRate(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, n := range []int{100, 1000} {
		const interval, period = 30 * time.Second, 10 * time.Minute
		quota := recommenderctrl.CheckpointQuota(n, interval, period)
		for k := 1; k <= 20; k++ {
			due := 0
			for i := range n {
				if now.Add(time.Duration(k)*interval).Sub(seededWrittenAt(i, n, period, now)) >= period {
					due++
				}
			}
			if due < (k-1)*quota || due > k*quota {
				t.Errorf("N=%d: %d checkpoints due after %d intervals, want %d to %d (%d a run)", n, due, k, (k-1)*quota, k*quota, quota)
			}
		}
	}
}

// The played usage stays within its documented ranges, follows its day curve (the hourly means of a day
// differ) and is the same function for the history and the live pods.
func TestUsageAt(t *testing.T) {
	day := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	lo, hi := int64(1<<62), int64(0)
	var hourly [24]float64
	for m := 0; m < 24*60; m++ {
		at := day.Add(time.Duration(m) * time.Minute)
		u := usageAt("app-0007", "app-0007-5d8f-x2k9q", at)
		if u != usageAt("app-0007", "app-0007-5d8f-x2k9q", at) {
			t.Fatal("usageAt is not a function of its arguments")
		}
		if u.MemoryBytes < 60<<20 || u.MemoryBytes > 200<<20 {
			t.Fatalf("memory %d at %s out of range", u.MemoryBytes, at)
		}
		lo, hi = min(lo, u.CPUMilli), max(hi, u.CPUMilli)
		hourly[m/60] += float64(u.CPUMilli) / 60
	}
	if lo < 20 || hi > 240 {
		t.Errorf("CPU from %dm to %dm, want within 50-149m x (1 +- 0.3) x 1.1 x 1.2", lo, hi)
	}
	minH, maxH := hourly[0], hourly[0]
	for _, h := range hourly {
		minH, maxH = min(minH, h), max(maxH, h)
	}
	if maxH < 1.4*minH {
		t.Errorf("hourly CPU means from %.0fm to %.0fm: no day curve", minH, maxH)
	}
}

// With the seeded history (8 days) and the live usage continuing it, a VPA's recommendation changes (a target
// changes, or a bound moves beyond the 10% dead band: a status write) a few times a day, neither never (the
// fixed usage the benchmark played before) nor at every run: within a factor of 2 of the rate the same model
// gives on the shared steady-diurnal trace from its fifth day on (when that trace is on this machine).
func TestPlayedUsageStatusRate(t *testing.T) {
	if testing.Short() {
		t.Skip("feeds the model 9 days of samples of 10 Deployments")
	}
	m, err := recommender.NewModel(recommender.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	const apps, pods, interval = 10, 10, 30 * time.Second
	start := time.Date(2026, 11, 26, 7, 0, 0, 0, time.UTC)
	writes := 0
	for i := range apps {
		app := appName(i)
		a, err := m.LoadAggregate(appHistory(m, app, pods, interval, start.Add(-8*24*time.Hour), start), start)
		if err != nil {
			t.Fatal(err)
		}
		ctrs := make([]*recommender.Container, pods)
		for p := range ctrs {
			ctrs[p] = m.NewContainer(a)
		}
		merged := map[string]*recommender.Aggregate{"app": a}
		var status *vpav1.RecommendedPodResources
		for at := start; at.Before(start.Add(24 * time.Hour)); at = at.Add(interval) {
			for p, ctr := range ctrs {
				u := usageAt(app, fmt.Sprintf("%s-live-%d", app, p), at)
				m.AddCPU(ctr, at, float64(u.CPUMilli)/1000)
				m.AddMemory(ctr, at, float64(u.MemoryBytes))
			}
			rec, _ := recommenderctrl.Recommendation(m, merged, nil)
			if status != nil && recommenderctrl.WithinDeadBand(status, rec, 0.1) {
				continue
			}
			if status != nil {
				writes++
			}
			status = rec
		}
	}
	perDay := float64(writes) / apps
	t.Logf("status writes per VPA and day: %.1f (at N=1000 and a 30 s interval: %.2f a loop)", perDay, perDay*1000/2880)
	if perDay < 0.5 || perDay > 50 {
		t.Errorf("%.1f status writes per VPA and day, want a few (0.5 to 50)", perDay)
	}
	trace := filepath.Join("..", "..", "..", "shared", "traces", "steady-diurnal.csv.gz")
	if _, err := os.Stat(trace); err != nil {
		t.Skipf("the played rate is not compared with steady-diurnal's: %v", err)
	}
	traceRate := traceStatusRate(t, trace, 4)
	t.Logf("steady-diurnal from its fifth day: %.1f status writes per container and day", traceRate)
	if perDay < traceRate/2 || perDay > 2*traceRate {
		t.Errorf("the played usage gives %.1f status writes per VPA and day, steady-diurnal %.1f: not within a factor of 2", perDay, traceRate)
	}
}

// traceStatusRate runs the upstream model on a trace (`hvpa simulate`, a recommendation a minute) and returns
// its status writes per container and day from day skip on: a change of target, or a bound beyond the 10%
// dead band of the bound last written.
func traceStatusRate(t *testing.T, path string, skip int) float64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only: Close has nothing to lose
	var rows bytes.Buffer
	sim, err := simulate.New(&rows, simulate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Run(f); err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(&rows)
	head, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	written := map[string][]float64{} // per container: target cpu, memory, then the bounds last written
	var first, last int64
	writes := 0
	for {
		rec, err := r.Read()
		if err != nil {
			break
		}
		at, _ := strconv.ParseInt(rec[col["timestamp"]], 10, 64)
		first, last = cmp.Or(first, at), at
		var v []float64
		for _, c := range []string{"target_cpu_m", "target_mem_bytes", "lower_cpu_m", "lower_mem_bytes", "upper_cpu_m", "upper_mem_bytes"} {
			x, _ := strconv.ParseFloat(rec[col[c]], 64)
			v = append(v, x)
		}
		key := rec[col["namespace"]] + "/" + rec[col["workload"]] + "/" + rec[col["container"]]
		old, ok := written[key]
		if ok && !statusChanged(old, v) {
			continue
		}
		written[key] = v
		if ok && at-first >= int64(skip)*86400 {
			writes++
		}
	}
	days := float64(last-first)/86400 - float64(skip)
	return float64(writes) / float64(len(written)) / days
}

// statusChanged: a target differs, or a bound by more than 10% of the one written.
func statusChanged(old, cur []float64) bool {
	if old[0] != cur[0] || old[1] != cur[1] {
		return true
	}
	for i := 2; i < len(cur); i++ {
		if math.Abs(cur[i]-old[i]) > 0.1*old[i] {
			return true
		}
	}
	return false
}
