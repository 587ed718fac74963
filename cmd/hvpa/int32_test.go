package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestIntervalsAndDecideAtInt32Bounds: `hvpa intervals` and `hvpa decide` end on any int32 maxReplicas (issue
// 31: one interval to 2147483647 replicas made them loop and allocate until the process died): beyond
// 100000 replicas, or beyond 1000 effective intervals, with an error that names the file and the field; within
// them, with one row per effective interval. The test ending is the termination check; the output size is
// asserted, no time is measured.
func TestIntervalsAndDecideAtInt32Bounds(t *testing.T) {
	hvpa := func(hpa, intervals string) string {
		return "apiVersion: autoscaling.k8s.io/v1alpha1\nkind: Hvpa\nmetadata: {name: web}\nspec:\n" +
			"  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n" + hpa + "  scalingIntervals:\n" + intervals
	}
	top := `maxResources: {cpu: "8", memory: 32Gi}`
	cases := map[string]struct {
		hvpa      string
		wantField string // "": accepted, with rows effective intervals
		rows      int
	}{
		"one interval to 2147483647 (issue 31)": {hvpa: hvpa("", "    - {maxReplicas: 2147483647, "+top+"}\n"),
			wantField: "spec.scalingIntervals[0].maxReplicas: Invalid value: 2147483647: must be at most 100000"},
		"hpa.template.maxReplicas 2147483647 as the last interval's": {hvpa: hvpa("  hpa: {template: {maxReplicas: 2147483647}}\n", "    - {"+top+"}\n"),
			wantField: "spec.hpa.template.maxReplicas: Invalid value: 2147483647: must be at most 100000"},
		"linear to 2147483647": {hvpa: hvpa("", "    - {maxReplicas: 2147483647, effectiveIntervalExtrapolation: linear, "+top+"}\n"),
			wantField: "spec.scalingIntervals[0].maxReplicas: Invalid value: 2147483647: must be at most 100000"},
		"horizontalOnly to 100000": {hvpa: hvpa("", "    - {maxReplicas: 2, "+top+"}\n    - {maxReplicas: 100000, effectiveIntervalExtrapolation: horizontalOnly, "+top+"}\n"),
			wantField: "spec.scalingIntervals[1].effectiveIntervalExtrapolation: Invalid value: \"horizontalOnly\": makes one effective interval per replica count, more than 1000"},
		"-2147483648": {hvpa: hvpa("", "    - {maxReplicas: -2147483648, "+top+"}\n"),
			wantField: "spec.scalingIntervals[0].maxReplicas: Invalid value: -2147483648: must be at least 1"},
		"one interval to 100000": {hvpa: hvpa("", "    - {maxReplicas: 100000, "+top+"}\n"), rows: 1},
		"linear to 1000":         {hvpa: hvpa("", "    - {maxReplicas: 1000, effectiveIntervalExtrapolation: linear, "+top+"}\n"), rows: 1000},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"hvpa.yaml": tc.hvpa, "state.yaml": `
replicas: 2147483647
containers: [{name: app, requests: {cpu: 100m, memory: 1Gi}}]
recommendation: [{containerName: app, target: {cpu: "1", memory: 2Gi}}]
hpa: {desiredReplicas: 2147483647}
`})
			file := filepath.Join(dir, "hvpa.yaml")
			for _, args := range [][]string{{"intervals", "-f", file, "-o", "json"}, {"decide", "-f", file, "--state", filepath.Join(dir, "state.yaml"), "-o", "json"}} {
				out, err := runCommand(t, args...)
				if tc.wantField != "" {
					if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tc.wantField) {
						t.Fatalf("hvpa %s: want an error naming %s and %q, got %v", args[0], file, tc.wantField, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("hvpa %s: %v", args[0], err)
				}
				var got struct {
					Intervals                 []json.RawMessage `json:"intervals"`
					EffectiveScalingIntervals []json.RawMessage `json:"effectiveScalingIntervals"`
				}
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("hvpa %s: %v", args[0], err)
				}
				if n := len(got.Intervals) + len(got.EffectiveScalingIntervals); n != tc.rows {
					t.Fatalf("hvpa %s: %d effective intervals, want %d", args[0], n, tc.rows)
				}
				if len(out) > 2000*tc.rows+2000 {
					t.Fatalf("hvpa %s: %d bytes of output for %d intervals", args[0], len(out), tc.rows)
				}
			}
		})
	}
}
