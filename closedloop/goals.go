package closedloop

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// The goals of the shoot-out (docs/design/scaling.md, "What the contract is measured against"): an Hvpa
// against the best baseline of each workload.
const (
	// GoalShortfallSlack is how much more CPU shortfall than the best baseline's the Hvpa may have (0.5 points).
	GoalShortfallSlack = 0.005
	// GoalMedianFactor: the Hvpa's median CPU provided/demand over the workloads is at most this factor of the
	// best baselines' median.
	GoalMedianFactor = 0.9
	// GoalPerPodChangesPerDay is the most in-place per-pod changes a day.
	GoalPerPodChangesPerDay = 48
	// goalHPAChurnLabel is the HPA run whose replica changes the Hvpa's are held against (half of them, or
	// one a day, whichever is more).
	goalHPAChurnLabel = "hpa[cpu=500m"
)

// WorkloadGoals is how one workload's Hvpa run compares with its baselines.
type WorkloadGoals struct {
	Namespace, Workload string
	Hvpa                Summary
	// Best is the baseline with the lowest CPU provided/demand; VPA is the vpa run (nil: none).
	Best, VPA *Summary
	// ChurnLimit is the most replica changes a day the Hvpa may make (0: no hpa[cpu=500m...] run).
	ChurnLimit float64
	// Failed lists the goals this workload misses, each with its numbers.
	Failed []string
}

// GoalReport is the shoot-out's verdict over every workload that has an Hvpa run and a baseline.
type GoalReport struct {
	Workloads              []WorkloadGoals
	HvpaMedian, BestMedian float64
	// Failed lists the goals over all workloads that are missed (the median).
	Failed []string
}

// Met is true when every workload meets every goal and the median goal holds.
func (g GoalReport) Met() bool {
	if len(g.Failed) > 0 {
		return false
	}
	for _, w := range g.Workloads {
		if len(w.Failed) > 0 {
			return false
		}
	}
	return true
}

// CheckGoals compares the Hvpa run labelled hvpa of every workload with the baselines of the same workload
// (every other run except other Hvpa runs, whose label starts with "hvpa").
func CheckGoals(sums []Summary, hvpa string) GoalReport {
	type key struct{ ns, name string }
	byWorkload := map[key][]Summary{}
	var order []key
	for _, s := range sums {
		k := key{s.Namespace, s.Workload}
		if _, ok := byWorkload[k]; !ok {
			order = append(order, k)
		}
		byWorkload[k] = append(byWorkload[k], s)
	}
	var rep GoalReport
	var hvpaRatios, bestRatios []float64
	for _, k := range order {
		w, ok := workloadGoals(byWorkload[k], hvpa)
		if !ok {
			continue
		}
		rep.Workloads = append(rep.Workloads, w)
		hvpaRatios = append(hvpaRatios, w.Hvpa.CPUProvidedOverDemand)
		bestRatios = append(bestRatios, w.Best.CPUProvidedOverDemand)
	}
	rep.HvpaMedian, rep.BestMedian = median(hvpaRatios), median(bestRatios)
	if len(rep.Workloads) > 0 && rep.HvpaMedian > GoalMedianFactor*rep.BestMedian {
		rep.Failed = append(rep.Failed, fmt.Sprintf("median cpu provided/demand %.3f > %.2f x the best baselines' %.3f = %.3f",
			rep.HvpaMedian, GoalMedianFactor, rep.BestMedian, GoalMedianFactor*rep.BestMedian))
	}
	return rep
}

// workloadGoals checks one workload's runs; false when it has no Hvpa run or no baseline.
func workloadGoals(runs []Summary, hvpa string) (WorkloadGoals, bool) {
	var w WorkloadGoals
	found := false
	for i := range runs {
		s := &runs[i]
		switch {
		case s.Policy == hvpa:
			w.Hvpa, found = *s, true
		case strings.HasPrefix(s.Policy, string(PolicyHvpa)):
		default:
			if w.Best == nil || s.CPUProvidedOverDemand < w.Best.CPUProvidedOverDemand {
				w.Best = s
			}
			if s.Policy == string(PolicyVPA) {
				w.VPA = s
			}
			if strings.HasPrefix(s.Policy, goalHPAChurnLabel) {
				w.ChurnLimit = max(s.ReplicaChangesPerDay/2, 1)
			}
		}
	}
	if !found || w.Best == nil {
		return w, false
	}
	w.Namespace, w.Workload = w.Hvpa.Namespace, w.Hvpa.Workload
	h, b := w.Hvpa, w.Best
	if h.CPUProvidedOverDemand > b.CPUProvidedOverDemand {
		w.Failed = append(w.Failed, fmt.Sprintf("cpu provided/demand %.3f > %s's %.3f", h.CPUProvidedOverDemand, b.Policy, b.CPUProvidedOverDemand))
	}
	if h.CPUShortfall > b.CPUShortfall+GoalShortfallSlack {
		w.Failed = append(w.Failed, fmt.Sprintf("cpu shortfall %.2f%% > %s's %.2f%% + 0.5", 100*h.CPUShortfall, b.Policy, 100*b.CPUShortfall))
	}
	if w.VPA == nil {
		w.Failed = append(w.Failed, "memory and OOM goals not checked: no vpa run (--policy vpa)")
	}
	if w.ChurnLimit == 0 {
		w.Failed = append(w.Failed, "replica-change goal not checked: no "+goalHPAChurnLabel+",...] run (--policy hpa with --hpa-requests cpu=500m,...)")
	}
	if v := w.VPA; v != nil {
		if h.MemoryProvidedOverDemand > v.MemoryProvidedOverDemand {
			w.Failed = append(w.Failed, fmt.Sprintf("memory provided/demand %.3f > vpa's %.3f", h.MemoryProvidedOverDemand, v.MemoryProvidedOverDemand))
		}
		if h.OOMEvents > v.OOMEvents {
			w.Failed = append(w.Failed, fmt.Sprintf("OOM kills %d > vpa's %d", h.OOMEvents, v.OOMEvents))
		}
	}
	if w.ChurnLimit > 0 && h.ReplicaChangesPerDay > w.ChurnLimit {
		w.Failed = append(w.Failed, fmt.Sprintf("replica changes %.1f/day > %.1f", h.ReplicaChangesPerDay, w.ChurnLimit))
	}
	if h.PerPodChangesPerDay > GoalPerPodChangesPerDay {
		w.Failed = append(w.Failed, fmt.Sprintf("per-pod changes %.1f/day > %d", h.PerPodChangesPerDay, GoalPerPodChangesPerDay))
	}
	return w, true
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// WriteGoals writes the report as a markdown table, a row per workload, then the verdict.
func WriteGoals(out io.Writer, g GoalReport) error {
	var b strings.Builder
	b.WriteString("| workload | hvpa cpu p/d | short | best baseline | its cpu p/d | short | hvpa mem p/d | vpa mem p/d | hvpa OOM | vpa OOM | replica changes/day (limit) | per-pod/day | goals |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	met := 0
	for _, w := range g.Workloads {
		h, best := w.Hvpa, w.Best
		vm, vo := "-", "-"
		if w.VPA != nil {
			vm, vo = fmt.Sprintf("%.3f", w.VPA.MemoryProvidedOverDemand), fmt.Sprint(w.VPA.OOMEvents)
		}
		verdict := "met"
		if len(w.Failed) > 0 {
			verdict = "MISSED: " + strings.Join(w.Failed, "; ")
		} else {
			met++
		}
		fmt.Fprintf(&b, "| %s/%s | %.3f | %.2f%% | %s | %.3f | %.2f%% | %.3f | %s | %d | %s | %.1f (%.1f) | %.1f | %s |\n",
			w.Namespace, w.Workload, h.CPUProvidedOverDemand, 100*h.CPUShortfall, best.Policy, best.CPUProvidedOverDemand, 100*best.CPUShortfall,
			h.MemoryProvidedOverDemand, vm, h.OOMEvents, vo, h.ReplicaChangesPerDay, w.ChurnLimit, h.PerPodChangesPerDay, verdict)
	}
	fmt.Fprintf(&b, "\n%d of %d workloads meet every goal; median cpu provided/demand: hvpa %.3f, best baselines %.3f (goal: at most %.3f)\n",
		met, len(g.Workloads), g.HvpaMedian, g.BestMedian, GoalMedianFactor*g.BestMedian)
	for _, f := range g.Failed {
		fmt.Fprintf(&b, "MISSED: %s\n", f)
	}
	_, err := io.WriteString(out, b.String())
	return err
}
