// Package simulate feeds a usage trace through the recommender model on a simulated clock and writes the
// recommendation file of TRACE-FORMAT.md, with quality statistics and (optionally) per-container series
// for a report.
package simulate

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/adaptive"
	"github.com/hvpa-dev/hvpa/recommender/trace"
)

// OutputHeader is the recommendation file's header.
const OutputHeader = "timestamp,namespace,workload,container,target_cpu_m,target_mem_bytes,lower_cpu_m,lower_mem_bytes,upper_cpu_m,upper_mem_bytes,uncapped_cpu_m,uncapped_mem_bytes"

// Options configure a simulation.
type Options struct {
	// Interval between recommendation ticks (default 1m).
	Interval time.Duration
	// Config of the model (default recommender.Defaults()).
	Config *recommender.Config
	// ConfigFor, when set, returns the model configuration of one workload (nil: Config), e.g. with the
	// per-object overrides of its VPA.
	ConfigFor func(namespace, workload string) *recommender.Config
	// Policy returns the container policy of (namespace, workload, container); nil: the default policy.
	Policy func(namespace, workload, container string) recommender.Policy
	// Series keeps per-container time series for a report (costs memory).
	Series bool
	// SeriesStep is the resolution of the series (default 10m).
	SeriesStep time.Duration
	// OnTick, when set, is called after every tick (e.g. to sample the heap).
	OnTick func(tick int64)
	// Model is the model of every workload: adaptive.ModelUpstream ("" too) or adaptive.ModelAdaptive.
	Model string
	// ModelFor, when set, returns the model of one workload ("": Model), e.g. from its object's
	// recommender.hvpa.dev/model annotation.
	ModelFor func(namespace, workload string) string
	// Adaptive configures the adaptive model (nil: adaptive.Defaults of the workload's configuration).
	Adaptive *adaptive.Config
}

// Stats summarize a simulation.
type Stats struct {
	Rows, Samples, OOMs, Recommendations, Aggregates int
	Ticks                                            int
	// Scored usage samples (a recommendation was in force) and their quality.
	ScoredCPU, ScoredMemory       int
	CPUSlackSum, MemorySlackSum   float64 // sum of (target - usage) / target
	CPUAbove, MemoryAbove         int     // usage above target
	TargetChanges                 int     // tick-to-tick target changes over 10% (cpu or memory)
	RejectedOOMs, RejectedSamples int
	// Scores are the issue's scores of the recommendations written; Upstream the same scores of the upstream
	// model on the same run (equal to Scores when every workload runs upstream's model).
	Scores, Upstream Scores
	// Adaptive is the number of aggregates that ran the adaptive model; Winners counts, per tick and such
	// aggregate, the winning candidates of CPU and of memory by name.
	Adaptive                  int
	CPUWinners, MemoryWinners map[string]int
}

// CPUSlack is the mean (target - usage) / target over scored CPU samples.
func (s Stats) CPUSlack() float64 { return ratio(s.CPUSlackSum, s.ScoredCPU) }

// MemorySlack is the mean (target - usage) / target over scored memory samples.
func (s Stats) MemorySlack() float64 { return ratio(s.MemorySlackSum, s.ScoredMemory) }

// CPUAboveFraction is the fraction of scored CPU samples above the target.
func (s Stats) CPUAboveFraction() float64 { return ratio(float64(s.CPUAbove), s.ScoredCPU) }

// MemoryAboveFraction is the fraction of scored memory samples above the target.
func (s Stats) MemoryAboveFraction() float64 { return ratio(float64(s.MemoryAbove), s.ScoredMemory) }

func ratio(a float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return a / float64(n)
}

// Point is one step of a series: usage (max over the step) and the recommendation in force at its end.
type Point struct {
	Time                 int64
	CPU, Memory          int64 // usage maxima; -1 none
	Target, Lower, Upper recommender.Amounts
	// Upstream is the upstream model's target (Series.Adaptive: the target is the adaptive model's).
	Upstream recommender.Amounts
	OOM      bool
}

// Series is the history of one (namespace, workload, container).
type Series struct {
	Namespace, Workload, Container string
	// Adaptive: the targets are the adaptive model's, and Point.Upstream holds upstream's beside them.
	Adaptive bool
	Points   []Point
}

// aggregate is what the simulator keeps beside one aggregate of the recommender state (one workload
// container): its policy, the last recommendation and the output row.
type aggregate struct {
	ns, workload, container string
	key                     recommender.AggregateKey
	agg                     *recommender.Aggregate
	model                   *recommender.Model
	policy                  recommender.Policy
	split                   int            // containers the pod minimum is split across, when last computed
	wl                      *workloadState // the workload it belongs to
	counted                 bool           // counted in wl.scaled
	dirty                   bool
	has                     bool
	rec                     recommender.Recommendation
	row                     []byte // cached output columns after the timestamp
	series                  *Series
	cur                     Point
	// the adaptive model (nil: upstream's): its state and upstream's recommendation beside it
	ad         *adaptive.State
	up         recommender.Recommendation
	upHas      bool
	app, upApp applied // what an updater applied of rec and of up
}

type pendingOOM struct {
	c       *container
	t       time.Time
	request float64
}

// workloadState counts its scaled containers (not Off, with samples): the pod minimum is split across them.
type workloadState struct {
	scaled int
	aggs   []*aggregate
}

func (w *workloadState) changed() {
	for _, a := range w.aggs {
		a.dirty = true
	}
}

// container is the simulator's handle on one pod container of the recommender state.
type container struct {
	pc  *recommender.PodContainer
	key recommender.ContainerKey
	agg *aggregate
}

// Simulator runs a simulation.
type Simulator struct {
	opts   Options
	model  *recommender.Model
	models map[recommender.Config]*recommender.Model
	out    *bufio.Writer
	// state is the recommender state the cluster loop drives too: pod containers, aggregates (one group
	// per workload), expiry
	state      *recommender.State
	aggs       map[recommender.AggregateKey]*aggregate
	ordered    []*aggregate
	containers map[string]*container     // by namespace, pod and container name, for a lookup without allocation
	workloads  map[string]*workloadState // ns/workload
	key        []byte
	nextTick   int64
	lastTime   int64
	started    bool
	// OOM kills of the current timestamp, applied after its usage rows (row order within a timestamp has no
	// meaning; upstream also records OOMs after the usage of the same run)
	pendingOOMs []pendingOOM
	Stats       Stats
	series      []*Series
	adModels    map[recommender.Config]*adaptive.Model
}

// New returns a Simulator writing recommendations to w (nil: none are written).
func New(w io.Writer, opts Options) (*Simulator, error) {
	if opts.Interval == 0 {
		opts.Interval = time.Minute
	}
	if opts.Interval < time.Second || opts.Interval%time.Second != 0 {
		return nil, fmt.Errorf("--interval %s: must be a positive number of whole seconds", opts.Interval)
	}
	if opts.SeriesStep == 0 {
		opts.SeriesStep = 10 * time.Minute
	}
	if opts.SeriesStep < time.Second || opts.SeriesStep%time.Second != 0 {
		return nil, fmt.Errorf("series step %s: must be a positive number of whole seconds", opts.SeriesStep)
	}
	m, err := recommender.NewModelOrDefaults(opts.Config)
	if err != nil {
		return nil, err
	}
	if _, err := adaptive.ParseModel(opts.Model); err != nil {
		return nil, err
	}
	if opts.Adaptive != nil {
		if err := opts.Adaptive.Validate(); err != nil {
			return nil, fmt.Errorf("adaptive model: %w", err)
		}
	}
	cfg := m.Config
	s := &Simulator{opts: opts, model: m, models: map[recommender.Config]*recommender.Model{cfg: m}, state: recommender.NewState(), aggs: map[recommender.AggregateKey]*aggregate{}, containers: map[string]*container{}, workloads: map[string]*workloadState{},
		adModels: map[recommender.Config]*adaptive.Model{}}
	s.Stats.CPUWinners, s.Stats.MemoryWinners = map[string]int{}, map[string]int{}
	if w != nil {
		s.out = bufio.NewWriterSize(w, 1<<20)
		_, _ = s.out.WriteString(OutputHeader + "\n") // bufio keeps the first write error; the Flush at the end returns it
	}
	return s, nil
}

// Run reads the whole trace and flushes the output.
func (s *Simulator) Run(r io.Reader) error {
	if err := trace.Each(r, func(row *trace.Row) error { s.Add(row); return nil }); err != nil {
		return err
	}
	s.Finish()
	if s.out != nil {
		return s.out.Flush()
	}
	return nil
}

func (s *Simulator) interval() int64 { return int64(s.opts.Interval / time.Second) }

// Add feeds one row, emitting every tick before its timestamp first.
func (s *Simulator) Add(row *trace.Row) {
	iv := s.interval()
	if !s.started {
		s.started = true
		s.nextTick = trace.Tick(row.Time, iv)
	}
	if row.Time > s.lastTime {
		s.flushOOMs()
	}
	for s.nextTick < row.Time {
		s.tick(s.nextTick)
		s.nextTick += iv
	}
	s.lastTime = row.Time
	s.Stats.Rows++
	c := s.container(row)
	a := c.agg
	t := time.Unix(row.Time, 0).UTC()
	c.pc.LastSeen = t
	if row.HasMemReq {
		c.pc.State.MemoryRequest = float64(row.MemoryRequest)
	}
	if row.OOM {
		s.Stats.OOMs++
		req := 0.0
		if row.HasMemReq {
			req = float64(row.MemoryRequest)
		}
		s.pendingOOMs = append(s.pendingOOMs, pendingOOM{c: c, t: t, request: req})
		if a.series != nil {
			a.cur.OOM = true
		}
		return
	}
	if !row.HasCPU && !row.HasMemory {
		return
	}
	s.Stats.Samples++
	s.score(a, row)
	s.scoreIssue(a, row)
	s.addUsage(c, row, t)
	if a.series != nil {
		if row.HasCPU {
			a.cur.CPU = max(a.cur.CPU, row.CPU)
		}
		if row.HasMemory {
			a.cur.Memory = max(a.cur.Memory, row.Memory)
		}
	}
}

// addUsage feeds a usage row's CPU and memory samples to the container's model (a rejected one is counted).
func (s *Simulator) addUsage(c *container, row *trace.Row, t time.Time) {
	a := c.agg
	if row.HasCPU {
		if a.model.AddCPU(c.pc.State, t, float64(row.CPU)/1000) {
			a.dirty = true
			if a.ad != nil {
				a.ad.AddCPU(t, float64(row.CPU)/1000)
			}
			if !a.counted && !a.policy.Off { // a new scaled container: the pod minimum is split anew
				a.counted = true
				a.wl.scaled++
				a.wl.changed()
			}
		} else {
			s.Stats.RejectedSamples++
		}
	}
	if row.HasMemory {
		if a.model.AddMemory(c.pc.State, t, float64(row.Memory)) {
			a.dirty = true
			if a.ad != nil {
				a.ad.AddMemory(t, float64(row.Memory))
			}
		} else {
			s.Stats.RejectedSamples++
		}
	}
}

func (s *Simulator) flushOOMs() {
	for _, o := range s.pendingOOMs {
		if err := o.c.agg.model.RecordOOM(o.c.pc.State, o.t, o.request); err != nil {
			s.Stats.RejectedOOMs++
		} else {
			o.c.agg.dirty = true
			if ad := o.c.agg.ad; ad != nil {
				req := o.request
				if req <= 0 {
					req = o.c.pc.State.MemoryRequest
				}
				ad.RecordOOM(o.t, req)
			}
		}
	}
	s.pendingOOMs = s.pendingOOMs[:0]
}

// score compares a usage sample with the recommendation in force (the last tick strictly before it).
func (s *Simulator) score(a *aggregate, row *trace.Row) {
	if !a.has {
		return
	}
	if row.HasCPU {
		scoreOne(float64(a.rec.Target.CPUMilli), float64(row.CPU), &s.Stats.ScoredCPU, &s.Stats.CPUSlackSum, &s.Stats.CPUAbove)
	}
	if row.HasMemory {
		scoreOne(float64(a.rec.Target.MemoryBytes), float64(row.Memory), &s.Stats.ScoredMemory, &s.Stats.MemorySlackSum, &s.Stats.MemoryAbove)
	}
}

// scoreOne adds one sample of a resource to its counts: scored, the slack (target - usage) / target, and
// whether usage was above the target. A zero target is not scored.
func scoreOne(target, usage float64, scored *int, slackSum *float64, above *int) {
	if target <= 0 {
		return
	}
	*scored++
	*slackSum += (target - usage) / target
	if usage > target {
		*above++
	}
}

func (s *Simulator) container(row *trace.Row) *container {
	s.key = append(append(append(append(append(s.key[:0], row.Namespace...), 0), row.Pod...), 0), row.Container...)
	if c, ok := s.containers[string(s.key)]; ok {
		return c
	}
	ns, workload, name := string(row.Namespace), string(row.Workload), string(row.Container)
	ak := recommender.AggregateKey{Namespace: ns, Container: name, Group: workload}
	a, ok := s.aggs[ak]
	if !ok {
		model := s.modelFor(ns, workload)
		a = &aggregate{ns: ns, workload: workload, container: name, key: ak, model: model, policy: recommender.DefaultPolicy()}
		if s.opts.Policy != nil {
			a.policy = s.opts.Policy(a.ns, a.workload, a.container)
		}
		a.ad = s.adaptiveFor(ns, workload, model)
		if a.ad != nil {
			s.Stats.Adaptive++
		}
		if s.opts.Series {
			a.series = &Series{Namespace: a.ns, Workload: a.workload, Container: a.container, Adaptive: a.ad != nil}
			a.cur = Point{CPU: -1, Memory: -1}
			s.series = append(s.series, a.series)
		}
		s.aggs[ak] = a
		i := sort.Search(len(s.ordered), func(i int) bool { return less(a.key, s.ordered[i].key) || a.key == s.ordered[i].key })
		s.ordered = append(s.ordered, nil)
		copy(s.ordered[i+1:], s.ordered[i:])
		s.ordered[i] = a
		wk := a.ns + "/" + a.workload
		if s.workloads[wk] == nil {
			s.workloads[wk] = &workloadState{}
		}
		a.wl = s.workloads[wk]
		a.wl.aggs = append(a.wl.aggs, a)
	}
	key := recommender.ContainerKey{Namespace: ns, Pod: string(row.Pod), Container: name}
	c := &container{pc: s.state.Container(a.model, key, workload, nil, time.Unix(row.Time, 0).UTC()), key: key, agg: a}
	a.agg = s.state.MustAggregate(ak)
	s.containers[string(s.key)] = c
	return c
}

// less orders aggregates by namespace, workload and container (the output order).
func less(a, b recommender.AggregateKey) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	return a.Container < b.Container
}

// tick writes the recommendation of every aggregate at time T (recomputing only those with new samples).
func (s *Simulator) tick(T int64) {
	s.Stats.Ticks++
	now := time.Unix(T, 0).UTC()
	ts := strconv.AppendInt(nil, T, 10)
	days := s.opts.Interval.Hours() / 24
	for _, a := range s.ordered {
		if n := a.wl.scaled; n != a.split {
			a.split, a.dirty = n, true
		}
		if a.ad != nil {
			s.recommendAdaptive(a, now)
		} else if a.dirty {
			a.dirty = false
			rec, ok := a.model.Recommend(a.agg, a.split, a.policy)
			if ok && a.has && changedOver(a.rec.Target, rec.Target, 0.1) {
				s.Stats.TargetChanges++
			}
			if ok {
				a.rec, a.has = rec, true
				a.row = appendRow(a.row[:0], a, rec)
			}
		}
		if !a.has {
			continue
		}
		if s.out != nil {
			_, _ = s.out.Write(ts) // bufio keeps the first write error; Run's Flush returns it
			_, _ = s.out.Write(a.row)
		}
		s.Stats.Recommendations++
		s.Stats.Scores.tick(&a.app, a.rec.Target, days)
		s.Stats.Upstream.tick(&a.upApp, a.upstreamTarget(), days)
		if a.series != nil && (T%int64(s.opts.SeriesStep/time.Second) == 0) {
			a.cur.Time, a.cur.Target, a.cur.Lower, a.cur.Upper = T, a.rec.Target, a.rec.LowerBound, a.rec.UpperBound
			a.cur.Upstream = a.upstreamTarget()
			a.series.Points = append(a.series.Points, a.cur)
			a.cur = Point{CPU: -1, Memory: -1}
		}
	}
	// hourly: forget pod containers whose memory window closed long ago, and expired aggregates
	if T%3600 == 0 {
		s.collect(now)
	}
	if s.opts.OnTick != nil {
		s.opts.OnTick(T)
	}
}

func (s *Simulator) collect(now time.Time) {
	s.state.Collect(s.model, now)
	for k, c := range s.containers {
		if !s.state.HasContainer(c.key) {
			delete(s.containers, k)
		}
	}
	kept := s.ordered[:0]
	for _, a := range s.ordered {
		if _, ok := s.state.Aggregate(a.key); !ok {
			delete(s.aggs, a.key)
			for i, x := range a.wl.aggs {
				if x == a {
					a.wl.aggs = append(a.wl.aggs[:i], a.wl.aggs[i+1:]...)
					break
				}
			}
			if a.counted {
				a.wl.scaled--
				a.wl.changed()
			}
			continue
		}
		kept = append(kept, a)
	}
	s.ordered = kept
}

// Finish emits the ticks up to the first multiple of the interval at or after the last timestamp.
func (s *Simulator) Finish() {
	if !s.started {
		return
	}
	s.flushOOMs()
	last := trace.Tick(s.lastTime, s.interval())
	for s.nextTick <= last {
		s.tick(s.nextTick)
		s.nextTick += s.interval()
	}
	s.Stats.Aggregates = len(s.aggs)
	s.Stats.Scores.OOMs, s.Stats.Upstream.OOMs = s.Stats.OOMs, s.Stats.OOMs
}

// modelFor returns the model of a workload's configuration (models are shared between equal configurations).
func (s *Simulator) modelFor(ns, workload string) *recommender.Model {
	if s.opts.ConfigFor == nil {
		return s.model
	}
	cfg := s.opts.ConfigFor(ns, workload)
	if cfg == nil {
		return s.model
	}
	if m, ok := s.models[*cfg]; ok {
		return m
	}
	m, err := recommender.NewModel(*cfg)
	if err != nil { // ConfigFor hands out validated configurations; fall back rather than stop the run
		return s.model
	}
	s.models[*cfg] = m
	return m
}

// Series returns the per-container series (Options.Series).
func (s *Simulator) Series() []*Series { return s.series }

// Model returns the model the simulator runs.
func (s *Simulator) Model() *recommender.Model { return s.model }

func changedOver(a, b recommender.Amounts, f float64) bool {
	rel := func(x, y int64) bool {
		if x <= 0 || y < 0 {
			return false
		}
		return math.Abs(float64(y-x))/float64(x) > f
	}
	return rel(a.CPUMilli, b.CPUMilli) || rel(a.MemoryBytes, b.MemoryBytes)
}

func appendAmount(b []byte, v int64) []byte {
	b = append(b, ',')
	if v < 0 {
		return b
	}
	return strconv.AppendInt(b, v, 10)
}

func appendRow(b []byte, a *aggregate, r recommender.Recommendation) []byte {
	b = append(b, ',')
	b = append(b, a.ns...)
	b = append(b, ',')
	b = append(b, a.workload...)
	b = append(b, ',')
	b = append(b, a.container...)
	for _, v := range []int64{r.Target.CPUMilli, r.Target.MemoryBytes, r.LowerBound.CPUMilli, r.LowerBound.MemoryBytes,
		r.UpperBound.CPUMilli, r.UpperBound.MemoryBytes, r.UncappedTarget.CPUMilli, r.UncappedTarget.MemoryBytes} {
		b = appendAmount(b, v)
	}
	return append(b, '\n')
}
