// Command gentrace writes a synthetic usage trace (TRACE-FORMAT v1) for load tests of `hvpa simulate`:
// --workloads workloads of --pods pods with --containers containers each, one sample per container per
// --interval for --days days. Usage follows a day curve with per-container noise; deterministic per --seed.
//
//	go run ./hack/gentrace --workloads 5000 --pods 2 --containers 1 --days 1 > /tmp/big.csv
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"time"
)

func main() {
	workloads := flag.Int("workloads", 1000, "number of workloads")
	pods := flag.Int("pods", 2, "pods per workload")
	containers := flag.Int("containers", 1, "containers per pod")
	days := flag.Float64("days", 1, "length of the trace in days")
	interval := flag.Duration("interval", time.Minute, "sample interval")
	seed := flag.Int64("seed", 1, "random seed")
	flag.Parse()
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()
	fmt.Fprintf(w, "# gentrace workloads=%d pods=%d containers=%d days=%g interval=%s seed=%d\n", *workloads, *pods, *containers, *days, *interval, *seed)
	w.WriteString("timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event\n")
	rng := rand.New(rand.NewSource(*seed))
	type series struct {
		prefix      []byte
		cpu, mem    float64
		phase, leak float64
	}
	var all []series
	for wl := 0; wl < *workloads; wl++ {
		for p := 0; p < *pods; p++ {
			for c := 0; c < *containers; c++ {
				prefix := fmt.Sprintf("ns-%03d,wl-%d,wl-%d-%d,c%d,", wl%100, wl, wl, p, c)
				all = append(all, series{prefix: []byte(prefix), cpu: 20 + rng.Float64()*1500, mem: 50e6 + rng.Float64()*3e9,
					phase: rng.Float64() * 2 * math.Pi, leak: rng.Float64() * 1e4})
			}
		}
	}
	start := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC).Unix()
	steps := int(*days * 24 * float64(time.Hour) / float64(*interval))
	buf := make([]byte, 0, 128)
	for s := 0; s < steps; s++ {
		ts := start + int64(s)*int64(*interval/time.Second)
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
			w.Write(buf)
		}
	}
}
