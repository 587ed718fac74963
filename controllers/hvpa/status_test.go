package hvpa

import (
	"testing"
	"time"

	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// TestRecordBoundsIntervals: the status a decision writes lists at most scaling.MaxStatusIntervals effective
// intervals, around the replicas applied, and says how many there are (issue 31: an Hvpa with a linear
// interval to 1,000 replicas carried all 1,000 in status).
func TestRecordBoundsIntervals(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	r := NewReconciler(nil, nil, record.NewFakeRecorder(10), clocktesting.NewFakeClock(now), time.Minute, nil)
	iv, err := scaling.EffectiveIntervals([]scaling.Interval{{MaxReplicas: 1000, MaxResources: scaling.V(8000, 32<<30), Extrapolation: scaling.ExtrapolationLinear}},
		1, [scaling.NumResources]*scaling.ChangeParams{})
	if err != nil {
		t.Fatal(err)
	}
	h := wrappers.MakeHvpa("ns", "web").Obj()
	r.record(&scaleOp{}, h, scaling.Decision{Intervals: iv, CurrentReplicas: 400, DesiredReplicas: 420, Replicas: 420}, scaling.State{Now: now, Replicas: 400}, now, 400)
	got := h.Status.EffectiveScalingIntervals
	if len(got) != scaling.MaxStatusIntervals || got[0].Replicas != 410 || got[len(got)-1].Replicas != 430 || h.Status.EffectiveScalingIntervalCount != 1000 {
		t.Fatalf("status lists %d intervals (%d to %d replicas), count %d; want %d around 420 replicas, count 1000",
			len(got), got[0].Replicas, got[len(got)-1].Replicas, h.Status.EffectiveScalingIntervalCount, scaling.MaxStatusIntervals)
	}
}
