package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/closedloop"
	"github.com/hvpa-dev/hvpa/internal/textout"
)

// closedLoopFlags are the flags only --closed-loop reads.
type closedLoopFlags struct {
	policy, table, vpaUpdateMode            string
	hpaRequests                             []string
	hpaBehavior                             string
	replicas, hpaMin, hpaMax, vpaMinReplica int32
	actuation                               closedloop.Actuation
}

// register adds the flags with their defaults (closedloop's).
func (f *closedLoopFlags) register(fs *pflag.FlagSet) {
	a, h, v := closedloop.DefaultActuation(), closedloop.DefaultHPA(), closedloop.DefaultVPA()
	fs.StringVar(&f.policy, "policy", string(closedloop.PolicyHvpa), "with --closed-loop: the policies to run on the same demand, a comma-separated list of hvpa, hpa, vpa and hpa+vpa")
	fs.StringArrayVar(&f.hpaRequests, "hpa-requests", nil, "with --closed-loop: fixed per-pod requests of the hpa and hpa+vpa policies, e.g. cpu=250m,memory=1Gi (each use of the flag is a run of its own; none: the trace's first requests)")
	fs.Int32Var(&f.replicas, "replicas", 0, "with --closed-loop: the fixed replicas of the vpa policy (0: the pods of the trace's first timestamp)")
	fs.Int32Var(&f.hpaMin, "hpa-min-replicas", h.MinReplicas, "with --closed-loop: minReplicas of the hpa and hpa+vpa policies' HPA")
	fs.Int32Var(&f.hpaMax, "hpa-max-replicas", h.MaxReplicas, "with --closed-loop: maxReplicas of the hpa and hpa+vpa policies' HPA")
	fs.StringVar(&f.hpaBehavior, "hpa-behavior", "default", "with --closed-loop: the hpa and hpa+vpa policies' HPA has behavior: {} (default: the API's default rules) or none (no behavior field, as kubectl autoscale makes it: the controller's older path)")
	fs.StringVar(&f.vpaUpdateMode, "vpa-update-mode", string(v.UpdateMode), "with --closed-loop: updateMode of the vpa and hpa+vpa policies' VPA: InPlaceOrRecreate or Recreate")
	fs.Int32Var(&f.vpaMinReplica, "vpa-min-replicas", v.MinReplicas, "with --closed-loop: the VPA updater leaves a workload with fewer pods alone (upstream's --min-replicas is 2; the simulated VPAs set updatePolicy.minReplicas)")
	fs.DurationVar(&f.actuation.Step, "hpa-sync-period", a.Step, "with --closed-loop: the HPA's sync period, also the simulation step")
	fs.DurationVar(&f.actuation.MetricResolution, "metric-resolution", 0, "with --closed-loop: the metrics window the autoscalers read (metrics-server's --metric-resolution), a multiple of --hpa-sync-period (0: "+a.MetricResolution.String()+", or the first multiple of the sync period from it)")
	fs.DurationVar(&f.actuation.StartupDelay, "startup-delay", a.StartupDelay, "with --closed-loop: a new pod serves this long after it is created")
	fs.DurationVar(&f.actuation.RestartDelay, "restart-delay", a.RestartDelay, "with --closed-loop: an OOM-killed container serves again after this delay, doubled per kill in a row up to 5m")
	fs.DurationVar(&f.actuation.UpdaterInterval, "updater-interval", a.UpdaterInterval, "with --closed-loop: the recommender and updater period; an in-place resize applies this long after it was decided")
	fs.BoolVar(&f.actuation.ResizeKeepsBackoff, "resize-keeps-backoff", false, "with --closed-loop: an in-place resize leaves a container's CrashLoopBackOff as it is (kubelets before kubernetes/kubernetes#125757); by default a resize starts the container's back-off anew and one waiting in back-off restarts with its new resources when the resize applies")
	fs.StringVar(&f.table, "table", "text", "with --closed-loop: the format of the table on standard output, text or markdown")
}

type closedLoopArgs struct {
	trace, out, summary, report, model, hvpaFile string
	outSet, compare                              bool
	interval                                     time.Duration
	flags                                        closedLoopFlags
}

// options are the closed loop's options from the flags.
func (a closedLoopArgs) options() (closedloop.Options, error) {
	models, err := closedLoopModels(a)
	if err != nil {
		return closedloop.Options{}, err
	}
	policies, err := closedloop.ParsePolicies(a.flags.policy)
	if err != nil {
		return closedloop.Options{}, err
	}
	var requests []closedloop.PodRequests
	for _, s := range a.flags.hpaRequests {
		r, err := closedloop.ParsePodRequests(s)
		if err != nil {
			return closedloop.Options{}, err
		}
		requests = append(requests, r)
	}
	if a.flags.table != "text" && a.flags.table != "markdown" {
		return closedloop.Options{}, fmt.Errorf("--table %q: use text or markdown", a.flags.table)
	}
	hpa := closedloop.DefaultHPA()
	hpa.MinReplicas, hpa.MaxReplicas = a.flags.hpaMin, a.flags.hpaMax
	switch a.flags.hpaBehavior {
	case "default":
	case "none":
		hpa.NoBehavior = true
	default:
		return closedloop.Options{}, fmt.Errorf("--hpa-behavior %q: use default (behavior: {}) or none (no behavior field)", a.flags.hpaBehavior)
	}
	vpa := closedloop.DefaultVPA()
	vpa.Replicas, vpa.MinReplicas, vpa.UpdateMode = a.flags.replicas, a.flags.vpaMinReplica, vpav1.UpdateMode(a.flags.vpaUpdateMode)
	return closedloop.Options{Interval: a.interval, Runs: closedloop.Runs(policies, models, requests), Actuation: a.flags.actuation, HPA: hpa, VPA: vpa}, nil
}

// runClosedLoop is `hvpa simulate --closed-loop`.
func runClosedLoop(cmd *cobra.Command, sources []policySource, a closedLoopArgs) error {
	hvpas := slices.DeleteFunc(slices.Clone(sources), func(s policySource) bool { return s.hvpa == nil })
	if len(hvpas) == 0 {
		return fmt.Errorf("--closed-loop needs --hvpa FILE: the Hvpa objects whose intervals and policies scale the workloads (targetRef.name \"*\" applies to every workload no other object names)")
	}
	opts, err := a.options()
	if err != nil {
		return err
	}
	in, err := openInput(a.trace, cmd.InOrStdin())
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read only: Close has nothing to lose
	out := ""
	if a.outSet { // the rows go where --out says only when it is given: standard output has the table
		out = a.out
	}
	rows, closeRows, err := rowsWriter(cmd, out)
	if err != nil {
		return err
	}
	defer closeRows()
	opts.Rows = rows
	opts.HvpaFor = hvpaFor(hvpas)
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
	if _, err := fmt.Fprintf(cmd.ErrOrStderr(), "hvpa simulate --closed-loop: %d workloads x %d runs in %s\n", len(sums)/len(opts.Runs), len(opts.Runs), time.Since(start).Round(time.Millisecond)); err != nil {
		return err
	}
	return a.write(cmd, sums, sim)
}

// hvpaFor returns the Hvpa of hvpas that applies to a workload (matchSource), nil for none.
func hvpaFor(hvpas []policySource) func(ns, workload string) *hvpav1alpha1.Hvpa {
	return func(ns, workload string) *hvpav1alpha1.Hvpa {
		if s := matchSource(hvpas, ns, workload); s != nil {
			return s.hvpa
		}
		return nil
	}
}

// write writes the outcome: the table (standard output, standard error when the rows go there), the summary
// JSON and the report.
func (a closedLoopArgs) write(cmd *cobra.Command, sums []closedloop.Summary, sim *closedloop.Simulator) error {
	tableTo := cmd.OutOrStdout()
	if a.outSet && a.out == "-" {
		tableTo = cmd.ErrOrStderr()
	}
	table := textout.New(tableTo)
	printClosedLoopTable(table, sums, a.flags.table == "markdown")
	if table.Err() != nil {
		return table.Err()
	}
	if a.summary != "" {
		if err := writeSummaryJSON(a.summary, sums); err != nil {
			return err
		}
	}
	if a.report != "" {
		return writeReport(a.report, a.trace, sums, sim.Series())
	}
	return nil
}

func writeReport(path, title string, sums []closedloop.Summary, series []*closedloop.Series) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := closedloop.WriteReport(f, title, sums, series); err != nil {
		_ = f.Close() // the write failed; its error is the one to report
		return err
	}
	return f.Close()
}

// closedLoopModels are the recommender models of the hvpa policy: --model, or both with --compare.
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

// rowsWriter is where the per-timestamp rows go (--out: a file, - for standard output, "" for none),
// buffered; closeRows flushes and closes it.
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

// closedLoopColumns are the table's columns: header and the value of a summary.
var closedLoopColumns = []struct {
	name  string
	value func(s closedloop.Summary) string
}{
	{"workload", func(s closedloop.Summary) string { return s.Namespace + "/" + s.Workload }},
	{"policy", func(s closedloop.Summary) string { return s.Policy }},
	{"replicas (final/max)", func(s closedloop.Summary) string { return fmt.Sprintf("%d/%d", s.FinalReplicas, s.MaxReplicas) }},
	{"cpu provided/demand", func(s closedloop.Summary) string { return fmt.Sprintf("%.3f", s.CPUProvidedOverDemand) }},
	{"cpu shortfall", func(s closedloop.Summary) string { return fmt.Sprintf("%.2f%%", 100*s.CPUShortfall) }},
	{"memory provided/demand", func(s closedloop.Summary) string { return fmt.Sprintf("%.3f", s.MemoryProvidedOverDemand) }},
	{"memory shortfall", func(s closedloop.Summary) string { return fmt.Sprintf("%.2f%%", 100*s.MemoryShortfall) }},
	{"OOM kills", func(s closedloop.Summary) string { return fmt.Sprint(s.OOMEvents) }},
	{"restarts", func(s closedloop.Summary) string { return fmt.Sprint(s.Restarts) }},
	{"evictions", func(s closedloop.Summary) string { return fmt.Sprint(s.Evictions) }},
	{"replica changes/day", func(s closedloop.Summary) string { return fmt.Sprintf("%.2f", s.ReplicaChangesPerDay) }},
	{"per-pod changes/day", func(s closedloop.Summary) string { return fmt.Sprintf("%.2f", s.PerPodChangesPerDay) }},
}

// printClosedLoopTable writes the outcome per workload and run as a table (aligned text or markdown).
func printClosedLoopTable(w *output, sums []closedloop.Summary, markdown bool) {
	cells := [][]string{make([]string, len(closedLoopColumns))}
	for i, c := range closedLoopColumns {
		cells[0][i] = c.name
	}
	for _, s := range sums {
		row := make([]string, len(closedLoopColumns))
		for i, c := range closedLoopColumns {
			row[i] = c.value(s)
		}
		cells = append(cells, row)
	}
	if markdown {
		for i, row := range cells {
			w.Printf("| %s |\n", strings.Join(row, " | "))
			if i == 0 {
				w.Printf("|%s\n", strings.Repeat("---|", len(row)))
			}
		}
		return
	}
	width := make([]int, len(closedLoopColumns))
	for _, row := range cells {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	for _, row := range cells {
		var b strings.Builder
		for i, c := range row {
			if i < 2 {
				fmt.Fprintf(&b, "%-*s  ", width[i], c)
			} else {
				fmt.Fprintf(&b, "%*s  ", width[i], c)
			}
		}
		w.Println(strings.TrimRight(b.String(), " "))
	}
}

// writeSummaryJSON writes the outcome per workload and run to path (--summary-json).
func writeSummaryJSON(path string, sums []closedloop.Summary) error {
	data, err := json.MarshalIndent(closedloop.SummaryDocument{Workloads: sums}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
