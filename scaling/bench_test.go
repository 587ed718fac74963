package scaling

import (
	"testing"
	"time"
)

// BenchmarkDecide is one decision for a 3-container Hvpa with 20 linear intervals (one effective interval per
// replica count up to 40), HPA input, base budgeting, gating and limits.
func BenchmarkDecide(b *testing.B) {
	s := &Spec{MinReplicas: 1, MaxReplicas: 40, HPAUtilization: true,
		Overlap:   [NumResources]*ChangeParams{pct(30), pct(30)},
		Base:      [NumResources]*ChangeParams{valPct(50, 5), valPct(200<<20, 5)},
		ScaleUp:   Policy{Mode: UpdateModeAuto, MinChange: [NumResources]*ChangeParams{valPct(100, 10), valPct(100<<20, 10)}},
		ScaleDown: Policy{Mode: UpdateModeAuto, Stabilization: time.Minute},
	}
	for i := 1; i <= 20; i++ {
		s.Intervals = append(s.Intervals, Interval{MaxReplicas: int32(2 * i), MaxResources: V(float64(500*i), float64(i)*gi), Extrapolation: ExtrapolationLinear})
	}
	st := State{Now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), Replicas: 12, HPA: &HPAInput{Desired: 13}}
	for _, n := range []string{"app", "sidecar", "proxy"} {
		st.Containers = append(st.Containers, Container{Name: n, Requests: V(1000, gi), Limits: V(2000, 2*gi)})
		st.Recommendation = append(st.Recommendation, Recommendation{Name: n, Target: V(1500, 1.5*gi), UncappedTarget: V(1500, 1.5*gi)})
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decide(s, st); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEffectiveIntervals(b *testing.B) {
	var iv []Interval
	for i := 1; i <= 20; i++ {
		iv = append(iv, Interval{MaxReplicas: int32(2 * i), MaxResources: V(float64(500*i), float64(i)*gi), Extrapolation: ExtrapolationLinear})
	}
	ov := [NumResources]*ChangeParams{pct(30), pct(30)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EffectiveIntervals(iv, 1, ov); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTrackedLoad is the load-following estimate of one (container, resource) from an hour of recent
// samples, one a minute (what every decision of an Hvpa with the embedded recommender computes per container
// and resource): the steady state of a workload's decision loop.
func BenchmarkTrackedLoad(b *testing.B) {
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	recent := make([]LoadSample, 60)
	for i := range recent {
		recent[i] = LoadSample{At: t0.Add(time.Duration(i) * time.Minute), Load: V(float64(1000+(i*37)%200), float64(2+(i*13)%5)*gi/4)}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range []Resource{CPU, Memory} {
			if _, ok := trackedLoad(DefaultTracking, recent, r, 0.1, 1200, 0); !ok {
				b.Fatal("no estimate")
			}
		}
	}
}
