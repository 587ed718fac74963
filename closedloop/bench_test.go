package closedloop

import (
	"bytes"
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
