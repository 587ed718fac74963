package recommender

import (
	"math"
	"strings"
	"testing"
	"time"
)

func feed(m *Model, c *Container, from time.Time, n int, cpu func(int) float64, mem func(int) float64) {
	for i := 0; i < n; i++ {
		ts := from.Add(time.Duration(i) * time.Minute)
		m.AddCPU(c, ts, cpu(i))
		m.AddMemory(c, ts, mem(i))
	}
}

func TestMergeEqualsOneAggregate(t *testing.T) {
	m := mustModel(t)
	cpuA := func(i int) float64 { return 0.1 + float64(i%20)*0.01 }
	cpuB := func(i int) float64 { return 0.5 + float64(i%30)*0.02 }
	memA := func(i int) float64 { return 200e6 + float64(i)*1e5 }
	memB := func(i int) float64 { return 400e6 }
	// two pods' containers in separate aggregates, merged ...
	a, b := m.NewAggregate(), m.NewAggregate()
	feed(m, m.NewContainer(a), t0, 2000, cpuA, memA)
	feed(m, m.NewContainer(b), t0.Add(time.Hour), 2000, cpuB, memB)
	merged := m.NewAggregate()
	merged.Merge(a)
	merged.Merge(b)
	// ... equal one aggregate fed by both
	one := m.NewAggregate()
	feed(m, m.NewContainer(one), t0, 2000, cpuA, memA)
	feed(m, m.NewContainer(one), t0.Add(time.Hour), 2000, cpuB, memB)
	r1, _ := m.Recommend(merged, 1, DefaultPolicy())
	r2, _ := m.Recommend(one, 1, DefaultPolicy())
	if r1 != r2 {
		t.Errorf("merged %+v, one aggregate %+v", r1, r2)
	}
	if merged.TotalSamples != 4000 || !merged.FirstSample.Equal(t0) {
		t.Errorf("merged samples %d from %v", merged.TotalSamples, merged.FirstSample)
	}
}

func TestExpiry(t *testing.T) {
	m := mustModel(t)
	a := m.NewAggregate()
	m.AddCPU(m.NewContainer(a), t0, 1)
	if m.Expired(a, t0.Add(8*24*time.Hour)) {
		t.Error("expired after exactly 8 days")
	}
	if !m.Expired(a, t0.Add(8*24*time.Hour+time.Minute)) {
		t.Error("not expired after more than 8 days without samples")
	}
}

// TestAggregateCheckpointRestart: a restart from a checkpoint gives the same recommendation within one
// bucket, and the still-open memory window is not counted twice once its samples come back.
func TestAggregateCheckpointRestart(t *testing.T) {
	m := mustModel(t)
	a := m.NewAggregate()
	c := m.NewContainer(a)
	cpu := func(i int) float64 { return 0.3 + float64(i%40)*0.01 }
	mem := func(i int) float64 { return 300e6 + float64(i%1440)*5e4 }
	feed(m, c, t0, 3*1440+600, cpu, mem) // three closed windows and an open one
	last := t0.Add(time.Duration(3*1440+599) * time.Minute)
	cp := m.SaveAggregate(a, []*Container{c}, last)
	// a checkpoint taken after the window closed keeps its peak
	if closed := m.SaveAggregate(a, []*Container{c}, last.Add(48*time.Hour)); closed.Memory.TotalWeight <= cp.Memory.TotalWeight {
		t.Errorf("a closed window was left out: weight %v, with the open one left out %v", closed.Memory.TotalWeight, cp.Memory.TotalWeight)
	}
	restored, err := m.LoadAggregate(cp, last)
	if err != nil {
		t.Fatal(err)
	}
	// the open window's peak is not in the checkpoint: the restored memory weight is lower by its weight
	openPeak, end := c.OpenWindowPeak()
	if openPeak == 0 {
		t.Fatal("no open window")
	}
	if got, want := restored.Memory.TotalWeight(), a.Memory.TotalWeight()-a.Memory.decayFactor(end); abs(got-want) > 1e-6*want {
		t.Errorf("restored memory weight %v, want %v (without the open window)", got, want)
	}
	// the open window's samples come back after the restart (a new container state): one peak, not two
	c2 := m.NewContainer(restored)
	for i := 3 * 1440; i < 3*1440+600; i++ {
		m.AddMemory(c2, t0.Add(time.Duration(i)*time.Minute), mem(i))
	}
	if got, want := restored.Memory.TotalWeight(), a.Memory.TotalWeight(); abs(got-want) > 0.02*want {
		t.Errorf("after the window's samples return: weight %v, before the restart %v", got, want)
	}
	r1, _ := m.Recommend(a, 1, DefaultPolicy())
	r2, _ := m.Recommend(restored, 1, DefaultPolicy())
	withinBucket := func(x, y int64) bool { return float64(max(x, y)) <= float64(min(x, y))*1.051+1 }
	if !withinBucket(r1.Target.CPUMilli, r2.Target.CPUMilli) || !withinBucket(r1.Target.MemoryBytes, r2.Target.MemoryBytes) {
		t.Errorf("target before the restart %+v, after %+v: more than one bucket apart", r1.Target, r2.Target)
	}
	if _, err := m.LoadAggregate(AggregateCheckpoint{TotalSamples: -1}, last); err == nil {
		t.Error("a negative sample count was accepted")
	}
	// a checkpoint from the year 9999 would pin the target: refused with the field named; an hour of
	// clock skew is accepted
	future := cp
	future.CPU.Reference = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := m.LoadAggregate(future, last); err == nil || !strings.Contains(err.Error(), "cpuHistogram.referenceTimestamp 9999-01-01T00:00:00Z is in the future") {
		t.Errorf("a checkpoint dated 9999: %v", err)
	}
	if _, err := m.LoadAggregate(cp, last.Add(-MaxClockSkew+time.Minute)); err != nil {
		t.Errorf("a checkpoint within the clock skew was refused: %v", err)
	}
	nan := cp
	nan.Memory.TotalWeight = math.NaN()
	if _, err := m.LoadAggregate(nan, last); err == nil {
		t.Error("a NaN total weight was accepted")
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestSampleTime: a usage sample dated ahead of the recommender's clock by at most MaxSampleSkew is recorded
// at now; beyond that it is refused; the past is kept as it is.
func TestSampleTime(t *testing.T) {
	now := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		at   time.Time
		want time.Time
		ok   bool
	}{
		{now.Add(-time.Minute), now.Add(-time.Minute), true},
		{now, now, true},
		{now.Add(30 * time.Second), now, true},
		{now.Add(MaxSampleSkew), now, true},
		{now.Add(MaxSampleSkew + time.Second), now, false},
		{time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), now, false},
	} {
		if got, ok := SampleTime(tc.at, now); ok != tc.ok || (ok && !got.Equal(tc.want)) {
			t.Errorf("SampleTime(%s): %s, %v; want %s, %v", tc.at, got, ok, tc.want, tc.ok)
		}
	}
}
