package scaling

import (
	"math"
	"slices"
	"strings"
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
			got := mustIntervals(t, tc.intervals, tc.min, tc.overlap)
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
	iv := mustIntervals(t, epIntervals(), 1, [NumResources]*ChangeParams{pct(30), pct(30)})
	// 2 replicas: per-pod max 1 CPU, per-pod at the down boundary 0.35/2 = 175m; memory 4Gi and 0.7Gi
	// (the proposal's table prints 0.765Gi: a typo for 0.7, docs/design/scaling.md).
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
	iv := mustIntervals(t, []Interval{{MaxReplicas: 1, MaxResources: V(500, -1)}, {MaxReplicas: 3, MaxResources: V(1000, -1), Extrapolation: ExtrapolationLinear}}, 1, [NumResources]*ChangeParams{pct(30), pct(30)})
	for _, e := range iv {
		if !math.IsInf(e.Up[Memory], 1) {
			t.Errorf("memory without maxResources must be unbounded, interval %d has up %v", e.Replicas, e.Up[Memory])
		}
		if e.Down[Memory] != 0 {
			t.Errorf("memory down at %d replicas = %v, want 0", e.Replicas, e.Down[Memory])
		}
	}
}

// TestEffectiveIntervalsAtInt32Bounds: intervals up to math.MaxInt32 replicas (which no validation let
// through, but a caller may hand over) end: one effective interval at MaxInt32 without an extrapolation, an
// error naming the field with one, and never a replica count that wrapped around to a negative one.
func TestEffectiveIntervalsAtInt32Bounds(t *testing.T) {
	top := V(8000, 32*gi)
	cases := map[string]struct {
		intervals []Interval
		min       int32
		replicas  []int32 // nil: an error naming wantField
		wantField string
	}{
		"one interval to MaxInt32 (issue 31)": {intervals: []Interval{{MaxReplicas: math.MaxInt32, MaxResources: top}}, min: 1,
			replicas: []int32{math.MaxInt32}},
		"minReplicas MaxInt32": {intervals: []Interval{{MaxReplicas: math.MaxInt32, MaxResources: top, Extrapolation: ExtrapolationLinear}}, min: math.MaxInt32,
			replicas: []int32{math.MaxInt32}},
		"two intervals, the second to MaxInt32": {intervals: []Interval{{MaxReplicas: 2, MaxResources: V(500, gi)}, {MaxReplicas: math.MaxInt32, MaxResources: top}}, min: 1,
			replicas: []int32{2, math.MaxInt32}},
		"linear to MaxInt32": {intervals: []Interval{{MaxReplicas: math.MaxInt32, MaxResources: top, Extrapolation: ExtrapolationLinear}}, min: 1,
			wantField: "spec.scalingIntervals[0].effectiveIntervalExtrapolation"},
		"horizontalOnly after MinInt32": {intervals: []Interval{{MaxReplicas: math.MinInt32, MaxResources: top}, {MaxReplicas: math.MaxInt32, MaxResources: top, Extrapolation: ExtrapolationHorizontalOnly}}, min: 1,
			wantField: "spec.scalingIntervals[1].effectiveIntervalExtrapolation"},
		"linear 1001 replicas": {intervals: []Interval{{MaxReplicas: 1001, MaxResources: top, Extrapolation: ExtrapolationLinear}}, min: 1,
			wantField: "spec.scalingIntervals[0].effectiveIntervalExtrapolation"},
		"linear 1000 replicas": {intervals: []Interval{{MaxReplicas: 1000, MaxResources: top, Extrapolation: ExtrapolationLinear}}, min: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := EffectiveIntervals(tc.intervals, tc.min, [NumResources]*ChangeParams{pct(30), pct(30)})
			if tc.wantField != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantField+": Invalid value") {
					t.Fatalf("want an error naming %s, got %v (%d intervals)", tc.wantField, err, len(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.replicas == nil {
				if len(got) != MaxEffectiveIntervals {
					t.Fatalf("got %d effective intervals, want %d", len(got), MaxEffectiveIntervals)
				}
				return
			}
			var reps []int32
			for _, e := range got {
				reps = append(reps, e.Replicas)
			}
			if !slices.Equal(reps, tc.replicas) {
				t.Fatalf("replicas %v, want %v", reps, tc.replicas)
			}
		})
	}
}

// FuzzEffectiveIntervals: for any int32 bounds (maxReplicas of up to three intervals, minReplicas) and any
// extrapolations, EffectiveIntervals ends with either an error that names an interval's field, or at most
// MaxEffectiveIntervals intervals (exactly EffectiveIntervalCount), with replica counts that never go down;
// and Decide on them ends too, with an error or a decision within the bound. The test ending is the
// termination check (go test's -timeout fails a loop that does not end); no time is measured.
func FuzzEffectiveIntervals(f *testing.F) {
	// n%3+1 intervals of (a, b, c), with the extrapolations x[xa%3], x[xb%3], x[xc%3]
	f.Add(int32(1), int32(math.MaxInt32), int32(0), int32(0), uint8(0), uint8(0), uint8(0), uint8(0), int32(5))
	f.Add(int32(1), int32(2), int32(math.MaxInt32), int32(0), uint8(0), uint8(0), uint8(0), uint8(1), int32(3))
	f.Add(int32(1), int32(10), int32(1500), int32(0), uint8(0), uint8(1), uint8(0), uint8(1), int32(12))
	f.Add(int32(math.MinInt32), int32(math.MinInt32), int32(-1), int32(math.MaxInt32), uint8(1), uint8(2), uint8(1), uint8(2), int32(math.MaxInt32))
	f.Add(int32(math.MaxInt32), int32(math.MaxInt32), int32(math.MaxInt32), int32(math.MaxInt32), uint8(2), uint8(2), uint8(2), uint8(2), int32(-7))
	f.Add(int32(3), int32(10), int32(1000), int32(1003), uint8(0), uint8(1), uint8(2), uint8(2), int32(1000))
	f.Fuzz(func(t *testing.T, minR, a, b, c int32, xa, xb, xc, n uint8, replicas int32) {
		x := []Extrapolation{ExtrapolationNone, ExtrapolationLinear, ExtrapolationHorizontalOnly}
		all := []Interval{{MaxReplicas: a, MaxResources: V(500, gi), Extrapolation: x[xa%3]},
			{MaxReplicas: b, MaxResources: V(1000, 2*gi), Extrapolation: x[xb%3]},
			{MaxReplicas: c, MaxResources: V(2000, 4*gi), Extrapolation: x[xc%3]}}
		ivs := all[:n%3+1]
		got, err := EffectiveIntervals(ivs, minR, [NumResources]*ChangeParams{pct(30), pct(30)})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "spec.scalingIntervals[") || got != nil {
				t.Fatalf("%+v from %d: error %v with %d intervals", ivs, minR, err, len(got))
			}
		} else {
			if len(got) > MaxEffectiveIntervals || int64(len(got)) != EffectiveIntervalCount(ivs, minR) {
				t.Fatalf("%+v from %d: %d intervals, count %d", ivs, minR, len(got), EffectiveIntervalCount(ivs, minR))
			}
			for j := 1; j < len(got); j++ {
				if got[j].Source == got[j-1].Source && got[j].Replicas != got[j-1].Replicas+1 {
					t.Fatalf("%+v from %d: interval %d has %d replicas after %d", ivs, minR, j, got[j].Replicas, got[j-1].Replicas)
				}
			}
		}
		s := &Spec{MinReplicas: minR, MaxReplicas: max(a, b, c), Intervals: ivs, ScaleUp: Policy{Mode: UpdateModeAuto}, ScaleDown: Policy{Mode: UpdateModeAuto}, HPAUtilization: true}
		st := State{Replicas: max(replicas, 0), HPA: &HPAInput{Desired: replicas},
			Containers:     []Container{{Name: "app", Requests: V(100, gi)}},
			Recommendation: []Recommendation{{Name: "app", Target: V(300, 2*gi)}}}
		d, err := Decide(s, st)
		if (err == nil) != (got != nil) || len(d.Intervals) > MaxEffectiveIntervals {
			t.Fatalf("Decide: error %v and %d intervals, EffectiveIntervals %d", err, len(d.Intervals), len(got))
		}
	})
}
