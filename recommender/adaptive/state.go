package adaptive

import (
	"math"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
)

// Model is a validated configuration: the ensemble every State of it runs.
type Model struct {
	cfg     Config
	cpuOpts recommender.HistogramOptions
	weights Weights
}

// NewModel validates cfg.
func NewModel(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b := cfg.Base
	opts, err := recommender.NewExponentialOptions(b.CPUMax, b.CPUFirstBucket, b.CPUBucketRatio, b.Epsilon)
	if err != nil {
		return nil, err
	}
	return &Model{cfg: cfg, cpuOpts: opts, weights: cfg.Weights}, nil
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Candidates returns the names of the CPU and the memory candidates, upstream first.
func (m *Model) Candidates() (cpu, memory []string) {
	c, _ := cpuCandidates(&m.cfg)
	for _, x := range c {
		cpu = append(cpu, x.name)
	}
	for _, x := range memCandidates(&m.cfg) {
		memory = append(memory, x.name)
	}
	return cpu, memory
}

// State is the adaptive model's history of one container of one object (all its pods): the candidates'
// histories and scores, the winners and the published target. Its size is fixed when it is made (decaying
// histograms over the CPU buckets, a ring of hour slots of the last days, the candidates); adding a sample
// allocates nothing.
type State struct {
	m     *Model
	hist  multiHist
	hours hours
	cpu   []candidate
	mem   []candidate
	specs []dailySpec
	sched [][24]float64 // per spec: the daily schedule (millicores, no margin)
	pcts  []float64     // scratch: the percentiles of one histogram

	first, lastDecay, lastRefresh, schedHour int64
	started, refreshed                       bool
	scoredDays                               float64   // decayed days the scores cover
	scoreRef                                 int64     // the scores' weights are relative to it
	weight                                   float64   // the weight of a sample now
	level                                    []float64 // per spec: the daily level in force
	cpuWin, memWin                           int
	pubCPU, pubMem                           float64 // published targets (millicores, bytes); 0: none
	tokens                                   float64
	lastPublish, lastSet                     int64
	oomFloor                                 float64
	oomUntil                                 int64
	cpuLedger, memLedger                     ledger
	warm                                     bool    // Warmup of history has passed: the candidates may win
	upCPU, upMem                             float64 // upstream's target as an updater with the dead band applies it
	upChanges                                float64 // its applied changes since the warmup
	rate                                     float64 // the change budget a day in force
}

// NewState returns an empty state.
func (m *Model) NewState() *State {
	cpu, specs := cpuCandidates(&m.cfg)
	s := &State{m: m, hist: newMultiHist(m.cpuOpts, m.cfg.HalfLives), cpu: cpu, mem: memCandidates(&m.cfg), specs: specs,
		sched: make([][24]float64, len(specs)), level: make([]float64, len(specs)), pcts: make([]float64, len(m.cfg.Percentiles)), schedHour: math.MinInt64, tokens: m.cfg.ChangesPerDay * downFraction}
	return s
}

func (s *State) start(t int64) {
	if !s.started {
		s.started, s.first, s.lastDecay = true, t, t
	}
}

// AddCPU adds a CPU sample (cores, averaged over the minute starting at t) of any pod of the container.
func (s *State) AddCPU(t time.Time, cores float64) {
	if cores < 0 || math.IsNaN(cores) {
		return
	}
	u := t.Unix()
	s.start(u)
	s.hist.add(cores, u)
	milli := cores * 1000
	sl := s.hours.at(floorDiv(u, 3600))
	sl.n++
	sl.sum += milli
	sl.sumsq += milli * milli
	s.cpuLedger.add(milli, s.cpu[0].applied, s.pubCPU)
	w := max(s.weight, 1e-300)
	for i := range s.cpu {
		s.cpu[i].score(milli, w)
	}
}

// AddMemory adds a memory working-set sample (bytes) of any pod of the container at t.
func (s *State) AddMemory(t time.Time, bytes float64) {
	if bytes < 0 || math.IsNaN(bytes) {
		return
	}
	u := t.Unix()
	s.start(u)
	sl := s.hours.at(floorDiv(u, 3600))
	sl.memPeak = max(sl.memPeak, bytes)
	s.memLedger.add(bytes, s.mem[0].applied, s.pubMem)
	w := max(s.weight, 1e-300)
	for i := range s.mem {
		s.mem[i].score(bytes, w)
	}
}

// RecordOOM records an OOM kill at t of a pod whose memory request was request bytes: the memory needed is
// the upstream bump (recommender.Config.OOMBump) of max(request, the peak of the current hour). It is a peak of the current hour, and no
// memory candidate goes below it for OOMHold. Each memory candidate whose target in force was not above the
// memory in use counts an OOM it would not have prevented.
func (s *State) RecordOOM(t time.Time, request float64) {
	u := t.Unix()
	s.start(u)
	sl := s.hours.at(floorDiv(u, 3600))
	used := max(request, sl.memPeak)
	needed := s.m.cfg.Base.OOMBump(used)
	sl.memPeak = max(sl.memPeak, needed)
	if u+int64(s.m.cfg.OOMHold/time.Second) > s.oomUntil || needed > s.oomFloor {
		s.oomFloor = max(needed, s.floorAt(u))
		s.oomUntil = u + int64(s.m.cfg.OOMHold/time.Second)
	}
	for i := range s.mem {
		if s.mem[i].target <= used {
			s.mem[i].ooms += max(s.weight, 1e-300)
		}
	}
}

// floorAt is the OOM floor in force at u.
func (s *State) floorAt(u int64) float64 {
	if u < s.oomUntil {
		return s.oomFloor
	}
	return 0
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
