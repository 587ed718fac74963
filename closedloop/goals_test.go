package closedloop

import (
	"math"
	"strings"
	"testing"
)

// TestCheckGoals pins the shoot-out's verdict (issue 33's goals): each goal missed by one workload is named
// with its numbers, the best baseline is the one with the lowest CPU provided/demand, the churn limit is half
// of the 500m HPA's replica changes (at least one a day), and the median goal is 0.9 x the best baselines'.
func TestCheckGoals(t *testing.T) {
	run := func(wl, policy string, cpu, short, mem float64, oom int, replicaChanges, perPod float64) Summary {
		return Summary{Namespace: "ns", Workload: wl, Policy: policy, CPUProvidedOverDemand: cpu, CPUShortfall: short,
			MemoryProvidedOverDemand: mem, OOMEvents: oom, ReplicaChangesPerDay: replicaChanges, PerPodChangesPerDay: perPod}
	}
	baselines := func(wl string) []Summary {
		return []Summary{run(wl, "hpa[cpu=250m]", 1.6, 0.01, 3, 0, 40, 0), run(wl, "hpa[cpu=500m]", 1.5, 0.01, 2, 0, 20, 0),
			run(wl, "vpa", 1.9, 0.001, 1.5, 2, 0, 3), run(wl, "hpa+vpa", 1.7, 0.01, 1.6, 1, 20, 2)}
	}
	cases := map[string]struct {
		hvpa Summary
		want []string // substrings of the goals missed (none: met)
	}{
		"every goal met":         {hvpa: run("w", "hvpa", 1.2, 0.012, 1.4, 2, 10, 48)},
		"more cpu than the best": {hvpa: run("w", "hvpa", 1.51, 0.01, 1.4, 0, 1, 1), want: []string{"cpu provided/demand 1.510 > hpa[cpu=500m]'s 1.500"}},
		"shortfall 0.5 points above the best's": {hvpa: run("w", "hvpa", 1.2, 0.0151, 1.4, 0, 1, 1),
			want: []string{"cpu shortfall 1.51% > hpa[cpu=500m]'s 1.00% + 0.5"}},
		"more memory than vpa":    {hvpa: run("w", "hvpa", 1.2, 0, 1.51, 0, 1, 1), want: []string{"memory provided/demand 1.510 > vpa's 1.500"}},
		"more OOM kills than vpa": {hvpa: run("w", "hvpa", 1.2, 0, 1.4, 3, 1, 1), want: []string{"OOM kills 3 > vpa's 2"}},
		"churn":                   {hvpa: run("w", "hvpa", 1.2, 0, 1.4, 0, 10.5, 49), want: []string{"replica changes 10.5/day > 10.0", "per-pod changes 49.0/day > 48"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rep := CheckGoals(append(baselines("w"), tc.hvpa), "hvpa")
			if len(rep.Workloads) != 1 {
				t.Fatalf("%d workloads judged, want 1", len(rep.Workloads))
			}
			got := rep.Workloads[0].Failed
			if len(got) != len(tc.want) {
				t.Fatalf("missed %q, want %q", got, tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("missed %q, want it to say %q", got[i], w)
				}
			}
		})
	}
	// a goal whose baseline did not run is not met (it was skipped, and the workload read "met")
	for name, tc := range map[string]struct {
		drop, want string
	}{"no vpa": {"vpa", "memory and OOM goals not checked: no vpa run"}, "no 500m hpa": {"hpa[cpu=500m]", "replica-change goal not checked"}} {
		runs := []Summary{run("w", "hvpa", 1.2, 0.012, 1.4, 2, 10, 48)}
		for _, b := range baselines("w") {
			if b.Policy != tc.drop {
				runs = append(runs, b)
			}
		}
		if got := CheckGoals(runs, "hvpa").Workloads[0].Failed; len(got) != 1 || !strings.Contains(got[0], tc.want) {
			t.Errorf("%s: missed %q, want %q", name, got, tc.want)
		}
	}
	// the median over the workloads: 1.2 and 1.4 (median 1.3) against best baselines 1.5 and 1.5 (0.9 x 1.5 = 1.35)
	all := append(append(baselines("a"), run("a", "hvpa", 1.2, 0, 1.4, 0, 1, 1)), append(baselines("b"), run("b", "hvpa", 1.4, 0, 1.4, 0, 1, 1))...)
	if rep := CheckGoals(all, "hvpa"); math.Abs(rep.HvpaMedian-1.3) > 1e-9 || rep.BestMedian != 1.5 || len(rep.Failed) != 0 || !rep.Met() {
		t.Errorf("median %v against %v, failed %q, met %v; want 1.3 against 1.5, met", rep.HvpaMedian, rep.BestMedian, rep.Failed, rep.Met())
	}
	all = append(all[:len(all)-1], run("b", "hvpa", 1.6, 0, 1.4, 0, 1, 1))
	if rep := CheckGoals(all, "hvpa"); len(rep.Failed) != 1 || rep.Met() {
		t.Errorf("median %v against %v: failed %q, want the median goal missed", rep.HvpaMedian, rep.BestMedian, rep.Failed)
	}
}
