package scaling

import (
	"math"
	"testing"
)

func TestEffectiveIntervals(t *testing.T) {
	type want struct {
		replicas       []int32
		cpuUp, cpuDown []float64 // millicores
		memUp, memDown []float64 // Gi
		pinnedCPU      []float64 // per interval, 0 = not pinned
	}
	linear := func(x Extrapolation, ivs ...Interval) []Interval {
		for i := range ivs {
			ivs[i].Extrapolation = x
		}
		return ivs
	}
	cases := map[string]struct {
		intervals []Interval
		min       int32
		overlap   [NumResources]*ChangeParams
		want      want
	}{
		"EP-0001 with 30% overlap": {
			intervals: epIntervals(), min: 1, overlap: [NumResources]*ChangeParams{pct(30), pct(30)},
			want: want{
				replicas: []int32{1, 2, 3, 4, 5},
				cpuUp:    []float64{500, 2000, 6000, 16000, 40000}, cpuDown: []float64{0, 350, 1400, 4200, 11200},
				memUp: []float64{2, 8, 24, 64, 160}, memDown: []float64{0, 1.4, 5.6, 16.8, 44.8},
			},
		},
		"EP-0001 with the design YAML's overlap {250m or 30%, 1.5Gi or 30%}": {
			intervals: epIntervals(), min: 1, overlap: [NumResources]*ChangeParams{valPct(250, 30), valPct(1.5*gi, 30)},
			want: want{
				replicas: []int32{1, 2, 3, 4, 5},
				cpuUp:    []float64{500, 2000, 6000, 16000, 40000}, cpuDown: []float64{0, 250, 1400, 4200, 11200},
				memUp: []float64{2, 8, 24, 64, 160}, memDown: []float64{0, 0.5, 5.6, 16.8, 44.8},
			},
		},
		"no overlap: down is the previous up": {
			intervals: epIntervals(), min: 1,
			want: want{
				replicas: []int32{1, 2, 3, 4, 5},
				cpuUp:    []float64{500, 2000, 6000, 16000, 40000}, cpuDown: []float64{0, 500, 2000, 6000, 16000},
				memUp: []float64{2, 8, 24, 64, 160}, memDown: []float64{0, 2, 8, 24, 64},
			},
		},
		"overlap value larger than the boundary clamps at the previous down": {
			intervals: epIntervals()[:3], min: 1, overlap: [NumResources]*ChangeParams{{Value: 5000, HasValue: true}, nil},
			want: want{
				replicas: []int32{1, 2, 3},
				cpuUp:    []float64{500, 2000, 6000}, cpuDown: []float64{0, 0, 0},
				memUp: []float64{2, 8, 24}, memDown: []float64{0, 2, 8},
			},
		},
		"linear: one effective interval per replica count": {
			intervals: linear(ExtrapolationLinear, Interval{MaxReplicas: 2, MaxResources: V(1000, gi)}, Interval{MaxReplicas: 5, MaxResources: V(2000, 2*gi)}),
			min:       1,
			want: want{
				replicas: []int32{1, 2, 3, 4, 5},
				cpuUp:    []float64{1000, 2000, 2000 + 8000.0/3, 2000 + 16000.0/3, 10000}, cpuDown: []float64{0, 1000, 2000, 2000 + 8000.0/3, 2000 + 16000.0/3},
				memUp: []float64{1, 2, 2 + 8.0/3, 2 + 16.0/3, 10}, memDown: []float64{0, 1, 2, 2 + 8.0/3, 2 + 16.0/3},
			},
		},
		"linear starting above minReplicas 2": {
			intervals: linear(ExtrapolationLinear, Interval{MaxReplicas: 4, MaxResources: V(1000, gi)}),
			min:       2,
			want: want{
				replicas: []int32{2, 3, 4},
				cpuUp:    []float64{4000.0 / 3, 8000.0 / 3, 4000}, cpuDown: []float64{0, 4000.0 / 3, 8000.0 / 3},
				memUp: []float64{4.0 / 3, 8.0 / 3, 4}, memDown: []float64{0, 4.0 / 3, 8.0 / 3},
			},
		},
		"horizontalOnly pins the per-pod value": {
			intervals: []Interval{{MaxReplicas: 2, MaxResources: V(1000, gi)}, {MaxReplicas: 5, MaxResources: V(2000, 2*gi), Extrapolation: ExtrapolationHorizontalOnly}},
			min:       1,
			want: want{
				replicas: []int32{2, 3, 4, 5},
				cpuUp:    []float64{2000, 6000, 8000, 10000}, cpuDown: []float64{0, 2000, 6000, 8000},
				memUp: []float64{2, 6, 8, 10}, memDown: []float64{0, 2, 6, 8},
				pinnedCPU: []float64{0, 2000, 2000, 2000},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := EffectiveIntervals(tc.intervals, tc.min, tc.overlap)
			if len(got) != len(tc.want.replicas) {
				t.Fatalf("got %d effective intervals, want %d: %+v", len(got), len(tc.want.replicas), got)
			}
			for j, e := range got {
				check := func(what string, gotV, wantV float64) {
					if !near(gotV, wantV) {
						t.Errorf("interval %d (%d replicas): %s = %v, want %v", j, e.Replicas, what, gotV, wantV)
					}
				}
				if e.Replicas != tc.want.replicas[j] {
					t.Errorf("interval %d: replicas %d, want %d", j, e.Replicas, tc.want.replicas[j])
				}
				check("cpu up", e.Up[CPU], tc.want.cpuUp[j])
				check("cpu down", e.Down[CPU], tc.want.cpuDown[j])
				check("memory up (Gi)", e.Up[Memory]/gi, tc.want.memUp[j])
				check("memory down (Gi)", e.Down[Memory]/gi, tc.want.memDown[j])
				if tc.want.pinnedCPU != nil {
					p, _ := e.Pinned.Get(CPU)
					check("pinned cpu", p, tc.want.pinnedCPU[j])
				}
			}
		})
	}
}

func TestEffectiveIntervalsPerPod(t *testing.T) {
	iv := EffectiveIntervals(epIntervals(), 1, [NumResources]*ChangeParams{pct(30), pct(30)})
	// 2 replicas: per-pod max 1 CPU, per-pod at the down boundary 0.35/2 = 175m; memory 4Gi and 0.7Gi
	// (the proposal's table prints 0.765Gi: a typo for 0.7, SCALING.md).
	if got := iv[1].PerPodMax(CPU); got != 1000 {
		t.Errorf("per-pod cpu max at 2 replicas = %v, want 1000m", got)
	}
	if got := iv[1].PerPodAtDown(CPU); !near(got, 175) {
		t.Errorf("per-pod cpu at down at 2 replicas = %v, want 175m", got)
	}
	if got := iv[1].PerPodAtDown(Memory) / gi; !near(got, 0.7) {
		t.Errorf("per-pod memory at down at 2 replicas = %v Gi, want 0.7", got)
	}
}

func TestUnboundedResourceNeverForcesAnInterval(t *testing.T) {
	iv := EffectiveIntervals([]Interval{{MaxReplicas: 1, MaxResources: V(500, -1)}, {MaxReplicas: 3, MaxResources: V(1000, -1), Extrapolation: ExtrapolationLinear}}, 1, [NumResources]*ChangeParams{pct(30), pct(30)})
	for _, e := range iv {
		if !math.IsInf(e.Up[Memory], 1) {
			t.Errorf("memory without maxResources must be unbounded, interval %d has up %v", e.Replicas, e.Up[Memory])
		}
		if e.Down[Memory] != 0 {
			t.Errorf("memory down at %d replicas = %v, want 0", e.Replicas, e.Down[Memory])
		}
	}
}
