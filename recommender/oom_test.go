package recommender

import (
	"math"
	"testing"
	"time"
)

// TestOOMBumpOneRule: the bump is max(used + 100Mi, 1.2 x used), and every path that records an OOM kill uses
// it exactly: a 128Mi container, where the minimum bump (228Mi) is above the ratio's (153.6Mi), and a 1000Mi
// one, where the ratio's is (1200Mi against 1100Mi).
func TestOOMBumpOneRule(t *testing.T) {
	m := mustModel(t)
	for _, tc := range []struct {
		name       string
		used, want float64
	}{
		{"128Mi: the minimum bump dominates", 128 * mi, 228 * mi},
		{"1000Mi: the ratio dominates", 1000 * mi, 1200 * mi},
		{"nothing used: the minimum bump", 0, 100 * mi},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := m.Config.OOMBump(tc.used); got != tc.want {
				t.Errorf("Config.OOMBump(%v Mi) = %v Mi, want %v Mi", tc.used/mi, got/mi, tc.want/mi)
			}
			// the per-pod model: the OOM's peak of the window
			c := m.NewContainer(m.NewAggregate())
			if err := m.RecordOOM(c, t0, tc.used); err != nil {
				t.Fatal(err)
			}
			if got, _ := c.OpenWindowPeak(); got != tc.want {
				t.Errorf("Model.RecordOOM: window peak %v Mi, want %v Mi", got/mi, tc.want/mi)
			}
			// an Hvpa's workload total: 3 pods, all serving, each needing the killed pod's bump above a 28Mi base
			s := NewState()
			total := s.Total(m, OwnerKey{Namespace: "ns", Owner: "Hvpa/web", Container: "app"}, t0)
			total.RecordPodOOM(t0, 3, 3, tc.used, 28*mi)
			if got, want := total.OpenWindowPeak(), 3*(tc.want-28*mi); got != want {
				t.Errorf("WorkloadTotal.RecordPodOOM: window load %v Mi, want %v Mi", got/mi, want/mi)
			}
		})
	}
}

// TestOOMOfAPodServingAlone: a kill while only some of the workload's pods served (the others starting or in
// back-off) says what the load was over the pods that served: the memory history records serving x need,
// the recent load pods x need (the next decisions size every pod for what one carried alone). Serving is
// clamped to [1, pods].
func TestOOMOfAPodServingAlone(t *testing.T) {
	m := mustModel(t)
	need := m.Config.OOMBump(1000*mi) - 28*mi
	for _, tc := range []struct {
		name                    string
		pods, serving           int
		wantHistory, wantRecent float64
	}{
		{"1 of 4 serving", 4, 1, need, 4 * need},
		{"3 of 4 serving", 4, 3, 3 * need, 4 * need},
		{"all serving", 4, 4, 4 * need, 4 * need},
		{"none counted serving: the killed one served", 4, 0, need, 4 * need},
		{"more serving than pods: the pods", 2, 5, 2 * need, 2 * need},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewState()
			total := s.Total(m, OwnerKey{Namespace: "ns", Owner: "Hvpa/web", Container: "app"}, t0.Add(-time.Minute))
			// the minute before, the load was 80% of what the kill says the serving pods needed: a rise of 25%,
			// however many pods the next decisions size for
			total.AddLoad(t0.Add(-time.Minute), 0.1, tc.wantHistory/1.25)
			total.RecordPodOOM(t0, tc.pods, tc.serving, 1000*mi, 28*mi)
			if got := total.OpenWindowPeak(); got != tc.wantHistory {
				t.Errorf("history's window load %v Mi, want %v Mi", got/mi, tc.wantHistory/mi)
			}
			load, _ := s.WorkloadRecommendation("ns", "Hvpa/web", func(string) Policy { return DefaultPolicy() })
			if len(load) != 1 || len(load[0].Recent) != 2 || load[0].Recent[1].MemoryBytes != tc.wantRecent {
				t.Fatalf("recent load %+v, want the kill's sample of %v Mi", load, tc.wantRecent/mi)
			}
			if got := load[0].MemoryRise; math.Abs(got-0.25) > 1e-9 {
				t.Errorf("memory rise %v, want 0.25 (what the serving pods needed over the load before)", got)
			}
		})
	}
}

// TestOOMBeforeTheFirstCPUSample: a container OOM-killed before it reported any CPU usage still gets a memory
// recommendation (the bump, with the safety margin), and no CPU recommendation: there is nothing to make one
// from, and the pod minimum would be a guess.
func TestOOMBeforeTheFirstCPUSample(t *testing.T) {
	m := mustModel(t)
	a := m.NewAggregate()
	c := m.NewContainer(a)
	if err := m.RecordOOM(c, t0, 128*mi); err != nil {
		t.Fatal(err)
	}
	if a.IsEmpty() || a.HasCPU() {
		t.Fatalf("after an OOM kill alone: empty %v, has CPU %v; want history without CPU", a.IsEmpty(), a.HasCPU())
	}
	rec, ok := m.Recommend(a, 1, DefaultPolicy())
	if !ok {
		t.Fatal("no recommendation after an OOM kill before the first CPU sample")
	}
	// the end of 228Mi's histogram bucket, +15%, truncated as upstream does
	b := m.memOpts.Bucket(228 * mi)
	want := float64(scaleAmount(amount(m.memOpts.Start(b+1)), 1.15))
	if got := float64(rec.Target.MemoryBytes); got != want {
		t.Errorf("memory target %v Mi, want %v Mi (the bump's bucket end + 15%%)", got/mi, want/mi)
	}
	if rec.Target.CPUMilli != -1 || rec.LowerBound.CPUMilli != -1 || rec.UpperBound.CPUMilli != -1 || rec.UncappedTarget.CPUMilli != -1 {
		t.Errorf("CPU recommended without a CPU sample: %+v", rec)
	}
	recs, conf := m.RecommendPod(map[string]*Aggregate{"app": a, "idle": m.NewAggregate()}, func(string) Policy { return DefaultPolicy() })
	if len(recs) != 1 || recs[0].Container != "app" || recs[0].Target != rec.Target || conf != 0 {
		t.Errorf("RecommendPod: %+v, confidence %v; want app's memory-only recommendation at confidence 0", recs, conf)
	}
	memOnly := DefaultPolicy()
	memOnly.ControlMem = false
	if _, ok := m.Recommend(a, 1, memOnly); ok {
		t.Error("a recommendation without a CPU sample and with memory not controlled")
	}
	// the workload total of an Hvpa: memory load, no CPU load
	s := NewState()
	total := s.Total(m, OwnerKey{Namespace: "ns", Owner: "Hvpa/web", Container: "app"}, t0)
	total.RecordPodOOM(t0, 2, 2, 128*mi, 0)
	load, _ := s.WorkloadRecommendation("ns", "Hvpa/web", func(string) Policy { return DefaultPolicy() })
	b = m.memOpts.Bucket(2 * 228 * mi)
	if want := scaleAmount(amount(m.memOpts.Start(b+1)), 1.15); len(load) != 1 || load[0].Target.CPUMilli != -1 || load[0].Target.MemoryBytes != want {
		t.Errorf("workload load after an OOM kill alone: %+v, want memory %v Mi (2 x 228Mi's bucket end + 15%%) and no CPU", load, float64(want)/mi)
	}
}
