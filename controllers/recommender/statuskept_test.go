package recommender

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
)

// TestStatusKeptSaysTheCRDDropsBursts checks that a stored HvpaCheckpoint whose answer lacks the recurring
// bursts, or the burst ahead, it was sent (a CRD of an earlier version prunes them) is said once in the log
// for each, with the fix, and that the status still counts as kept.
func TestStatusKeptSaysTheCRDDropsBursts(t *testing.T) {
	var logged []string
	ctx := logr.NewContext(context.Background(), funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{}))
	now := metav1.NewTime(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
	vpa := vpav1.VerticalPodAutoscalerCheckpointStatus{LastUpdateTime: now, Version: CheckpointVersion, TotalSamplesCount: 10}
	sent := hvpav1alpha1.HvpaCheckpointStatus{VerticalPodAutoscalerCheckpointStatus: vpa,
		CPUBursts:     []hvpav1alpha1.CPUBurst{{Start: now, Minutes: 4, PeakMilliCores: 2000}},
		CPUBurstAhead: &hvpav1alpha1.CPUBurstAhead{From: now, To: now, LevelMilliCores: 2000}}
	stored := func(s hvpav1alpha1.HvpaCheckpointStatus) *hvpav1alpha1.HvpaCheckpoint {
		return &hvpav1alpha1.HvpaCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "wl-app"}, Status: s}
	}
	r := &Recommender{statusModes: map[string]statusMode{}}
	if !r.statusKept(ctx, hvpav1alpha1.KindHvpaCheckpoint, stored(sent), sent) || len(logged) != 0 {
		t.Fatalf("a status stored whole: kept false or logged %v", logged)
	}
	// storedTwice stores a status twice and checks that it counts as kept and that one more line was logged,
	// saying what the CRD dropped, with the fix and the checkpoint
	storedTwice := func(s hvpav1alpha1.HvpaCheckpointStatus, dropped string) {
		t.Helper()
		for range 2 {
			if !r.statusKept(ctx, hvpav1alpha1.KindHvpaCheckpoint, stored(s), sent) {
				t.Fatalf("a status stored without %s is not kept", dropped)
			}
		}
		if n := len(logged); n == 0 || !strings.Contains(logged[n-1], "drops "+dropped) || !strings.Contains(logged[n-1], "charts/hvpa/crds") ||
			!strings.Contains(logged[n-1], "ns/wl-app") {
			t.Fatalf("logged %q, want once that the CRD drops %s, with the fix and the checkpoint", logged, dropped)
		}
	}
	// a CRD of session 25 keeps the bursts and drops the burst ahead
	noAhead := sent
	noAhead.CPUBurstAhead = nil
	storedTwice(noAhead, "status.cpuBurstAhead")
	if len(logged) != 1 {
		t.Fatalf("logged %q, want one line", logged)
	}
	storedTwice(hvpav1alpha1.HvpaCheckpointStatus{VerticalPodAutoscalerCheckpointStatus: vpa}, "status.cpuMinutes and status.cpuBursts")
	if len(logged) != 2 {
		t.Errorf("logged %q, want one line more", logged)
	}
}

// TestWarnInterval checks that a --recommender-interval longer than the sample period recurring bursts are read
// from (recommender.RecurSampleEvery) is said once in the log, with the interval, and a shorter one is not.
func TestWarnInterval(t *testing.T) {
	for _, tc := range []struct {
		interval time.Duration
		warn     bool
	}{{30 * time.Second, false}, {time.Minute, false}, {2 * time.Minute, false}, {3 * time.Minute, true}, {10 * time.Minute, true}} {
		var logged []string
		warnInterval(funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{}), tc.interval)
		if got := len(logged) == 1 && strings.Contains(logged[0], "recurring burst") && strings.Contains(logged[0], tc.interval.String()); got != tc.warn || len(logged) > 1 {
			t.Errorf("interval %s: logged %q, want a warning naming it: %v", tc.interval, logged, tc.warn)
		}
	}
}

// TestLoadAggregateReadsOnlyItsVersion: a checkpoint of another version than CheckpointVersion (or none) is not
// read, as upstream's recommender refuses it (found in review: any version was read as v3's buckets).
func TestLoadAggregateReadsOnlyItsVersion(t *testing.T) {
	m, err := recommender.NewModel(recommender.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	a := m.NewAggregate()
	m.AddCPU(m.NewContainer(a), now.Add(-time.Hour), 0.5)
	status := CheckpointStatus(m.SaveAggregate(a, nil, now), now)
	if _, err := loadAggregate(m, status, now); err != nil {
		t.Fatalf("a %s checkpoint: %v", CheckpointVersion, err)
	}
	for _, v := range []string{"", "v2", "v4"} {
		status.Version = v
		if _, err := loadAggregate(m, status, now); err == nil || !strings.Contains(err.Error(), "only v3 is read") {
			t.Errorf("version %q: %v, want refused", v, err)
		}
	}
}
