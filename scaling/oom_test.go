package scaling

import "testing"

// TestScaleOutAfterOOMKeepsTheBump: a scale-out right after an OOM kill does not spread the bumped memory
// total over the new pods (an OOM kill says what one pod needed): each pod gets at least T / c. Without a kill
// a scale-out keeps the pods as they are (p = max(p_current, adj)); a resource other than memory never changes.
func TestScaleOutAfterOOMKeepsTheBump(t *testing.T) {
	cases := map[string]struct {
		oom          bool
		memTotal     float64
		wantReplicas int32
		wantMem      float64
		wantCPU      float64
	}{
		// cpu 3 CPU at 2 x 800m asks for 3 replicas; memory 2.4Gi (after the bump) alone would keep 2
		"no OOM: the pods keep their memory":       {memTotal: 2.4 * gi, wantReplicas: 3, wantMem: 1 * gi, wantCPU: 1000},
		"OOM: each pod gets the bumped T / c":      {oom: true, memTotal: 2.4 * gi, wantReplicas: 3, wantMem: RoundUp(1.2 * gi), wantCPU: 1000},
		"OOM, total below the pods in force: kept": {oom: true, memTotal: 1.5 * gi, wantReplicas: 3, wantMem: 1 * gi, wantCPU: 1000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			st := vpaState(2, V(800, 1*gi), 3000, tc.memTotal)
			st.OOMSinceLastScaling = tc.oom
			d := mustDecide(t, epSpec(), st)
			if d.Replicas != tc.wantReplicas {
				t.Fatalf("replicas %d, want %d", d.Replicas, tc.wantReplicas)
			}
			if got := request(t, d, "app", Memory); got != tc.wantMem {
				t.Errorf("memory per pod %.0f, want %.0f", got, tc.wantMem)
			}
			if got := request(t, d, "app", CPU); got != tc.wantCPU {
				t.Errorf("cpu per pod %.0f, want %.0f", got, tc.wantCPU)
			}
		})
	}
}
