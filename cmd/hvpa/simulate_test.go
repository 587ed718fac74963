package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const tinyTrace = `timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event
1736121600,ns,web,web-1,app,400,300000000,500,536870912,
1736121600,ns,web,web-1,proxy,20,60000000,,,
1736121660,ns,web,web-1,app,420,310000000,500,536870912,
1736121660,ns,web,web-1,proxy,20,60000000,,,
1736121660,other,web,web-9,app,3000,300000000,,,
`

func runWithStdin(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out, errOut bytes.Buffer
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

func TestSimulateFromStdinWithPolicy(t *testing.T) {
	dir := t.TempDir()
	vpa := filepath.Join(dir, "vpa.yaml")
	os.WriteFile(vpa, []byte(`apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata: {name: web, namespace: ns}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  resourcePolicy:
    containerPolicies:
      - containerName: proxy
        mode: "Off"
      - containerName: "*"
        maxAllowed: {cpu: 300m}
`), 0o644)
	out, summary, err := runWithStdin(t, tinyTrace, "simulate", "--trace", "-", "--vpa", vpa)
	if err != nil {
		t.Fatalf("simulate: %v\n%s", err, summary)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if lines[0] != "timestamp,namespace,workload,container,target_cpu_m,target_mem_bytes,lower_cpu_m,lower_mem_bytes,upper_cpu_m,upper_mem_bytes,uncapped_cpu_m,uncapped_mem_bytes" {
		t.Fatalf("header %q", lines[0])
	}
	var sawNs, sawOther bool
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		switch {
		case f[1] == "ns" && f[3] == "proxy":
			t.Errorf("the VPA sets proxy to mode Off, but it got %s", l)
		case f[1] == "ns" && f[3] == "app":
			sawNs = true
			if f[4] != "300" || f[10] == "300" {
				t.Errorf("ns/web/app: target %sm (want maxAllowed 300m), uncapped %sm (want above): %s", f[4], f[10], l)
			}
		case f[1] == "other":
			sawOther = true // the VPA is namespaced to ns: other/web keeps the default policy
			if f[4] == "300" {
				t.Errorf("other/web got ns's policy: %s", l)
			}
		}
	}
	if !sawNs || !sawOther {
		t.Errorf("missing rows:\n%s", out)
	}
	for _, want := range []string{"5 rows, 5 usage samples", "samples/s", "peak heap", "cpu slack"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
}

func TestSimulateOverrideAnnotations(t *testing.T) {
	dir := t.TempDir()
	trace := tinyTrace + "1736121720,ns,web,web-1,app,,,500,536870912,OOM\n1736121780,ns,web,web-1,app,400,300000000,,,\n"
	write := func(ann string) string {
		p := filepath.Join(dir, "vpa.yaml")
		os.WriteFile(p, []byte("apiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata:\n  name: web\n  annotations: {"+ann+"}\nspec:\n  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"), 0o644)
		return p
	}
	memTarget := func(out string) int64 { // ns/web/app's memory target at the last tick
		var v int64
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Split(line, ","); f[1] == "ns" && f[3] == "app" {
				v, _ = strconv.ParseInt(f[5], 10, 64)
			}
		}
		return v
	}
	plain, _, err := runWithStdin(t, trace, "simulate", "--trace", "-")
	if err != nil {
		t.Fatal(err)
	}
	bumped, _, err := runWithStdin(t, trace, "simulate", "--trace", "-", "--vpa", write(`recommender.hvpa.dev/oom-bump-up-ratio: "2"`))
	if err != nil {
		t.Fatal(err)
	}
	// the OOM at a 512Mi request asks for max(512Mi + 100Mi, 1.2 x 512Mi) by default, 2 x 512Mi with ratio 2
	if p, b := memTarget(plain), memTarget(bumped); p < 6*512<<20/5 || b < 2*512<<20 {
		t.Errorf("memory target %d by default (want >= 1.2 x 512Mi), %d with ratio 2 (want >= 1Gi)", p, b)
	}
	_, _, err = runWithStdin(t, trace, "simulate", "--trace", "-", "--vpa", write(`recommender.hvpa.dev/safety-margin: "lots"`))
	if err == nil || !strings.Contains(err.Error(), "VerticalPodAutoscaler web") || !strings.Contains(err.Error(), "annotation recommender.hvpa.dev/safety-margin") {
		t.Errorf("a bad override annotation: %v", err)
	}
}

func TestSimulateErrors(t *testing.T) {
	backwards := tinyTrace + "1736121600,ns,web,web-1,app,1,1,,,\n"
	if _, _, err := runWithStdin(t, backwards, "simulate", "--trace", "-"); err == nil || !strings.Contains(err.Error(), "line 7, column 1 (timestamp)") {
		t.Errorf("a trace going backwards: %v", err)
	}
	if _, _, err := runWithStdin(t, "", "simulate"); err == nil || !strings.Contains(err.Error(), `"trace" not set`) {
		t.Errorf("no --trace: %v", err)
	}
	if _, _, err := runWithStdin(t, tinyTrace, "simulate", "--trace", "-", "--interval", "1500ms"); err == nil || !strings.Contains(err.Error(), "whole seconds") {
		t.Errorf("--interval 1500ms: %v", err)
	}
}
