package adaptive

import (
	"math"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
)

var t0 = time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)

func mustModel(t testing.TB, cfg Config) *Model {
	t.Helper()
	m, err := NewModel(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// upstreamRun feeds one container's samples to the upstream model and to an adaptive state, and calls fn with
// both recommendations every minute.
func upstreamRun(t *testing.T, cfg Config, minutes int, usage func(m int) (cores, bytes float64), oomAt map[int]float64,
	fn func(m int, up recommender.Recommendation, res Result)) {
	t.Helper()
	um, err := recommender.NewModel(cfg.Base)
	if err != nil {
		t.Fatal(err)
	}
	agg := um.NewAggregate()
	c := um.NewContainer(agg)
	st := mustModel(t, cfg).NewState()
	p := recommender.DefaultPolicy()
	for m := 0; m < minutes; m++ {
		at := t0.Add(time.Duration(m) * time.Minute)
		cores, bytes := usage(m)
		um.AddCPU(c, at, cores)
		st.AddCPU(at, cores)
		um.AddMemory(c, at, bytes)
		st.AddMemory(at, bytes)
		if req, ok := oomAt[m]; ok {
			if err := um.RecordOOM(c, at, req); err != nil {
				t.Fatal(err)
			}
			st.RecordOOM(at, req)
		}
		up, _ := um.Recommend(agg, 1, p)
		fn(m, up, st.Recommend(at.Add(30*time.Second), up, 1, p))
	}
}

// With the upstream model as its only candidate (and no change budget), the adaptive model publishes
// upstream's recommendation number for number, on random loads with OOM kills.
func TestUpstreamOnlyEqualsUpstream(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		rng := rand.New(rand.NewSource(seed))
		level, mem := 0.05+rng.Float64()*2, 1e8+rng.Float64()*2e9
		ooms := map[int]float64{rng.Intn(3000): mem, 3000 + rng.Intn(1000): 2 * mem}
		n := 0
		upstreamRun(t, UpstreamOnly(recommender.Defaults()), 4*1440, func(m int) (float64, float64) {
			return level * (1 + 0.5*math.Sin(float64(m)/229) + 0.3*rng.Float64()), mem * (1 + 0.2*rng.Float64())
		}, ooms, func(m int, up recommender.Recommendation, res Result) {
			n++
			if res.Recommendation != up || res.CPUModel != ModelUpstream || res.MemoryModel != ModelUpstream {
				t.Fatalf("seed %d minute %d: %+v (%s, %s), upstream %+v", seed, m, res.Recommendation, res.CPUModel, res.MemoryModel, up)
			}
		})
		if n != 4*1440 {
			t.Fatalf("%d recommendations", n)
		}
	}
}

// Property: on random loads and configurations, the winners are always candidates of the ensemble, and the
// published target is a target one of the candidates had (the winner's, applied with the dead band), or
// the pod minimum.
func TestWinnerIsACandidate(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		rng := rand.New(rand.NewSource(seed))
		cfg := Defaults(recommender.Defaults())
		cfg.Warmup = time.Duration(rng.Intn(12)) * time.Hour
		cfg.Hysteresis = rng.Float64() * 0.3
		m := mustModel(t, cfg)
		cpuNames, memNames := m.Candidates()
		level := 0.05 + rng.Float64()
		wins := map[string]bool{}
		upstreamRun(t, cfg, 3*1440, func(mi int) (float64, float64) {
			day := 1 + 0.6*math.Sin(2*math.Pi*float64(mi)/1440)
			return level * day * (0.8 + 0.4*rng.Float64()), 3e8 * (1 + 0.1*rng.Float64())
		}, nil, func(mi int, up recommender.Recommendation, res Result) {
			if !slices.Contains(cpuNames, res.CPUModel) || !slices.Contains(memNames, res.MemoryModel) {
				t.Fatalf("seed %d minute %d: winners %q, %q are not candidates", seed, mi, res.CPUModel, res.MemoryModel)
			}
			wins[res.CPUModel] = true
			if res.Target.CPUMilli <= 0 || res.Target.MemoryBytes <= 0 {
				t.Fatalf("seed %d minute %d: target %+v", seed, mi, res.Target)
			}
		})
		if len(wins) < 2 {
			t.Errorf("seed %d: only %v ever won: the ensemble never chose", seed, wins)
		}
	}
}

// The daily schedule: a profile's best runs of at most segs levels, each the maximum of its hours.
func TestSchedule(t *testing.T) {
	var flat, day [24]float64
	for h := range flat {
		flat[h] = 100
		day[h] = 100
		if h >= 8 && h < 20 {
			day[h] = 300
		}
	}
	cases := []struct {
		name string
		p    [24]float64
		segs int
		want func(h int) float64
	}{
		{"flat, 3 segments", flat, 3, func(int) float64 { return 100 }},
		{"day, 1 segment: the peak", day, 1, func(int) float64 { return 300 }},
		{"day, 2 segments: night and day", day, 2, func(h int) float64 { return day[h] }},
		{"day, 3 segments: as good as 2", day, 3, func(h int) float64 { return day[h] }},
	}
	for _, tc := range cases {
		var out [24]float64
		schedule(&tc.p, tc.segs, &out)
		for h := range out {
			if out[h] != tc.want(h) {
				t.Errorf("%s: hour %d level %v, want %v (schedule %v)", tc.name, h, out[h], tc.want(h), out)
				break
			}
		}
	}
	// a ramp: every level covers its hours, and 3 levels leave less idle than 2
	var ramp [24]float64
	for h := range ramp {
		ramp[h] = 100 + 10*float64(h)
	}
	idle := func(segs int) float64 {
		var out [24]float64
		schedule(&ramp, segs, &out)
		sum := 0.0
		for h := range out {
			if out[h] < ramp[h] {
				t.Fatalf("%d segments: hour %d level %v below the profile %v", segs, h, out[h], ramp[h])
			}
			sum += 1 - ramp[h]/out[h]
		}
		return sum
	}
	if i2, i3 := idle(2), idle(3); i3 >= i2 {
		t.Errorf("idle with 3 segments %v, with 2 %v: want less", i3, i2)
	}
}

// A diurnal load: after a few days the adaptive model publishes less CPU than upstream at night, and a
// memory OOM raises the memory target at once, above the bumped request.
func TestDailyCurveAndOOMFloor(t *testing.T) {
	cfg := Defaults(recommender.Defaults())
	const req = 600e6
	var nightAdaptive, nightUpstream float64
	var afterOOM Result
	upstreamRun(t, cfg, 5*1440, func(m int) (float64, float64) {
		return 0.5 * (1 + 0.6*math.Sin(2*math.Pi*float64(m)/1440)) * (0.95 + 0.1*float64(m%7)/7), 4e8
	}, map[int]float64{4*1440 + 720: req}, func(m int, up recommender.Recommendation, res Result) {
		if m >= 3*1440 && m < 4*1440 && (m%1440) >= 16*60 && (m%1440) < 22*60 { // the trough of the curve
			nightAdaptive += float64(res.Target.CPUMilli)
			nightUpstream += float64(up.Target.CPUMilli)
		}
		if m == 4*1440+721 {
			afterOOM = res
		}
	})
	if nightAdaptive >= 0.8*nightUpstream {
		t.Errorf("CPU at the trough: adaptive %.0f, upstream %.0f (millicore-minutes): want at least 20%% less", nightAdaptive, nightUpstream)
	}
	if bumped := int64(req * cfg.Base.OOMBumpUpRatio); afterOOM.Target.MemoryBytes < bumped {
		t.Errorf("memory target after the OOM %d, want >= %d (1.2 x the request)", afterOOM.Target.MemoryBytes, bumped)
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []func(c *Config){
		func(c *Config) { c.Percentiles = []float64{1.5} },
		func(c *Config) { c.DailySegments = []int{5} },
		func(c *Config) { c.DailyDays = []int{8} },
		func(c *Config) { c.Weights.Over = -1 },
		func(c *Config) { c.Hysteresis = 1 },
		func(c *Config) { c.MemoryWindows = []time.Duration{time.Minute} },
		func(c *Config) { c.Base.CPUBucketRatio = 1 },
	}
	for i, f := range bad {
		c := Defaults(recommender.Defaults())
		f(&c)
		if _, err := NewModel(c); err == nil {
			t.Errorf("case %d: accepted", i)
		}
	}
	if _, err := NewModel(Defaults(recommender.Defaults())); err != nil {
		t.Error(err)
	}
	for v, want := range map[string]string{"": ModelUpstream, "upstream": ModelUpstream, "adaptive": ModelAdaptive} {
		if got, err := ParseModel(v); err != nil || got != want {
			t.Errorf("ParseModel(%q) = %q, %v", v, got, err)
		}
	}
	if _, err := ParseModel("best"); err == nil {
		t.Error("ParseModel(best) accepted")
	}
}

// The adaptive model bumps an OOM kill by the upstream rule (recommender.Config.OOMBump): a 128Mi container
// needs 228Mi (the 100Mi minimum, above 1.2 x 128Mi), and no memory candidate goes below that for OOMHold.
func TestOOMFloorIsTheUpstreamBump(t *testing.T) {
	const mi = 1 << 20
	for _, tc := range []struct{ request, want float64 }{{128 * mi, 228 * mi}, {1000 * mi, 1200 * mi}} {
		s := mustModel(t, Defaults(recommender.Defaults())).NewState()
		s.RecordOOM(t0, tc.request)
		if got := s.floorAt(t0.Unix()); got != tc.want {
			t.Errorf("OOM of a %v Mi container: floor %v Mi, want %v Mi", tc.request/mi, got/mi, tc.want/mi)
		}
		if got := s.floorAt(t0.Add(s.m.cfg.OOMHold).Unix()); got != 0 {
			t.Errorf("floor %v Mi after OOMHold, want none", got/mi)
		}
	}
}

// TestFinalizeRoundsBeforeCapping: the adaptive target is rounded up (--round-cpu-millicores, whole cores for
// the integer-CPU post processor) before minAllowed/maxAllowed, as the upstream model's: it ignored the
// integer-CPU policy (found in review: 2068m for a container annotated for whole cores) and rounded after
// the capping, past maxAllowed.
func TestFinalizeRoundsBeforeCapping(t *testing.T) {
	cfg := Defaults(recommender.Defaults())
	cfg.Base.RoundCPUMillicores = 100
	m := mustModel(t, cfg)
	up := recommender.Recommendation{Target: recommender.Amounts{CPUMilli: 3000, MemoryBytes: 1 << 30}, LowerBound: recommender.Amounts{CPUMilli: 1000, MemoryBytes: 1 << 29},
		UpperBound: recommender.Amounts{CPUMilli: 5000, MemoryBytes: 1 << 31}, UncappedTarget: recommender.Amounts{CPUMilli: 3000, MemoryBytes: 1 << 30}}
	p := recommender.DefaultPolicy()
	p.IntegerCPU = true
	if r := m.finalize(2068, 3e8, 1, p, up); r.Target.CPUMilli != 3000 || r.UncappedTarget.CPUMilli != 3000 {
		t.Errorf("integer CPU: target %dm, uncapped %dm; want 3000m both", r.Target.CPUMilli, r.UncappedTarget.CPUMilli)
	}
	p.IntegerCPU, p.MaxCPU = false, 2.05
	if r := m.finalize(2068, 3e8, 1, p, up); r.Target.CPUMilli != 2050 || r.UncappedTarget.CPUMilli != 2100 {
		t.Errorf("maxAllowed 2050m: target %dm, uncapped %dm; want 2050m (capped after the rounding to 100m) and 2100m", r.Target.CPUMilli, r.UncappedTarget.CPUMilli)
	}
}
