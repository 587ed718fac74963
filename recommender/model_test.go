package recommender

import (
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

var t0 = time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)

const mi = float64(1 << 20)

func mustModel(t testing.TB) *Model {
	t.Helper()
	m, err := NewModel(Defaults())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLinearHistogramPercentiles(t *testing.T) {
	o, err := NewLinearOptions(10, 1, 1e-4)
	if err != nil {
		t.Fatal(err)
	}
	h := NewHistogram(o)
	for _, v := range []float64{1, 2, 3, 4} {
		h.AddSample(v, v)
	}
	for p, want := range map[float64]float64{0.2: 3, 0.4: 4, 0.7: 5, 1.0: 5} {
		if got := h.Percentile(p); got != want {
			t.Errorf("P%v = %v, want %v", p, got, want)
		}
	}
	if got := NewHistogram(o).Percentile(0.5); got != 0 {
		t.Errorf("empty histogram percentile %v, want 0", got)
	}
	// the last bucket returns its start
	h = NewHistogram(o)
	h.AddSample(100, 1)
	if got := h.Percentile(0.5); got != 10 {
		t.Errorf("last-bucket percentile %v, want its start 10", got)
	}
}

func TestPercentiles3MatchesPercentile(t *testing.T) {
	m := mustModel(t)
	h := NewHistogram(m.cpuOpts)
	for i := 0; i < 500; i++ {
		h.AddSample(0.05+float64(i%37)*0.03, 1+float64(i%5))
	}
	for _, ps := range [][3]float64{{0.5, 0.9, 0.95}, {0, 0.5, 1}, {0.1, 0.1, 0.1}, {0.95, 0.99, 1}} {
		a, b, c := h.Percentiles3(ps[0], ps[1], ps[2])
		if a != h.Percentile(ps[0]) || b != h.Percentile(ps[1]) || c != h.Percentile(ps[2]) {
			t.Errorf("Percentiles3%v = %v %v %v, Percentile gives %v %v %v", ps, a, b, c, h.Percentile(ps[0]), h.Percentile(ps[1]), h.Percentile(ps[2]))
		}
	}
}

func TestExponentialBuckets(t *testing.T) {
	m := mustModel(t)
	if m.cpuOpts.NumBuckets() != 176 || m.memOpts.NumBuckets() != 176 {
		t.Fatalf("buckets: cpu %d memory %d, want 176 each", m.cpuOpts.NumBuckets(), m.memOpts.NumBuckets())
	}
	o := m.cpuOpts
	for i := 1; i < o.NumBuckets()-1; i++ { // bucket 0 also holds everything below the first boundary
		start, end := o.Start(i), o.Start(i+1)
		if b := o.Bucket((start + end) / 2); b != i {
			t.Fatalf("middle of [%v, %v): bucket %d, want %d", start, end, b, i)
		}
	}
	if o.Bucket(0.005) != 0 || o.Bucket(5000) != 175 {
		t.Errorf("edges: %d %d", o.Bucket(0.005), o.Bucket(5000))
	}
	if got := o.Start(1); math.Abs(got-0.01) > 1e-12 {
		t.Errorf("bucket 1 starts at %v, want 0.01", got)
	}
}

// TestTraceFormatExample reproduces the CPU numbers of the example row of TRACE-FORMAT.md section 2 (which
// are upstream's): 500m samples a minute apart give target 587m, lower bound 98m and upper bound
// 587m x 1441 = 845867m; the memory upper bound is the memory target x 1441 the same way.
func TestTraceFormatExample(t *testing.T) {
	m := mustModel(t)
	a := m.NewAggregate()
	c := m.NewContainer(a)
	for i := 0; i < 2; i++ {
		ts := t0.Add(time.Duration(i) * time.Minute)
		m.AddCPU(c, ts, 0.5)
		m.AddMemory(c, ts, 1e9)
	}
	r, ok := m.Recommend(a, 1, DefaultPolicy())
	if !ok {
		t.Fatal("no recommendation")
	}
	if r.Target.CPUMilli != 587 || r.LowerBound.CPUMilli != 98 || r.UpperBound.CPUMilli != 845867 || r.UncappedTarget.CPUMilli != 587 {
		t.Errorf("cpu target/lower/upper/uncapped %d/%d/%d/%d, want 587/98/845867/587", r.Target.CPUMilli, r.LowerBound.CPUMilli, r.UpperBound.CPUMilli, r.UncappedTarget.CPUMilli)
	}
	if r.UpperBound.MemoryBytes != r.Target.MemoryBytes*1441 || r.LowerBound.MemoryBytes != 262144000 {
		t.Errorf("memory target %d upper %d (want target x 1441) lower %d (want the 250Mi minimum)", r.Target.MemoryBytes, r.UpperBound.MemoryBytes, r.LowerBound.MemoryBytes)
	}
	// rounding up to a multiple, when configured
	cfg := Defaults()
	cfg.RoundCPUMillicores, cfg.RoundMemoryBytes = 10, 1<<20
	m2, _ := NewModel(cfg)
	r2, _ := m2.Recommend(a, 1, DefaultPolicy())
	if r2.Target.CPUMilli != 590 || r2.Target.MemoryBytes%(1<<20) != 0 || r2.Target.MemoryBytes < r.Target.MemoryBytes {
		t.Errorf("rounded target %dm %d bytes, want 590m and a whole MiB at or above %d", r2.Target.CPUMilli, r2.Target.MemoryBytes, r.Target.MemoryBytes)
	}
}

func TestDecay(t *testing.T) {
	m := mustModel(t)
	h := NewDecayingHistogram(m.cpuOpts, 24*time.Hour)
	h.AddSample(1, 1, t0)
	h.AddSample(2, 1, t0.Add(24*time.Hour)) // weighs twice as much
	if got, want := h.TotalWeight(), 3.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("total weight %v, want %v", got, want)
	}
	// P50: cumulative 1/3 at 1 core, 3/3 at 2 cores -> the bucket of 2 cores
	if p := h.Percentile(0.5); p < 2 || p > 2*1.06 {
		t.Errorf("P50 = %v, want the end of 2 cores' bucket", p)
	}
	// 150 half-lives later the reference moves (to a whole half-life) and weights stay finite
	late := t0.Add(150 * 24 * time.Hour)
	h.AddSample(3, 1, late)
	if h.Reference().Sub(t0)%(24*time.Hour) != 0 || !h.Reference().After(t0) {
		t.Errorf("reference %v not moved to a whole half-life", h.Reference())
	}
	if w := h.TotalWeight(); math.IsInf(w, 0) || math.IsNaN(w) || w > 10 {
		t.Errorf("total weight %v after the shift", w)
	}
	if p := h.Percentile(0.5); p < 3 || p > 3*1.06 {
		t.Errorf("after 150 half-lives P50 = %v, want about 3 (old samples decayed away)", p)
	}
}

func TestOOMBumpUp(t *testing.T) {
	m := mustModel(t)
	cases := map[string]struct {
		request, peak, want float64
	}{
		"request 1000Mi":          {1000 * mi, 0, 1200 * mi},
		"request 1Mi":             {1 * mi, 0, 101 * mi},
		"3000Mi peak over 1000Mi": {1000 * mi, 3000 * mi, 3600 * mi},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := m.NewContainer(m.NewAggregate())
			if tc.peak > 0 {
				m.AddMemory(c, t0, tc.peak)
			}
			if err := m.RecordOOM(c, t0.Add(time.Minute), tc.request); err != nil {
				t.Fatal(err)
			}
			if got, _ := c.OpenWindowPeak(); math.Abs(got-tc.want) > 1 {
				t.Errorf("peak after the OOM %v Mi, want %v Mi", got/mi, tc.want/mi)
			}
		})
	}
	t.Run("a later smaller OOM does not lower the peak", func(t *testing.T) {
		c := m.NewContainer(m.NewAggregate())
		_ = m.RecordOOM(c, t0, 1000*mi)
		_ = m.RecordOOM(c, t0.Add(time.Minute), 10*mi)
		if got, _ := c.OpenWindowPeak(); got != 1200*mi {
			t.Errorf("peak %v Mi, want 1200", got/mi)
		}
		if w := c.agg.Memory.TotalWeight(); math.Abs(w-c.agg.Memory.decayFactor(c.windowEnd)) > 1e-9 {
			t.Errorf("the window holds %v weight, want exactly one peak", w)
		}
	})
	t.Run("an OOM opening a new window uses the peak before it", func(t *testing.T) {
		c := m.NewContainer(m.NewAggregate())
		m.AddMemory(c, t0, 3000*mi)
		_ = m.RecordOOM(c, t0.Add(24*time.Hour+time.Second), 1000*mi)
		if got, _ := c.OpenWindowPeak(); got != 3600*mi {
			t.Errorf("peak %v Mi, want 3600", got/mi)
		}
	})
	t.Run("usage below an OOM bump does not raise the usage peak", func(t *testing.T) {
		c := m.NewContainer(m.NewAggregate())
		m.AddMemory(c, t0, 900*mi)
		_ = m.RecordOOM(c, t0.Add(time.Minute), 1000*mi) // peak 1200Mi
		m.AddMemory(c, t0.Add(2*time.Minute), 1100*mi)
		_ = m.RecordOOM(c, t0.Add(3*time.Minute), 1000*mi) // used = max(1000Mi, 900Mi) -> 1200Mi again
		if got, _ := c.OpenWindowPeak(); got != 1200*mi {
			t.Errorf("peak %v Mi, want 1200", got/mi)
		}
	})
	t.Run("an OOM older than one interval before the last sample is rejected", func(t *testing.T) {
		c := m.NewContainer(m.NewAggregate())
		m.AddMemory(c, t0.Add(48*time.Hour), 100*mi)
		if err := m.RecordOOM(c, t0.Add(23*time.Hour), 100*mi); err == nil {
			t.Error("old OOM accepted")
		}
		if err := m.RecordOOM(c, t0.Add(25*time.Hour), 100*mi); err != nil {
			t.Errorf("OOM within one interval rejected: %v", err)
		}
	})
}

func TestMemoryWindows(t *testing.T) {
	m := mustModel(t)
	a := m.NewAggregate()
	c := m.NewContainer(a)
	m.AddMemory(c, t0, 100*mi)
	m.AddMemory(c, t0.Add(time.Hour), 300*mi) // replaces the window's peak
	m.AddMemory(c, t0.Add(2*time.Hour), 200*mi)
	if got := a.Memory.TotalWeight(); math.Abs(got-a.Memory.decayFactor(t0.Add(24*time.Hour))) > 1e-9 {
		t.Errorf("one window must hold one peak of weight 1 at its end; total %v", got)
	}
	m.AddMemory(c, t0.Add(25*time.Hour), 50*mi) // next window: a second peak
	if p := a.Memory.Percentile(1); p < 300*mi || p > 300*mi*1.06 {
		t.Errorf("max peak %v Mi, want about 300", p/mi)
	}
	if m.AddMemory(c, t0, 1) {
		t.Error("a memory sample older than the last was accepted")
	}
}

func TestConfidenceAndBounds(t *testing.T) {
	m := mustModel(t)
	a := m.NewAggregate()
	c := m.NewContainer(a)
	for i := 0; i < 9; i++ {
		if !m.AddCPU(c, t0.Add(time.Duration(i)*2*time.Minute), 3.14) {
			t.Fatalf("sample %d rejected", i)
		}
	}
	if m.AddCPU(c, t0, 1) {
		t.Error("a CPU sample not newer than the last was accepted")
	}
	conf := a.Confidence()
	if math.Abs(conf-0.00625) > 1e-12 {
		t.Fatalf("confidence %v, want 0.00625", conf)
	}
	// the vector: 3.14 cores at (multiplier 0.1, exponent 2) -> 907.46 cores
	if got := 3.14 * (1 + 0.1/conf) * (1 + 0.1/conf); math.Abs(got-907.46) > 1e-9 {
		t.Errorf("upper bound %v, want 907.46", got)
	}
	e := m.Estimate(a, 1)
	// upstream arithmetic: each step truncated to whole millicores
	trunc := func(x float64) int64 { return int64(x) }
	p95 := trunc(a.CPU.Percentile(0.95) * 1000)
	margin := func(x int64) int64 { return x + trunc(float64(x)*0.15) } // upstream's: x + trunc(x x 0.15)
	if want := trunc(float64(margin(p95)) * (1 + 1/conf)); e.UpperBound.CPUMilli != want {
		t.Errorf("upper bound %dm, want trunc((P95 + trunc(P95 x 0.15)) x (1 + 1/c)) = %dm", e.UpperBound.CPUMilli, want)
	}
	if want := margin(trunc(a.CPU.Percentile(0.9) * 1000)); e.Target.CPUMilli != want {
		t.Errorf("target %dm, want %dm", e.Target.CPUMilli, want)
	}
	if want := max(trunc(float64(margin(trunc(a.CPU.Percentile(0.5)*1000)))*math.Pow(1+0.001/conf, -2)), 25); e.LowerBound.CPUMilli != want {
		t.Errorf("lower bound %dm, want %dm", e.LowerBound.CPUMilli, want)
	}
}

// TestMarginAtBucketEdges: the safety margin is added truncated, x + trunc(x x 0.15) as upstream's estimator
// does, for every CPU bucket end a target can be: trunc(x x 1.15) is one millicore less where the float
// product falls just below a whole amount (found in review: 800m gave 919m, upstream 920m).
func TestMarginAtBucketEdges(t *testing.T) {
	m := mustModel(t)
	differ := 0
	for _, end := range []float64{0.8, 0.78 + 0.02, 26.1, 42.64} {
		a := m.NewAggregate()
		c := m.NewContainer(a)
		m.AddCPU(c, t0, end-0.001) // in the bucket that ends at end (or the one below)
		p90 := int64(a.CPU.Percentile(0.9) * 1000)
		want := p90 + int64(float64(p90)*0.15)
		if got := m.Estimate(a, 1).Target.CPUMilli; got != max(want, 25) {
			t.Errorf("P90 %dm: target %dm, want %dm", p90, got, want)
		}
		if int64(float64(p90)*1.15) != want {
			differ++
		}
	}
	if differ == 0 {
		t.Error("no case where trunc(x x 1.15) differs: the test would not see the old arithmetic")
	}
}

func TestPodMinimumSplit(t *testing.T) {
	m := mustModel(t)
	a := m.NewAggregate()
	c := m.NewContainer(a)
	m.AddCPU(c, t0, 0.001)
	m.AddMemory(c, t0, 1)
	r, ok := m.Recommend(a, 2, DefaultPolicy())
	if !ok {
		t.Fatal("no recommendation")
	}
	if r.Target.CPUMilli != 12 || r.Target.MemoryBytes != 131072000 {
		t.Errorf("two containers' minimum: %dm and %d bytes, want 12m and 131072000", r.Target.CPUMilli, r.Target.MemoryBytes)
	}
	if r.UpperBound.CPUMilli != MaxResourceAmount && r.UpperBound.CPUMilli < 12 {
		t.Errorf("upper bound %d", r.UpperBound.CPUMilli)
	}
}

func TestRecommendPolicy(t *testing.T) {
	m := mustModel(t)
	a := m.NewAggregate()
	c := m.NewContainer(a)
	for i := 0; i < 1440; i++ {
		ts := t0.Add(time.Duration(i) * time.Minute)
		m.AddCPU(c, ts, 2)
		m.AddMemory(c, ts, 500*mi)
	}
	p := DefaultPolicy()
	p.MaxCPU, p.MinMemory = 1, 1<<30
	r, _ := m.Recommend(a, 1, p)
	if r.Target.CPUMilli != 1000 || r.UncappedTarget.CPUMilli <= 2000 {
		t.Errorf("maxAllowed cpu: target %d uncapped %d, want 1000 and above 2000 (2 cores x 1.15)", r.Target.CPUMilli, r.UncappedTarget.CPUMilli)
	}
	if r.Target.MemoryBytes != 1<<30 || r.UncappedTarget.MemoryBytes >= 1<<30 {
		t.Errorf("minAllowed memory: target %d uncapped %d", r.Target.MemoryBytes, r.UncappedTarget.MemoryBytes)
	}
	p = DefaultPolicy()
	p.ControlMem = false
	r, _ = m.Recommend(a, 1, p)
	if r.Target.MemoryBytes != -1 || r.Target.CPUMilli <= 0 {
		t.Errorf("uncontrolled memory must be left out: %+v", r.Target)
	}
	p.Off = true
	if _, ok := m.Recommend(a, 1, p); ok {
		t.Error("mode Off gave a recommendation")
	}
}

// TestRecommendRoundsBeforeCapping: --round-cpu-millicores and --round-memory-bytes round the estimates before
// minAllowed and maxAllowed cap them (upstream's capping post-processor runs after the rounding), so a
// recommendation stays within maxAllowed; a zero minAllowed or maxAllowed is none (upstream's capping skips
// it). Both found in review.
func TestRecommendRoundsBeforeCapping(t *testing.T) {
	cfg := Defaults()
	cfg.RoundCPUMillicores, cfg.RoundMemoryBytes = 100, 100<<20
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	a := m.NewAggregate()
	c := m.NewContainer(a)
	for i := 0; i < 1440; i++ {
		ts := t0.Add(time.Duration(i) * time.Minute)
		m.AddCPU(c, ts, 0.27)
		m.AddMemory(c, ts, 500*mi)
	}
	policy := func(minCPU, maxCPU, maxMem string) Policy {
		cp := vpav1.ContainerResourcePolicy{ContainerName: "*", MinAllowed: corev1.ResourceList{}, MaxAllowed: corev1.ResourceList{}}
		if minCPU != "" {
			cp.MinAllowed[corev1.ResourceCPU] = resource.MustParse(minCPU)
		}
		if maxCPU != "" {
			cp.MaxAllowed[corev1.ResourceCPU] = resource.MustParse(maxCPU)
		}
		if maxMem != "" {
			cp.MaxAllowed[corev1.ResourceMemory] = resource.MustParse(maxMem)
		}
		return PolicyFor(&vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{cp}}, "app")
	}
	r, _ := m.Recommend(a, 1, policy("", "250m", "550Mi"))
	for what, b := range map[string]Amounts{"target": r.Target, "lower bound": r.LowerBound, "upper bound": r.UpperBound} {
		if b.CPUMilli > 250 || b.MemoryBytes > 550<<20 {
			t.Errorf("%s %dm %d bytes: above maxAllowed 250m and 550Mi", what, b.CPUMilli, b.MemoryBytes)
		}
	}
	if r.Target.CPUMilli != 250 || r.Target.MemoryBytes != 550<<20 {
		t.Errorf("target %dm %d bytes, want maxAllowed's 250m and 550Mi", r.Target.CPUMilli, r.Target.MemoryBytes)
	}
	if r, _ := m.Recommend(a, 1, policy("450m", "", "")); r.Target.CPUMilli != 450 {
		t.Errorf("minAllowed 450m: target %dm, want 450m (not rounded up to 500m)", r.Target.CPUMilli)
	}
	if r, _ := m.Recommend(a, 1, WithGlobalMax(policy("", "0", ""), 0.3, 0)); r.Target.CPUMilli != 400 {
		t.Errorf("maxAllowed cpu 0 and a global maximum of 300m: target %dm, want no maximum (upstream fills only a resource the policy does not name)", r.Target.CPUMilli)
	}
	if r, _ := m.Recommend(a, 1, WithGlobalMax(policy("", "", ""), 0.3, 0)); r.Target.CPUMilli != 300 {
		t.Errorf("no maxAllowed and a global maximum of 300m: target %dm, want 300m", r.Target.CPUMilli)
	}
	if r, _ := m.Recommend(a, 1, policy("0", "0", "0")); r.Target.CPUMilli != 400 || r.Target.MemoryBytes != 600<<20 {
		t.Errorf("zero minAllowed and maxAllowed: target %dm %d bytes, want none applied: 400m (270m x 1.15 rounded up) and 600Mi", r.Target.CPUMilli, r.Target.MemoryBytes)
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	m := mustModel(t)
	h := NewDecayingHistogram(m.cpuOpts, 24*time.Hour)
	if err := h.LoadCheckpoint(HistogramCheckpoint{Reference: t0, BucketWeights: map[int]uint32{0: 1, 1: 10000, 2: 50}, TotalWeight: 10051}); err != nil {
		t.Fatal(err)
	}
	cp := h.SaveCheckpoint()
	want := map[int]uint32{0: 1, 1: 10000, 2: 50}
	if len(cp.BucketWeights) != 3 || cp.BucketWeights[0] != 1 || cp.BucketWeights[1] != 10000 || cp.BucketWeights[2] != 50 || !cp.Reference.Equal(t0) {
		t.Errorf("round trip: %+v, want %v", cp, want)
	}
	// a live histogram: percentiles survive save + load within one bucket
	a := m.NewAggregate()
	c := m.NewContainer(a)
	for i := 0; i < 3000; i++ {
		m.AddCPU(c, t0.Add(time.Duration(i)*time.Minute), 0.1+float64(i%50)*0.02)
	}
	saved := a.CPU.SaveCheckpoint()
	for _, w := range saved.BucketWeights {
		if w == 0 || w > 10000 {
			t.Fatalf("checkpoint weight %d outside 1..10000", w)
		}
	}
	restored := NewDecayingHistogram(m.cpuOpts, 24*time.Hour)
	if err := restored.LoadCheckpoint(saved); err != nil {
		t.Fatal(err)
	}
	if math.Abs(restored.TotalWeight()-a.CPU.TotalWeight()) > 1e-6*a.CPU.TotalWeight() {
		t.Errorf("total weight %v, want %v", restored.TotalWeight(), a.CPU.TotalWeight())
	}
	for _, p := range []float64{0.5, 0.9, 0.95} {
		got, want := restored.Percentile(p), a.CPU.Percentile(p)
		if b1, b2 := m.cpuOpts.Bucket(got*0.999), m.cpuOpts.Bucket(want*0.999); b1-b2 > 1 || b2-b1 > 1 {
			t.Errorf("P%v %v after restore, %v before", p, got, want)
		}
	}
	if err := restored.LoadCheckpoint(HistogramCheckpoint{BucketWeights: map[int]uint32{500: 1}, TotalWeight: 1}); err == nil {
		t.Error("a bucket outside the histogram was accepted")
	}
}

func TestConfigValidate(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := Defaults()
	bad.OOMBumpUpRatio = 0.5
	bad.TargetPercentile = 1.5
	bad.MemoryAggregationIntervalCount = 0
	err := bad.Validate()
	for _, name := range []string{"oomBumpUpRatio", "targetPercentile", "memoryAggregationIntervalCount"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Validate did not name %s: %v", name, err)
		}
	}
}

// TestIntegerCPU: upstream's integer-CPU post processor rounds a container's CPU target, bounds and uncapped
// target up to whole cores, before the capping (a maxAllowed of 1500m still caps the target at 1500m);
// memory is left as it is.
func TestIntegerCPU(t *testing.T) {
	m := mustModel(t)
	a := m.NewAggregate()
	c := m.NewContainer(a)
	for i := 0; i < 600; i++ {
		m.AddCPU(c, t0.Add(time.Duration(i)*time.Minute), 1.2)
		m.AddMemory(c, t0.Add(time.Duration(i)*time.Minute), 300<<20)
	}
	plain, _ := m.Recommend(a, 1, DefaultPolicy())
	p := DefaultPolicy()
	p.IntegerCPU = true
	whole, _ := m.Recommend(a, 1, p)
	roundUp := func(x int64) int64 { return (x + 999) / 1000 * 1000 }
	for name, pair := range map[string][2]Amounts{"target": {plain.Target, whole.Target}, "lower bound": {plain.LowerBound, whole.LowerBound},
		"upper bound": {plain.UpperBound, whole.UpperBound}, "uncapped target": {plain.UncappedTarget, whole.UncappedTarget}} {
		if pair[1].CPUMilli != roundUp(pair[0].CPUMilli) || pair[1].MemoryBytes != pair[0].MemoryBytes {
			t.Errorf("%s %+v, want %+v with its CPU rounded up to whole cores", name, pair[1], pair[0])
		}
	}
	if whole.Target.CPUMilli%1000 != 0 || whole.Target.CPUMilli == plain.Target.CPUMilli {
		t.Fatalf("target %dm from %dm: the case rounds nothing", whole.Target.CPUMilli, plain.Target.CPUMilli)
	}
	p.MaxCPU = 1.5
	capped, _ := m.Recommend(a, 1, p)
	if capped.Target.CPUMilli != 1500 || capped.UncappedTarget.CPUMilli != whole.UncappedTarget.CPUMilli {
		t.Errorf("maxAllowed 1500m: target %dm (uncapped %dm), want 1500m (and %dm): the capping runs after the rounding",
			capped.Target.CPUMilli, capped.UncappedTarget.CPUMilli, whole.UncappedTarget.CPUMilli)
	}
}
