package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/hvpa-dev/hvpa/scaling"
)

// FuzzDecideState: any --state file is refused with an error that names the file, or gives a state whose
// amounts are in [0, MaxAmount] and from which the EP-0001 Hvpa decides without a panic: desired replicas
// within its bounds (0 for a workload scaled to zero, which is left alone), applied replicas equal to them
// unless a gate blocks the change and keeps the current count (docs/design/scaling.md section 5: the example's
// scale-down waits for its maintenance window, even from above maxReplicas), and per-pod values that are
// not negative.
func FuzzDecideState(f *testing.F) {
	for _, s := range []string{
		`{"replicas": 2, "containers": [{"name": "app", "requests": {"cpu": "500m", "memory": "1Gi"}}], "recommendation": [{"containerName": "app", "target": {"cpu": "1", "memory": "2Gi"}, "uncappedTarget": {"cpu": "1", "memory": "2Gi"}}]}`,
		`{"replicas": 1, "containers": [{"name": "app", "requests": {"cpu": "9e308"}}]}`,
		`{"replicas": -3, "hpa": {"desiredReplicas": 2147483647}}`,
		`replicas: 3
containers: [{name: app, requests: {cpu: 8Ei, memory: "1e19"}}]
limitRange: {container: {min: {cpu: 2}, max: {cpu: 1}}}`,
	} {
		f.Add([]byte(s))
	}
	_, spec, err := loadHvpa("../../examples/hvpa-kube-apiserver.yaml", nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := loadState("-", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "-") {
				t.Fatalf("an error that names no file: %v", err)
			}
			return
		}
		for _, k := range st.Containers {
			for _, v := range []scaling.Values{k.Requests, k.Limits} {
				for _, r := range scaling.Resources {
					if x, ok := v.Get(r); ok && (x < 0 || x > scaling.MaxAmount || math.IsNaN(x)) {
						t.Fatalf("container %s %s amount %g", k.Name, r, x)
					}
				}
			}
		}
		d, err := scaling.Decide(spec, st)
		if err != nil {
			return
		}
		blocked := false // a replica change gated (docs/design/scaling.md section 5) keeps the current count, with the reason
		for _, b := range d.Blocked {
			blocked = blocked || (b.Part == "replicas" && b.Reason != "Saturated")
		}
		switch {
		case st.Replicas == 0 && d.Replicas != 0: // a workload scaled to zero is left alone
			t.Fatalf("decided %d replicas for a workload at 0", d.Replicas)
		case st.Replicas > 0 && (d.DesiredReplicas < spec.MinReplicas || d.DesiredReplicas > spec.MaxReplicas):
			t.Fatalf("desired %d replicas outside [%d, %d]", d.DesiredReplicas, spec.MinReplicas, spec.MaxReplicas)
		case d.Replicas != d.DesiredReplicas && (d.Replicas != st.Replicas || !blocked):
			t.Fatalf("decided %d replicas (desired %d, current %d) without a gate that blocks the change: %+v", d.Replicas, d.DesiredReplicas, st.Replicas, d.Blocked)
		}
		for _, c := range d.Containers {
			for _, r := range scaling.Resources {
				if x, ok := c.Requests.Get(r); ok && (x < 0 || math.IsNaN(x)) {
					t.Fatalf("container %s %s request %g", c.Name, r, x)
				}
			}
		}
	})
}
