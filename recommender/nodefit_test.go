package recommender

import (
	"strings"
	"testing"
)

func rec(name string, cpuMilli, memBytes int64) ContainerRecommendation {
	a := Amounts{CPUMilli: cpuMilli, MemoryBytes: memBytes}
	lower := Amounts{CPUMilli: cpuMilli / 2, MemoryBytes: memBytes / 2}
	upper := Amounts{CPUMilli: cpuMilli * 2, MemoryBytes: memBytes * 2}
	return ContainerRecommendation{Container: name, Recommendation: Recommendation{Target: a, LowerBound: lower, UpperBound: upper, UncappedTarget: a}}
}

func TestFitNode(t *testing.T) {
	const gi = int64(1 << 30)
	none := Amounts{CPUMilli: -1, MemoryBytes: -1}
	for _, tc := range []struct {
		name       string
		recs       []ContainerRecommendation
		fixed      Amounts
		room       Amounts
		wantCPU    []int64
		wantMemory []int64
		caps       string
	}{
		{"12 cpu on an 8 cpu node: the node's room", []ContainerRecommendation{rec("app", 12000, 4*gi)}, Amounts{}, Amounts{CPUMilli: 7800, MemoryBytes: 30 * gi},
			[]int64{7800}, []int64{4 * gi}, "app cpu 12000m -> 7800m"},
		{"fits: unchanged", []ContainerRecommendation{rec("app", 2000, gi)}, Amounts{}, Amounts{CPUMilli: 7800, MemoryBytes: 30 * gi},
			[]int64{2000}, []int64{gi}, ""},
		{"the other containers take their part", []ContainerRecommendation{rec("app", 8000, gi)}, Amounts{CPUMilli: 1000}, Amounts{CPUMilli: 8000, MemoryBytes: -1},
			[]int64{7000}, []int64{gi}, "app cpu 8000m -> 7000m"},
		{"two recommended containers share in proportion", []ContainerRecommendation{rec("app", 9000, gi), rec("sidecar", 3000, gi)}, Amounts{},
			Amounts{CPUMilli: 6000, MemoryBytes: -1}, []int64{4500, 1500}, []int64{gi, gi}, "app cpu 9000m -> 4500m; sidecar cpu 3000m -> 1500m"},
		{"memory too, rounded down so that the pod fits", []ContainerRecommendation{rec("a", 100, 3*gi), rec("b", 100, 3*gi)}, Amounts{},
			Amounts{CPUMilli: -1, MemoryBytes: 4*gi + 1}, []int64{100, 100}, []int64{2 * gi, 2 * gi}, "a memory"},
		{"no node information: no cap", []ContainerRecommendation{rec("app", 12000, 4*gi)}, Amounts{}, none, []int64{12000}, []int64{4 * gi}, ""},
		{"the others alone fill the node: nothing to gain", []ContainerRecommendation{rec("app", 12000, gi)}, Amounts{CPUMilli: 9000}, Amounts{CPUMilli: 8000, MemoryBytes: -1},
			[]int64{12000}, []int64{gi}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, caps := FitNode(tc.recs, tc.fixed, tc.room)
			var cpuSum, memSum int64
			for i, r := range got {
				if r.Target.CPUMilli != tc.wantCPU[i] || r.Target.MemoryBytes != tc.wantMemory[i] {
					t.Errorf("%s target %+v, want cpu %d memory %d", r.Container, r.Target, tc.wantCPU[i], tc.wantMemory[i])
				}
				if r.UpperBound.CPUMilli > r.Target.CPUMilli && r.Target.CPUMilli != tc.recs[i].Target.CPUMilli {
					t.Errorf("%s upper bound %d above the capped target %d", r.Container, r.UpperBound.CPUMilli, r.Target.CPUMilli)
				}
				if r.UncappedTarget != tc.recs[i].UncappedTarget {
					t.Errorf("%s uncapped target changed to %+v", r.Container, r.UncappedTarget)
				}
				cpuSum += r.Target.CPUMilli
				memSum += r.Target.MemoryBytes
			}
			if tc.caps != "" {
				if room := tc.room.CPUMilli; room >= 0 && tc.fixed.CPUMilli < room && cpuSum+tc.fixed.CPUMilli > room {
					t.Errorf("pod cpu %d + %d above the room %d", cpuSum, tc.fixed.CPUMilli, room)
				}
				if room := tc.room.MemoryBytes; room >= 0 && memSum > room {
					t.Errorf("pod memory %d above the room %d", memSum, room)
				}
			}
			var s []string
			for _, c := range caps {
				s = append(s, c.String())
			}
			if j := strings.Join(s, "; "); (tc.caps == "") != (j == "") || !strings.Contains(j, tc.caps) {
				t.Errorf("caps %q, want %q", j, tc.caps)
			}
		})
	}
}

func TestWithGlobalMax(t *testing.T) {
	p := WithGlobalMax(DefaultPolicy(), 2, 4<<30)
	if p.MaxCPU != 2 || p.MaxMemory != 4<<30 {
		t.Errorf("no maxAllowed: %+v, want the global maximum", p)
	}
	own := DefaultPolicy()
	own.MaxCPU = 1
	if p := WithGlobalMax(own, 2, 0); p.MaxCPU != 1 || p.MaxMemory >= 0 {
		t.Errorf("the VPA's own maxAllowed takes precedence, memory unset stays unset: %+v", p)
	}
}
