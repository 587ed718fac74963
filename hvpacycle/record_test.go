package hvpacycle

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// TestRecord: recording a decision writes every field a decision sets, once, and says what to tell: the first
// intent and a scaling (an intent that changed) are told and a scaling is recorded in lastScaling; an
// unchanged intent, or a workload at 0 replicas, tells nothing; a new block is recorded and told, the same
// block again keeps its record (its time) and is not told again; the HPA's record keeps its lastChangeTime
// while its desired replicas stay; Ready follows ScalingActive.
func TestRecord(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	before := metav1.NewTime(now.Add(-time.Hour))
	decision := func(from, to int32, cpuFrom, cpuTo float64) scaling.Decision {
		return scaling.Decision{CurrentReplicas: from, Replicas: to, Containers: []scaling.ContainerDecision{{Name: "app",
			Current: scaling.Container{Name: "app", Requests: scaling.V(cpuFrom, 1<<30)}, Requests: scaling.V(cpuTo, 1<<30)}},
			Conditions: []scaling.Condition{{Type: hvpav1alpha1.ConditionScalingActive, Status: metav1.ConditionTrue, Reason: "ScalingActive", Message: "deciding"}}}
	}
	inForce := func(replicas int32, cpu float64) *hvpav1alpha1.DesiredState {
		return decision(replicas, replicas, cpu, cpu).DesiredState()
	}
	blocked := func(d scaling.Decision, reason hvpav1alpha1.BlockReason) scaling.Decision {
		d.Blocked = []scaling.BlockedPart{{Part: "replicas", Direction: hvpav1alpha1.DirectionDown, Reason: reason, Message: "held"}}
		return d
	}
	withHPA := func(d scaling.Decision, desired int32) scaling.Decision {
		d.HPA = &scaling.HPARecord{Desired: desired}
		return d
	}
	inactive := func(d scaling.Decision) scaling.Decision {
		d.Conditions = []scaling.Condition{{Type: hvpav1alpha1.ConditionScalingActive, Status: metav1.ConditionFalse, Reason: "NoPods", Message: "no running pods"}}
		return d
	}
	type want struct {
		Told            Told
		LastScaling     string // its message; "-": none
		BlockedAt       time.Time
		HPAChangedAt    time.Time
		Ready           string // status/reason
		DesiredReplicas int32
	}
	// ahead is a scaling whose CPU total rose ahead of a burst of that period, and what it records: text says
	// when the burst came
	ahead := func(every time.Duration) scaling.Decision {
		d := decision(2, 3, 500, 1000)
		d.Totals = []scaling.Total{{Container: "app", Resource: scaling.CPU, Total: 3000, Source: scaling.SourceLoad, Replicas: 3, Ahead: true, AheadEvery: every}}
		return d
	}
	aheadTold := func(text string) want {
		msg := "replicas 2 -> 3; app cpu 500m -> 1; app cpu ahead of a burst that came at this time " + text
		return want{Told: Told{Scaled: msg}, LastScaling: msg, Ready: "True/Ready", DesiredReplicas: 3}
	}
	cases := map[string]struct {
		before hvpav1alpha1.HvpaStatus
		d      scaling.Decision
		want   want
	}{
		"the first intent": {d: decision(2, 2, 500, 500),
			want: want{Told: Told{Initial: "initial sizing intent: 2 replicas, app cpu 500m memory 1Gi"}, LastScaling: "-", Ready: "True/Ready", DesiredReplicas: 2}},
		"a scaling": {before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500)}, d: decision(2, 3, 500, 1000),
			want: want{Told: Told{Scaled: "replicas 2 -> 3; app cpu 500m -> 1"}, LastScaling: "replicas 2 -> 3; app cpu 500m -> 1", Ready: "True/Ready", DesiredReplicas: 3}},
		// a CPU total that rose ahead of a recurring burst says so (docs/design/scaling.md section 2a)
		"a scaling ahead of a recurring burst": {before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500)}, d: ahead(time.Hour),
			want: aheadTold("of each of the last 3 hours")},
		// the fall back from a recurring burst that has ended says so
		"a fall back from a recurring burst": {before: hvpav1alpha1.HvpaStatus{Desired: inForce(3, 1000)}, d: func() scaling.Decision {
			d := decision(3, 2, 1000, 500)
			d.Totals = []scaling.Total{{Container: "app", Resource: scaling.CPU, Total: 1000, Source: scaling.SourceLoad, Replicas: 2, Whole: true}}
			return d
		}(), want: func() want {
			msg := "replicas 3 -> 2; app cpu 1 -> 500m; app cpu back from a recurring burst that has ended"
			return want{Told: Told{Scaled: msg}, LastScaling: msg, Ready: "True/Ready", DesiredReplicas: 2}
		}()},
		"a scaling ahead of a burst every 6 hours": {before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500)}, d: ahead(6 * time.Hour),
			want: aheadTold("every 6h, the last 3 times")},
		"a scaling ahead of a daily burst": {before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500)}, d: ahead(24 * time.Hour),
			want: aheadTold("of each of the last 3 days")},
		"the same intent: nothing told, the last scaling kept": {
			before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500), LastScaling: &hvpav1alpha1.ScalingRecord{Time: before, Message: "earlier"}}, d: decision(2, 2, 500, 500),
			want: want{LastScaling: "earlier", Ready: "True/Ready", DesiredReplicas: 2}},
		"a workload at 0 replicas: nothing decided, nothing told": {before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500)}, d: decision(0, 0, 500, 500),
			want: want{LastScaling: "-", Ready: "True/Ready"}},
		"a new block is recorded and told": {before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500)}, d: blocked(decision(2, 2, 500, 500), hvpav1alpha1.BlockReasonMaintenanceWindow),
			want: want{Told: Told{Blocked: []hvpav1alpha1.BlockedPart{{Part: "replicas", Direction: hvpav1alpha1.DirectionDown, Reason: hvpav1alpha1.BlockReasonMaintenanceWindow, Message: "held"}},
				BlockedMessage: "replicas (MaintenanceWindow): held"}, LastScaling: "-", BlockedAt: now, Ready: "True/Ready", DesiredReplicas: 2}},
		"the same block again keeps its record and is not told": {
			before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500), LastBlockedScaling: &hvpav1alpha1.BlockedScaling{Time: before,
				Parts: []hvpav1alpha1.BlockedPart{{Part: "replicas", Direction: hvpav1alpha1.DirectionDown, Reason: hvpav1alpha1.BlockReasonMaintenanceWindow, Message: "held 3m ago"}}}},
			d:    blocked(decision(2, 2, 500, 500), hvpav1alpha1.BlockReasonMaintenanceWindow),
			want: want{LastScaling: "-", BlockedAt: before.Time, Ready: "True/Ready", DesiredReplicas: 2}},
		// found in review: a block, a scaling, then the same block again was silent (no event, the old record)
		"the same block after a scaling since is recorded and told again": {
			before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500), LastScaling: &hvpav1alpha1.ScalingRecord{Time: metav1.NewTime(before.Add(time.Minute)), Message: "earlier"},
				LastBlockedScaling: &hvpav1alpha1.BlockedScaling{Time: before,
					Parts: []hvpav1alpha1.BlockedPart{{Part: "replicas", Direction: hvpav1alpha1.DirectionDown, Reason: hvpav1alpha1.BlockReasonMaintenanceWindow, Message: "held"}}}},
			d: blocked(decision(2, 2, 500, 500), hvpav1alpha1.BlockReasonMaintenanceWindow),
			want: want{Told: Told{Blocked: []hvpav1alpha1.BlockedPart{{Part: "replicas", Direction: hvpav1alpha1.DirectionDown, Reason: hvpav1alpha1.BlockReasonMaintenanceWindow, Message: "held"}},
				BlockedMessage: "replicas (MaintenanceWindow): held"}, LastScaling: "earlier", BlockedAt: now, Ready: "True/Ready", DesiredReplicas: 2}},
		"the HPA's desired replicas unchanged: its change time kept": {
			before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500), HPA: &hvpav1alpha1.HpaStatus{DesiredReplicas: ptr.To[int32](2), LastChangeTime: &before}},
			d:      withHPA(decision(2, 2, 500, 500), 2),
			want:   want{LastScaling: "-", HPAChangedAt: before.Time, Ready: "True/Ready", DesiredReplicas: 2}},
		"the HPA's desired replicas changed: now": {
			before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500), HPA: &hvpav1alpha1.HpaStatus{DesiredReplicas: ptr.To[int32](2), LastChangeTime: &before}},
			d:      withHPA(decision(2, 2, 500, 500), 3),
			want:   want{LastScaling: "-", HPAChangedAt: now, Ready: "True/Ready", DesiredReplicas: 2}},
		"scaling not active: Ready false with its reason": {before: hvpav1alpha1.HvpaStatus{Desired: inForce(2, 500)}, d: inactive(decision(2, 2, 500, 500)),
			want: want{LastScaling: "-", Ready: "False/NoPods", DesiredReplicas: 2}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := tc.before
			got := want{Told: Record(&s, tc.d, 7, now, 2), LastScaling: "-"}
			if s.LastScaling != nil {
				got.LastScaling = s.LastScaling.Message
			}
			if s.LastBlockedScaling != nil {
				got.BlockedAt = s.LastBlockedScaling.Time.Time
			}
			if s.HPA != nil && s.HPA.LastChangeTime != nil {
				got.HPAChangedAt = s.HPA.LastChangeTime.Time
			}
			if c := meta.FindStatusCondition(s.Conditions, hvpav1alpha1.ConditionReady); c != nil {
				got.Ready = string(c.Status) + "/" + c.Reason
				if c.ObservedGeneration != 7 {
					t.Errorf("Ready's observedGeneration %d, want the Hvpa's generation 7", c.ObservedGeneration)
				}
			}
			if s.Desired != nil {
				got.DesiredReplicas = s.Desired.Replicas
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.d.HPA == nil && s.HPA != nil {
				t.Errorf("no HPA input, but status.hpa is %+v", s.HPA)
			}
		})
	}
}
