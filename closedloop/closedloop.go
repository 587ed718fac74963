// Package closedloop runs autoscaling policies in closed loop on a usage trace: the trace is the DEMAND of
// each workload (per timestamp, the usage of its pods summed per container), and a simulated workload serves
// it under each policy (Options.Runs) on the same demand:
//
//   - hvpa: the Hvpa as configured, sized by the real recommender (recommender.State, the bookkeeping the
//     cluster loop runs) and the real decision (scaling.Decide), with its HPA;
//   - hpa: the HPA v2 algorithm (hpa.go) with fixed per-pod requests;
//   - vpa: upstream's VPA, the per-pod model of the same recommender and upstream's updater (vpa.go), with
//     fixed replicas;
//   - hpa+vpa: an HPA on CPU and a VPA that controls memory only.
//
// Every policy goes through one actuation model (pods.go): pods start after a delay, in-place resizes apply
// one updater period after they were decided, a memory limit below the usage is an OOM kill and a restart,
// and the autoscalers read the usage of the last metrics window.
//
// Two models of the Hvpa's embedded recommender can be compared on the same demand: ModelTotal (docs/design/scaling.md
// section 2: one history of the whole workload's load) and ModelPerPod (one history of the pods' usage,
// total = replicas x per-pod target: replica-blind, kept for comparison).
package closedloop

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/trace"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Model is the embedded recommender's model of a workload.
type Model string

// The models.
const (
	ModelTotal  Model = "total"
	ModelPerPod Model = "per-pod"
)

// ParseModel checks a model name.
func ParseModel(s string) (Model, error) {
	switch Model(s) {
	case ModelTotal, ModelPerPod:
		return Model(s), nil
	}
	return "", fmt.Errorf("--model %q: use %s or %s", s, ModelTotal, ModelPerPod)
}

// RowsHeader is the header of the per-timestamp output (Options.Rows): replicas are the pods that exist, the
// requests their mean per pod.
const RowsHeader = "timestamp,namespace,workload,container,replicas,cpu_request_m,memory_request_bytes,cpu_demand_m,memory_demand_bytes"

// Simulator runs the closed loop of every run over one pass of the trace.
type Simulator struct {
	opts    Options
	cfg     recommender.Config
	runs    []*run
	ts      int64 // the timestamp being gathered
	started bool
	gap     int64                      // the last interval between timestamps (the last row's window)
	demand  map[wkey]map[string]*usage // the gathered timestamp's demand
	first   map[wkey]*firstSeen        // the first timestamp's pods and requests, per workload
	keys    []wkey                     // every workload seen, sorted
	clock   int64                      // the next step
	steps   []stepAt                   // the steps of the window being run
	last    struct {                   // the workload of the last row
		ns, name []byte
		key      wkey
		demand   map[string]*usage
	}
	next struct{ tick, loop int64 } // the next Hvpa decision and recommender/updater loop
}

type wkey struct{ ns, name string }

func (a wkey) less(b wkey) int {
	if c := strings.Compare(a.ns, b.ns); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

type usage struct {
	cpu, mem       float64
	hasCPU, hasMem bool
}

type firstSeen struct {
	ts       int64
	pods     map[string]bool
	requests map[string]scaling.Values
	order    []string
}

// New returns a Simulator.
func New(opts Options) (*Simulator, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	model, err := recommender.NewModelOrDefaults(opts.Config)
	if err != nil {
		return nil, err
	}
	s := &Simulator{opts: opts, cfg: model.Config, demand: map[wkey]map[string]*usage{}, first: map[wkey]*firstSeen{}}
	a := opts.Actuation
	for i, spec := range opts.Runs {
		r := &run{sim: s, spec: spec, rec: model, state: recommender.NewState(), workloads: map[wkey]*workload{},
			step: int64(a.Step / time.Second), metrics: int64(a.MetricResolution / time.Second), startup: int64(a.StartupDelay / time.Second), restart: int64(a.RestartDelay / time.Second),
			updater: int64(a.UpdaterInterval / time.Second)}
		if i == 0 && opts.Rows != nil {
			r.rows = opts.Rows
			if _, err := io.WriteString(r.rows, RowsHeader+"\n"); err != nil {
				return nil, err
			}
		}
		if a.Instant {
			r.startup, r.restart, r.resizeDelay = 0, 0, 0
		} else {
			r.resizeDelay = r.updater
		}
		s.runs = append(s.runs, r)
	}
	return s, nil
}

// Run reads the whole trace.
func (s *Simulator) Run(r io.Reader) error {
	if err := trace.Each(r, s.Add); err != nil {
		return err
	}
	return s.Finish()
}

// Add takes one trace row; a row of a later timestamp first runs the loop over the gathered one's window.
func (s *Simulator) Add(row *trace.Row) error {
	if s.started && row.Time != s.ts {
		s.gap = row.Time - s.ts
		if err := s.step(row.Time); err != nil {
			return err
		}
	}
	if !s.started {
		s.started, s.clock = true, row.Time
		s.next.tick = trace.Tick(row.Time, int64(s.opts.Interval/time.Second))
		s.next.loop = row.Time
	}
	s.ts = row.Time
	if row.OOM { // the recording's OOM kills: the closed loop makes its own
		return nil
	}
	if !bytes.Equal(row.Namespace, s.last.ns) || !bytes.Equal(row.Workload, s.last.name) || s.last.demand == nil {
		k := wkey{string(row.Namespace), string(row.Workload)}
		d := s.demand[k]
		if d == nil {
			d = map[string]*usage{}
			s.demand[k] = d
		}
		s.last.ns, s.last.name = append(s.last.ns[:0], row.Namespace...), append(s.last.name[:0], row.Workload...)
		s.last.key, s.last.demand = k, d
	}
	k, d := s.last.key, s.last.demand
	u := d[string(row.Container)]
	if u == nil {
		u = &usage{}
		d[string(row.Container)] = u
	}
	name := string(row.Container)
	if row.HasCPU {
		u.cpu += float64(row.CPU)
		u.hasCPU = true
	}
	if row.HasMemory {
		u.mem += float64(row.Memory)
		u.hasMem = true
	}
	s.noteFirst(k, name, row)
	return nil
}

// noteFirst records the pods and requests of a workload's first timestamp.
func (s *Simulator) noteFirst(k wkey, name string, row *trace.Row) {
	f := s.first[k]
	if f == nil {
		f = &firstSeen{ts: row.Time, pods: map[string]bool{}, requests: map[string]scaling.Values{}}
		s.first[k] = f
		i, _ := slices.BinarySearchFunc(s.keys, k, wkey.less)
		s.keys = slices.Insert(s.keys, i, k)
	}
	if f.ts != row.Time {
		return
	}
	f.pods[string(row.Pod)] = true
	if _, ok := f.requests[name]; !ok {
		req := scaling.Values{}
		if row.HasCPUReq {
			req.Set(scaling.CPU, float64(row.CPURequest))
		}
		if row.HasMemReq {
			req.Set(scaling.Memory, float64(row.MemoryRequest))
		}
		f.requests[name] = req
		f.order = append(f.order, name)
	}
}

// due says which loops run at a step.
type due struct{ tick, loop bool }

// stepAt is one step of a window and the loops due at it.
type stepAt struct {
	t int64
	due
}

// step runs every run over the gathered timestamp's window [s.ts, end): the previous window closes (the
// recommenders get its usage), then every step of the window runs the loops that are due and serves the
// demand. Workloads do not interact, so each runs the whole window before the next (its state stays in the
// cache).
func (s *Simulator) step(end int64) error {
	for _, r := range s.runs {
		if err := r.begin(s.ts); err != nil {
			return err
		}
	}
	s.steps = s.steps[:0]
	for ; s.clock < end; s.clock += s.runs[0].step {
		t := s.clock
		var d due
		if t >= s.next.tick {
			d.tick = true
			s.next.tick = trace.Tick(t+1, int64(s.opts.Interval/time.Second))
		}
		if t >= s.next.loop {
			d.loop = true
			s.next.loop += s.runs[0].updater * ((t-s.next.loop)/s.runs[0].updater + 1)
		}
		s.steps = append(s.steps, stepAt{t, d})
	}
	for _, r := range s.runs {
		if err := r.window(s.steps); err != nil {
			return err
		}
	}
	for _, d := range s.demand { // the maps stay: most workloads have rows at every timestamp
		for _, u := range d {
			*u = usage{}
		}
	}
	return nil
}

// Finish runs the loop over the last timestamp's window (as long as the interval before it).
func (s *Simulator) Finish() error {
	if !s.started {
		return nil
	}
	gap := s.gap
	if gap <= 0 {
		gap = 60
	}
	return s.step(s.ts + gap)
}

// Summaries returns the outcome of every simulated workload, by namespace and workload, then in the order of
// the runs.
func (s *Simulator) Summaries() []Summary {
	var out []Summary
	for _, w := range s.simulated() {
		out = append(out, w.summary())
	}
	return out
}

// Series returns the workloads' series (Options.SeriesStep), in the order of Summaries.
func (s *Simulator) Series() []*Series {
	var out []*Series
	for _, w := range s.simulated() {
		if w.series != nil {
			out = append(out, w.series)
		}
	}
	return out
}

// simulated returns every simulated workload of every run, by namespace and workload, then run.
func (s *Simulator) simulated() []*workload {
	var out []*workload
	for _, k := range s.keys {
		for _, r := range s.runs {
			if w := r.workloads[k]; w != nil {
				out = append(out, w)
			}
		}
	}
	return out
}

// run is one policy's closed loop over every workload.
type run struct {
	sim       *Simulator
	spec      Run
	rec       *recommender.Model // the base model (the vpa policies' recommender)
	state     *recommender.State
	workloads map[wkey]*workload // nil entries: workloads no Hvpa names
	order     []*workload        // the simulated workloads, by namespace and workload
	rows      io.Writer
	buf       []byte
	// the actuation model in seconds
	step, metrics, startup, restart, updater, resizeDelay int64
}

// begin opens the window of timestamp ts: new workloads start, every workload closes its previous window and
// takes the window's demand.
func (r *run) begin(ts int64) error {
	for _, k := range r.sim.keys {
		if len(r.workloads) == len(r.sim.keys) { // every workload known: the common case
			break
		}
		if _, ok := r.workloads[k]; ok {
			continue
		}
		w, err := r.newWorkload(k)
		if err != nil {
			return err
		}
		r.workloads[k] = w
		if w != nil {
			r.order = append(r.order, w)
			slices.SortFunc(r.order, func(a, b *workload) int { return a.key.less(b.key) })
		}
	}
	for _, w := range r.order {
		w.begin(ts, r.sim.demand[w.key]) // never nil: a workload exists once it had rows
	}
	return nil
}

// window runs the steps of a window for every workload, then the hourly collection of the recommender's
// state.
func (r *run) window(steps []stepAt) error {
	for _, w := range r.order {
		for i, st := range steps {
			if err := w.tick(st.t, st.due); err != nil {
				return fmt.Errorf("%s/%s at %s (%s): %w", w.key.ns, w.key.name, time.Unix(st.t, 0).UTC().Format(time.RFC3339), r.spec.Label(), err)
			}
			if i == 0 && r.rows != nil {
				w.writeRows(r.sim.ts)
			}
		}
	}
	for _, st := range steps {
		if st.t%3600 == 0 {
			r.state.Collect(r.rec, time.Unix(st.t, 0).UTC())
		}
	}
	return nil
}

// firstPods is the number of pods of a workload's first timestamp.
func (s *Simulator) firstPods(k wkey) int32 {
	if f := s.first[k]; f != nil {
		return int32(max(len(f.pods), 1))
	}
	return 0
}
