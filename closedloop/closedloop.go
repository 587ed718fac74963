// Package closedloop runs Hvpas in closed loop on a usage trace: the trace is the DEMAND of each workload
// (per timestamp, the usage of its pods summed per container), and a simulated workload, sized by the real
// recommender (recommender.State, the bookkeeping the cluster loop runs) and the real decision
// (scaling.Decide), serves it. Each decision is applied at once (in place); the demand is split evenly over
// the replicas; a pod whose share of memory reaches its memory limit is OOM-killed. An Hvpa that deploys an
// HPA gets a modelled HPA (its metrics, 10% tolerance, its behavior's stabilization windows).
//
// Two models of the embedded recommender can be compared on the same demand: ModelTotal (SCALING.md
// section 2: one history of the whole workload's load) and ModelPerPod (one history of the pods' usage,
// total = replicas x per-pod target: replica-blind, kept for comparison).
package closedloop

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"time"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
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

// RowsHeader is the header of the per-tick output (Options.Rows).
const RowsHeader = "timestamp,namespace,workload,container,replicas,cpu_request_m,memory_request_bytes,cpu_demand_m,memory_demand_bytes"

// Options configure a closed-loop run.
type Options struct {
	// Interval between decisions (default 1m).
	Interval time.Duration
	// Models to run on the same demand (default: ModelTotal).
	Models []Model
	// Config of the recommender model (default recommender.Defaults()).
	Config *recommender.Config
	// HvpaFor returns the Hvpa that scales a workload; nil: the workload is not simulated.
	HvpaFor func(namespace, workload string) *hvpav1alpha1.Hvpa
	// LowConfidenceDays: below this much history the Hvpa has LowConfidence (default 1).
	LowConfidenceDays float64
	// Rows, when set, gets one row per tick and container (RowsHeader), for the first model.
	Rows io.Writer
	// SeriesStep, when positive, keeps a point per workload every step for a report.
	SeriesStep time.Duration
}

// Summary is the outcome of one workload under one model.
type Summary struct {
	Namespace                string  `json:"namespace"`
	Workload                 string  `json:"workload"`
	Model                    Model   `json:"model"`
	Ticks                    int     `json:"ticks"`
	FinalReplicas            int32   `json:"final_replicas"`
	MaxReplicas              int32   `json:"max_replicas"`
	CPUProvidedOverDemand    float64 `json:"cpu_provided_over_demand"`
	CPUShortfall             float64 `json:"cpu_shortfall"`
	MemoryProvidedOverDemand float64 `json:"memory_provided_over_demand"`
	MemoryShortfall          float64 `json:"memory_shortfall"`
	OOMEvents                int     `json:"oom_events"`
	ReplicaChangesPerDay     float64 `json:"replica_changes_per_day"`
	PerPodChangesPerDay      float64 `json:"per_pod_changes_per_day"`
}

// Point is one step of a workload's series: demand and provided totals, replicas and per-pod requests (of
// all containers together).
type Point struct {
	Time                        int64
	Replicas                    int32
	CPUDemand, MemoryDemand     float64
	CPUProvided, MemoryProvided float64
	CPUPerPod, MemoryPerPod     float64
	OOM                         bool
}

// Series is one workload's history under one model.
type Series struct {
	Namespace, Workload string
	Model               Model
	Points              []Point
}

// Simulator runs the closed loop of every model over one pass of the trace.
type Simulator struct {
	opts     Options
	cfg      recommender.Config
	runs     []*run
	ts       int64 // the timestamp being gathered
	started  bool
	demand   map[wkey]map[string]*usage // the current timestamp's demand
	first    map[wkey]*firstSeen        // the first timestamp's pods and requests, per workload
	nextTick int64
}

type wkey struct{ ns, name string }

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
	if opts.Interval == 0 {
		opts.Interval = time.Minute
	}
	if opts.Interval < time.Second || opts.Interval%time.Second != 0 {
		return nil, fmt.Errorf("--interval %s: must be a positive number of whole seconds", opts.Interval)
	}
	if len(opts.Models) == 0 {
		opts.Models = []Model{ModelTotal}
	}
	if opts.HvpaFor == nil {
		return nil, fmt.Errorf("closed loop: an Hvpa is needed for the workloads (--hvpa FILE)")
	}
	if opts.LowConfidenceDays == 0 {
		opts.LowConfidenceDays = 1
	}
	model, err := recommender.NewModelOrDefaults(opts.Config)
	if err != nil {
		return nil, err
	}
	cfg := model.Config
	s := &Simulator{opts: opts, cfg: cfg, demand: map[wkey]map[string]*usage{}, first: map[wkey]*firstSeen{}}
	for i, m := range opts.Models {
		r := &run{sim: s, model: m, rec: model, state: recommender.NewState(), workloads: map[wkey]*workload{}}
		if i == 0 && opts.Rows != nil {
			r.rows = opts.Rows
			if _, err := io.WriteString(r.rows, RowsHeader+"\n"); err != nil {
				return nil, err
			}
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

// Add takes one trace row; a row of a later timestamp first runs the loop on the gathered one.
func (s *Simulator) Add(row *trace.Row) error {
	if s.started && row.Time != s.ts {
		if err := s.step(); err != nil {
			return err
		}
	}
	if !s.started || row.Time != s.ts {
		if !s.started {
			s.nextTick = trace.Tick(row.Time, int64(s.opts.Interval/time.Second))
		}
		s.started, s.ts = true, row.Time
	}
	if row.OOM { // the recording's OOM kills: the closed loop makes its own
		return nil
	}
	k := wkey{string(row.Namespace), string(row.Workload)}
	d := s.demand[k]
	if d == nil {
		d = map[string]*usage{}
		s.demand[k] = d
	}
	name := string(row.Container)
	u := d[name]
	if u == nil {
		u = &usage{}
		d[name] = u
	}
	if row.HasCPU {
		u.cpu += float64(row.CPU)
		u.hasCPU = true
	}
	if row.HasMemory {
		u.mem += float64(row.Memory)
		u.hasMem = true
	}
	f := s.first[k]
	if f == nil {
		f = &firstSeen{ts: row.Time, pods: map[string]bool{}, requests: map[string]scaling.Values{}}
		s.first[k] = f
	}
	if f.ts == row.Time {
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
	return nil
}

// step runs the loop at the gathered timestamp: every model's workloads serve the demand, and decide at a
// tick.
func (s *Simulator) step() error {
	t := time.Unix(s.ts, 0).UTC()
	tick := s.ts >= s.nextTick
	if tick {
		iv := int64(s.opts.Interval / time.Second)
		s.nextTick = trace.Tick(s.ts+1, iv)
	}
	keys := make([]wkey, 0, len(s.demand))
	for k := range s.demand {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].ns != keys[j].ns {
			return keys[i].ns < keys[j].ns
		}
		return keys[i].name < keys[j].name
	})
	for _, r := range s.runs {
		for _, k := range keys {
			w, err := r.workload(k)
			if err != nil {
				return err
			}
			if w == nil {
				continue
			}
			w.serve(t, s.demand[k])
			if tick {
				if err := w.decide(t); err != nil {
					return fmt.Errorf("%s/%s at %s: %w", k.ns, k.name, t.Format(time.RFC3339), err)
				}
			}
		}
		if s.ts%3600 == 0 {
			r.state.Collect(r.rec, t)
		}
	}
	clear(s.demand)
	return nil
}

// Finish runs the loop on the last timestamp.
func (s *Simulator) Finish() error {
	if !s.started || len(s.demand) == 0 {
		return nil
	}
	return s.step()
}

// Summaries returns the outcome of every simulated workload, by namespace, workload and model.
func (s *Simulator) Summaries() []Summary {
	var out []Summary
	for _, w := range s.simulated() {
		out = append(out, w.summary())
	}
	return out
}

// Series returns the workloads' series (Options.SeriesStep), by namespace, workload and model.
func (s *Simulator) Series() []*Series {
	var out []*Series
	for _, w := range s.simulated() {
		if w.series != nil {
			out = append(out, w.series)
		}
	}
	return out
}

// simulated returns every simulated workload of every model, by namespace, workload and model.
func (s *Simulator) simulated() []*workload {
	var out []*workload
	for _, r := range s.runs {
		for _, w := range r.workloads {
			if w != nil {
				out = append(out, w)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.key != b.key {
			return a.key.ns < b.key.ns || (a.key.ns == b.key.ns && a.key.name < b.key.name)
		}
		return a.run.model < b.run.model
	})
	return out
}

// run is one model's closed loop over every workload.
type run struct {
	sim       *Simulator
	model     Model
	rec       *recommender.Model
	state     *recommender.State
	workloads map[wkey]*workload // nil entries: workloads no Hvpa scales
	rows      io.Writer
	buf       []byte
}

func (r *run) workload(k wkey) (*workload, error) {
	if w, ok := r.workloads[k]; ok {
		return w, nil
	}
	h := r.sim.opts.HvpaFor(k.ns, k.name)
	if h == nil {
		r.workloads[k] = nil
		return nil, nil
	}
	spec, errs := scaling.FromHvpa(h)
	if len(errs) > 0 {
		return nil, fmt.Errorf("Hvpa %s for %s/%s: %w", h.Name, k.ns, k.name, errs.ToAggregate())
	}
	cfg, err := recommender.WithOverrides(r.sim.cfg, h.Annotations) // the Hvpa's recommender.hvpa.dev/ annotations
	if err != nil {
		return nil, fmt.Errorf("Hvpa %s: %w", h.Name, err)
	}
	m, err := recommender.NewModel(cfg)
	if err != nil {
		return nil, err
	}
	f := r.sim.first[k]
	w := &workload{run: r, key: k, hvpa: h, spec: spec, model: m, models: map[string]*recommender.Model{}, replicas: int32(max(len(f.pods), 1)),
		owner: "Hvpa/" + h.Name + "/" + k.name, start: f.ts} // one Hvpa ("*") may scale several workloads
	for _, name := range f.order {
		req := f.requests[name]
		w.containers = append(w.containers, scaling.Container{Name: name, Requests: req, Limits: req}) // limit = request (TRACE-FORMAT)
		// a container policy's model fields (oomBumpUpRatio, ...), as the cluster's recommender takes them
		w.models[name] = m
		if h.Spec.VPA != nil {
			c, has, err := recommender.ContainerConfig(cfg, h.Spec.VPA.Template.ResourcePolicy, name)
			if err != nil {
				return nil, fmt.Errorf("Hvpa %s: %w", h.Name, err)
			}
			if has {
				if w.models[name], err = recommender.NewModel(c); err != nil {
					return nil, err
				}
			}
		}
	}
	if h.Spec.HPA != nil && h.Spec.HPA.Deploy {
		w.hpa = newHPA(h.Spec.HPA.Template)
	}
	if step := r.sim.opts.SeriesStep; step > 0 {
		w.series = &Series{Namespace: k.ns, Workload: k.name, Model: r.model}
	}
	r.workloads[k] = w
	return w, nil
}

// workload is one simulated workload: its sizing in force, the Hvpa's memory (last scaling, HPA record)
// and the outcome so far.
type workload struct {
	run        *run
	key        wkey
	hvpa       *hvpav1alpha1.Hvpa
	spec       *scaling.Spec
	model      *recommender.Model
	models     map[string]*recommender.Model // by container: the model with its policy's model fields
	owner      string
	replicas   int32
	containers []scaling.Container // per-pod requests and limits in force
	hpa        *hpaModel
	hpaRecord  *scaling.HPARecord
	lastScale  *time.Time
	decided    bool // the first decision (the initial intent) is not a scaling
	oomSince   bool
	demand     map[string]*usage
	start      int64
	last       int64
	series     *Series
	oomTick    bool

	ticks                               int
	maxReplicas                         int32
	cpuTally, memTally                  tally
	ooms, replicaChanges, perPodChanges int
}

// serve splits the demand over the replicas, counts OOM kills and feeds the recommender.
func (w *workload) serve(t time.Time, demand map[string]*usage) {
	w.demand, w.last = demand, t.Unix()
	c := w.replicas
	if c <= 0 {
		return
	}
	for i := range w.containers {
		k := &w.containers[i]
		u := demand[k.Name]
		if u == nil {
			continue
		}
		reqCPU, _ := k.Requests.Get(scaling.CPU)
		reqMem, _ := k.Requests.Get(scaling.Memory)
		limMem, hasLim := k.Limits.Get(scaling.Memory)
		cpuPod, memPod := u.cpu/float64(c), u.mem/float64(c)
		oom := u.hasMem && hasLim && limMem > 0 && memPod >= limMem
		if oom {
			memPod = limMem // the working set stops at the limit: the container is killed there
			w.ooms += int(c)
			w.oomSince, w.oomTick = true, true
		}
		cpu, mem := -1.0, -1.0
		switch w.run.model {
		case ModelTotal:
			if u.hasCPU {
				cpu = float64(c) * max(0, cpuPod-w.spec.Base[scaling.CPU].Base(reqCPU)) / 1000
			}
			if u.hasMem {
				mem = float64(c) * max(0, memPod-w.spec.Base[scaling.Memory].Base(reqMem))
			}
			model := w.models[k.Name]
			total := w.run.state.Total(model, recommender.OwnerKey{Namespace: w.key.ns, Owner: w.owner, Container: k.Name}, t)
			total.AddLoad(t, cpu, mem)
			if oom {
				total.RecordPodOOM(t, int(c), max(reqMem, memPod), w.spec.Base[scaling.Memory].Base(reqMem))
			}
		case ModelPerPod:
			for p := int32(0); p < c; p++ {
				pc := w.run.state.Container(w.models[k.Name], recommender.ContainerKey{Namespace: w.key.ns, Pod: w.key.name + "-" + strconv.Itoa(int(p)), Container: k.Name},
					w.key.name, nil, t)
				if u.hasCPU {
					w.models[k.Name].AddCPU(pc.State, t, cpuPod/1000)
				}
				if u.hasMem {
					w.models[k.Name].AddMemory(pc.State, t, memPod)
				}
				if oom {
					_ = w.models[k.Name].RecordOOM(pc.State, t, reqMem) // never older than the sample just added
				}
			}
		}
	}
}

// recommendation is the embedded recommendation under the run's model, and its confidence.
func (w *workload) recommendation() ([]scaling.Recommendation, float64) {
	var rp = w.hvpa.Spec.VPA
	if rp == nil || !rp.Deploy {
		return nil, math.Inf(1)
	}
	policy := func(c string) recommender.Policy { return recommender.PolicyFor(rp.Template.ResourcePolicy, c) }
	var out []scaling.Recommendation
	switch w.run.model {
	case ModelTotal:
		loads, conf := w.run.state.WorkloadRecommendation(w.key.ns, w.owner, policy)
		for _, l := range loads {
			out = append(out, scaling.Recommendation{Name: l.Container, Load: values(l.Target)})
		}
		return out, conf
	default:
		recs, conf := w.model.RecommendPod(w.run.state.MergedGroup(w.model, w.key.ns, w.key.name, w.owner), policy)
		for _, r := range recs {
			out = append(out, scaling.Recommendation{Name: r.Container, Target: values(r.Target), UncappedTarget: values(r.UncappedTarget)})
		}
		return out, conf
	}
}

func values(a recommender.Amounts) scaling.Values {
	return scaling.V(float64(a.CPUMilli), float64(a.MemoryBytes))
}

// decide runs the Hvpa decision on the state of the workload and applies it at once.
func (w *workload) decide(t time.Time) error {
	w.account(t)
	recs, conf := w.recommendation()
	st := scaling.State{Now: t, Replicas: w.replicas, Containers: w.containers, Recommendation: recs,
		LastScaleTime: w.lastScale, OOMSinceLastScaling: w.oomSince, LowConfidence: len(recs) > 0 && conf < w.run.sim.opts.LowConfidenceDays}
	if w.hpa != nil {
		in := w.hpa.observe(t, w.replicas, w.containers, w.demand)
		if rec := w.hpaRecord; rec != nil && rec.Desired == in.Desired && len(rec.Basis) > 0 {
			in.Basis = rec.Basis
		}
		st.HPA = in
	}
	d, err := scaling.Decide(w.spec, st)
	if err != nil {
		return err
	}

	if d.HPA != nil {
		w.hpaRecord = d.HPA
	}
	changedPods := false
	next := append([]scaling.Container(nil), w.containers...)
	for _, cd := range d.Containers {
		for i := range next {
			if next[i].Name == cd.Name {
				if next[i].Requests != cd.Requests {
					changedPods = true
				}
				next[i].Requests, next[i].Limits = cd.Requests, cd.Limits
			}
		}
	}
	changed := changedPods || d.Replicas != w.replicas
	if changed {
		if d.Replicas != w.replicas {
			w.replicaChanges++
		}
		if changedPods {
			w.perPodChanges++
		}
		if w.decided { // as the controller: the first intent does not start a stabilization window
			at := t
			w.lastScale = &at
			w.oomSince = false
		}
	}
	w.decided = true
	w.replicas, w.containers = d.Replicas, next
	return nil
}

// account adds the tick's demand and the sizing that served it to the outcome.
func (w *workload) account(t time.Time) {
	w.ticks++
	w.maxReplicas = max(w.maxReplicas, w.replicas)
	c := float64(w.replicas)
	var p Point
	for _, k := range w.containers {
		u := w.demand[k.Name]
		cpu, hasCPU := k.Requests.Get(scaling.CPU)
		mem, hasMem := k.Requests.Get(scaling.Memory)
		p.CPUPerPod += cpu
		p.MemoryPerPod += mem
		if u == nil {
			continue
		}
		if u.hasCPU && hasCPU {
			w.cpuTally.add(u.cpu, c*cpu)
			p.CPUDemand += u.cpu
			p.CPUProvided += c * cpu
		}
		if u.hasMem && hasMem {
			w.memTally.add(u.mem, c*mem)
			p.MemoryDemand += u.mem
			p.MemoryProvided += c * mem
		}
		if r := w.run; r.rows != nil {
			b := strconv.AppendInt(r.buf[:0], t.Unix(), 10)
			b = append(append(append(append(append(append(b, ','), w.key.ns...), ','), w.key.name...), ','), k.Name...)
			b = strconv.AppendInt(append(b, ','), int64(w.replicas), 10)
			for _, v := range []float64{cpu, mem, u.cpu, u.mem} {
				b = strconv.AppendFloat(append(b, ','), v, 'f', -1, 64)
			}
			r.buf = append(b, '\n')
			_, _ = r.rows.Write(r.buf)
		}
	}
	if w.series != nil {
		step := int64(w.run.sim.opts.SeriesStep / time.Second)
		if t.Unix()%step == 0 {
			p.Time, p.Replicas, p.OOM = t.Unix(), w.replicas, w.oomTick
			w.series.Points = append(w.series.Points, p)
			w.oomTick = false
		}
	}
}

// tally sums one resource's demand, provided amount and shortfall max(0, demand - provided) over the ticks.
type tally struct{ demand, provided, short float64 }

func (t *tally) add(demand, provided float64) {
	t.demand += demand
	t.provided += provided
	t.short += max(0, demand-provided)
}

// ratios are provided / demand and shortfall / demand (0 without demand).
func (t tally) ratios() (float64, float64) {
	if t.demand == 0 {
		return 0, 0
	}
	return t.provided / t.demand, t.short / t.demand
}

func (w *workload) summary() Summary {
	days := float64(w.last-w.start) / 86400
	perDay := func(n int) float64 {
		if days <= 0 {
			return float64(n)
		}
		return float64(n) / days
	}
	s := Summary{Namespace: w.key.ns, Workload: w.key.name, Model: w.run.model, Ticks: w.ticks,
		FinalReplicas: w.replicas, MaxReplicas: w.maxReplicas,
		OOMEvents: w.ooms, ReplicaChangesPerDay: perDay(w.replicaChanges), PerPodChangesPerDay: perDay(w.perPodChanges)}
	s.CPUProvidedOverDemand, s.CPUShortfall = w.cpuTally.ratios()
	s.MemoryProvidedOverDemand, s.MemoryShortfall = w.memTally.ratios()
	return s
}
