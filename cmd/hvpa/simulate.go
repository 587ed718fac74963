package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/closedloop"
	"github.com/hvpa-dev/hvpa/internal/textout"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/adaptive"
	"github.com/hvpa-dev/hvpa/recommender/simulate"
)

type policySource struct {
	namespace, name string
	policy          *vpav1.PodResourcePolicy
	config          *recommender.Config // the object's override annotations applied; nil without any
	hvpa            *hvpav1alpha1.Hvpa  // the object, when it is an Hvpa
	model           string              // its recommender.hvpa.dev/model annotation ("": none)
	annotations     map[string]string   // a VerticalPodAutoscaler's annotations (nil for an Hvpa)
}

// simulateLong is the long help of `hvpa simulate`.
const simulateLong = `Run the recommender model on a usage trace (TRACE-FORMAT v1: CSV, plain or gzip; - reads standard input)
on a simulated clock and write a recommendation row per (namespace, workload, container) every --interval.
One VPA per workload with the default policy, unless --vpa (VerticalPodAutoscaler manifests) or --hvpa (Hvpa
manifests) give policies: an object applies to the workload its targetRef names (and to its namespace, when
it has one); an object whose targetRef name is "*" applies to every workload no other object names.
A summary goes to standard error: samples, recommendations, wall time, samples/s, peak heap, and the quality
of the targets against the usage that followed them (slack, usage over target, applied changes per
container-day). --model adaptive runs the adaptive model (an ensemble scored on the recent past, see
docs/simulate.md) for every workload, upstream's beside it for comparison; an object's annotation
recommender.hvpa.dev/model chooses the model of its workloads.

With --closed-loop the trace is the DEMAND of each workload (per timestamp, its pods' usage summed per
container) and every workload that an Hvpa of --hvpa names is served, under each policy of --policy on the
same demand, by a simulated workload (see docs/simulate.md): hvpa (the Hvpa as configured: the real
recommender and the real decision), hpa (the HPA v2 algorithm on the Hvpa's HPA metrics, fixed per-pod
requests: the trace's first or each --hpa-requests), vpa (upstream's VPA with fixed replicas) and hpa+vpa
(an HPA on CPU, a VPA on memory). Every policy goes through the same actuation model (--startup-delay,
--updater-interval, --restart-delay, --hpa-sync-period, --metric-resolution). A table per workload and
policy goes to standard output; --out writes a row per trace timestamp and container of the first run (pods, mean per-pod requests,
demand), --summary-json the outcome per workload and run, --report a page of the runs side by side;
--model chooses the Hvpa recommender's model (total, the replica-aware one, or per-pod, the replica-blind
one), --compare runs both.`

// simulateFlags are the flags of `hvpa simulate`.
type simulateFlags struct {
	traceFile, outFile, vpaFile, hvpaFile, reportFile, cpuProfile, summaryFile, model string
	interval                                                                          time.Duration
	closedLoop, compare, integerCPU                                                   bool
	cl                                                                                closedLoopFlags
}

func newSimulateCommand() *cobra.Command {
	var f simulateFlags
	cmd := &cobra.Command{
		Use:   "simulate --trace FILE [--out FILE] [--interval 1m] [--vpa vpa.yaml] [--hvpa hvpa.yaml] [--report report.html] [--model upstream|adaptive]",
		Short: "Run the recommender on a usage trace and write its recommendations",
		Long:  simulateLong,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	cmd.Flags().StringVar(&f.traceFile, "trace", "", "usage trace (CSV or gzip CSV; - for standard input)")
	cmd.Flags().StringVar(&f.outFile, "out", "-", "recommendation file to write (- for standard output); with --closed-loop: the per-timestamp rows (none unless given)")
	cmd.Flags().DurationVar(&f.interval, "interval", time.Minute, "time between recommendations")
	cmd.Flags().StringVar(&f.vpaFile, "vpa", "", "VerticalPodAutoscaler manifests giving container policies")
	cmd.Flags().StringVar(&f.hvpaFile, "hvpa", "", "Hvpa manifests giving container policies (spec.vpa.template.resourcePolicy)")
	cmd.Flags().StringVar(&f.reportFile, "report", "", "write a self-contained HTML report (usage vs target and bounds per container)")
	cmd.Flags().StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the simulation to this file")
	_ = cmd.Flags().MarkHidden("cpuprofile")
	cmd.Flags().BoolVar(&f.closedLoop, "closed-loop", false, "replay the trace as demand and scale each workload with its Hvpa (--hvpa) in closed loop")
	cmd.Flags().StringVar(&f.model, "model", "", "the recommender's model: upstream (the default) or adaptive; with --closed-loop: the model of an Hvpa's workload, total (replica-aware, the default) or per-pod (replica-blind)")
	cmd.Flags().BoolVar(&f.compare, "compare", false, "with --closed-loop: run both models on the same demand")
	cmd.Flags().StringVar(&f.summaryFile, "summary-json", "", "with --closed-loop: write the outcome per workload and run as JSON")
	cmd.Flags().BoolVar(&f.integerCPU, "cpu-integer-post-processor-enabled", false, "recommend whole cores of CPU for the containers a --vpa object annotates vpa-post-processor.kubernetes.io/<container>_integerCPU: \"true\", as the recommender's flag of the same name")
	f.cl.register(cmd.Flags())
	_ = cmd.MarkFlagRequired("trace")
	return cmd
}

// run runs the simulation the flags ask for: in closed loop, or the recommender on a usage trace.
func (f *simulateFlags) run(cmd *cobra.Command) error {
	sources, err := loadPolicies(f.vpaFile, f.hvpaFile, cmd.InOrStdin())
	if err != nil {
		return err
	}
	if f.closedLoop {
		if f.integerCPU {
			return fmt.Errorf("--cpu-integer-post-processor-enabled applies to the --vpa objects of a simulation without --closed-loop (the closed loop's vpa policy runs upstream's defaults)")
		}
		model := f.model
		if model == "" {
			model = string(closedloop.ModelTotal)
		}
		return runClosedLoop(cmd, sources, closedLoopArgs{trace: f.traceFile, out: f.outFile, outSet: cmd.Flags().Changed("out"), summary: f.summaryFile,
			report: f.reportFile, model: model, compare: f.compare, interval: f.interval, hvpaFile: f.hvpaFile, flags: f.cl})
	}
	if f.compare || f.summaryFile != "" {
		return fmt.Errorf("--compare and --summary-json need --closed-loop")
	}
	for _, name := range closedLoopOnly {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s needs --closed-loop", name)
		}
	}
	m, err := adaptive.ParseModel(f.model)
	if err != nil {
		return fmt.Errorf("--%w", err)
	}
	return runOpenLoop(cmd, sources, openLoopArgs{trace: f.traceFile, out: f.outFile, report: f.reportFile, cpuProfile: f.cpuProfile, interval: f.interval, model: m, integerCPU: f.integerCPU})
}

// closedLoopOnly are the flags only --closed-loop reads.
var closedLoopOnly = []string{"policy", "hpa-requests", "replicas", "hpa-min-replicas", "hpa-max-replicas", "hpa-behavior", "vpa-update-mode", "vpa-min-replicas",
	"hpa-sync-period", "metric-resolution", "startup-delay", "restart-delay", "updater-interval", "resize-keeps-backoff", "table"}

// openLoopArgs are the flags of an open-loop simulation (recommendations on a usage trace).
type openLoopArgs struct {
	trace, out, report, cpuProfile, model string
	interval                              time.Duration
	integerCPU                            bool // --cpu-integer-post-processor-enabled
}

// runOpenLoop runs the recommender on a usage trace and writes its recommendations, the summary and, with
// --report, the report.
func runOpenLoop(cmd *cobra.Command, sources []policySource, a openLoopArgs) (rerr error) {
	in, err := openInput(a.trace, cmd.InOrStdin())
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read only: Close has nothing to lose
	out := cmd.OutOrStdout()
	if a.out != "" && a.out != "-" {
		f, err := os.Create(a.out)
		if err != nil {
			return err
		}
		defer closeInto(f, &rerr)
		out = f
	}
	var peak uint64
	var ms runtime.MemStats
	sim, err := simulate.New(out, simulatorOptions(sources, a, func(t int64) {
		if t%3600 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}))
	if err != nil {
		return err
	}
	if a.cpuProfile != "" {
		f, err := os.Create(a.cpuProfile)
		if err != nil {
			return err
		}
		defer closeInto(f, &rerr)
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	if err := sim.Run(bufio.NewReaderSize(in, 1<<20)); err != nil {
		return fmt.Errorf("%s: %w", a.trace, err)
	}
	wall := time.Since(start)
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapAlloc)
	if err := printRun(cmd.ErrOrStderr(), sim.Stats, wall, peak); err != nil {
		return err
	}
	if a.report != "" {
		f, err := os.Create(a.report)
		if err != nil {
			return err
		}
		defer closeInto(f, &rerr)
		if err := simulate.WriteReport(f, a.trace, sim.Stats, sim.Series()); err != nil {
			return err
		}
	}
	return nil
}

// closeInto closes a file the command wrote and, when the command has no error yet, makes Close's error its
// error: a written file whose Close fails may not hold what was written.
func closeInto(f io.Closer, err *error) {
	if cerr := f.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

// simulatorOptions are the open-loop simulator's options: each workload's policy and model configuration
// from the object that applies to it (matchSource), and onTick.
func simulatorOptions(sources []policySource, a openLoopArgs, onTick func(int64)) simulate.Options {
	return simulate.Options{
		Interval: a.interval,
		Series:   a.report != "",
		Policy: func(ns, workload, container string) recommender.Policy {
			if src := matchSource(sources, ns, workload); src != nil {
				p := recommender.PolicyFor(src.policy, container)
				p.IntegerCPU = a.integerCPU && vpav1.IntegerCPU(src.annotations, container)
				return p
			}
			return recommender.DefaultPolicy()
		},
		ConfigFor: func(ns, workload string) *recommender.Config {
			if src := matchSource(sources, ns, workload); src != nil {
				return src.config
			}
			return nil
		},
		OnTick: onTick,
		Model:  a.model,
		ModelFor: func(ns, workload string) string {
			if src := matchSource(sources, ns, workload); src != nil {
				return src.model
			}
			return ""
		},
	}
}

func openInput(path string, stdin io.Reader) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(stdin), nil
	}
	return os.Open(path)
}

func loadPolicies(vpaFile, hvpaFile string, stdin io.Reader) ([]policySource, error) {
	var out []policySource
	for _, f := range []struct{ path, kind string }{{vpaFile, vpav1.KindVerticalPodAutoscaler}, {hvpaFile, hvpav1alpha1.KindHvpa}} {
		if f.path == "" {
			continue
		}
		data, err := readInput(f.path, stdin)
		if err != nil {
			return nil, err
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for doc := 1; ; doc++ {
			raw, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", f.path, doc, err)
			}
			var meta struct {
				Kind string `json:"kind"`
			}
			if err := yaml.Unmarshal(raw, &meta); err != nil || meta.Kind != f.kind {
				continue
			}
			switch f.kind {
			case vpav1.KindVerticalPodAutoscaler:
				v := &vpav1.VerticalPodAutoscaler{}
				if err := strictDecode(raw, v); err != nil {
					return nil, fmt.Errorf("%s: document %d: %w", f.path, doc, err)
				}
				if v.Spec.TargetRef == nil {
					return nil, fmt.Errorf("%s: document %d: spec.targetRef: Required value", f.path, doc)
				}
				cfg, model, err := overrides(v.Annotations)
				if err != nil {
					return nil, fmt.Errorf("%s: document %d (VerticalPodAutoscaler %s): %w", f.path, doc, v.Name, err)
				}
				out = append(out, policySource{v.Namespace, v.Spec.TargetRef.Name, v.Spec.ResourcePolicy, cfg, nil, model, v.Annotations})
			case hvpav1alpha1.KindHvpa:
				h := &hvpav1alpha1.Hvpa{}
				if err := strictDecode(raw, h); err != nil {
					return nil, fmt.Errorf("%s: document %d: %w", f.path, doc, err)
				}
				var rp *vpav1.PodResourcePolicy
				if h.Spec.VPA != nil {
					rp = h.Spec.VPA.Template.ResourcePolicy
				}
				cfg, model, err := overrides(h.Annotations)
				if err != nil {
					return nil, fmt.Errorf("%s: document %d (Hvpa %s): %w", f.path, doc, h.Name, err)
				}
				out = append(out, policySource{h.Namespace, h.Spec.TargetRef.Name, rp, cfg, h, model, nil})
			}
		}
	}
	if (vpaFile != "" || hvpaFile != "") && len(out) == 0 {
		return nil, fmt.Errorf("--vpa/--hvpa: no VerticalPodAutoscaler or Hvpa object found")
	}
	return out, nil
}

// matchSource returns the object that applies to a workload: the one naming it, else a "*" one, else nil.
func matchSource(sources []policySource, ns, workload string) *policySource {
	var wildcard *policySource
	for i, s := range sources {
		if s.namespace != "" && s.namespace != ns {
			continue
		}
		if s.name == workload {
			return &sources[i]
		}
		if s.name == "*" && wildcard == nil {
			wildcard = &sources[i]
		}
	}
	return wildcard
}

// overrides applies an object's recommender.hvpa.dev/ annotations to the default configuration (nil when
// it has none) and returns the model its recommender.hvpa.dev/model annotation chooses ("" without one).
func overrides(annotations map[string]string) (*recommender.Config, string, error) {
	model := ""
	if v, ok := annotations[adaptive.AnnotationModel]; ok {
		m, err := adaptive.ParseModel(strings.TrimSpace(v))
		if err != nil {
			return nil, "", fmt.Errorf("annotation %s: %w", adaptive.AnnotationModel, err)
		}
		model = m
	}
	has := false
	rest := map[string]string{}
	for k, v := range annotations {
		if k != adaptive.AnnotationModel {
			rest[k] = v
			has = has || strings.HasPrefix(k, recommender.AnnotationPrefix)
		}
	}
	if !has {
		return nil, model, nil
	}
	cfg, err := recommender.WithOverrides(recommender.Defaults(), rest)
	if err != nil {
		return nil, "", err
	}
	return &cfg, model, nil
}

// printRun writes the run's summary and scores.
func printRun(w io.Writer, st simulate.Stats, wall time.Duration, peakHeap uint64) error {
	o := textout.New(w)
	printSummary(o, st, wall, peakHeap)
	printScores(o, st)
	return o.Err()
}

func printSummary(w *output, st simulate.Stats, wall time.Duration, peakHeap uint64) {
	rate := float64(st.Samples) / wall.Seconds()
	w.Printf("hvpa simulate: %d rows, %d usage samples, %d OOM events (%d rejected), %d aggregates\n",
		st.Rows, st.Samples, st.OOMs, st.RejectedOOMs, st.Aggregates)
	w.Printf("recommendations: %d rows over %d ticks\n", st.Recommendations, st.Ticks)
	w.Printf("wall time %s, %.0f samples/s, peak heap %.1f MiB\n", wall.Round(time.Millisecond), rate, float64(peakHeap)/(1<<20))
	w.Printf("quality: cpu slack %.1f%% (usage above target %.2f%% of %d samples), memory slack %.1f%% (above target %.2f%% of %d samples), target changes over 10%%: %d\n",
		100*st.CPUSlack(), 100*st.CPUAboveFraction(), st.ScoredCPU, 100*st.MemorySlack(), 100*st.MemoryAboveFraction(), st.ScoredMemory, st.TargetChanges)
}

// printScores writes the scores of the run (docs/simulate.md, "Scores"): of the recommendations written and,
// when some workload ran the adaptive model, of upstream's beside them; then the candidates that won.
func printScores(w *output, st simulate.Stats) {
	line := func(name string, sc simulate.Scores) {
		w.Printf("scores (%s): cpu slack %.1f%%, memory slack %.1f%%, cpu over %.2f%%, memory over %.2f%%, OOM events %d, applied changes per container-day %.2f (%d over %.1f container-days)\n",
			name, 100*sc.CPUSlack(), 100*sc.MemorySlack(), 100*sc.CPUOverFraction(), 100*sc.MemoryOverFraction(), sc.OOMs, sc.ChangesPerContainerDay(), sc.Changes, sc.ContainerDays)
	}
	if st.Adaptive == 0 {
		line(adaptive.ModelUpstream, st.Scores)
		return
	}
	line(adaptive.ModelAdaptive, st.Scores)
	line(adaptive.ModelUpstream+", beside it", st.Upstream)
	for _, r := range []struct {
		name string
		wins map[string]int
	}{{"cpu", st.CPUWinners}, {"memory", st.MemoryWinners}} {
		w.Printf("winners (%s, per tick and container): %s\n", r.name, topWinners(r.wins, 8))
	}
}

// topWinners lists the n candidates that won most often, with their share.
func topWinners(wins map[string]int, n int) string {
	type kv struct {
		name string
		n    int
	}
	var all []kv
	total := 0
	for k, v := range wins {
		all = append(all, kv{k, v})
		total += v
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n || all[i].n == all[j].n && all[i].name < all[j].name })
	var parts []string
	for i, x := range all {
		if i == n {
			parts = append(parts, fmt.Sprintf("%d more", len(all)-n))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.1f%%", x.name, 100*float64(x.n)/float64(max(total, 1))))
	}
	return strings.Join(parts, ", ")
}
