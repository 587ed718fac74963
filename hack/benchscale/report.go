package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/internal/textout"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// steps are the per-step durations of the "recommender run" line, in order.
var steps = []string{"resolve", "pods", "usage", "oom", "status", "checkpoints", "writes"}

// result is what one N measured.
type result struct {
	n, pods, namespaces int
	dir                 string
	setup               []phaseTime

	vpasCreatedAt, allRecsAt time.Time
	vpaCreate                time.Duration   // creating all VPAs
	toRec                    []time.Duration // creation to first recommendation, sorted
	noRec                    int             // VPAs without a recommendation at the end of the wait

	loops   []loopStats // every run since the VPAs were created; the last ones are steady
	rss     []int64     // KiB, every second over the steady loops
	peakRSS int64       // KiB, VmHWM: the peak over the whole run
	// the admission process: RSS every second until the webhook cases, and its peak over the whole run
	admissionRSS     []int64
	admissionPeakRSS int64
	errors           []string // error lines logged from the start of the steady loops
	webhook          []latencyCase
	bursts           []burstCase // with -burst-rate: the webhook's burst, then the same without the webhook
}

type phaseTime struct {
	name string
	took time.Duration
}

// loopStats is one recommender loop: from the previous "recommender run" line to its own.
type loopStats struct {
	run  run
	from time.Time
	cpu  float64 // seconds of CPU the process used in the loop
	// controlPlaneCPU is the seconds of CPU kube-apiserver and etcd used in the loop (-1: unknown)
	controlPlaneCPU float64
	steady          bool // in the steady state (observeSteadyState)
	// recommended: after the run that ended after every VPA had its recommendation (the steady loops and
	// those before them in which the seeded checkpoints are written for the first time)
	recommended bool
	requests    map[string]int // API requests by "verb resource"
	total       int
	failed      int // requests answered with a status >= 400
}

// attributeAudit counts the recommender process's API requests from the audit log into the loops (count).
func (r *result) attributeAudit(path string) error {
	events, err := testenv.ReadAuditLog(path)
	if err != nil {
		return fmt.Errorf("reading the audit log: %w", err)
	}
	r.count(events)
	return nil
}

// count counts the recommender process's requests into the loop whose window (from, at] holds their arrival.
func (r *result) count(events []testenv.AuditEvent) {
	for i := range r.loops {
		r.loops[i].requests = map[string]int{}
	}
	for _, e := range events {
		if e.User.Username != hvpaUser || !counted(e) {
			continue
		}
		at := e.RequestReceived.Time
		i := sort.Search(len(r.loops), func(i int) bool { return !r.loops[i].run.at.Before(at) })
		if i == len(r.loops) || !at.After(r.loops[i].from) {
			continue
		}
		l := &r.loops[i]
		l.requests[e.Verb+" "+resourceOf(e)]++
		l.total++
		if e.ResponseStatus != nil && e.ResponseStatus.Code >= 400 {
			l.failed++
		}
	}
}

// counted: each request is counted once, at its ResponseComplete event; a watch at its ResponseStarted (it
// completes only when it ends).
func counted(e testenv.AuditEvent) bool {
	if e.Verb == "watch" {
		return e.Stage == "ResponseStarted"
	}
	return e.Stage == "ResponseComplete"
}

// resourceOf is an audited request's resource, e.g. verticalpodautoscalers.autoscaling.k8s.io/status or pods.
func resourceOf(e testenv.AuditEvent) string {
	if e.ObjectRef == nil {
		return e.RequestURI
	}
	res := e.ObjectRef.Resource
	if e.ObjectRef.APIGroup != "" {
		res += "." + e.ObjectRef.APIGroup
	}
	if e.ObjectRef.Subresource != "" {
		res += "/" + e.ObjectRef.Subresource
	}
	return res
}

func (r *result) steady() []loopStats {
	return slices.DeleteFunc(slices.Clone(r.loops), func(l loopStats) bool { return !l.steady })
}

// print writes the result's tables; it returns the report's write error.
func (r *result) print(out *report, cfg config) error {
	out.Printf("\n==== RESULT N=%d: %d Deployments x %d pods = %d pods, %d namespaces, recommender interval %s\n", r.n, r.n, cfg.podsPerApp, r.pods, r.namespaces, cfg.interval)
	var parts []string
	for _, p := range r.setup {
		parts = append(parts, fmt.Sprintf("%s %s", p.name, p.took))
	}
	out.Printf("setup: %s\n", strings.Join(parts, ", "))
	out.Printf("time from VPA creation to its first recommendation (%d VPAs created at once in %s): min %s  p50 %s  p95 %s  max %s",
		r.n, r.vpaCreate.Round(time.Millisecond), sec(percentile(r.toRec, 0)), sec(percentile(r.toRec, 0.5)), sec(percentile(r.toRec, 0.95)), sec(percentile(r.toRec, 1)))
	if r.noRec > 0 {
		out.Printf("  (%d VPAs WITHOUT a recommendation)", r.noRec)
	}
	out.Println()
	r.printLoops(out)
	r.printRequests(out)
	r.printWrites(out, cfg)
	out.Printf("process over the steady loops: RSS median %s, peak %s (peak over the whole run, VmHWM: %s); CPU %.2f s per loop (%.1f%% of one core)\n",
		mib(median(r.rss)), mib(slices.Max(append([]int64{0}, r.rss...))), mib(r.peakRSS), r.cpuPerLoop(), 100*r.cpuPerLoop()/r.meanLoopWindow().Seconds())
	if cp := r.controlPlaneCPUPerLoop(); cp >= 0 {
		out.Printf("kube-apiserver and etcd over the steady loops: CPU %.2f s per loop; with the recommender's, %.2f CPU-seconds a loop on this machine's %d cores "+
			"(a loop of d seconds has at most %d x d of them, shared with the played kubelets and metrics API)\n",
			cp, cp+r.cpuPerLoop(), runtime.NumCPU(), runtime.NumCPU())
	}
	out.Printf("admission process (its own, as the chart deploys it): RSS median %s until the webhook cases, peak over the whole run %s\n",
		mib(median(r.admissionRSS)), mib(r.admissionPeakRSS))
	if len(r.errors) > 0 {
		out.Printf("error lines logged since the steady loops began: %d, e.g. %s\n", len(r.errors), r.errors[0])
	} else {
		out.Println("error lines logged since the steady loops began: none")
	}
	out.Printf("webhook: pod CREATE round trip seen by the client, %d creations per case\n", len(r.webhook[0].took))
	tw := newTable(out, 0)
	tw.Println("  CASE\tP50\tP99\tSIZED")
	for _, lc := range r.webhook {
		tw.Printf("  %s\t%s\t%s\t%d/%d\n", lc.name, ms(percentile(lc.took, 0.5)), ms(percentile(lc.took, 0.99)), lc.sized, len(lc.took))
	}
	d50, d99 := r.webhookCost()
	tw.Printf("  the webhook's cost (first case minus the last)\t%+.2fms\t%+.2fms\t\n", d50, d99)
	tw.flush()
	if len(r.bursts) == 2 {
		with, without := r.bursts[0], r.bursts[1]
		out.Printf("webhook burst (%d pod CREATEs a second for %s):\n  %s\n  %s\n", with.rate, with.duration.Round(time.Second), with.line(), without.line())
		out.Printf("  the webhook's cost in the burst: p50 %+.2fms, p99 %+.2fms; pods admitted unsized while the webhook was up: %d of %d (%d CREATEs failed)\n",
			msOf(percentile(with.took, 0.5)-percentile(without.took, 0.5)), msOf(percentile(with.took, 0.99)-percentile(without.took, 0.99)),
			len(with.took)-with.sized, len(with.took), with.failed)
		if with.handler != nil {
			out.Printf("  %s\n", with.handler.line())
		}
	}
	out.Printf("logs: %s (hvpa.log, audit.log, kube-controller-manager.log)\n", r.dir)
	if out.Err() != nil {
		return fmt.Errorf("writing the report: %w", out.Err())
	}
	return nil
}

// printLoops is a row per recommender run since the VPAs were created.
func (r *result) printLoops(out *report) {
	out.Println("recommender loops since the VPAs were created (* steady state; API requests, CPU: between the previous run line and this one; heap: at the line)")
	tw := newTable(out, tabwriter.AlignRight)
	head := []string{"LOOP", "", "DURATION"}
	for _, s := range steps {
		head = append(head, strings.ToUpper(s))
	}
	head = append(head, "VPAS", "PODS", "SAMPLES", "AGGREGATES", "STATUS WRITES", "CHECKPOINTS", "API REQUESTS", "FAILED", "CPU s", "API SERVER+ETCD CPU s", "HEAP MiB", "")
	tw.Println(strings.Join(head, "\t"))
	for i, l := range r.loops {
		mark := ""
		if l.steady {
			mark = "*"
		}
		row := []string{fmt.Sprint(i + 1), mark, short(l.run.duration("duration"))}
		for _, s := range steps {
			row = append(row, short(l.run.duration(s)))
		}
		row = append(row, fmt.Sprint(l.run.int("vpas")), fmt.Sprint(l.run.int("pods")), fmt.Sprint(l.run.int("usageSamples")), fmt.Sprint(l.run.int("aggregates")),
			fmt.Sprint(l.run.int("statusWrites")), fmt.Sprint(l.run.int("checkpointsWritten")), fmt.Sprint(l.total), fmt.Sprint(l.failed),
			fmt.Sprintf("%.2f", l.cpu), fmt.Sprintf("%.2f", l.controlPlaneCPU), heapMiB(l.run.heap), "")
		tw.Println(strings.Join(row, "\t"))
	}
	tw.flush()
}

// printRequests is the steady loops' API requests by verb and resource: each loop and the mean.
func (r *result) printRequests(out *report) {
	steady := r.steady()
	keys := map[string]int{}
	for _, l := range steady {
		for k, n := range l.requests {
			keys[k] += n
		}
	}
	order := make([]string, 0, len(keys))
	for k := range keys {
		order = append(order, k)
	}
	sort.Slice(order, func(i, j int) bool {
		if keys[order[i]] != keys[order[j]] {
			return keys[order[i]] > keys[order[j]]
		}
		return order[i] < order[j]
	})
	out.Println("API requests of the recommender process per steady loop, by verb and resource (audit log)")
	tw := newTable(out, tabwriter.AlignRight)
	head := []string{"VERB RESOURCE"}
	for i := range steady {
		head = append(head, fmt.Sprintf("LOOP %d", i+1))
	}
	tw.Println(strings.Join(append(head, "MEAN", ""), "\t"))
	total := []string{"total"}
	for _, k := range order {
		row := []string{k}
		for _, l := range steady {
			row = append(row, fmt.Sprint(l.requests[k]))
		}
		tw.Println(strings.Join(append(row, fmt.Sprintf("%.1f", float64(keys[k])/float64(len(steady))), ""), "\t"))
	}
	sum := 0
	for _, l := range steady {
		total = append(total, fmt.Sprint(l.total))
		sum += l.total
	}
	tw.Println(strings.Join(append(total, fmt.Sprintf("%.1f", float64(sum)/float64(len(steady))), ""), "\t"))
	tw.flush()
}

// printWrites compares the steady loops' checkpoint writes with their steady rate and gives the status
// writes' rate over every loop since the first recommendations.
func (r *result) printWrites(out *report, cfg config) {
	out.Printf("checkpoint writes: %.1f per steady loop (the steady rate: ceil(N x interval / period) = %d)\n",
		r.meanOf("checkpointsWritten"), recommenderctrl.CheckpointQuota(r.n, cfg.interval, cfg.checkpointPeriod))
	writes, loops := r.statusWrites()
	out.Printf("status writes: %d over the %d loops since every VPA had its recommendation: %.2f per loop, %.2f per VPA and day\n",
		writes, loops, float64(writes)/float64(max(loops, 1)), float64(writes)/float64(r.n)/(float64(loops)*cfg.interval.Hours()/24))
}

// statusWrites sums the status writes of the loops since every VPA had its recommendation, and counts them.
func (r *result) statusWrites() (writes, loops int) {
	for _, l := range r.loops {
		if l.recommended {
			writes += max(0, l.run.int("statusWrites"))
			loops++
		}
	}
	return writes, loops
}

// cpuPerLoop is the process's CPU seconds over the steady loops divided by their number.
func (r *result) cpuPerLoop() float64 {
	s := 0.0
	for _, l := range r.steady() {
		s += l.cpu
	}
	return s / float64(len(r.steady()))
}

// controlPlaneCPUPerLoop is kube-apiserver's and etcd's CPU seconds over the steady loops divided by their
// number (-1: unknown).
func (r *result) controlPlaneCPUPerLoop() float64 {
	s := 0.0
	for _, l := range r.steady() {
		if l.controlPlaneCPU < 0 {
			return -1
		}
		s += l.controlPlaneCPU
	}
	return s / float64(len(r.steady()))
}

// meanLoopWindow is the mean time between consecutive steady run lines.
func (r *result) meanLoopWindow() time.Duration {
	var s time.Duration
	for _, l := range r.steady() {
		s += l.run.at.Sub(l.from)
	}
	return s / time.Duration(len(r.steady()))
}

// medianLoop is the median duration of the steady loops (the run line's duration).
func (r *result) medianLoop() time.Duration {
	var d []time.Duration
	for _, l := range r.steady() {
		d = append(d, l.run.duration("duration"))
	}
	slices.Sort(d)
	return percentile(d, 0.5)
}

// meanOf is the mean of a numeric field of the steady run lines.
func (r *result) meanOf(field string) float64 {
	s := 0
	for _, l := range r.steady() {
		s += l.run.int(field)
	}
	return float64(s) / float64(len(r.steady()))
}

// meanRequests is the mean number of API requests per steady loop.
func (r *result) meanRequests() float64 {
	s := 0
	for _, l := range r.steady() {
		s += l.total
	}
	return float64(s) / float64(len(r.steady()))
}

// webhookCost is the p50 and p99 of the first webhook case minus those of the last (no webhook), in ms.
func (r *result) webhookCost() (float64, float64) {
	first, last := r.webhook[0], r.webhook[len(r.webhook)-1]
	d := func(q float64) float64 { return float64(percentile(first.took, q)-percentile(last.took, q)) / 1e6 }
	return d(0.5), d(0.99)
}

// printSummary is one row per N.
func printSummary(out *report, cfg config, results []*result) {
	out.Printf("\n==== SUMMARY (recommender interval %s, checkpoint period %s, %d pods per Deployment, %d steady loops after skipping %d, %d pod creations per webhook case)\n",
		cfg.interval, cfg.checkpointPeriod, cfg.podsPerApp, cfg.loops, cfg.settle, cfg.creates)
	out.Println(caseOf(cfg))
	tw := newTable(out, tabwriter.AlignRight)
	tw.Println("N\tPODS\tREC p50\tREC p95\tREC max\tLOOP p50\tAPI REQ/LOOP\tSTATUS WRITES/LOOP\t(SINCE RECS)\tCHECKPOINTS/LOOP\tCPU s/LOOP\tRSS MEDIAN\tRSS PEAK\tHEAP (LAST)\tADMISSION RSS\tWEBHOOK p50\tWEBHOOK p99\tCOST p50\tCOST p99\t")
	for _, r := range results {
		d50, d99 := r.webhookCost()
		last := r.loops[len(r.loops)-1].run.heap
		writes, loops := r.statusWrites()
		tw.Printf("%d\t%d\t%s\t%s\t%s\t%s\t%.1f\t%.1f\t%d/%d\t%.1f\t%.2f\t%s\t%s\t%s MiB\t%s\t%s\t%s\t%+.2fms\t%+.2fms\t\n", r.n, r.pods,
			sec(percentile(r.toRec, 0.5)), sec(percentile(r.toRec, 0.95)), sec(percentile(r.toRec, 1)), short(r.medianLoop()),
			r.meanRequests(), r.meanOf("statusWrites"), writes, loops, r.meanOf("checkpointsWritten"), r.cpuPerLoop(), mib(median(r.rss)), mib(r.peakRSS), heapMiB(last), mib(median(r.admissionRSS)),
			ms(percentile(r.webhook[0].took, 0.5)), ms(percentile(r.webhook[0].took, 0.99)), d50, d99)
	}
	tw.flush()
}

// caseOf says which case the run measures.
func caseOf(cfg config) string {
	if cfg.history == 0 {
		return "case: a fresh install, new VPAs created together without history (no checkpoints seeded): their bounds narrow at nearly every run " +
			"(each status written when a target leaves the dead band, a bound widens past it, or --young-status-delay after its last write), " +
			"and each checkpoint is first written once its history is a period old"
	}
	return fmt.Sprintf("case: the steady state of a recommender that has run for %s: checkpoints written evenly over the last period, "+
		"so about N x interval / period of them are due at each run; the played usage follows a day curve with noise, as the seeded history does, so "+
		"status writes come at the rate the model gives them; the steady loops begin once every seeded checkpoint was written once", cfg.history)
}

// percentile is the nearest-rank q-quantile of sorted durations (0: the minimum, 1: the maximum); 0 when empty.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func median(kib []int64) int64 {
	if len(kib) == 0 {
		return 0
	}
	s := slices.Clone(kib)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fms", float64(d)/1e6)
}

// short is a duration with about four significant digits, "-" when unknown.
func short(d time.Duration) string {
	switch {
	case d < 0:
		return "-"
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

// heapMiB is a go_memstats_heap_inuse_bytes value in MiB, "-" when unknown.
func heapMiB(bytes float64) string {
	if bytes < 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", bytes/(1<<20))
}

func sec(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

func mib(kib int64) string { return fmt.Sprintf("%.0f MiB", float64(kib)/1024) }

// report is benchscale's output (progress lines and tables): it keeps the first write error, and benchscale
// ends with that error instead of a report cut short.
type report = textout.Writer

// stdout is the report on the standard output; main checks its error at the end.
var stdout = textout.New(os.Stdout)

// table is a tabwriter onto the report; its rows reach the report at flush.
type table struct {
	*textout.Writer
	tw *tabwriter.Writer
}

func newTable(p *report, flags uint) *table {
	tw := tabwriter.NewWriter(p, 0, 0, 2, ' ', flags)
	return &table{Writer: textout.New(tw), tw: tw}
}

// flush writes the table's rows; a failed write is the report's, kept in its error.
func (t *table) flush() { _ = t.tw.Flush() }

// msOf is d in milliseconds.
func msOf(d time.Duration) float64 { return float64(d) / 1e6 }
