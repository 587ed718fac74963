package closedloop

import (
	"bytes"
	"math"
	"testing"
	"time"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// BenchmarkClosedLoop runs the closed loop of the EP-0001 Hvpa (with its HPA) on a diurnal demand trace of
// 1,000 workloads x 1 day at one sample per minute (1.44 million rows), one model per run.
func BenchmarkClosedLoop(b *testing.B) {
	h := exampleHvpa(b, "../examples/hvpa-kube-apiserver.yaml")
	var trace bytes.Buffer
	d := Demand{Shape: ShapeDiurnal, Workloads: 1000, Pods: 2, Days: 1, Interval: time.Minute, CPU: 800, Memory: 2 << 30,
		Amplitude: 0.5, Noise: 0.1, Spread: 0.01, CPURequest: 500, MemoryRequest: 2 << 30, Seed: 1}
	if err := WriteDemand(&trace, d); err != nil {
		b.Fatal(err)
	}
	rows := 1000 * 2 * 1440
	for _, m := range []Model{ModelTotal, ModelPerPod} {
		b.Run(string(m), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sim, err := New(Options{Models: []Model{m}, HvpaFor: func(string, string) *hvpav1alpha1.Hvpa { return h }})
				if err != nil {
					b.Fatal(err)
				}
				if err := sim.Run(bytes.NewReader(trace.Bytes())); err != nil {
					b.Fatal(err)
				}
				if n := len(sim.Summaries()); n != 1000 {
					b.Fatalf("%d workloads simulated, want 1000", n)
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(1000*1440*b.N)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}

// shootoutSizes are n mean CPU sizes spread evenly on a log scale from 0.3 to 20 cores.
func shootoutSizes(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 0.3 * math.Pow(20/0.3, float64(i)/float64(max(n-1, 1)))
	}
	return out
}

// BenchmarkShootout runs the shoot-out Hvpa (examples/hvpa-shootout.yaml) and the baselines on the web
// profile's demand of 1,000 workloads (0.3 to 20 CPU) x 1 day, generated in memory and fed row by row (about 4
// million rows): "four" runs hvpa, hpa, vpa and hpa+vpa in one simulator, the others one policy each. The
// ms/workload-day metric is the time per workload and day of demand for all the runs of the benchmark.
func BenchmarkShootout(b *testing.B) {
	h := exampleHvpa(b, "../examples/hvpa-shootout.yaml")
	demand := ProfileDemand{Profile: ProfileWeb, Sizes: shootoutSizes(1000), Days: 1, Seed: 1}
	cases := []struct {
		name     string
		policies []Policy
	}{{"four", Policies}, {"hvpa", []Policy{PolicyHvpa}}, {"hpa", []Policy{PolicyHPA}}, {"vpa", []Policy{PolicyVPA}}, {"hpa+vpa", []Policy{PolicyHPAVPA}}}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				sim := profileRun(b, Options{Runs: Runs(c.policies, []Model{ModelTotal}, nil), HvpaFor: func(string, string) *hvpav1alpha1.Hvpa { return h }}, demand)
				if n := len(sim.Summaries()); n != 1000*len(c.policies) {
					b.Fatalf("%d summaries, want %d", n, 1000*len(c.policies))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*1000*len(c.policies)), "ms/workload-day")
		})
	}
}
