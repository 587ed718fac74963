// Command shootoutfloor measures the physical floor of the shoot-out's CPU goal (issue 33): for each
// workload of a demand trace, the least CPU a clairvoyant provides (floor.go) within the goals' own
// budgets: the shortfall of the workload's best baseline plus 0.5 points, at most 48 per-pod changes a day,
// and falls no sooner than --hold after the last change (the Hvpa's scale-down stabilization). The best
// baseline and the Hvpa's result come from the shoot-out's summary JSON of the same trace (hack/shootout.sh
// writes both into bin/shootout). When even the lower bound is above the best baseline's CPU, no
// autoscaler bound by those rules meets that workload's CPU goal.
//
//	hack/run.sh shootoutfloor [--hold 30m] [--workload PREFIX] [--shortfall F] [--grid 1.02] TRACE.csv.gz SUMMARY.json
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hvpa-dev/hvpa/closedloop"
	"github.com/hvpa-dev/hvpa/recommender/trace"
)

func main() {
	hold := flag.Duration("hold", 30*time.Minute, "a fall comes at least this long after the last change (the Hvpa's scaleDown.stabilizationDuration)")
	prefix := flag.String("workload", "", "only the workloads whose namespace/name starts with this")
	grid := flag.Float64("grid", 1.02, "the ratio of the clairvoyant's geometric grid of levels (the lower bound allows for it)")
	shortfall := flag.Float64("shortfall", -1, "the shortfall budget, a fraction of the demand (default: the best baseline's + 0.5 points, the goal's)")
	flag.Parse()
	if flag.NArg() != 2 || *hold < time.Minute || *grid <= 1 {
		fmt.Fprintln(os.Stderr, "usage: shootoutfloor [--hold 30m] [--workload PREFIX] [--shortfall F] [--grid 1.02] TRACE.csv.gz SUMMARY.json (--hold at least 1m, --grid above 1)")
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), flag.Arg(1), int(*hold/time.Minute), *prefix, *grid, *shortfall); err != nil {
		fmt.Fprintln(os.Stderr, "shootoutfloor:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, tracePath, summaryPath string, hold int, prefix string, ratio, shortfall float64) error {
	demand, err := readDemand(tracePath)
	if err != nil {
		return err
	}
	goals, err := readGoals(summaryPath)
	if err != nil {
		return err
	}
	budget := fmt.Sprintf("the best baseline's + %.1f points", 100*closedloop.GoalShortfallSlack)
	if shortfall >= 0 {
		budget = fmt.Sprintf("%.2f%%", 100*shortfall)
	}
	if _, err := fmt.Fprintf(w, "Clairvoyant floor, CPU provided/demand: falls at least %d min after the last change, at most %d per-pod changes a day, shortfall at most %s (grid ratio %g).\n\n"+
		"| workload | best baseline | its cpu p/d | its shortfall | clairvoyant cpu p/d | its shortfall | its changes/day | lower bound | hvpa cpu p/d | hvpa shortfall | the CPU goal |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
		hold, closedloop.GoalPerPodChangesPerDay, budget, ratio); err != nil {
		return err
	}
	names := make([]string, 0, len(demand))
	for name := range demand {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		g, ok := goals[name]
		if !ok {
			return fmt.Errorf("%s: not in %s (the summary of the same trace, with an hvpa run and baselines)", name, summaryPath)
		}
		d := demand[name]
		total := sum(d)
		days := float64(len(d)) / (24 * 60)
		allowed := g.Best.CPUShortfall + closedloop.GoalShortfallSlack
		if shortfall >= 0 {
			allowed = shortfall
		}
		f := findFloor(d, ratio, hold, allowed*total, int(closedloop.GoalPerPodChangesPerDay*days))
		verdict := "undetermined (the bound is below the baseline, the plan found above it)"
		switch {
		case f.lower/total > g.Best.CPUProvidedOverDemand:
			verdict = "out of reach within these budgets (the lower bound is above the baseline)"
		case f.found && f.feasible.provided/total <= g.Best.CPUProvidedOverDemand:
			verdict = "reachable by a clairvoyant"
		}
		clair := "none within the budgets"
		if f.found {
			clair = fmt.Sprintf("%.3f | %.2f%% | %.1f", f.feasible.provided/total, 100*f.feasible.short/total, float64(f.feasible.changes)/days)
		} else {
			clair += " | | "
		}
		if _, err := fmt.Fprintf(w, "| %s | %s | %.3f | %.2f%% | %s | %.3f | %.3f | %.2f%% | %s |\n", name, g.Best.Policy, g.Best.CPUProvidedOverDemand,
			100*g.Best.CPUShortfall, clair, f.lower/total, g.Hvpa.CPUProvidedOverDemand, 100*g.Hvpa.CPUShortfall, verdict); err != nil {
			return err
		}
	}
	return nil
}

// readDemand is the trace's CPU per workload ("namespace/name") and minute: the sum over its rows of a
// timestamp, in the trace's order of timestamps.
func readDemand(path string) (map[string][]float64, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = in.Close() }() // read only
	out := map[string][]float64{}
	last := map[string]int64{}
	err = trace.Each(in, func(r *trace.Row) error {
		name := string(r.Namespace) + "/" + string(r.Workload)
		if at, ok := last[name]; !ok || at != r.Time {
			out[name] = append(out[name], 0)
			last[name] = r.Time
		}
		if r.HasCPU {
			out[name][len(out[name])-1] += float64(r.CPU)
		}
		return nil
	})
	return out, err
}

// readGoals is the goal report of a shoot-out summary JSON (hvpa simulate --closed-loop --summary-json) by
// workload ("namespace/name").
func readGoals(path string) (map[string]closedloop.WorkloadGoals, error) {
	sums, err := closedloop.ReadSummaries(path)
	if err != nil {
		return nil, err
	}
	out := map[string]closedloop.WorkloadGoals{}
	for _, w := range closedloop.CheckGoals(sums, string(closedloop.PolicyHvpa)).Workloads {
		if w.Best != nil {
			out[w.Namespace+"/"+w.Workload] = w
		}
	}
	return out, nil
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}
