package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hvpa-dev/hvpa/closedloop"
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
	if err := os.WriteFile(vpa, []byte(`apiVersion: autoscaling.k8s.io/v1
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
`), 0o644); err != nil {
		t.Fatal(err)
	}
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
		if err := os.WriteFile(p, []byte("apiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata:\n  name: web\n  annotations: {"+ann+"}\nspec:\n  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
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

func TestSimulateIntegerCPU(t *testing.T) {
	p := filepath.Join(t.TempDir(), "vpa.yaml")
	if err := os.WriteFile(p, []byte(`apiVersion: autoscaling.k8s.io/v1
kind: VerticalPodAutoscaler
metadata:
  name: web
  namespace: ns
  annotations: {vpa-post-processor.kubernetes.io/app_integerCPU: "true"}
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	cpu := func(out, container string) []string { // the CPU target, lower, upper and uncapped of ns/web's container at the last tick
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Split(line, ","); f[1] == "ns" && f[3] == container {
				got = []string{f[4], f[6], f[8], f[10]}
			}
		}
		return got
	}
	whole := func(v []string) bool {
		for _, m := range v {
			if n, err := strconv.ParseInt(m, 10, 64); err != nil || n <= 0 || n%1000 != 0 {
				return false
			}
		}
		return len(v) == 4
	}
	for _, tc := range []struct {
		name      string
		args      []string
		app, side bool // whole cores for app, for proxy
	}{
		{"annotation and flag", []string{"--vpa", p, "--cpu-integer-post-processor-enabled"}, true, false},
		{"annotation without the flag", []string{"--vpa", p}, false, false},
		{"flag without a VPA", []string{"--cpu-integer-post-processor-enabled"}, false, false},
	} {
		out, _, err := runWithStdin(t, tinyTrace, append([]string{"simulate", "--trace", "-"}, tc.args...)...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if app, side := cpu(out, "app"), cpu(out, "proxy"); whole(app) != tc.app || whole(side) != tc.side {
			t.Errorf("%s: app cpu target, lower, upper, uncapped %v (whole cores: want %v), proxy %v (want %v)", tc.name, app, tc.app, side, tc.side)
		}
	}
	if _, _, err := runWithStdin(t, tinyTrace, "simulate", "--trace", "-", "--closed-loop", "--cpu-integer-post-processor-enabled"); err == nil || !strings.Contains(err.Error(), "--cpu-integer-post-processor-enabled") {
		t.Errorf("the flag with --closed-loop: %v", err)
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

func TestSimulateClosedLoop(t *testing.T) {
	dir := t.TempDir()
	var trace bytes.Buffer
	if err := closedloop.WriteDemand(&trace, closedloop.Demand{Shape: closedloop.ShapeStep, Workloads: 2, Pods: 1, Days: 0.5, Interval: time.Minute,
		CPU: 400, Memory: 1 << 30, StepCPU: 2500, StepMemory: 3 << 30, StepEvery: 3 * time.Hour, CPURequest: 500, MemoryRequest: 2 << 30, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	summary, rows, report := filepath.Join(dir, "summary.json"), filepath.Join(dir, "rows.csv"), filepath.Join(dir, "report.html")
	table, stderr, err := runWithStdin(t, trace.String(), "simulate", "--closed-loop", "--compare", "--trace", "-", "--hvpa", "../../examples/hvpa-closed-loop.yaml",
		"--out", rows, "--summary-json", summary, "--report", report)
	if err != nil {
		t.Fatalf("simulate --closed-loop: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "2 workloads x 2 runs") || !strings.Contains(table, "ns/wl-1") || !strings.Contains(table, "hvpa[per-pod]") {
		t.Errorf("standard error:\n%s\ntable:\n%s", stderr, table)
	}
	got := readSummaries(t, summary)
	if len(got) != 4 {
		t.Fatalf("%d summaries, want 2 workloads x 2 models", len(got))
	}
	keys := []string{"namespace", "workload", "policy", "model", "ticks", "final_replicas", "max_replicas", "cpu_provided_over_demand", "cpu_shortfall",
		"memory_provided_over_demand", "memory_shortfall", "oom_events", "restarts", "evictions", "replica_changes_per_day", "per_pod_changes_per_day"}
	for _, w := range got {
		for _, k := range keys {
			if _, ok := w[k]; !ok {
				t.Errorf("summary %v lacks %q", w, k)
			}
		}
		if w["ticks"].(float64) != 720 || w["cpu_provided_over_demand"].(float64) < 1 || w["policy"] != "hvpa" && w["policy"] != "hvpa[per-pod]" {
			t.Errorf("summary %v: want 720 ticks (12 h of minutes), at least the demand provided, the hvpa policy", w)
		}
	}
	out, err := os.ReadFile(rows)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if lines[0] != closedloop.RowsHeader || len(lines) != 1+2*720 {
		t.Errorf("rows: header %q and %d rows, want %q and %d", lines[0], len(lines)-1, closedloop.RowsHeader, 2*720)
	}
	page, err := os.ReadFile(report)
	if err != nil || !bytes.Contains(page, []byte("<svg")) || !bytes.Contains(page, []byte("ns/wl-0")) || !bytes.Contains(page, []byte("hvpa[per-pod]: replicas")) {
		t.Errorf("report: %v, %d bytes", err, len(page))
	}
}

// readSummaries reads the workloads of a --summary-json file.
func readSummaries(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Workloads []map[string]any `json:"workloads"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	return got.Workloads
}

// TestSimulateClosedLoopPolicies: --policy runs the baselines on the same demand, --hpa-requests makes a run of
// each hpa policy per value, the table is markdown with --table markdown, and no rows go to standard output
// without --out.
func TestSimulateClosedLoopPolicies(t *testing.T) {
	var trace bytes.Buffer
	if err := closedloop.WriteProfile(&trace, closedloop.ProfileDemand{Profile: closedloop.ProfileWeb, Sizes: []float64{1}, Days: 0.25, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	summary := filepath.Join(t.TempDir(), "summary.json")
	table, stderr, err := runWithStdin(t, trace.String(), "simulate", "--closed-loop", "--trace", "-", "--hvpa", "../../examples/hvpa-shootout.yaml",
		"--policy", "hvpa,hpa,vpa,hpa+vpa", "--hpa-requests", "cpu=250m", "--hpa-requests", "cpu=1,memory=4Gi", "--table", "markdown", "--summary-json", summary)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want := []string{"hvpa", "hpa[cpu=250m]", "hpa[cpu=1,memory=4Gi]", "vpa", "hpa+vpa[cpu=250m]", "hpa+vpa[cpu=1,memory=4Gi]"}
	got := readSummaries(t, summary)
	if len(got) != len(want) {
		t.Fatalf("%d summaries, want %d", len(got), len(want))
	}
	for i, w := range got {
		if w["policy"] != want[i] {
			t.Errorf("summary %d: policy %v, want %s", i, w["policy"], want[i])
		}
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != 2+len(want) || !strings.HasPrefix(lines[0], "| workload | policy |") || !strings.HasPrefix(lines[1], "|---|") ||
		!strings.HasPrefix(lines[3], "| shootout/web-0 | hpa[cpu=250m] |") {
		t.Errorf("markdown table:\n%s", table)
	}
}

func TestSimulateClosedLoopErrors(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"no Hvpa":                 {[]string{"simulate", "--closed-loop", "--trace", "-"}, "--closed-loop needs --hvpa FILE"},
		"unknown model":           {[]string{"simulate", "--closed-loop", "--trace", "-", "--hvpa", "../../examples/hvpa-closed-loop.yaml", "--model", "average"}, `--model "average": use total or per-pod`},
		"compare without closed":  {[]string{"simulate", "--trace", "-", "--compare"}, "need --closed-loop"},
		"no workload of the file": {[]string{"simulate", "--closed-loop", "--trace", "-", "--hvpa", "../../examples/hvpa-kube-apiserver.yaml"}, "no workload of the trace is named by an Hvpa"},
		"unknown policy": {[]string{"simulate", "--closed-loop", "--trace", "-", "--hvpa", "../../examples/hvpa-closed-loop.yaml", "--policy", "hvpa,keda"},
			`"keda" is not a policy`},
		"bad hpa requests": {[]string{"simulate", "--closed-loop", "--trace", "-", "--hvpa", "../../examples/hvpa-closed-loop.yaml", "--hpa-requests", "cpu=lots"},
			`--hpa-requests "cpu=lots": cpu=lots is not a positive quantity`},
		"policy without closed": {[]string{"simulate", "--trace", "-", "--policy", "hpa"}, "--policy needs --closed-loop"},
		"bad startup delay":     {[]string{"simulate", "--closed-loop", "--trace", "-", "--hvpa", "../../examples/hvpa-closed-loop.yaml", "--startup-delay", "500ms"}, "--startup-delay 500ms: must be a positive number of whole seconds"},
		"bad vpa update mode":   {[]string{"simulate", "--closed-loop", "--trace", "-", "--hvpa", "../../examples/hvpa-closed-loop.yaml", "--vpa-update-mode", "Auto"}, `--vpa-update-mode "Auto": use InPlaceOrRecreate or Recreate`},
		"bad hpa behavior": {[]string{"simulate", "--closed-loop", "--trace", "-", "--hvpa", "../../examples/hvpa-closed-loop.yaml", "--hpa-behavior", "legacy"},
			`--hpa-behavior "legacy": use default (behavior: {}) or none (no behavior field)`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := runWithStdin(t, tinyTrace, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestSimulateModelAdaptive(t *testing.T) {
	plain, summary, err := runWithStdin(t, tinyTrace, "simulate", "--trace", "-")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(summary, "scores (upstream): cpu slack") || strings.Contains(summary, "winners") {
		t.Errorf("an upstream run's summary:\n%s", summary)
	}
	out, summary, err := runWithStdin(t, tinyTrace, "simulate", "--trace", "-", "--model", "adaptive")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"scores (adaptive): cpu slack", "scores (upstream, beside it)", "memory over", "applied changes per container-day", "winners (cpu, per tick and container): upstream 100.0%"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
	// two minutes of history: upstream wins (the others are warming up); its first targets are published as
	// they are, later ones when they leave the 10% dead band
	al, ul := strings.Split(out, "\n"), strings.Split(plain, "\n")
	if len(al) != len(ul) || al[1] != ul[1] || al[3] == ul[3] {
		t.Errorf("adaptive before its warmup:\n%s\nupstream:\n%s", out, plain)
	}
	dir := t.TempDir()
	vpa := filepath.Join(dir, "vpa.yaml")
	if err := os.WriteFile(vpa, []byte("apiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata:\n  name: web\n  namespace: ns\n  annotations: {recommender.hvpa.dev/model: adaptive, recommender.hvpa.dev/safety-margin: \"0.2\"}\nspec:\n  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, summary, err = runWithStdin(t, tinyTrace, "simulate", "--trace", "-", "--vpa", vpa); err != nil || !strings.Contains(summary, "scores (adaptive)") {
		t.Errorf("the model annotation: %v\n%s", err, summary)
	}
	if err := os.WriteFile(vpa, []byte("apiVersion: autoscaling.k8s.io/v1\nkind: VerticalPodAutoscaler\nmetadata:\n  name: web\n  annotations: {recommender.hvpa.dev/model: best}\nspec:\n  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err = runWithStdin(t, tinyTrace, "simulate", "--trace", "-", "--vpa", vpa); err == nil || !strings.Contains(err.Error(), "recommender.hvpa.dev/model") {
		t.Errorf("a bad model annotation: %v", err)
	}
	if _, _, err = runWithStdin(t, tinyTrace, "simulate", "--trace", "-", "--model", "total"); err == nil || !strings.Contains(err.Error(), `model "total": use upstream or adaptive`) {
		t.Errorf("--model total without --closed-loop: %v", err)
	}
}
