package recommender

import (
	"math/rand"
	"runtime"
	"testing"
	"time"
)

// BenchmarkContainerSample is the model's hot path: one container sample = one CPU and one memory sample
// into a container's aggregate (a realistic spread of values over a day at one sample a minute).
func BenchmarkContainerSample(b *testing.B) {
	m := mustModel(b)
	const n = 1000
	aggs := make([]*Container, n)
	for i := range aggs {
		aggs[i] = m.NewContainer(m.NewAggregate())
	}
	rng := rand.New(rand.NewSource(1))
	cpu := make([]float64, 4096)
	mem := make([]float64, 4096)
	for i := range cpu {
		cpu[i] = 0.2 + rng.Float64()*0.6
		mem[i] = 300e6 + rng.Float64()*200e6
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		c := aggs[i%n]
		t := t0.Add(time.Duration(i/n) * time.Minute)
		m.AddCPU(c, t, cpu[i&4095])
		m.AddMemory(c, t, mem[i&4095])
		i++
	}
}

// BenchmarkRecommend is one recommendation (3 percentiles of 2 histograms, bounds, capping, rounding).
func BenchmarkRecommend(b *testing.B) {
	m := mustModel(b)
	a := m.NewAggregate()
	c := m.NewContainer(a)
	for i := 0; i < 1440*8; i++ {
		t := t0.Add(time.Duration(i) * time.Minute)
		m.AddCPU(c, t, 0.2+float64(i%97)/200)
		m.AddMemory(c, t, 300e6+float64(i%89)*2e6)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.Recommend(a, 2, DefaultPolicy())
	}
}

// BenchmarkAggregateHeap reports the heap one tracked container aggregate (with its pod container state)
// holds after a day of realistic samples, as the metric B/aggregate (goal: at most 1 KiB).
func BenchmarkAggregateHeap(b *testing.B) {
	m := mustModel(b)
	const n = 2000
	for b.Loop() {
		rng := rand.New(rand.NewSource(2))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		cs := make([]*Container, n)
		for i := range cs {
			cs[i] = m.NewContainer(m.NewAggregate())
			base := 0.05 + rng.Float64()*2
			memBase := 50e6 + rng.Float64()*2e9
			for s := 0; s < 1440; s++ {
				ts := t0.Add(time.Duration(s) * time.Minute)
				m.AddCPU(cs[i], ts, base*(0.5+rng.Float64()))           // usage spread over x3
				m.AddMemory(cs[i], ts, memBase*(0.9+0.2*rng.Float64())) // +-10%
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/aggregate")
		runtime.KeepAlive(cs)
	}
}
