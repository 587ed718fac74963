package closedloop

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// exampleHvpa reads the Hvpa of an example manifest.
func exampleHvpa(t testing.TB, path string) *hvpav1alpha1.Hvpa {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---") {
		if !strings.Contains(doc, "kind: Hvpa") {
			continue
		}
		h := &hvpav1alpha1.Hvpa{}
		if err := yaml.UnmarshalStrict([]byte(doc), h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	t.Fatalf("%s has no Hvpa", path)
	return nil
}

// closedLoop runs the hvpa policy with the given models on a demand and returns the simulator (series: a
// point per minute). It runs under the Instant actuation: these tests are about the Hvpa decision's own
// properties (docs/design/scaling.md), which the simulator tested with changes applied at once before it had an actuation
// model; how the policies fare with start-up delays, resize delays and restarts is TestPoliciesOnTheSameDemand's
// and the shoot-out's (docs/simulate.md).
func closedLoop(t testing.TB, h *hvpav1alpha1.Hvpa, d Demand, models ...Model) *Simulator {
	t.Helper()
	var trace bytes.Buffer
	if err := WriteDemand(&trace, d); err != nil {
		t.Fatal(err)
	}
	sim, err := New(Options{Models: models, HvpaFor: func(string, string) *hvpav1alpha1.Hvpa { return h }, SeriesStep: time.Minute, Actuation: Actuation{Instant: true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Run(&trace); err != nil {
		t.Fatal(err)
	}
	return sim
}

// expectedReplicas is what ONE decision from the workload total the model ends with gives: the first
// effective interval whose upper boundary holds it (section 3, from scratch), the max over resources.
func expectedReplicas(t testing.TB, sim *Simulator, h *hvpav1alpha1.Hvpa) int32 {
	t.Helper()
	spec, errs := scaling.FromHvpa(h)
	if len(errs) > 0 {
		t.Fatal(errs.ToAggregate())
	}
	w := sim.runs[0].workloads[wkey{"ns", "wl-0"}]
	recs, _ := w.hv.recommendation(w)
	iv, err := scaling.EffectiveIntervals(spec.Intervals, spec.MinReplicas, spec.Overlap)
	if err != nil {
		t.Fatal(err)
	}
	want := int32(0)
	for _, rec := range recs {
		var pCur scaling.Values
		for _, k := range w.hv.intent {
			if k.Name == rec.Name {
				pCur = k.Requests
			}
		}
		for _, r := range scaling.Resources {
			l, ok := rec.Load.Get(r)
			if !ok {
				continue
			}
			p, _ := pCur.Get(r)
			total := spec.VPATotal(r, l, w.desired, p)
			j := len(iv) - 1
			for i := range iv {
				if total <= iv[i].Up[r] {
					j = i
					break
				}
			}
			want = max(want, iv[j].Replicas)
		}
	}
	return max(want, spec.MinReplicas)
}

func replicasOf(s *Series) []int32 {
	out := make([]int32, len(s.Points))
	for i, p := range s.Points {
		out[i] = p.Replicas
	}
	return out
}

// monotone reports whether replicas never turn around (no flip-flop) and the index of the last change.
func monotone(r []int32) (bool, int) {
	dir, last := 0, 0
	for i := 1; i < len(r); i++ {
		d := int(r[i]) - int(r[i-1])
		if d == 0 {
			continue
		}
		last = i
		if d > 0 {
			d = 1
		} else {
			d = -1
		}
		if dir != 0 && d != dir {
			return false, last
		}
		dir = d
	}
	return true, last
}

// TestConstantLoadSettles: on the EP-0001 intervals, a constant load in every interval settles within two
// decisions on the replicas ONE decision from the model's total gives, with no overshoot and no
// flip-flop; the replica-blind per-pod model overshoots at 1.3 CPU (the example), the total model
// does not.
func TestConstantLoadSettles(t *testing.T) {
	h := exampleHvpa(t, "../examples/hvpa-kube-apiserver.yaml")
	cases := map[string]struct {
		cpu, memory float64 // millicores, bytes
		want        int32
		memRequest  float64 // of the first pod (default 2Gi)
	}{
		"interval 1 (0.3 CPU)":          {300, 600 << 20, 1, 0},
		"interval 2 (1.3 CPU)":          {1300, 2600 << 20, 2, 0},
		"interval 3 (3 CPU)":            {3000, 6 << 30, 3, 0},
		"interval 4 (8 CPU)":            {8000, 12 << 30, 4, 0},
		"interval 5 (20 CPU)":           {20000, 40 << 30, 5, 0},
		"memory drives (0.2 CPU, 10Gi)": {200, 10 << 30, 3, 16 << 30},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.memRequest == 0 {
				tc.memRequest = 2 << 30
			}
			sim := closedLoop(t, h, Demand{Shape: ShapeConstant, Workloads: 1, Pods: 1, Days: 0.25, Interval: time.Minute,
				CPU: tc.cpu, Memory: tc.memory, CPURequest: 500, MemoryRequest: tc.memRequest}, ModelTotal)
			r := replicasOf(sim.Series()[0])
			want := expectedReplicas(t, sim, h)
			if want != tc.want {
				t.Errorf("one decision from the total gives %d replicas, the table says %d", want, tc.want)
			}
			ok, last := monotone(r)
			if !ok {
				t.Errorf("replicas flip-flop: %v", r[:min(len(r), 20)])
			}
			if last > 2 {
				t.Errorf("last replica change at decision %d, want within 2: %v", last, r[:min(len(r), last+2)])
			}
			if r[len(r)-1] != want || slices.Max(r) != want {
				t.Errorf("replicas end at %d (max %d), want %d", r[len(r)-1], slices.Max(r), want)
			}
		})
	}
	t.Run("memory above the limit is found through OOM kills", func(t *testing.T) {
		// 20Gi of demand on one 2Gi pod: the working set stops at the limit, each kill bumps the memory
		// total (replicas x bump), and the workload grows until the demand fits, then stays
		sim := closedLoop(t, h, Demand{Shape: ShapeConstant, Workloads: 1, Pods: 1, Days: 0.25, Interval: time.Minute,
			CPU: 200, Memory: 20 << 30, CPURequest: 500, MemoryRequest: 2 << 30}, ModelTotal)
		sum := sim.Summaries()[0]
		r := replicasOf(sim.Series()[0])
		ok, last := monotone(r)
		if !ok || last > 10 || sum.OOMEvents == 0 || sum.MemoryShortfall > 0.02 { // the first four decisions, of 360
			t.Errorf("monotone %v, last change at decision %d, %d OOM kills, memory shortfall %.3f: %v", ok, last, sum.OOMEvents, sum.MemoryShortfall, r[:min(len(r), 12)])
		}
		if got, want := r[len(r)-1], expectedReplicas(t, sim, h); got != want {
			t.Errorf("ends at %d replicas, one decision from its total gives %d", got, want)
		}
	})
	t.Run("per-pod model overshoots at 1.3 CPU", func(t *testing.T) {
		d := Demand{Shape: ShapeConstant, Workloads: 1, Pods: 1, Days: 0.25, Interval: time.Minute, CPU: 1300, Memory: 2600 << 20, CPURequest: 500, MemoryRequest: 2 << 30}
		sums := closedLoop(t, h, d, ModelTotal, ModelPerPod).Summaries()
		if sums[0].Model != ModelTotal || sums[1].Model != ModelPerPod {
			t.Fatalf("summaries out of order (want the runs' order): %+v", sums)
		}
		if sums[1].FinalReplicas != 3 || sums[0].FinalReplicas != 2 {
			t.Errorf("final replicas per-pod %d, total %d; want 3 (replica-blind overshoot) and 2", sums[1].FinalReplicas, sums[0].FinalReplicas)
		}
	})
}

// TestModelsOnStepAndDiurnal: on step and diurnal demand (three workloads each, the EP-0001 Hvpa with its
// HPA), the total model (which follows the recent load, docs/design/scaling.md section 2) provides less CPU
// per demand than the per-pod model across the workloads, and per workload at most one histogram bucket
// (x1.05) more, with at most one point more shortfall. What following the load costs is bounded, not hidden:
// at most 2 replica changes a day (the per-pod model, which holds near the daily peak, makes 0.67), and on a
// 5x memory step every 6 h at most three times the per-pod model's OOM kills plus 8 (measured: 16 against 8,
// 32 against 8, 44 against 16, all at the first step, over 3 to 5 minutes): in its first day the total holds
// memory at the long history's target, 15% above the usage, and a 5x step is found through kills until the
// resizes catch up; the per-pod model holds its day's peak. Before the noise-proof trend (section 2a's
// change log) the counts were 8, 20 and 28: a memory trend read from noise held about 12% more memory
// before the step (2.39 GiB against 2.13 on wl-1), which the noise-proof trend gives back. Before the
// load-following total the OOM kills were as few as the per-pod model's, at 1.5x its CPU slack.
func TestModelsOnStepAndDiurnal(t *testing.T) {
	h := exampleHvpa(t, "../examples/hvpa-kube-apiserver.yaml")
	shapes := map[string]Demand{
		"step": {Shape: ShapeStep, Workloads: 3, Spread: 1, Pods: 1, Days: 3, Interval: time.Minute, CPU: 400, Memory: 1 << 30,
			StepCPU: 2500, StepMemory: 5 << 30, StepEvery: 6 * time.Hour, Noise: 0.1, CPURequest: 500, MemoryRequest: 2 << 30, Seed: 1},
		"diurnal": {Shape: ShapeDiurnal, Workloads: 3, Spread: 1, Pods: 1, Days: 3, Interval: time.Minute, CPU: 1500, Memory: 3 << 30,
			Amplitude: 0.6, Noise: 0.1, CPURequest: 500, MemoryRequest: 2 << 30, Seed: 1},
	}
	for name, d := range shapes {
		t.Run(name, func(t *testing.T) {
			sim := closedLoop(t, h, d, ModelTotal, ModelPerPod)
			sums := sim.Summaries()
			{
				var ratio [2]float64
				for i, r := range sim.runs {
					var provided, demand float64
					for _, w := range r.workloads {
						provided, demand = provided+w.cpuTally.provided, demand+w.cpuTally.demand
					}
					ratio[i] = provided / demand
				}
				t.Logf("cpu provided/demand across the workloads: total %.4f, per-pod %.4f", ratio[0], ratio[1])
				if ratio[0] > ratio[1] {
					t.Errorf("cpu provided/demand across the workloads: total %.4f above per-pod %.4f", ratio[0], ratio[1])
				}
			}
			if len(sums) != 2*d.Workloads {
				t.Fatalf("%d summaries, want %d", len(sums), 2*d.Workloads)
			}
			for i := 0; i < len(sums); i += 2 {
				total, perPod := sums[i], sums[i+1]
				if perPod.Model != ModelPerPod || total.Model != ModelTotal || perPod.Workload != total.Workload {
					t.Fatalf("summaries out of order: %+v %+v", perPod, total)
				}
				t.Logf("%s total   %+v", total.Workload, total)
				t.Logf("%s per-pod %+v", perPod.Workload, perPod)
				if total.CPUProvidedOverDemand > perPod.CPUProvidedOverDemand*1.05 {
					t.Errorf("%s: cpu provided/demand %.3f (total) above %.3f (per-pod)", total.Workload, total.CPUProvidedOverDemand, perPod.CPUProvidedOverDemand)
				}
				if total.CPUShortfall > perPod.CPUShortfall+0.01 || total.MemoryShortfall > perPod.MemoryShortfall+0.01 {
					t.Errorf("%s: shortfall cpu %.4f memory %.4f (total) vs %.4f %.4f (per-pod)", total.Workload, total.CPUShortfall, total.MemoryShortfall, perPod.CPUShortfall, perPod.MemoryShortfall)
				}
				if total.OOMEvents > 3*perPod.OOMEvents+8 {
					t.Errorf("%s: %d OOM kills (total) vs %d (per-pod)", total.Workload, total.OOMEvents, perPod.OOMEvents)
				}
				if total.ReplicaChangesPerDay > 2 {
					t.Errorf("%s: %.2f replica changes per day (total), at most 2 (per-pod: %.2f)", total.Workload, total.ReplicaChangesPerDay, perPod.ReplicaChangesPerDay)
				}
			}
		})
	}
}

// FuzzConstantLoad: over load levels, interval sets, overlaps and bases, a constant load in closed loop
// (total model) never flip-flops, settles within a few decisions, and never overshoots the replicas it
// settles on.
func FuzzConstantLoad(f *testing.F) {
	f.Add(uint16(1300), uint16(2600), uint8(3), uint8(30), uint8(50), uint8(1))
	f.Add(uint16(20000), uint16(100), uint8(5), uint8(0), uint8(0), uint8(2))
	f.Add(uint16(700), uint16(40000), uint8(2), uint8(90), uint8(200), uint8(4))
	f.Fuzz(func(t *testing.T, cpu, memMi uint16, intervals, overlap, base, pods uint8) {
		n := int(intervals%6) + 1
		var b strings.Builder
		fmt.Fprintf(&b, "spec:\n  targetRef: {apiVersion: apps/v1, kind: Deployment, name: wl-0}\n  vpa: {deploy: true}\n  scalingIntervals:\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "    - maxReplicas: %d\n      maxResources: {cpu: %dm, memory: %dMi}\n", 2*i+1, 500<<i, 1024<<i)
		}
		pct := overlap % 95
		fmt.Fprintf(&b, "  scalingIntervalsOverlap: {cpu: {percentage: %d}, memory: {percentage: %d}}\n", pct, pct)
		if base > 0 {
			fmt.Fprintf(&b, "  baseResourcesPerReplica: {cpu: {value: %dm, percentage: 5}}\n", base)
		}
		b.WriteString("  scaleUp: {updatePolicy: {updateMode: Auto}}\n  scaleDown: {updatePolicy: {updateMode: Auto}}\n")
		h := &hvpav1alpha1.Hvpa{}
		if err := yaml.UnmarshalStrict([]byte(b.String()), h); err != nil {
			t.Fatal(err)
		}
		h.Name = "fuzz"
		if _, errs := scaling.FromHvpa(h); len(errs) > 0 {
			t.Skip(errs.ToAggregate().Error())
		}
		sim := closedLoop(t, h, Demand{Shape: ShapeConstant, Workloads: 1, Pods: int(pods%4) + 1, Days: 2.0 / 24, Interval: time.Minute,
			CPU: float64(cpu%30000) + 10, Memory: float64(memMi)*(1<<20) + 1<<20, CPURequest: 500, MemoryRequest: 64 << 30}, ModelTotal)
		r := replicasOf(sim.Series()[0])
		ok, last := monotone(r)
		if !ok {
			t.Fatalf("replicas flip-flop: %v", r[:min(len(r), 30)])
		}
		if last > 3 {
			t.Fatalf("last replica change at decision %d: %v", last, r[:min(len(r), last+2)])
		}
		if final := r[len(r)-1]; slices.Max(r) > max(final, r[0]) {
			t.Fatalf("overshoot: max %d, final %d: %v", slices.Max(r), final, r[:min(len(r), 30)])
		}
	})
}
