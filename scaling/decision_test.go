package scaling

import (
	"strings"
	"testing"
	"time"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

func TestDesiredReplicas(t *testing.T) {
	cases := map[string]struct {
		c                  int32
		totalCPU, totalMem float64 // base units; -1: no recommendation for that resource
		want               int32
	}{
		"(1, cpu 2.5) scales up to 3":              {c: 1, totalCPU: 2500, totalMem: -1, want: 3},
		"(4, cpu 4.1) scales down to 3":            {c: 4, totalCPU: 4100, totalMem: -1, want: 3},
		"(4, cpu 4.2) stays: on the down boundary": {c: 4, totalCPU: 4200, totalMem: -1, want: 4},
		"(2, cpu 2.0) stays: on the up boundary":   {c: 2, totalCPU: 2000, totalMem: -1, want: 2},
		"(2, cpu 2.001) scales up to 3":            {c: 2, totalCPU: 2001, totalMem: -1, want: 3},
		"(5, cpu 0.3) scales down to 1":            {c: 5, totalCPU: 300, totalMem: -1, want: 1},
		"(5, cpu 1.0) lands on the last valid":     {c: 5, totalCPU: 1000, totalMem: -1, want: 2},
		// a descent that lands exactly on a lower interval's down boundary stays in that interval
		"(5, cpu 4.2) lands on 4: its down boundary":    {c: 5, totalCPU: 4200, totalMem: -1, want: 4},
		"(5, cpu 4.199) lands on 3: below 4's down":     {c: 5, totalCPU: 4199, totalMem: -1, want: 3},
		"(4, cpu 1.4) lands on 3: its down boundary":    {c: 4, totalCPU: 1400, totalMem: -1, want: 3},
		"(3, cpu 0.35) lands on 2: its down boundary":   {c: 3, totalCPU: 350, totalMem: -1, want: 2},
		"(5, mem 44.8Gi) stays: on its down boundary":   {c: 5, totalCPU: -1, totalMem: 44.8 * gi, want: 5},
		"(5, mem 16.8Gi) lands on 4: its down boundary": {c: 5, totalCPU: -1, totalMem: 16.8 * gi, want: 4},
		"cpu says 3, memory says 4 -> 4":                {c: 1, totalCPU: 2500, totalMem: 30 * gi, want: 4},
		"memory says 1, cpu says 3 -> 3":                {c: 3, totalCPU: 5000, totalMem: 1 * gi, want: 3},
		"saturated: above the top stays at 5":           {c: 3, totalCPU: 50000, totalMem: -1, want: 5},
		"replicas between intervals: from 0":            {c: 7, totalCPU: 2500, totalMem: -1, want: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := decideSettled(t, epSpec(), vpaState(tc.c, V(1000, 4*gi), tc.totalCPU, tc.totalMem))
			if d.DesiredReplicas != tc.want || d.Replicas != tc.want {
				t.Errorf("desired %d applied %d, want %d (totals %+v)", d.DesiredReplicas, d.Replicas, tc.want, d.Totals)
			}
		})
	}
}

func TestBaseBudgeting(t *testing.T) {
	// docs/design/scaling.md section 4: 1 x 0.5 cpu, VPA uncapped 1.6, base 50m/5% -> 2 x 0.825.
	s := epSpec()
	s.Base[CPU] = valPct(50, 5)
	d := mustDecide(t, s, vpaState(1, V(500, -1), 1600, -1))
	if d.Replicas != 2 {
		t.Fatalf("replicas %d, want 2", d.Replicas)
	}
	if got := request(t, d, "app", CPU); got != 825 {
		t.Errorf("per-pod cpu %vm, want 825m", got)
	}
}

func TestPerPodValues(t *testing.T) {
	cases := map[string]struct {
		spec    func(*Spec)
		c       int32
		req     Values
		total   float64
		wantR   int32
		wantCPU float64
	}{
		"same replicas: p = T / c":      {c: 3, req: V(1000, -1), total: 4500, wantR: 3, wantCPU: 1500},
		"scale-out never shrinks a pod": {c: 1, req: V(500, -1), total: 600, wantR: 2, wantCPU: 500},
		"scale-in conserves the total":  {c: 4, req: V(1000, -1), total: 4000, wantR: 3, wantCPU: 1334},
		"scale-in with base budgeting": {spec: func(s *Spec) { s.Base[CPU] = valPct(50, 5) }, c: 4, req: V(1000, -1), total: 4000,
			// baseCur = 50*4 = 200; naive = 4000/3; baseNew = 3*max(50, 66.67) = 200; adj = 4000/3
			wantR: 3, wantCPU: 1334},
		"capped to maxAllowed": {spec: func(s *Spec) {
			s.Policies = []ContainerPolicy{{Name: "app", Controlled: [NumResources]bool{true, true}, MaxAllowed: V(1200, -1)}}
		}, c: 3, req: V(1000, -1), total: 4500, wantR: 3, wantCPU: 1200},
		// 1.5 CPU is below 3 pods at minAllowed (2.4) less the overlap (1.68): 2 pods at minAllowed
		"raised to minAllowed, one pod fewer": {spec: func(s *Spec) {
			s.Policies = []ContainerPolicy{{Name: "*", Controlled: [NumResources]bool{true, true}, MinAllowed: V(800, -1)}}
		}, c: 3, req: V(1000, -1), total: 1500, wantR: 2, wantCPU: 800},
		"raised to minAllowed": {spec: func(s *Spec) {
			s.Policies = []ContainerPolicy{{Name: "*", Controlled: [NumResources]bool{true, true}, MinAllowed: V(600, -1)}}
		}, c: 3, req: V(1000, -1), total: 1500, wantR: 3, wantCPU: 600},
		"capped to the interval's per-pod max": {c: 1, req: V(500, -1), total: 40000, wantR: 5, wantCPU: 8000},
		"first sizing skips the budgeting": {spec: func(s *Spec) { s.Base[CPU] = valPct(50, 5) }, c: 1, req: Values{}, total: 1600, wantR: 2,
			wantCPU: 800},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := epSpec()
			if tc.spec != nil {
				tc.spec(s)
			}
			d := decideSettled(t, s, vpaState(tc.c, tc.req, tc.total, -1))
			if d.Replicas != tc.wantR {
				t.Fatalf("replicas %d, want %d", d.Replicas, tc.wantR)
			}
			if got := request(t, d, "app", CPU); got != tc.wantCPU {
				t.Errorf("per-pod cpu %vm, want %vm (notes %v)", got, tc.wantCPU, d.Containers[0].Notes)
			}
		})
	}
}

func TestHorizontalOnlyPinsPerPod(t *testing.T) {
	s := epSpec()
	s.Intervals = []Interval{{MaxReplicas: 2, MaxResources: V(1000, gi)}, {MaxReplicas: 5, MaxResources: V(2000, 2*gi), Extrapolation: ExtrapolationHorizontalOnly}}
	d := mustDecide(t, s, vpaState(2, V(1000, gi), 7000, -1))
	if d.Replicas != 4 || request(t, d, "app", CPU) != 2000 {
		t.Errorf("got %d x %vm, want 4 x 2000m", d.Replicas, request(t, d, "app", CPU))
	}
}

func TestContainerPolicies(t *testing.T) {
	s := epSpec()
	s.Policies = []ContainerPolicy{
		{Name: "sidecar", Off: true},
		{Name: "*", Controlled: [NumResources]bool{true, false}, ControlledValues: RequestsAndLimits},
	}
	st := vpaState(1, V(500, gi), 1600, 30*gi)
	st.Containers = append(st.Containers, Container{Name: "sidecar", Requests: V(100, gi)})
	st.Recommendation = append(st.Recommendation, Recommendation{Name: "sidecar", UncappedTarget: V(90000, 90*gi)})
	d := mustDecide(t, s, st)
	if d.Replicas != 2 {
		t.Errorf("replicas %d, want 2: only app's cpu counts (memory uncontrolled, sidecar Off)", d.Replicas)
	}
	if len(d.Containers) != 1 || d.Containers[0].Name != "app" {
		t.Fatalf("containers %+v, want only app", d.Containers)
	}
	if mem, _ := d.Containers[0].Requests.Get(Memory); mem != gi {
		t.Errorf("uncontrolled memory changed to %v", mem)
	}
}

func TestGating(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	recent := now.Add(-time.Minute)
	night := &Window{Begin: 22 * 3600, End: 6 * 3600}
	type want struct {
		replicas int32
		cpu      float64
		reasons  []string // "part:direction:reason"
	}
	cases := map[string]struct {
		spec  func(*Spec)
		state func(*State)
		c     int32
		total float64
		want  want
	}{
		"Auto applies": {c: 1, total: 1600, want: want{2, 800, nil}},
		// the per-pod value recomputed for 1 replica is capped at that interval's 500m: no per-pod change
		"scaleUp Off blocks replicas": {spec: func(s *Spec) { s.ScaleUp.Mode = UpdateModeOff }, c: 1, total: 1600,
			want: want{1, 500, []string{"replicas:Up:UpdatePolicy"}}},
		"scaleUp Off blocks a per-pod increase": {spec: func(s *Spec) { s.ScaleUp.Mode = UpdateModeOff }, c: 3, total: 4500,
			want: want{3, 1000, []string{"app/cpu:Up:UpdatePolicy"}}},
		"scaleDown Off leaves scale-up alone": {spec: func(s *Spec) { s.ScaleDown.Mode = UpdateModeOff }, c: 1, total: 1600, want: want{2, 800, nil}},
		"maintenance window closed": {spec: func(s *Spec) { s.ScaleDown.Mode, s.Window = UpdateModeMaintenanceWindow, night }, c: 4, total: 1000,
			want: want{4, 1000, []string{"replicas:Down:MaintenanceWindow", "app/cpu:Down:MaintenanceWindow"}}},
		"maintenance window open after midnight (wraps)": {spec: func(s *Spec) { s.ScaleDown.Mode, s.Window = UpdateModeMaintenanceWindow, night },
			state: func(st *State) { st.Now = time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC) }, c: 4, total: 1000, want: want{2, 500, nil}},
		"stabilization blocks": {spec: func(s *Spec) { s.ScaleUp.Stabilization = 3 * time.Minute }, state: func(st *State) { st.LastScaleTime = &recent },
			c: 3, total: 4500, want: want{3, 1000, []string{"app/cpu:Up:StabilizationWindow"}}},
		"stabilization over": {spec: func(s *Spec) { s.ScaleUp.Stabilization = 30 * time.Second }, state: func(st *State) { st.LastScaleTime = &recent },
			c: 1, total: 1600, want: want{2, 800, nil}},
		"OOM urgency skips stabilization": {spec: func(s *Spec) { s.ScaleUp.Stabilization = 3 * time.Minute },
			state: func(st *State) { st.LastScaleTime, st.OOMSinceLastScaling = &recent, true }, c: 1, total: 1600, want: want{2, 800, nil}},
		"OOM urgency never skips updateMode": {spec: func(s *Spec) { s.ScaleUp.Mode = UpdateModeOff },
			state: func(st *State) { st.OOMSinceLastScaling = true }, c: 3, total: 4500,
			want: want{3, 1000, []string{"app/cpu:Up:UpdatePolicy"}}},
		"minChange: the smaller of value and percentage": {spec: func(s *Spec) { s.ScaleUp.MinChange[CPU] = valPct(300, 80) },
			// total 3000 -> 3300: change 300; threshold min(300, 2400) = 300: not below, applied
			c: 3, total: 3300, want: want{3, 1100, nil}},
		"minChange blocks a small change": {spec: func(s *Spec) { s.ScaleUp.MinChange[CPU] = valPct(300, 80) },
			c: 3, total: 3200, want: want{3, 1000, []string{"app/cpu:Up:MinChange"}}},
		"minChange percentage only": {spec: func(s *Spec) { s.ScaleUp.MinChange[CPU] = pct(10) },
			c: 3, total: 3200, want: want{3, 1000, []string{"app/cpu:Up:MinChange"}}},
		"OOM urgency skips minChange": {spec: func(s *Spec) { s.ScaleUp.MinChange[CPU] = valPct(300, 80) },
			state: func(st *State) { st.OOMSinceLastScaling = true }, c: 3, total: 3200, want: want{3, 1067, nil}},
		// 1 pod of 2000m (above the 1-replica interval), VPA total 1600: 2 replicas wanted but blocked; recomputed
		// for 1 replica the pod shrinks to the interval's 500m (a scale-down, allowed). Without the recompute it
		// would keep 1000m, the per-pod value meant for 2 replicas.
		"replicas blocked: per-pod recomputed for the current replicas": {spec: func(s *Spec) { s.ScaleUp.Mode = UpdateModeOff },
			state: func(st *State) { st.Containers[0].Requests = V(2000, -1) }, c: 1, total: 1600,
			want: want{1, 500, []string{"replicas:Up:UpdatePolicy"}}},
		"scaleDown Off keeps a per-pod decrease": {spec: func(s *Spec) { s.ScaleDown.Mode = UpdateModeOff }, c: 2, total: 1500,
			want: want{2, 1000, []string{"app/cpu:Down:UpdatePolicy"}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := epSpec()
			if tc.spec != nil {
				tc.spec(s)
			}
			req := V(500, -1)
			if tc.c > 1 {
				req = V(1000, -1)
			}
			st := vpaState(tc.c, req, tc.total, -1)
			st.Now = now
			if tc.state != nil {
				tc.state(&st)
			}
			d := mustDecide(t, s, st)
			var reasons []string
			for _, b := range d.Blocked {
				reasons = append(reasons, b.Part+":"+string(b.Direction)+":"+string(b.Reason))
				if b.Message == "" {
					t.Errorf("blocked part %s has no message", b.Part)
				}
			}
			if d.Replicas != tc.want.replicas || request(t, d, "app", CPU) != tc.want.cpu || strings.Join(reasons, ",") != strings.Join(tc.want.reasons, ",") {
				t.Errorf("got %d x %vm blocked %v; want %d x %vm blocked %v", d.Replicas, request(t, d, "app", CPU), reasons,
					tc.want.replicas, tc.want.cpu, tc.want.reasons)
			}
		})
	}
}

func TestSaturatedIsReported(t *testing.T) {
	d := mustDecide(t, epSpec(), vpaState(5, V(8000, -1), 60000, -1))
	if d.Replicas != 5 || request(t, d, "app", CPU) != 8000 {
		t.Errorf("got %d x %v, want 5 x 8000m", d.Replicas, request(t, d, "app", CPU))
	}
	found := false
	for _, b := range d.Blocked {
		found = found || b.Reason == hvpav1alpha1.BlockReasonSaturated
	}
	limited := false
	for _, c := range d.Conditions {
		limited = limited || (c.Type == hvpav1alpha1.ConditionScalingLimited && c.Status == "True")
	}
	if !found || !limited {
		t.Errorf("saturation not reported: blocked %+v conditions %+v", d.Blocked, d.Conditions)
	}
}

func TestNoInputChangesNothing(t *testing.T) {
	st := vpaState(3, V(1000, gi), 0, 0)
	st.Recommendation = nil
	d := mustDecide(t, epSpec(), st)
	if d.Replicas != 3 || d.Changed {
		t.Errorf("without any input the decision changed something: %+v", d)
	}
	st.Replicas = 0
	d = mustDecide(t, epSpec(), st)
	if d.Replicas != 0 || d.Changed {
		t.Errorf("a workload at 0 replicas was scaled: %+v", d)
	}
}

func TestHPAFloorAndTotal(t *testing.T) {
	// Utilization metrics: HPA total = h x basis.
	s := epSpec()
	st := vpaState(1, V(500, -1), 400, -1)
	st.HPA = &HPAInput{Desired: 4, Basis: map[string]Values{"app": V(500, -1)}}
	d := mustDecide(t, s, st)
	if d.Replicas != 2 { // total 2000 -> 2 replicas
		t.Errorf("utilization HPA: replicas %d, want 2 (totals %+v)", d.Replicas, d.Totals)
	}
	// Other metrics: h is a floor, never a total.
	s.HPAUtilization = false
	d = mustDecide(t, s, st)
	if d.Replicas != 4 || d.HPAFloor != 4 {
		t.Errorf("floor HPA: replicas %d floor %d, want 4", d.Replicas, d.HPAFloor)
	}
	// No basis recorded: the current requests are the basis.
	st.HPA.Basis = nil
	d = mustDecide(t, epSpec(), st)
	if b, _ := d.HPA.Basis["app"].Get(CPU); b != 500 {
		t.Errorf("basis %v, want the current 500m", b)
	}
}

// A blocked request change leaves the container's limits alone, and uncontrolled resources keep theirs.
func TestBlockedChangeKeepsLimits(t *testing.T) {
	s := epSpec()
	s.ScaleUp.Mode = UpdateModeOff
	s.Policies = []ContainerPolicy{{Name: "app", Controlled: [NumResources]bool{true, false}, ControlledValues: RequestsAndLimits,
		Ratio: [NumResources]*Ratio{{Type: RatioFactor, Factor: 2}, {Type: RatioFactor, Factor: 2}}}}
	st := vpaState(3, V(1000, gi), 4500, -1)
	st.Containers[0].Limits = V(1000, gi)
	d := mustDecide(t, s, st)
	if d.Containers[0].Limits != st.Containers[0].Limits || d.Changed {
		t.Errorf("limits %+v changed (changed=%v) although the request change is blocked", d.Containers[0].Limits, d.Changed)
	}
}

// A value capped at an interval's per-pod maximum never rounds above it (docs/design/scaling.md section 4 rounds up; a
// capped value rounds down so that h x basis cannot step past the interval).
func TestCappedValuesStayWithinTheInterval(t *testing.T) {
	s := epSpec()
	s.Intervals = []Interval{{MaxReplicas: 1, MaxResources: V(500, -1)}, {MaxReplicas: 4, MaxResources: V(1000, -1), Extrapolation: ExtrapolationLinear}}
	s.MaxReplicas = 4
	iv := mustIntervals(t, s.Intervals, 1, s.Overlap)
	d := mustDecide(t, s, vpaState(2, V(800, -1), 5000, -1))
	in := intervalFor(iv, d.Replicas)
	if p := request(t, d, "app", CPU); p > in.PerPodMax(CPU) {
		t.Errorf("per-pod %vm above the %d-replica interval's maximum %vm", p, in.Replicas, in.PerPodMax(CPU))
	}
	// the HPA basis taken from it keeps the workload in its interval
	st := vpaState(2, V(833, -1), 0, -1)
	st.Recommendation = nil
	st.HPA = &HPAInput{Desired: 2}
	if d := mustDecide(t, s, st); d.Replicas != 2 {
		t.Errorf("h=2 with the capped basis asks for %d replicas, want 2", d.Replicas)
	}
}
