// Command gentrace writes a synthetic usage trace (TRACE-FORMAT v1) for load tests of `hvpa simulate`:
// --workloads workloads of --pods pods with --containers containers each, one sample per container per
// --interval for --days days. Usage follows a day curve with per-container noise; deterministic per --seed.
//
// With --shape constant|step|diurnal it writes a DEMAND trace for `hvpa simulate --closed-loop` instead
// (closedloop.WriteDemand): each workload's demand (the sum over its pods) at --cpu/--memory, switching to
// --step-cpu/--step-memory every --step-every (step) or following a day curve of relative --amplitude
// (diurnal), with relative --noise; workload i's levels are scaled by 1 + i x --spread.
//
// With --profile bursty|weekly|small it writes a usage trace of that kind for `hvpa simulate` (profiles.go):
// CPU bursts, a weekly pattern (quiet weekends), or small noisy containers.
//
// With --demand web|spiky|weekly|flash|ramp|batch|constant|stepdown it writes a shoot-out demand trace for
// `hvpa simulate --closed-loop` (closedloop.ProfileDemand): one workload per --sizes value (mean CPU cores;
// default the profile's three), --days days (default 4, 8 for weekly, 7 for office), realistic per-minute
// noise, deterministic per --seed. The extra profiles nightly|sixhourly|office|growth|stepup are shapes the
// shoot-out runs when asked (closedloop.ExtraProfiles).
//
//	hack/run.sh gentrace --workloads 5000 --pods 2 --containers 1 --days 1 > /tmp/big.csv
//	hack/run.sh gentrace --shape step --workloads 3 --pods 1 --days 3 --cpu 400 --memory 1Gi \
//	    --step-cpu 2500 --step-memory 5Gi --step-every 6h > /tmp/step.csv
//	hack/run.sh gentrace --demand flash --seed 1 | gzip > /tmp/flash.csv.gz
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/hvpa-dev/hvpa/closedloop"
)

func main() {
	workloads := flag.Int("workloads", 1000, "number of workloads")
	pods := flag.Int("pods", 2, "pods per workload")
	containers := flag.Int("containers", 1, "containers per pod")
	days := flag.Float64("days", 1, "length of the trace in days")
	interval := flag.Duration("interval", time.Minute, "sample interval")
	seed := flag.Int64("seed", 1, "random seed")
	shape := flag.String("shape", "", "write a demand trace of this shape: constant, step or diurnal (empty: the load-test trace)")
	cpu := flag.Float64("cpu", 1000, "demand: a workload's CPU level in millicores")
	memory := flag.String("memory", "2Gi", "demand: a workload's memory level (a quantity)")
	stepCPU := flag.Float64("step-cpu", 3000, "demand (step): the other CPU level in millicores")
	stepMemory := flag.String("step-memory", "4Gi", "demand (step): the other memory level (a quantity)")
	stepEvery := flag.Duration("step-every", 6*time.Hour, "demand (step): time between level switches")
	amplitude := flag.Float64("amplitude", 0.5, "demand (diurnal): relative amplitude of the day curve")
	noise := flag.Float64("noise", 0.1, "demand: relative uniform noise")
	spread := flag.Float64("spread", 0.5, "demand: workload i's levels are scaled by 1 + i x spread")
	cpuReq := flag.Float64("cpu-request", 500, "demand: the pods' CPU request in millicores in the trace")
	memReq := flag.String("memory-request", "2Gi", "demand: the pods' memory request in the trace (a quantity)")
	profile := flag.String("profile", "", "write a usage trace of this profile: bursty, weekly or small (see profiles.go)")
	demand := flag.String("demand", "", "write a shoot-out demand trace of this profile: web, spiky, weekly, flash, ramp, batch, constant or stepdown (or an extra one: nightly, sixhourly, office, growth or stepup)")
	sizes := flag.String("sizes", "", "demand profile: the workloads' mean CPU in cores, comma-separated (default: the profile's three)")
	flag.Parse()
	if *demand != "" {
		d := closedloop.ProfileDemand{Profile: closedloop.Profile(*demand), Sizes: floats("sizes", *sizes), Seed: *seed}
		if isSet("days") {
			d.Days = *days
		}
		if err := closedloop.WriteProfile(os.Stdout, d); err != nil {
			fmt.Fprintln(os.Stderr, "gentrace:", err)
			os.Exit(2)
		}
		return
	}
	if *profile != "" {
		if err := writeProfile(os.Stdout, *profile, *workloads, *pods, *days, *seed); err != nil {
			fmt.Fprintln(os.Stderr, "gentrace:", err)
			os.Exit(2)
		}
		return
	}
	if *shape != "" {
		writeDemand(closedloop.Demand{Shape: closedloop.Shape(*shape), Workloads: *workloads, Pods: *pods, Days: *days, Interval: *interval,
			CPU: *cpu, Memory: quantity("memory", *memory), StepCPU: *stepCPU, StepMemory: quantity("step-memory", *stepMemory), StepEvery: *stepEvery,
			Amplitude: *amplitude, Noise: *noise, Spread: *spread, CPURequest: *cpuReq, MemoryRequest: quantity("memory-request", *memReq), Seed: *seed})
		return
	}
	if err := writeLoadTrace(*workloads, *pods, *containers, *days, *interval, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(2)
	}
}

// isSet reports whether flag name was given.
func isSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// floats parses the comma-separated numbers v given to flag --name (empty: none); it exits with status 2 on
// a bad one.
func floats(name, v string) []float64 {
	var out []float64
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		x, err := strconv.ParseFloat(f, 64)
		if err != nil || x <= 0 {
			fmt.Fprintf(os.Stderr, "gentrace: --%s %q: %q is not a positive number\n", name, v, f)
			os.Exit(2)
		}
		out = append(out, x)
	}
	return out
}

// quantity is the value of the quantity v given to flag --name; it exits with status 2 if v is not a quantity.
func quantity(name, v string) float64 {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gentrace: --%s %q: %v\n", name, v, err)
		os.Exit(2)
	}
	return q.AsApproximateFloat64()
}

// writeDemand writes the demand trace d to stdout; it exits with status 2 on an error.
func writeDemand(d closedloop.Demand) {
	if err := closedloop.WriteDemand(os.Stdout, d); err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(2)
	}
}

// writeLoadTrace writes the load-test trace to stdout: workloads workloads of pods pods with containers
// containers each, one sample per container per interval for days days, deterministic per seed.
func writeLoadTrace(workloads, pods, containers int, days float64, interval time.Duration, seed int64) error {
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	_, _ = fmt.Fprintf(w, "# gentrace workloads=%d pods=%d containers=%d days=%g interval=%s seed=%d\n", workloads, pods, containers, days, interval, seed)
	_, _ = w.WriteString("timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event\n") // bufio keeps the first write error; the Flush at the end returns it
	rng := rand.New(rand.NewSource(seed))
	type series struct {
		prefix      []byte
		cpu, mem    float64
		phase, leak float64
	}
	var all []series
	for wl := 0; wl < workloads; wl++ {
		for p := 0; p < pods; p++ {
			for c := 0; c < containers; c++ {
				prefix := fmt.Sprintf("ns-%03d,wl-%d,wl-%d-%d,c%d,", wl%100, wl, wl, p, c)
				all = append(all, series{prefix: []byte(prefix), cpu: 20 + rng.Float64()*1500, mem: 50e6 + rng.Float64()*3e9,
					phase: rng.Float64() * 2 * math.Pi, leak: rng.Float64() * 1e4})
			}
		}
	}
	start := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC).Unix()
	steps := int(days * 24 * float64(time.Hour) / float64(interval))
	buf := make([]byte, 0, 128)
	for s := 0; s < steps; s++ {
		ts := start + int64(s)*int64(interval/time.Second)
		h := float64(ts-start) / 3600
		for i := range all {
			x := &all[i]
			day := 1 + 0.4*math.Sin(2*math.Pi*h/24+x.phase)
			buf = strconv.AppendInt(buf[:0], ts, 10)
			buf = append(buf, ',')
			buf = append(buf, x.prefix...)
			buf = strconv.AppendInt(buf, int64(x.cpu*day*(0.8+0.4*rng.Float64())), 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(x.mem*(0.95+0.1*rng.Float64())+x.leak*float64(s)), 10)
			buf = append(buf, ",1000,4294967296,\n"...)
			if _, err := w.Write(buf); err != nil {
				return err
			}
		}
	}
	return w.Flush()
}
