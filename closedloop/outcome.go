package closedloop

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/hvpa-dev/hvpa/scaling"
)

// SummaryDocument is the document of `hvpa simulate --closed-loop --summary-json`: every workload's Summary
// under every run.
type SummaryDocument struct {
	Workloads []Summary `json:"workloads"`
}

// ReadSummaries reads the Summaries of a --summary-json file.
func ReadSummaries(path string) ([]Summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc SummaryDocument
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return doc.Workloads, nil
}

// Summary is the outcome of one workload under one run.
type Summary struct {
	Namespace string `json:"namespace"`
	Workload  string `json:"workload"`
	// Policy is the run's label (Run.Label): hvpa, hpa, hpa[cpu=500m], vpa, hpa+vpa, ...
	Policy string `json:"policy"`
	// Model is the recommender model of the Hvpa (total, per-pod), per-pod for the VPA, "" for the HPA alone.
	Model         Model `json:"model"`
	Ticks         int   `json:"ticks"`
	FinalReplicas int32 `json:"final_replicas"`
	MaxReplicas   int32 `json:"max_replicas"`
	// provided = the requests of every pod that exists (starting ones included), serving = those of the pods
	// that serve; *_over_demand = sum provided / sum demand, *_shortfall = sum max(0, demand - serving) / sum
	// demand, over the steps.
	CPUProvidedOverDemand    float64 `json:"cpu_provided_over_demand"`
	CPUShortfall             float64 `json:"cpu_shortfall"`
	MemoryProvidedOverDemand float64 `json:"memory_provided_over_demand"`
	MemoryShortfall          float64 `json:"memory_shortfall"`
	OOMEvents                int     `json:"oom_events"`
	// Restarts are container restarts (each OOM kill restarts its container), Evictions the pods the VPA
	// updater evicted, PodResizes the in-place resizes of single pods.
	Restarts   int `json:"restarts"`
	Evictions  int `json:"evictions"`
	PodResizes int `json:"pod_resizes"`
	// ReplicaChangesPerDay counts changes of the workload's replicas; PerPodChangesPerDay changes of the pods'
	// sizing: an Hvpa decision that changes the per-pod requests (it resizes every pod), an updater loop that
	// resizes or evicts (its eviction tolerance may spread one change of the target over several loops, each
	// pod still changed once: PodResizes and Evictions count pods).
	ReplicaChangesPerDay float64 `json:"replica_changes_per_day"`
	PerPodChangesPerDay  float64 `json:"per_pod_changes_per_day"`
}

// Point is one step of a workload's series: demand, provided totals and serving capacity, replicas and mean
// per-pod requests (of all containers together).
type Point struct {
	Time                        int64
	Replicas                    int32
	CPUDemand, MemoryDemand     float64
	CPUProvided, MemoryProvided float64
	CPUServing, MemoryServing   float64
	CPUPerPod, MemoryPerPod     float64
	OOM                         bool
}

// Series is one workload's history under one run.
type Series struct {
	Namespace, Workload string
	Policy              string
	Model               Model
	Points              []Point
}

// tally sums one resource's demand, provided amount and shortfall max(0, demand - serving) over the steps.
type tally struct{ demand, provided, short float64 }

func (t *tally) add(demand, provided, serving float64) {
	t.demand += demand
	t.provided += provided
	t.short += max(0, demand-serving)
}

// ratios are provided / demand and shortfall / demand (0 without demand).
func (t tally) ratios() (float64, float64) {
	if t.demand == 0 {
		return 0, 0
	}
	return t.provided / t.demand, t.short / t.demand
}

// capacity is the requests of container ci of every pod and of the serving pods, CPU and memory.
func (w *workload) capacity(t int64, ci int) (provided, serving scaling.Values) {
	var pc, pm, sc, sm float64
	for _, p := range w.pods {
		k := &p.spec[ci]
		c, _ := k.Requests.Get(scaling.CPU)
		m, _ := k.Requests.Get(scaling.Memory)
		pc, pm = pc+c, pm+m
		if p.serving(t) {
			sc, sm = sc+c, sm+m
		}
	}
	return scaling.V(pc, pm), scaling.V(sc, sm)
}

// account adds the step's demand and the pods that served it to the outcome.
func (w *workload) account(t int64) {
	w.last = t + w.run.step
	w.maxReplicas = max(w.maxReplicas, w.desired)
	for ci, name := range w.names {
		u := w.demand[name]
		if u == nil || (!u.hasCPU && !u.hasMem) {
			continue
		}
		p, s := w.capacity(t, ci)
		if u.hasCPU {
			w.cpuTally.add(u.cpu, reqOrZero(p, scaling.CPU), reqOrZero(s, scaling.CPU))
		}
		if u.hasMem {
			w.memTally.add(u.mem, reqOrZero(p, scaling.Memory), reqOrZero(s, scaling.Memory))
		}
	}
}

// point adds a point to the series every SeriesStep.
func (w *workload) point(t int64) {
	step := int64(w.run.sim.opts.SeriesStep.Seconds())
	if w.series == nil || t%step != 0 {
		return
	}
	p := Point{Time: t, Replicas: w.desired, OOM: w.oomTick}
	w.oomTick = false
	for ci, name := range w.names {
		pr, se := w.capacity(t, ci)
		cpu, mem := reqOrZero(pr, scaling.CPU), reqOrZero(pr, scaling.Memory)
		p.CPUProvided, p.CPUServing = p.CPUProvided+cpu, p.CPUServing+reqOrZero(se, scaling.CPU)
		p.MemoryProvided, p.MemoryServing = p.MemoryProvided+mem, p.MemoryServing+reqOrZero(se, scaling.Memory)
		if n := float64(len(w.pods)); n > 0 {
			p.CPUPerPod, p.MemoryPerPod = p.CPUPerPod+cpu/n, p.MemoryPerPod+mem/n
		}
		if u := w.demand[name]; u != nil {
			p.CPUDemand, p.MemoryDemand = p.CPUDemand+u.cpu, p.MemoryDemand+u.mem
		}
	}
	w.series.Points = append(w.series.Points, p)
}

// writeRows writes the rows of timestamp ts: per container the pods, their mean requests and the demand.
func (w *workload) writeRows(ts int64) {
	r := w.run
	n := float64(max(len(w.pods), 1))
	for ci, name := range w.names {
		u := w.demand[name]
		if u == nil {
			continue
		}
		pr, _ := w.capacity(ts, ci)
		cpu, mem := reqOrZero(pr, scaling.CPU), reqOrZero(pr, scaling.Memory)
		b := strconv.AppendInt(r.buf[:0], ts, 10)
		b = append(append(append(append(append(append(b, ','), w.key.ns...), ','), w.key.name...), ','), name...)
		b = strconv.AppendInt(append(b, ','), int64(len(w.pods)), 10)
		for _, v := range []float64{cpu / n, mem / n, u.cpu, u.mem} {
			b = strconv.AppendFloat(append(b, ','), v, 'f', -1, 64)
		}
		r.buf = append(b, '\n')
		_, _ = r.rows.Write(r.buf)
	}
}

func (w *workload) summary() Summary {
	days := float64(w.last-w.start) / 86400
	perDay := func(n int) float64 {
		if days <= 0 {
			return float64(n)
		}
		return float64(n) / days
	}
	s := Summary{Namespace: w.key.ns, Workload: w.key.name, Policy: w.run.spec.Label(), Model: w.model(), Ticks: w.ticks,
		FinalReplicas: w.desired, MaxReplicas: w.maxReplicas, OOMEvents: w.ooms, Restarts: w.restarts, Evictions: w.evictions,
		PodResizes: w.podResizes, ReplicaChangesPerDay: perDay(w.replicaChanges), PerPodChangesPerDay: perDay(w.perPodChanges)}
	s.CPUProvidedOverDemand, s.CPUShortfall = w.cpuTally.ratios()
	s.MemoryProvidedOverDemand, s.MemoryShortfall = w.memTally.ratios()
	return s
}
