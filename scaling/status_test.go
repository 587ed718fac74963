package scaling

import (
	"encoding/json"
	"testing"
)

// TestIntervalStatusAround: status lists at most MaxStatusIntervals effective intervals, those around the
// current replicas, and all of them when there are no more (issue 31: 1,000 intervals made every Hvpa about
// 1.3 MiB to copy on each admission, pod event and updater loop).
func TestIntervalStatusAround(t *testing.T) {
	linear := mustIntervals(t, []Interval{{MaxReplicas: 1000, MaxResources: V(8000, 32*gi), Extrapolation: ExtrapolationLinear}}, 1, [NumResources]*ChangeParams{pct(30), pct(30)})
	cases := map[string]struct {
		iv            []EffectiveInterval
		replicas      int32
		first, last   int32
		wantIntervals int
	}{
		"all of the EP-0001 intervals":     {iv: mustIntervals(t, epIntervals(), 1, [NumResources]*ChangeParams{}), replicas: 3, first: 1, last: 5, wantIntervals: 5},
		"1,000 intervals at 1 replica":     {iv: linear, replicas: 1, first: 1, last: 21, wantIntervals: 21},
		"1,000 intervals at 500 replicas":  {iv: linear, replicas: 500, first: 490, last: 510, wantIntervals: 21},
		"1,000 intervals at 995 replicas":  {iv: linear, replicas: 995, first: 980, last: 1000, wantIntervals: 21},
		"1,000 intervals above the top":    {iv: linear, replicas: 5000, first: 980, last: 1000, wantIntervals: 21},
		"1,000 intervals at 0 replicas":    {iv: linear, replicas: 0, first: 1, last: 21, wantIntervals: 21},
		"exactly MaxStatusIntervals (21)":  {iv: linear[:21], replicas: 21, first: 1, last: 21, wantIntervals: 21},
		"one more than MaxStatusIntervals": {iv: linear[:22], replicas: 22, first: 2, last: 22, wantIntervals: 21},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := IntervalStatusAround(tc.iv, tc.replicas)
			if len(got) != tc.wantIntervals || got[0].Replicas != tc.first || got[len(got)-1].Replicas != tc.last {
				t.Fatalf("%d intervals from %d to %d replicas, want %d from %d to %d", len(got), got[0].Replicas, got[len(got)-1].Replicas, tc.wantIntervals, tc.first, tc.last)
			}
			for j := 1; j < len(got); j++ {
				if got[j].Replicas != got[j-1].Replicas+1 && len(tc.iv) > MaxStatusIntervals {
					t.Fatalf("interval %d: %d replicas after %d", j, got[j].Replicas, got[j-1].Replicas)
				}
			}
		})
	}
	raw, err := json.Marshal(IntervalStatusAround(linear, 500))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 4096 {
		t.Errorf("the status of 1,000 intervals takes %d bytes of JSON", len(raw))
	}
}
