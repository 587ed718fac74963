package closedloop

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender/trace"
)

// shootoutMisses are the shoot-out's workloads (`make shootout`, seed 1) whose Hvpa run misses some goal of
// issue 33 on the main line; every other workload meets every goal. A change that gains a workload takes it
// off this list (TestShootoutGoalsHold fails until it does); one that loses a workload fails TestShootoutGoalsHold, which names the goal it misses and
// its numbers. Why these miss: docs/design/scaling.md's change log.
var shootoutMisses = []string{
	"shootout/batch-0", "shootout/batch-1", "shootout/batch-2", "shootout/spiky-0", "shootout/spiky-1", "shootout/spiky-2",
}

// TestShootoutGoalsHold runs the shoot-out of docs/simulate.md (the Hvpa of examples/hvpa-shootout.yaml against
// hpa at 250m, 500m and 1000m, vpa and hpa+vpa, the command's defaults) on its generated demand (every
// profile, seed 1) and on the shared traces (../shared/traces beside the repository; missing, the test says
// so and checks the generated ones), and checks the goals (CheckGoals) as far as they are met today: every
// workload not in shootoutMisses meets every goal, and the median goal holds.
func TestShootoutGoalsHold(t *testing.T) {
	if testing.Short() {
		t.Skip("the shoot-out takes about 40 s; make test runs it")
	}
	h := exampleHvpa(t, "../examples/hvpa-shootout.yaml")
	var requests []PodRequests
	for _, s := range []string{"cpu=250m,memory=1Gi", "cpu=500m,memory=2Gi", "cpu=1000m,memory=4Gi"} {
		r, err := ParsePodRequests(s)
		if err != nil {
			t.Fatal(err)
		}
		requests = append(requests, r)
	}
	run := func(feed func(*Simulator) error) []Summary {
		t.Helper()
		sim, err := New(Options{Runs: Runs(Policies, []Model{ModelTotal}, requests), HvpaFor: func(string, string) *hvpav1alpha1.Hvpa { return h }})
		if err != nil {
			t.Fatal(err)
		}
		if err := feed(sim); err != nil {
			t.Fatal(err)
		}
		return sim.Summaries()
	}
	var sums []Summary
	for _, p := range Profiles {
		sums = append(sums, run(func(sim *Simulator) error {
			d := ProfileDemand{Profile: p, Seed: 1}
			if err := d.Each(func(r *trace.Row) error { return sim.Add(r) }); err != nil {
				return err
			}
			return sim.Finish()
		})...)
	}
	shared, err := filepath.Glob(filepath.Join("..", "..", "shared", "traces", "*.csv.gz"))
	if err != nil || len(shared) == 0 {
		t.Logf("the shared traces are not on this machine (../shared/traces beside the repository): only the generated demand is checked")
	}
	for _, f := range shared {
		got := run(func(sim *Simulator) error {
			in, err := os.Open(f)
			if err != nil {
				return err
			}
			defer func() { _ = in.Close() }() // read only
			return sim.Run(in)
		})
		if len(got) == 0 {
			t.Fatalf("%s: no workload ran", f)
		}
		sums = append(sums, got...)
	}
	rep := CheckGoals(sums, "hvpa")
	if len(rep.Workloads) < 3*len(Profiles) || (len(shared) == 0 && len(rep.Workloads) != 3*len(Profiles)) {
		t.Fatalf("%d workloads with an Hvpa run and baselines, want %d generated ones and those of %d shared traces", len(rep.Workloads), 3*len(Profiles), len(shared))
	}
	ran := map[string]bool{}
	for _, w := range rep.Workloads {
		ran[w.Namespace+"/"+w.Workload] = true
	}
	for _, name := range shootoutMisses {
		if !ran[name] && (len(shared) > 0 || strings.HasPrefix(name, "shootout/")) {
			t.Errorf("shootoutMisses names %s, which did not run", name)
		}
	}
	met := 0
	for _, w := range rep.Workloads {
		name := w.Namespace + "/" + w.Workload
		known := slices.Contains(shootoutMisses, name)
		switch {
		case len(w.Failed) == 0:
			met++
			if known {
				t.Errorf("%s now meets every goal: take it off shootoutMisses", name)
			}
		case known:
			t.Logf("%s (a known miss): %v", name, w.Failed)
		default:
			t.Errorf("%s no longer meets every goal: %v", name, w.Failed)
		}
	}
	t.Logf("%d of %d workloads meet every goal; median cpu provided/demand %.3f, best baselines %.3f (goal: at most %.3f)",
		met, len(rep.Workloads), rep.HvpaMedian, rep.BestMedian, GoalMedianFactor*rep.BestMedian)
	if len(rep.Failed) > 0 {
		t.Errorf("over the workloads: %v", rep.Failed)
	}
}
