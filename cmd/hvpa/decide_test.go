package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const ratioHvpa = `apiVersion: autoscaling.k8s.io/v1alpha1
kind: Hvpa
metadata: {name: web}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  vpa:
    template:
      resourcePolicy:
        containerPolicies:
          - containerName: app
            controlledResources: [cpu]
            requestToLimitRatio:
              cpu: {type: Factor, factor: 4}
  scalingIntervals:
    - maxReplicas: 2
      maxResources: {cpu: "4"}
`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The AEP-8515 example through the CLI: LimitRange max 600m, ratio 1:4, recommendation 200m -> request
// 150m, limit 600m.
func TestDecideLimitRange(t *testing.T) {
	dir := writeFiles(t, map[string]string{"hvpa.yaml": ratioHvpa, "state.yaml": `
now: "2026-11-21T12:00:00Z"
replicas: 2
containers: [{name: app, requests: {cpu: 100m}, limits: {cpu: 400m}}]
recommendation: [{containerName: app, target: {cpu: 200m}, uncappedTarget: {cpu: 200m}}]
limitRange: {container: {max: {cpu: 600m}}}
`})
	out, err := runCommand(t, "decide", "-f", filepath.Join(dir, "hvpa.yaml"), "--state", filepath.Join(dir, "state.yaml"), "-o", "json")
	if err != nil {
		t.Fatalf("hvpa decide: %v\n%s", err, out)
	}
	var got decideOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	c := got.Desired.Containers[0]
	if c.Requests.Cpu().String() != "150m" || c.Limits.Cpu().String() != "600m" {
		t.Errorf("request %s limit %s, want 150m and 600m; notes %v", c.Requests.Cpu(), c.Limits.Cpu(), got.Notes)
	}
	if !strings.Contains(strings.Join(got.Notes["app"], ";"), "LimitRange container max") {
		t.Errorf("notes %v do not say the LimitRange shaped the values", got.Notes)
	}
}

func TestDecideBadState(t *testing.T) {
	cases := map[string]struct{ state, want string }{
		"missing replicas":        {`containers: []`, "replicas: Required value"},
		"negative LimitRange":     {"replicas: 1\nlimitRange: {pod: {max: {memory: -1Gi}}}", "limitRange.pod.max[memory]: Invalid value"},
		"unknown field":           {"replicas: 1\nhpa: {desired: 3}", `unknown field "hpa.desired"`},
		"negative HPA replicas":   {"replicas: 1\nhpa: {desiredReplicas: -2}", "hpa.desiredReplicas: Invalid value"},
		"negative recommendation": {"replicas: 1\nrecommendation: [{containerName: app, target: {cpu: -1}}]", "recommendation[0].target[cpu]"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"hvpa.yaml": ratioHvpa, "state.yaml": tc.state})
			out, err := runCommand(t, "decide", "-f", filepath.Join(dir, "hvpa.yaml"), "--state", filepath.Join(dir, "state.yaml"))
			if err == nil || !strings.Contains(out, tc.want) {
				t.Errorf("error %v, output %q; want an error containing %q", err, out, tc.want)
			}
		})
	}
}
