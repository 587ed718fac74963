package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/closedloop"
)

type closedLoopArgs struct {
	trace, out, summary, report, model, hvpaFile string
	compare                                      bool
	interval                                     time.Duration
}

// runClosedLoop is `hvpa simulate --closed-loop`.
func runClosedLoop(cmd *cobra.Command, sources []policySource, a closedLoopArgs) error {
	hvpas := slices.DeleteFunc(slices.Clone(sources), func(s policySource) bool { return s.hvpa == nil })
	if len(hvpas) == 0 {
		return fmt.Errorf("--closed-loop needs --hvpa FILE: the Hvpa objects whose intervals and policies scale the workloads (targetRef.name \"*\" applies to every workload no other object names)")
	}
	models, err := closedLoopModels(a)
	if err != nil {
		return err
	}
	in, err := openInput(a.trace, cmd.InOrStdin())
	if err != nil {
		return err
	}
	defer in.Close()
	rows, closeRows, err := rowsWriter(cmd, a.out)
	if err != nil {
		return err
	}
	defer closeRows()
	opts := closedloop.Options{Interval: a.interval, Models: models, Rows: rows,
		HvpaFor: func(ns, workload string) *hvpav1alpha1.Hvpa {
			if s := matchSource(hvpas, ns, workload); s != nil {
				return s.hvpa
			}
			return nil
		}}
	if a.report != "" {
		opts.SeriesStep = 10 * time.Minute
	}
	sim, err := closedloop.New(opts)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := sim.Run(bufio.NewReaderSize(in, 1<<20)); err != nil {
		return fmt.Errorf("%s: %w", a.trace, err)
	}
	sums := sim.Summaries()
	if len(sums) == 0 {
		return fmt.Errorf("%s: no workload of the trace is named by an Hvpa of %s (targetRef.name, or \"*\" for every workload)", a.trace, a.hvpaFile)
	}
	printClosedLoopTable(cmd.ErrOrStderr(), sums, len(models), time.Since(start))
	if a.summary != "" {
		if err := writeSummaryJSON(a.summary, sums); err != nil {
			return err
		}
	}
	if a.report != "" {
		f, err := os.Create(a.report)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := closedloop.WriteReport(f, a.trace, sums, sim.Series()); err != nil {
			return err
		}
	}
	return nil
}

// closedLoopModels are the recommender models to run: --model, or both with --compare.
func closedLoopModels(a closedLoopArgs) ([]closedloop.Model, error) {
	m, err := closedloop.ParseModel(a.model)
	if err != nil {
		return nil, err
	}
	if a.compare {
		return []closedloop.Model{closedloop.ModelTotal, closedloop.ModelPerPod}, nil
	}
	return []closedloop.Model{m}, nil
}

// rowsWriter is where the per-tick rows go (--out: a file, - for standard output, "" for none), buffered;
// closeRows flushes and closes it.
func rowsWriter(cmd *cobra.Command, out string) (rows io.Writer, closeRows func(), err error) {
	if out == "" {
		return nil, func() {}, nil
	}
	w, closeFile := cmd.OutOrStdout(), func() error { return nil }
	if out != "-" {
		f, err := os.Create(out)
		if err != nil {
			return nil, nil, err
		}
		w, closeFile = f, f.Close
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	return bw, func() { _ = bw.Flush(); _ = closeFile() }, nil
}

// printClosedLoopTable writes the outcome per workload and model as a table.
func printClosedLoopTable(w io.Writer, sums []closedloop.Summary, models int, took time.Duration) {
	fmt.Fprintf(w, "hvpa simulate --closed-loop: %d workloads x %d models in %s\n", len(sums)/models, models, took.Round(time.Millisecond))
	fmt.Fprintf(w, "%-28s %-8s %8s %8s %9s %9s %9s %9s %6s %10s %10s\n", "WORKLOAD", "MODEL", "REPLICAS", "MAX", "CPU P/D", "CPU SHORT", "MEM P/D", "MEM SHORT", "OOMS", "REPL/DAY", "PERPOD/DAY")
	for _, s := range sums {
		fmt.Fprintf(w, "%-28s %-8s %8d %8d %9.3f %9.4f %9.3f %9.4f %6d %10.2f %10.2f\n", s.Namespace+"/"+s.Workload, s.Model, s.FinalReplicas, s.MaxReplicas,
			s.CPUProvidedOverDemand, s.CPUShortfall, s.MemoryProvidedOverDemand, s.MemoryShortfall, s.OOMEvents, s.ReplicaChangesPerDay, s.PerPodChangesPerDay)
	}
}

// writeSummaryJSON writes the outcome per workload and model to path (--summary-json).
func writeSummaryJSON(path string, sums []closedloop.Summary) error {
	data, err := json.MarshalIndent(struct {
		Workloads []closedloop.Summary `json:"workloads"`
	}{sums}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
