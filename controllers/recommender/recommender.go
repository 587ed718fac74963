// Package recommender is the recommender loop, the recommender in the cluster: every interval it lists the
// VerticalPodAutoscalers and Hvpas this recommender serves, resolves their targets to pods, feeds the pods'
// usage (the usage sources, package usage) and OOM kills into the model of the pure recommender package, and
// writes status.recommendation and conditions. Usage history survives restarts in checkpoint objects, or is
// read from Prometheus.
package recommender

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/hvpa-dev/hvpa/apis/autoscaling/decodeerr"
	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/podstore"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/adaptive"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/usage"
)

// Storage of the usage history.
const (
	StorageCheckpoint = "checkpoint"
	StoragePrometheus = "prometheus"
)

// Options configure the recommender.
type Options struct {
	// Interval between runs (--recommender-interval, 1m).
	Interval time.Duration
	// Name of this recommender (--recommender-name, "default"): it serves VPAs whose spec.recommenders names it,
	// or that name none when Name is "default".
	Name string
	// Namespaces limits the VPAs served (empty: all); ExcludeNamespaces skips some.
	Namespaces, ExcludeNamespaces []string
	// MemorySaver tracks only pods some VPA selects.
	MemorySaver bool
	// Storage is StorageCheckpoint or StoragePrometheus.
	Storage string
	// CheckpointBudget bounds the time spent writing checkpoints per run; the oldest are written first.
	CheckpointBudget time.Duration
	// UpdateWorkers is how many status patches, and how many checkpoint writes, a run sends at once
	// (upstream's --update-worker-count, 10): a thousand VPAs created together get their first
	// recommendations, and ten thousand checkpoints their writes, as fast as the API server and the client's
	// rate limit allow, not one round trip after another.
	UpdateWorkers int
	// CheckpointGCInterval is how often orphaned checkpoints are deleted (10m).
	CheckpointGCInterval time.Duration
	// CheckpointPeriod: each checkpoint is written at most once per period (10m), round-robin, the longest
	// unwritten first, so that a restart loses at most that much history and a loop writes about
	// checkpoints x Interval / CheckpointPeriod of them.
	CheckpointPeriod time.Duration
	// StatusDeadBand: a VPA's status is patched when a target changes, a container or resource comes or goes,
	// a condition changes, or a lower or upper bound moves by more than this fraction of its value in
	// status (0.1); smaller drifts of the bounds, which move a little at every run as history builds, are
	// not written.
	StatusDeadBand float64
	// YoungStatusDelay: while the history of a VPA whose updateMode is Off or Initial (the updater leaves its
	// running pods alone) is young (confidence below LowConfidenceDays) its bounds narrow
	// at nearly every run as samples come in, and writing each move would patch every young VPA's status at
	// every run. There a new recommendation whose targets stay within StatusDeadBand of the ones written and
	// whose bounds only narrow (or widen by at most the band) waits for this delay (15m, spread per VPA from
	// half to one and a half times it) since the VPA's last status write; a target beyond the band, a bound
	// widening beyond it, a condition change and the first recommendation are written at once. 0: no delay.
	YoungStatusDelay time.Duration
	// LowConfidenceDays: LowConfidence is set below this confidence (1 day).
	LowConfidenceDays float64
	// DefaultModel is the model of VPAs without the recommender.hvpa.dev/model annotation: "" or upstream
	// (upstream's numbers), or adaptive (--default-model).
	DefaultModel string
	// MaxAllowedCPU (cores) and MaxAllowedMemory (bytes) fill a container policy's maxAllowed where it sets
	// none (upstream's --container-recommendation-max-allowed-cpu and -memory); 0: none.
	MaxAllowedCPU, MaxAllowedMemory float64
	// IntegerCPU is upstream's --cpu-integer-post-processor-enabled: a VPA's container annotated
	// vpa-post-processor.kubernetes.io/<container>_integerCPU: "true" is recommended whole cores of CPU.
	IntegerCPU bool
	// PerVPAConfig is the feature gate PerVPAConfig: a container policy's model fields (oomBumpUpRatio,
	// oomMinBumpUp, memoryAggregationIntervalSeconds/Count) apply only with it on, as upstream's recommender
	// reads them; with it off they are ignored.
	PerVPAConfig bool
	// NoInPlaceResize: the cluster serves no pods/resize (discovery at start, of KubernetesVersion): VPAs that
	// resize in place get InPlaceUnavailable.
	NoInPlaceResize   bool
	KubernetesVersion string
}

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{Interval: time.Minute, Name: "default", Storage: StorageCheckpoint, CheckpointBudget: time.Minute, UpdateWorkers: 10,
		CheckpointGCInterval: 10 * time.Minute, CheckpointPeriod: 10 * time.Minute, StatusDeadBand: 0.1, YoungStatusDelay: 15 * time.Minute, LowConfidenceDays: 1}
}

// vpaContainer names one container of one VPA (a checkpoint).
type vpaContainer struct{ ns, vpa, container string }

// Recommender is the recommender loop (a leader-elected manager.Runnable).
type Recommender struct {
	Client   client.Client
	Usage    usage.Source
	History  usage.HistoryProvider // with Storage prometheus
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	Base     recommender.Config
	Opts     Options
	Metrics  *Metrics
	// Targets resolves targetRefs; NewRecommender reads them through Client, the manager sets one with a
	// live reader for targets its cache has not seen yet.
	Targets *workload.Resolver
	// Informers, when set (the manager's cache), tell the loop about VPAs created between runs.
	Informers crcache.Informers
	// Pods lists pods: NewRecommender reads them through Client, the manager sets a podstore.Store.
	Pods podstore.Lister

	mu     sync.Mutex
	hvpa   hvpaRecs
	models map[recommender.Config]*recommender.Model
	// modelsUsed are the configurations asked for since the run started: the others are forgotten at its end
	// (VPAs and Hvpas gone, annotations or container policies changed)
	modelsUsed map[recommender.Config]bool
	// state is the model's memory (pod containers, aggregates, initial history, Hvpa workload totals)
	state    *recommender.State
	adaptive adaptiveStates // the adaptive VPAs' models and states
	written  map[vpaContainer]time.Time
	// historyAt is when the checkpoint each VPA or Hvpa container's history was loaded from was written (by an
	// earlier process): the OOM kills before it are in that history, or were left out with its open windows,
	// and are not recorded again (inLoadedHistory)
	historyAt    map[vpaContainer]time.Time
	ours         map[checkpointRef]bool                // checkpoints this recommender wrote or loaded as its own
	replaceable  map[checkpointRef]bool                // checkpoints whose history the state holds (loaded or written), or that did not load: a write loses nothing
	seen         map[checkpointRef]bool                // checkpoints listed at start or written since: another is created without a read first
	statusModes  map[string]statusMode                 // per checkpoint kind: whether its CRD takes the status in the object or in a subresource
	cpMu         sync.Mutex                            // ours, replaceable, seen, legacy, statusModes and written while a run's checkpoint writers run
	dropsBursts  atomic.Bool                           // the HvpaCheckpoint CRD dropped status.cpuMinutes and cpuBursts (logged once)
	dropsAhead   atomic.Bool                           // the HvpaCheckpoint CRD dropped status.cpuBurstAhead (logged once)
	hist         historyLoad                           // what of the usage history has loaded
	legacy       map[vpaContainer]types.NamespacedName // Hvpa histories in VerticalPodAutoscalerCheckpoints (earlier versions), deleted once moved
	undecodable  map[types.UID]string                  // VPAs that do not decode: the resourceVersion their condition was written at
	firstRec     map[types.UID]bool
	lastWrite    map[types.UID]time.Time                          // when each VPA's status was last written (or first held), for YoungStatusDelay
	lastTarget   map[recommender.AggregateKey]recommender.Amounts // the target in force per aggregate, for the quality metric
	lastGC       time.Time
	handing      map[types.UID]time.Time // VPAs handed to another recommender, until when their status is read for hvpa's conditions (handOff)
	statusWrites int                     // status patches of the current run (the per-run log line)
	nodes        *scaling.Nodes          // the nodes' room this run (nil: unknown, no cap)
	usageErr     error                   // why the current run could not read usage (nil: it could)
	// tracked are the running pods the current run tracks (podMatch.pods): the checkpoints it writes leave
	// out the open memory windows of these pods only (State.Feeding)
	tracked map[types.NamespacedName]*matchedPod
	// progress is when the loop started or last ended a run (unix nanoseconds; 0: not started)
	progress atomic.Int64
	// created are the namespaces where VPAs were created since ServeNew last ran (the informer's adds)
	created createdIn
}

var (
	_ manager.Runnable               = (*Recommender)(nil)
	_ manager.LeaderElectionRunnable = (*Recommender)(nil)
)

// Validate refuses the options a recommender cannot run with, naming the flag: `hvpa run` checks them with its
// other flags before it connects, NewRecommender again for every other caller.
func (o Options) Validate() error {
	if o.Storage != StorageCheckpoint && o.Storage != StoragePrometheus {
		return fmt.Errorf("--storage %q: use %s or %s", o.Storage, StorageCheckpoint, StoragePrometheus)
	}
	if o.UpdateWorkers < 1 {
		return fmt.Errorf("--update-worker-count %d: must be at least 1", o.UpdateWorkers)
	}
	return nil
}

// NewRecommender returns a recommender; its state starts empty and is loaded on the first run.
func NewRecommender(c client.Client, usage usage.Source, history usage.HistoryProvider, rec events.EventRecorder,
	clk clock.PassiveClock, base recommender.Config, opts Options, m *Metrics) (*Recommender, error) {
	if _, err := recommender.NewModel(base); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Storage == StoragePrometheus && history == nil {
		return nil, fmt.Errorf("--storage=prometheus needs a Prometheus history provider (--prometheus-address)")
	}
	if m == nil {
		m = NewMetrics(nil)
	}
	return &Recommender{Client: c, Targets: workload.NewResolver(c, c), Pods: podstore.ClientLister{Reader: c}, Usage: usage, History: history, Recorder: rec, Clock: clk, Base: base, Opts: opts, Metrics: m,
		models: map[recommender.Config]*recommender.Model{}, modelsUsed: map[recommender.Config]bool{}, state: recommender.NewState(), written: map[vpaContainer]time.Time{}, historyAt: map[vpaContainer]time.Time{}, ours: map[checkpointRef]bool{}, replaceable: map[checkpointRef]bool{}, seen: map[checkpointRef]bool{}, statusModes: map[string]statusMode{}, legacy: map[vpaContainer]types.NamespacedName{}, undecodable: map[types.UID]string{},
		firstRec: map[types.UID]bool{}, lastWrite: map[types.UID]time.Time{}, handing: map[types.UID]time.Time{}, lastTarget: map[recommender.AggregateKey]recommender.Amounts{}, hvpa: hvpaRecs{changes: make(chan event.GenericEvent, 1024)}}, nil
}

// NeedLeaderElection: only the leader writes recommendations and checkpoints.
func (r *Recommender) NeedLeaderElection() bool { return true }

// Start runs the loop until ctx ends; a failed run is logged and retried at the next interval (one bad
// object never stops the loop). With Informers, a VPA created between runs gets its first recommendation
// at once from the history already held (ServeNew), not at the next run.
func (r *Recommender) Start(ctx context.Context) error {
	logger := logf.FromContext(ctx).WithName("recommender")
	ctx = logf.IntoContext(ctx, logger)
	created := make(chan struct{}, 1)
	if r.Informers != nil {
		inf, err := r.Informers.GetInformer(ctx, &vpav1.VerticalPodAutoscaler{})
		if err != nil {
			return fmt.Errorf("watching VerticalPodAutoscalers: %w", err)
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerDetailedFuncs{AddFunc: func(obj any, initial bool) {
			if v, ok := obj.(*vpav1.VerticalPodAutoscaler); ok && !initial {
				r.created.add(v.Namespace)
				select {
				case created <- struct{}{}:
				default: // one is pending: it serves every VPA created until it runs
				}
			}
		}}); err != nil {
			return fmt.Errorf("watching VerticalPodAutoscalers: %w", err)
		}
	}
	warnInterval(logger, r.Opts.Interval)
	t := time.NewTicker(r.Opts.Interval)
	defer t.Stop()
	r.progress.Store(r.Clock.Now().UnixNano())
	for {
		if err := r.RunOnce(ctx); err != nil && ctx.Err() == nil { // a run cut short by shutdown is no failure
			logger.Error(err, "recommender run failed; retrying at the next interval")
		}
		r.progress.Store(r.Clock.Now().UnixNano())
		if !r.waitForRun(ctx, t.C, created) {
			return nil
		}
	}
}

// warnInterval says once, at the start, what an interval too long for an Hvpa's recurring bursts leaves out
// (docs/design/scaling.md section 2a); the process runs as asked.
func warnInterval(logger logr.Logger, interval time.Duration) {
	if interval > recommender.RecurSampleEvery {
		logger.Info("--recommender-interval is longer than the sample period recurring bursts are read from: an Hvpa's total may not rise ahead of a recurring burst (VPAs' recommendations are not affected)",
			"interval", interval, "readsEvery", recommender.RecurSampleEvery)
	}
}

// waitForRun serves the VPAs created meanwhile until the next run is due; false when ctx ended.
func (r *Recommender) waitForRun(ctx context.Context, tick <-chan time.Time, created <-chan struct{}) bool {
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick:
			return true
		case <-created:
			time.Sleep(newVPABatch) // VPAs created together are served together
			if _, err := r.serveNew(ctx, r.created.take()); err != nil && ctx.Err() == nil {
				logf.FromContext(ctx).Error(err, "serving new VerticalPodAutoscalers; they get a recommendation at the next run")
			}
		}
	}
}

// LoopHealthy is the liveness check of the loop (/healthz "recommender-loop"): it fails when the loop has
// started (this replica leads) and no run has ended for StallAfter, so that a stuck loop restarts the
// process instead of leaving every VPA without new recommendations.
func (r *Recommender) LoopHealthy(*http.Request) error {
	last := r.progress.Load()
	if last == 0 {
		return nil // not started: not the leader, or starting
	}
	if since := r.Clock.Now().Sub(time.Unix(0, last)); since > r.StallAfter() {
		return fmt.Errorf("no recommender run has ended for %s (runs every %s)", since.Round(time.Second), r.Opts.Interval)
	}
	return nil
}

// StallAfter is how long the loop may go without ending a run before LoopHealthy fails: three intervals and
// five minutes (a slow run, or a few slowed by a slow API server, is no stall; the first run's read of the
// Prometheus history does not count: loadPrometheusHistory).
func (r *Recommender) StallAfter() time.Duration { return 3*r.Opts.Interval + 5*time.Minute }

// newVPABatch is how long ServeNew waits after a VPA is created, for the others created with it.
const newVPABatch = 200 * time.Millisecond

// createdIn are namespaces where VPAs were created, as the informer tells them (its handler runs apart
// from the loop).
type createdIn struct {
	mu         sync.Mutex
	namespaces map[string]bool
}

func (c *createdIn) add(ns string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.namespaces == nil {
		c.namespaces = map[string]bool{}
	}
	c.namespaces[ns] = true
}

// take returns the namespaces added since the last take, sorted (none: empty, not nil).
func (c *createdIn) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := append([]string{}, slices.Sorted(maps.Keys(c.namespaces))...)
	c.namespaces = nil
	return out
}

// ServeNew writes the status of the VPAs created since the last run (no recommendation and no condition
// yet) from the history the recommender already holds, without feeding new usage: the first
// recommendation of a VPA whose pods already report usage comes within a second of its creation, not at
// the next run. It returns how many it served.
func (r *Recommender) ServeNew(ctx context.Context) (int, error) {
	return r.serveNew(ctx, nil)
}

// serveNew is ServeNew over the VPAs of namespaces (nil: all). The loop serves the namespaces where VPAs
// were created: at 10,000 VPAs, resolving all of them again for each batch of new ones cost more than
// serving the batch.
func (r *Recommender) serveNew(ctx context.Context, namespaces []string) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.hist.tried || (namespaces != nil && len(namespaces) == 0) { // the first run loads the history and serves everything
		return 0, nil
	}
	_, list, _, err := r.resolveIn(ctx, namespaces)
	if err != nil {
		return 0, err
	}
	byNS := map[string][]*served{}
	var fresh []*served
	for _, s := range list {
		if s.vpa.Status.Recommendation == nil && len(s.vpa.Status.Conditions) == 0 {
			byNS[s.vpa.Namespace] = append(byNS[s.vpa.Namespace], s)
			fresh = append(fresh, s)
		}
	}
	for ns, inNS := range byNS {
		pods, err := r.Pods.List(ctx, ns)
		if err != nil {
			return 0, err
		}
		for _, p := range pods {
			for _, s := range inNS {
				if notPending(p) && s.err == nil && s.target.Selector.Matches(labels.Set(p.Labels)) {
					s.matched++
				}
			}
		}
	}
	r.writeStatuses(ctx, fresh)
	if len(fresh) > 0 {
		logf.FromContext(ctx).Info("new VerticalPodAutoscalers served", "vpas", len(fresh))
	}
	return len(fresh), nil
}

func (r *Recommender) model(cfg recommender.Config) *recommender.Model {
	r.modelsUsed[cfg] = true
	if m, ok := r.models[cfg]; ok {
		return m
	}
	m, err := recommender.NewModel(cfg)
	if err != nil { // configurations are validated before they get here
		m, _ = recommender.NewModel(r.Base)
	}
	r.models[cfg] = m
	return m
}

// served is a VPA this recommender serves, with its resolved target and model.
type served struct {
	vpa    *vpav1.VerticalPodAutoscaler
	target workload.Target
	err    error              // ConfigUnsupported
	model  *recommender.Model // the object's model (flags and annotations)
	models *modelSet          // and its containers' (container policies with model fields)
	// adaptive is its adaptive model (recommender.hvpa.dev/model: adaptive); nil: upstream's model
	adaptive *adaptive.Model
	matched  int           // pods its selector matches that are not Pending (notPending)
	pod      *podstore.Pod // one of them: its other containers' requests count toward the node cap

	rec *vpav1.RecommendedPodResources // the recommendation in status after this run (the target metric)
	// merged are the VPA's aggregates merged per container by this run's status step (its checkpoints save them)
	merged map[string]*recommender.Aggregate
}

// RunOnce does one run: list, resolve, feed, recommend, write status, checkpoints and garbage collection.
func (r *Recommender) RunOnce(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	logger := logf.FromContext(ctx)
	steps := newRunSteps(r)
	defer steps.end()
	r.statusWrites = 0
	clear(r.modelsUsed)
	if !r.hist.done() {
		// until every kind has loaded, at every run; meanwhile the recommendations go on (a VPA's in status is
		// kept while its history has not loaded, FetchingHistory says so) and nothing unloaded is written
		r.loadHistory(ctx)
	}

	// 0. usage from metrics.k8s.io, read while the targets resolve and the pods match (step 3 waits for it)
	read := r.readUsage(ctx)
	defer func() { _, _ = read.wait() }() // a run that stops early leaves no read behind (what it read is fed in step 3)
	// 1. the VPAs this recommender serves, and their targets
	vpas, list, hv, err := r.resolveAll(ctx)
	if err != nil {
		return err
	}
	r.Metrics.setObjects(list)
	if err := steps.done(ctx, "resolve"); err != nil { // shutdown: stop between steps, not at the end of the run
		return err
	}
	// 2. pods (not Pending), and which VPA or Hvpa selects each
	pods, err := r.Pods.List(ctx, metav1.NamespaceAll)
	if err != nil {
		return err
	}
	m := r.matchPods(pods, list, hv)
	r.tracked = m.pods
	if err := steps.done(ctx, "pods"); err != nil {
		return err
	}
	// 3. usage from metrics.k8s.io into the model
	samples, now := r.feedUsage(ctx, m, read)
	if err := steps.done(ctx, "usage"); err != nil {
		return err
	}
	// 4. OOM kills from pod status and kubelet evictions
	r.observeOOMs(ctx, m, now)
	_ = steps.done(ctx, "oom")
	// 5. recommendations and status, within the largest schedulable node
	r.nodes = r.readNodes(ctx)
	writes := r.decideStatuses(ctx, list)
	// the patches go out while the checkpoints are written below (both wait on the API server)
	statusesSent := r.sendStatuses(ctx, writes)
	if r.hist.hvpa && !hv.unlisted { // an Hvpa gets no embedded recommendation before its history (HvpaCheckpoints) loaded
		r.updateHvpaRecommendations(hv.served, now)
	}
	r.Metrics.setTargets(list, r.hvpa.recs) // r.hvpa.recs is written only by this goroutine, above
	r.Metrics.Aggregates.Set(float64(r.state.NumAggregates()))
	_ = steps.done(ctx, "status")
	// 6. checkpoints and garbage collection, unless the run is stopping
	checkpoints := 0
	if ctx.Err() == nil {
		checkpoints = r.checkpointAndCollect(ctx, list, hv.served, vpas, now)
	}
	_ = steps.done(ctx, "checkpoints")
	// 7. the status patches sent in step 5
	statusesSent()
	r.recordStatuses(ctx, writes)
	if err := steps.done(ctx, "writes"); err != nil {
		return err
	}
	logger.Info("recommender run", "vpas", len(list), "hvpas", len(hv.served), "pods", len(m.pods), "usageSamples", samples,
		"statusWrites", r.statusWrites, "checkpointsWritten", checkpoints, "aggregates", r.state.NumAggregates(),
		"duration", r.Clock.Now().Sub(steps.start).Round(time.Microsecond).String(), "steps", steps.took)
	return ctx.Err()
}

// runSteps times the steps of one run: each step's duration goes to the step metric and the run's log line.
type runSteps struct {
	r           *Recommender
	start, last time.Time
	took        map[string]string
}

func newRunSteps(r *Recommender) *runSteps {
	now := r.Clock.Now()
	return &runSteps{r: r, start: now, last: now, took: map[string]string{}}
}

// done ends step name and returns ctx's error: a run stops between steps at shutdown.
func (s *runSteps) done(ctx context.Context, name string) error {
	now := s.r.Clock.Now()
	s.r.Metrics.observeStep(name, now.Sub(s.last))
	s.took[name] = now.Sub(s.last).Round(time.Microsecond).String()
	s.last = now
	return ctx.Err()
}

// end records the whole run as step "total".
func (s *runSteps) end() {
	now := s.r.Clock.Now()
	s.r.Metrics.observeStep("total", now.Sub(s.start))
	s.took["total"] = now.Sub(s.start).Round(time.Microsecond).String()
}

// podMatch is which served objects each running pod feeds: one entry per tracked pod, so a usage sample
// costs one lookup.
type podMatch struct {
	pods    map[types.NamespacedName]*matchedPod // the pods tracked
	evicted []*podstore.Pod                      // evicted pods are Failed: evictions are looked up here
}

// matchedPod is one tracked running pod and what selects it.
type matchedPod struct {
	pod    *podstore.Pod
	models *modelSet   // the models its usage feeds, by container (nil: the flags' model)
	hvpa   *servedHvpa // the Hvpa whose workload total its usage feeds
	owners []objectRef // the VPAs and Hvpas that select it (the usage metric)
	// adaptive are the adaptive VPAs that select it (their models get its samples and OOM kills)
	adaptive []*served
}

// matchVPAs records the VPAs of list whose targets select running pod e.pod (labels set), counting their pods.
func (e *matchedPod) matchVPAs(set labels.Set, list []*served) {
	for _, s := range list {
		if !s.target.Selector.Matches(set) {
			continue
		}
		s.matched++
		if s.pod == nil {
			s.pod = e.pod
		}
		e.owners = append(e.owners, objectRef{vpav1.KindVerticalPodAutoscaler, s.vpa.Name})
		if s.adaptive != nil {
			e.adaptive = append(e.adaptive, s)
		}
		if e.models == nil {
			e.models = s.models
		}
	}
}

// notPending reports whether a pod counts toward its VPAs' matched pods (NoPodsMatched): every pod that is not
// Pending, as upstream's recommender counts them (its pods are listed with status.phase!=Pending), so a Job's
// completed pods still match its VPA between runs.
func notPending(p *podstore.Pod) bool {
	return p.Phase != corev1.PodPending && p.Phase != ""
}

// countFinished counts a pod that no longer runs (Succeeded, Failed; Unknown too, as upstream) toward the VPAs of list that select it;
// nothing of it is tracked.
func countFinished(set labels.Set, list []*served) {
	for _, s := range list {
		if s.target.Selector.Matches(set) {
			s.matched++
		}
	}
}

// matchHvpas records the Hvpas of list whose targets select running pod e.pod: the first feeds its workload total.
func (e *matchedPod) matchHvpas(set labels.Set, list []*servedHvpa) {
	for _, h := range list {
		if !h.target.Selector.Matches(set) {
			continue
		}
		e.owners = append(e.owners, objectRef{hvpav1alpha1.KindHvpa, h.hvpa.Name})
		if e.hvpa == nil {
			e.hvpa = h
			h.pods++
			if e.pod.Ready {
				h.ready++
			}
		}
		if e.models == nil {
			e.models = h.models
		}
	}
}

// matchPods matches the running pods to the VPAs and Hvpas whose targets select them (counting each
// VPA's and Hvpa's pods). With --memory-saver only the pods some object selects are tracked.
func (r *Recommender) matchPods(pods []*podstore.Pod, list []*served, hv hvpaView) podMatch {
	byNS := map[string][]*served{}
	for _, s := range list {
		if s.err == nil {
			byNS[s.vpa.Namespace] = append(byNS[s.vpa.Namespace], s)
		}
	}
	var hvpaSelectors map[string][]labels.Selector
	if r.Opts.MemorySaver {
		hvpaSelectors = hv.selectors
	}
	hvpaByNS := map[string][]*servedHvpa{}
	for _, h := range hv.served {
		hvpaByNS[h.hvpa.Namespace] = append(hvpaByNS[h.hvpa.Namespace], h)
	}
	// sized once, the entries in one block: grown pod by pod, a map of 100,000 pods rehashes a dozen times a run
	m := podMatch{pods: make(map[types.NamespacedName]*matchedPod, len(pods))}
	entries := make([]matchedPod, 0, len(pods))
	for _, p := range pods {
		if p.EvictionMessage != "" {
			m.evicted = append(m.evicted, p)
		}
		if p.Phase != corev1.PodRunning {
			if notPending(p) {
				countFinished(labels.Set(p.Labels), byNS[p.Namespace])
			}
			continue
		}
		set := labels.Set(p.Labels)
		entries = append(entries, matchedPod{pod: p})
		e := &entries[len(entries)-1]
		e.matchVPAs(set, byNS[p.Namespace])
		e.matchHvpas(set, hvpaByNS[p.Namespace])
		tracked := e.models != nil
		for _, sel := range hvpaSelectors[p.Namespace] {
			tracked = tracked || sel.Matches(set)
		}
		if tracked || !r.Opts.MemorySaver {
			m.pods[p.Key()] = e
		}
	}
	return m
}

// usageRead is one read of the containers' usage, made in the background.
type usageRead struct {
	done  chan struct{}
	usage []usage.ContainerUsage
	err   error
}

// readUsage starts reading the containers' usage from the metrics API.
func (r *Recommender) readUsage(ctx context.Context) *usageRead {
	read := &usageRead{done: make(chan struct{})}
	go func() {
		defer close(read.done)
		read.usage, read.err = r.Usage.ContainerUsage(ctx)
	}()
	return read
}

// wait waits for the read to end and returns what it read.
func (u *usageRead) wait() ([]usage.ContainerUsage, error) {
	<-u.done
	return u.usage, u.err
}

// feedUsage feeds the containers' usage read from metrics.k8s.io (read) into the models (and the Hvpas' workload
// totals, and the usage metric); it returns how many samples came and the time they were read, the run's
// now. While the metrics API fails the models keep their history and the status step says so
// (UsageUnavailable).
func (r *Recommender) feedUsage(ctx context.Context, m podMatch, read *usageRead) (int, time.Time) {
	usage, err := read.wait()
	r.usageErr = err
	if err != nil {
		r.Metrics.MetricsAPIErrors.Inc()
		logf.FromContext(ctx).Error(err, "reading container usage; recommendations keep their history")
	}
	now := r.Clock.Now()
	sums := usageSums{}
	loads := workloadLoads{}
	future := 0
	for _, u := range usage {
		e, ok := m.pods[types.NamespacedName{Namespace: u.Namespace, Name: u.Pod}]
		if !ok {
			continue
		}
		p := e.pod
		if u.Time, ok = recommender.SampleTime(u.Time, now); !ok {
			future++ // dated beyond the clock skew: it would block the container's later samples
			continue
		}
		if r.Metrics.PerObject { // the per-object usage series: nothing to add up without them
			sums.add(u.Namespace, e.owners, u)
		}
		r.feedAdaptive(e.adaptive, u)
		if e.hvpa != nil {
			loads.add(e.hvpa, p, u)
		}
		model := e.models.For(u.Container)
		if model == nil {
			model = r.model(r.Base)
		}
		cs := r.container(model, p, u.Container, now)
		if u.CPUMilli >= 0 {
			model.AddCPU(cs.State, u.Time, float64(u.CPUMilli)/1000)
		}
		if u.MemoryBytes >= 0 {
			model.AddMemory(cs.State, u.Time, float64(u.MemoryBytes))
		}
		r.Metrics.observeQuality(r, cs, u)
	}
	r.Metrics.setUsage(sums)
	loads.record(r.state, now)
	if future > 0 {
		logf.FromContext(ctx).Info("usage samples dated in the future refused (a node's clock ahead of this one's?)", "samples", future,
			"maxSkew", recommender.MaxSampleSkew.String())
	}
	return len(usage) - future, now
}

// checkpointAndCollect writes the checkpoints due (with --storage=prometheus too: they are what a restart
// goes on with when Prometheus cannot be read), deletes orphaned ones every --checkpoints-gc-interval, and
// forgets what expired or is gone; it returns how many checkpoints it wrote.
func (r *Recommender) checkpointAndCollect(ctx context.Context, list []*served, hvpas []*servedHvpa, vpas []vpav1.VerticalPodAutoscaler, now time.Time) int {
	writeVPAs, writeHvpas := list, hvpas // nothing of a kind is written before its checkpoints loaded
	if !r.hist.vpa {
		writeVPAs = nil
	}
	if !r.hist.hvpa {
		writeHvpas = nil
	}
	checkpoints := r.writeCheckpoints(ctx, writeVPAs, writeHvpas)
	if now.Sub(r.lastGC) >= r.Opts.CheckpointGCInterval {
		r.lastGC = now
		if err := r.deleteOrphanCheckpoints(ctx); err != nil {
			logf.FromContext(ctx).Error(err, "deleting orphaned checkpoints")
		}
	}
	r.collect(now)
	r.forgetAdaptive(list)
	r.forgetGone(vpas)
	r.forgetModels()
	return checkpoints
}

// forgetModels drops the models no VPA or Hvpa asked for in this run (the flags' model stays): an object
// gone, or its annotations or container policies changed, leaves no model behind.
func (r *Recommender) forgetModels() {
	for cfg := range r.models {
		if !r.modelsUsed[cfg] && cfg != r.Base {
			delete(r.models, cfg)
		}
	}
}

// resolveAll lists the VPAs this recommender serves and resolves their targets and the Hvpas': a VPA whose
// workload an older VPA or Hvpa also targets gets a MultipleAutoscalers error (the oldest serves it).
func (r *Recommender) resolveAll(ctx context.Context) ([]vpav1.VerticalPodAutoscaler, []*served, hvpaView, error) {
	return r.resolveIn(ctx, nil)
}

// resolveIn is resolveAll over the VPAs of namespaces (nil: all; the Hvpas of all). Several autoscalers of
// one workload are in its namespace: each namespace's VPAs are resolved together.
func (r *Recommender) resolveIn(ctx context.Context, namespaces []string) ([]vpav1.VerticalPodAutoscaler, []*served, hvpaView, error) {
	vpas, handed, err := r.listVPAs(ctx, namespaces)
	if err != nil {
		return nil, nil, hvpaView{}, err
	}
	if namespaces == nil {
		r.handOff(ctx, handed)
	}
	var list []*served
	byTarget := map[string][]*served{}
	for i := range vpas {
		v := &vpas[i]
		s := &served{vpa: v, model: r.model(r.Base)}
		if v.DecodeError != "" { // stored before the CRD's rules: its metadata only
			s.err = &workload.TargetError{Reason: decodeerr.Reason, Message: v.DecodeError}
		} else if cfg, err := recommender.WithOverrides(r.Base, v.Annotations); err != nil {
			s.err = &workload.TargetError{Reason: vpav1.ReasonInvalidOverride, Message: err.Error()}
		} else if s.models, err = r.modelsFor(cfg, v.Spec.ResourcePolicy); err != nil {
			s.err = &workload.TargetError{Reason: vpav1.ReasonInvalidOverride, Message: err.Error()}
		} else if s.adaptive, err = r.adaptiveOf(v, cfg); err != nil {
			s.err = &workload.TargetError{Reason: vpav1.ReasonInvalidOverride, Message: err.Error()}
		} else {
			s.model = s.models.base
		}
		if s.err == nil {
			s.target, s.err = r.Targets.Resolve(ctx, v.Namespace, v.Spec.TargetRef)
		}
		if s.err == nil {
			byTarget[s.target.Key()] = append(byTarget[s.target.Key()], s)
		}
		list = append(list, s)
	}
	// several autoscalers on one workload: the oldest serves it (workload.NotServing), the Hvpa controller
	// reports an Hvpa's side
	hv := r.resolveHvpas(ctx)
	for key, group := range byTarget {
		all := append([]workload.Autoscaler(nil), hv.targets[key]...)
		for _, s := range group {
			all = append(all, workload.VPAAutoscaler(s.vpa, r.Opts.Name))
		}
		if len(all) < 2 {
			continue
		}
		for _, s := range group {
			if msg := workload.NotServing(workload.VPAAutoscaler(s.vpa, r.Opts.Name), all, s.target.GVK.Kind, s.target.Name); msg != "" {
				s.err = &workload.TargetError{Reason: vpav1.ReasonMultipleAutoscalers, Message: msg}
			}
		}
	}
	return vpas, list, hv, nil
}

// listVPAs lists the VPAs this recommender serves in namespaces (nil: all), by namespace and name, and the
// VPAs it wrote the status of that another recommender serves now (handed; see handOff).
func (r *Recommender) listVPAs(ctx context.Context, namespaces []string) (served, handed []vpav1.VerticalPodAutoscaler, err error) {
	var l vpav1.VerticalPodAutoscalerList
	if namespaces == nil {
		if err := r.Client.List(ctx, &l); err != nil {
			return nil, nil, fmt.Errorf("listing VerticalPodAutoscalers: %w", err)
		}
	}
	for _, ns := range namespaces {
		var in vpav1.VerticalPodAutoscalerList
		if err := r.Client.List(ctx, &in, client.InNamespace(ns)); err != nil {
			return nil, nil, fmt.Errorf("listing VerticalPodAutoscalers in %s: %w", ns, err)
		}
		l.Items = append(l.Items, in.Items...)
	}
	include := map[string]bool{}
	for _, n := range r.Opts.Namespaces {
		include[n] = true
	}
	exclude := map[string]bool{}
	for _, n := range r.Opts.ExcludeNamespaces {
		exclude[n] = true
	}
	out := l.Items[:0]
	for _, v := range l.Items {
		if (len(include) > 0 && !include[v.Namespace]) || exclude[v.Namespace] {
			continue
		}
		if !r.serves(&v) {
			_, wrote := r.lastWrite[v.UID]
			if _, handing := r.handing[v.UID]; wrote || handing {
				handed = append(handed, v)
			}
			continue
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { // by namespace/name, without building either string
		if a, b := &out[i], &out[j]; a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, handed, nil
}

// serves: an entry of spec.recommenders names this recommender, or none is named and this is "default".
func (r *Recommender) serves(v *vpav1.VerticalPodAutoscaler) bool {
	return v.RecommendedBy(r.Opts.Name)
}

// forgetGone drops what the recommender remembers about VPAs that no longer exist.
func (r *Recommender) forgetGone(vpas []vpav1.VerticalPodAutoscaler) {
	uids := map[types.UID]bool{}
	for _, v := range vpas {
		uids[v.UID] = true
	}
	for uid := range r.firstRec {
		if !uids[uid] {
			delete(r.firstRec, uid)
		}
	}
	for uid := range r.undecodable {
		if !uids[uid] {
			delete(r.undecodable, uid)
		}
	}
	for uid := range r.lastWrite {
		if !uids[uid] {
			delete(r.lastWrite, uid)
		}
	}
}

// container returns the state of one container of one pod, creating it and its aggregate as needed; a pod
// whose labels changed moves it to the aggregate of its new labels.
func (r *Recommender) container(m *recommender.Model, p *podstore.Pod, name string, now time.Time) *recommender.PodContainer {
	key := recommender.ContainerKey{Namespace: p.Namespace, Pod: p.Name, Container: name}
	if pc, ok := r.state.Seen(key, now); ok {
		// the store shares one map between pods of equal labels: the same map is the common case
		switch {
		case sameMap(pc.Labels, p.Labels):
		case maps.Equal(pc.Labels, p.Labels):
			pc.Labels = p.Labels // equal labels from elsewhere (the history's): the store's map from now on
		default:
			r.state.Relabel(m, pc, recommender.LabelKey(p.Labels), p.Labels, now)
		}
		return pc
	}
	return r.state.Container(m, key, recommender.LabelKey(p.Labels), p.Labels, now)
}

// collect forgets pod containers not seen for a memory aggregation interval, aggregates and workload totals
// without samples for the memory history (8 days), and the quality metric's targets of forgotten aggregates.
func (r *Recommender) collect(now time.Time) {
	r.state.Collect(r.model(r.Base), now)
	for k := range r.lastTarget {
		if _, ok := r.state.Aggregate(k); !ok {
			delete(r.lastTarget, k)
		}
	}
}

// sameMap reports whether a and b are the same map (not only equal ones).
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// matches is a selector as the state's aggregate filter.
func matches(sel labels.Selector) func(string, map[string]string) bool {
	return func(_ string, l map[string]string) bool { return sel.Matches(labels.Set(l)) }
}
