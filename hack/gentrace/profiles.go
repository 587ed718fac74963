package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand"
	"strconv"
	"time"
)

// profile is one kind of container usage: cpu and memory (millicores, bytes) of one sample, given the
// minute since the start, the container's levels and a random source.
type profile struct {
	levels func(rng *rand.Rand) (cpu, mem float64)
	sample func(rng *rand.Rand, x *profileSeries, minute int) (cpu, mem float64)
}

// profileSeries is one pod container of a profile trace.
type profileSeries struct {
	prefix   []byte
	cpu, mem float64 // levels
	burst    int     // minutes of the current burst left
	burstF   float64
}

var profiles = map[string]profile{
	// bursty: a steady CPU level (+-15%) with bursts of 2.5 to 4x lasting 2 to 10 minutes, about one an
	// hour; memory steady (+-2%).
	"bursty": {
		levels: func(rng *rand.Rand) (float64, float64) { return 100 + rng.Float64()*900, 200e6 + rng.Float64()*1e9 },
		sample: func(rng *rand.Rand, x *profileSeries, _ int) (float64, float64) {
			if x.burst == 0 && rng.Float64() < 1.0/60 {
				x.burst, x.burstF = 2+rng.Intn(9), 2.5+1.5*rng.Float64()
			}
			f := 1.0
			if x.burst > 0 {
				x.burst--
				f = x.burstF
			}
			return x.cpu * f * (0.85 + 0.3*rng.Float64()), x.mem * (0.98 + 0.04*rng.Float64())
		},
	},
	// weekly: a day curve (+-50%) on weekdays, a quarter of the level at weekends (the trace starts on a
	// Monday); noise +-20% on CPU, memory follows the load by a tenth (+-2%).
	"weekly": {
		levels: func(rng *rand.Rand) (float64, float64) { return 200 + rng.Float64()*1500, 300e6 + rng.Float64()*2e9 },
		sample: func(rng *rand.Rand, x *profileSeries, minute int) (float64, float64) {
			h := float64(minute) / 60
			f := 1 + 0.5*math.Sin(2*math.Pi*(h-8)/24)
			if day := (minute / 1440) % 7; day >= 5 {
				f = 0.25
			}
			return x.cpu * f * (0.8 + 0.4*rng.Float64()), x.mem * (0.9 + 0.1*f) * (0.98 + 0.04*rng.Float64())
		},
	},
	// small: small containers (5 to 40m, 30 to 80 MB) whose CPU is very noisy (+-50%), memory +-5%.
	"small": {
		levels: func(rng *rand.Rand) (float64, float64) { return 5 + rng.Float64()*35, 30e6 + rng.Float64()*50e6 },
		sample: func(rng *rand.Rand, x *profileSeries, _ int) (float64, float64) {
			return x.cpu * (0.5 + rng.Float64()), x.mem * (0.95 + 0.1*rng.Float64())
		},
	},
}

// writeProfile writes a usage trace of profile name: workloads workloads of pods pods, one container each,
// a sample a minute for days days from Monday 2025-01-06, deterministic per seed.
func writeProfile(out io.Writer, name string, workloads, pods int, days float64, seed int64) error {
	p, ok := profiles[name]
	if !ok {
		return fmt.Errorf("--profile %q: use bursty, weekly or small", name)
	}
	w := bufio.NewWriterSize(out, 1<<20)
	_, _ = fmt.Fprintf(w, "# gentrace profile=%s workloads=%d pods=%d days=%g interval=1m seed=%d\n", name, workloads, pods, days, seed)
	_, _ = w.WriteString("timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event\n") // bufio keeps the first write error; the Flush at the end returns it
	rng := rand.New(rand.NewSource(seed))
	var all []profileSeries
	for wl := 0; wl < workloads; wl++ {
		cpu, mem := p.levels(rng)
		for i := 0; i < pods; i++ {
			all = append(all, profileSeries{prefix: fmt.Appendf(nil, "ns-%s,%s-%d,%s-%d-%d,app,", name, name, wl, name, wl, i), cpu: cpu, mem: mem})
		}
	}
	start := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC).Unix()
	buf := make([]byte, 0, 128)
	for m := 0; m < int(days*1440); m++ {
		for i := range all {
			x := &all[i]
			cpu, mem := p.sample(rng, x, m)
			buf = strconv.AppendInt(buf[:0], start+int64(m)*60, 10)
			buf = append(buf, ',')
			buf = append(buf, x.prefix...)
			buf = strconv.AppendInt(buf, int64(math.Ceil(cpu)), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(math.Ceil(mem)), 10)
			buf = strconv.AppendInt(append(buf, ','), int64(2*x.cpu), 10)
			buf = strconv.AppendInt(append(buf, ','), int64(2*x.mem), 10)
			buf = append(buf, ",\n"...)
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
	}
	return w.Flush()
}
