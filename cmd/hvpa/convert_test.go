package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// runConvert runs `hvpa convert ARGS` with stdin as standard input and returns standard output and error apart.
func runConvert(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	cmd := newRootCommand()
	var stdout, stderr bytes.Buffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(append([]string{"convert"}, args...))
	err := cmd.Execute()
	return stdout.String(), stderr.String(), err
}

// outputDocs splits YAML output into documents: each one's kind and JSON.
func outputDocs(t *testing.T, out string) []json.RawMessage {
	t.Helper()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out)))
	var docs []json.RawMessage
	for {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("output is not YAML: %v\n%s", err, out)
		}
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			t.Fatalf("output document is not YAML: %v\n%s", err, raw)
		}
		docs = append(docs, j)
	}
}

// validHvpa decodes an output document strictly as hvpa's Hvpa and validates it as `hvpa intervals` does.
func validHvpa(t *testing.T, doc []byte) *hvpav1alpha1.Hvpa {
	t.Helper()
	h := &hvpav1alpha1.Hvpa{}
	if err := strictDecode(doc, h); err != nil {
		t.Fatalf("converted object does not decode as hvpa's Hvpa: %v\n%s", err, doc)
	}
	if _, errs := scaling.FromHvpa(h); len(errs) > 0 {
		t.Fatalf("converted object is not a valid Hvpa: %v\n%s", errs.ToAggregate(), doc)
	}
	return h
}

func TestConvertTestdata(t *testing.T) {
	for _, tc := range []struct {
		file      string
		kinds     []string
		intervals string // the converted Hvpa's scalingIntervals, as JSON
		stderr    []string
	}{{
		file:      "kube-apiserver.yaml",
		kinds:     []string{"Hvpa"},
		intervals: `[{"maxReplicas":3,"maxResources":{"cpu":"8","memory":"25G"},"effectiveIntervalExtrapolation":"linear"},{"maxReplicas":4,"maxResources":{"cpu":"8","memory":"25G"}}]`,
		stderr: []string{
			"# Hvpa shoot--dev--demo/kube-apiserver (document 1): converted; 10 fields not carried over as they were:",
			"spec.hpa.selector: dropped: the Hvpa finds the HPA it creates by its owner reference; no selector is needed",
			"spec.weightBasedScalingIntervals[0].vpaWeight: approximated: 0: gardener's controller changed only replicas in 2..3",
			"spec.vpa.scaleDown.updatePolicy.updateMode: approximated: MaintenanceWindow gates the replica changes of this direction too",
			"spec.vpa.scaleUp.minChange.cpu.value: approximated: gardener compared 300m with the change of each pod's request",
		},
	}, {
		file:      "etcd.yaml",
		kinds:     []string{"Hvpa"},
		intervals: `[{"maxReplicas":1,"maxResources":{"cpu":"4","memory":"30G"}}]`,
		stderr: []string{
			"# Hvpa shoot--dev--demo/etcd-main (document 1): converted; 7 fields not carried over as they were:",
			"spec.weightBasedScalingIntervals: dropped: not used: gardener's controller ran no HPA",
			`spec.hpa.scaleUp.updatePolicy.updateMode: dropped: "Off" had no effect: spec.hpa.deploy is false`,
		},
	}, {
		file:  "sample.yaml",
		kinds: []string{"Hvpa"},
		intervals: `[{"maxReplicas":2,"maxResources":{"memory":"3000Mi"},"effectiveIntervalExtrapolation":"linear"},` +
			`{"maxReplicas":5,"maxResources":{"memory":"3000Mi"},"effectiveIntervalExtrapolation":"linear"},` +
			`{"maxReplicas":7,"maxResources":{"memory":"3000Mi"},"effectiveIntervalExtrapolation":"linear"}]`,
		stderr: []string{
			"spec.scaleUpStabilization: unknown: not a field of gardener's Hvpa schema",
			"spec.hpa.updatePolicy: unknown: not a field of gardener's Hvpa schema",
			`metadata.annotations[hpa-controller]: dropped: "hvpa" switched gardener's controller`,
			"spec.vpa.template.spec.resourcePolicy.containerPolicies: approximated: no container policy sets maxAllowed.cpu",
			"spec.weightBasedScalingIntervals[1].vpaWeight: approximated: 50: gardener's controller moved requests 50%",
		},
	}, {
		file:      "mixed.yaml",
		kinds:     []string{"Deployment", "Hvpa", "Hvpa"},
		intervals: `[{"maxReplicas":10,"maxResources":{"cpu":"2","memory":"2Gi"},"effectiveIntervalExtrapolation":"linear"}]`,
		stderr: []string{
			"# Deployment jobs/queue-worker (document 1): not a gardener Hvpa; passed through unchanged",
			"# Hvpa jobs/queue-worker (document 2): converted; 6 fields not carried over as they were:",
			"spec.weightBasedScalingIntervals: approximated: replicas 2..10 are in no interval",
			"# Hvpa jobs/api (document 3): already in hvpa's schema (it has spec.scalingIntervals); passed through unchanged",
		},
	}} {
		t.Run(tc.file, func(t *testing.T) {
			path := "testdata/gardener/" + tc.file
			stdout, stderr, err := runConvert(t, "", "-f", path)
			if err != nil {
				t.Fatalf("hvpa convert -f %s: %v\n%s", path, err, stderr)
			}
			docs := outputDocs(t, stdout)
			var kinds []string
			converted := 0
			for _, d := range docs {
				var meta struct{ Kind string }
				_ = json.Unmarshal(d, &meta)
				kinds = append(kinds, meta.Kind)
				if meta.Kind != "Hvpa" {
					continue
				}
				h := validHvpa(t, d)
				if converted++; converted > 1 {
					continue // the Hvpa already in hvpa's schema (checked below)
				}
				if got, _ := json.Marshal(h.Spec.ScalingIntervals); string(got) != tc.intervals {
					t.Errorf("scalingIntervals = %s, want %s", got, tc.intervals)
				}
			}
			if !reflect.DeepEqual(kinds, tc.kinds) {
				t.Errorf("output kinds = %q, want %q", kinds, tc.kinds)
			}
			for _, want := range tc.stderr {
				if !hasLinePrefix(stderr, want) {
					t.Errorf("standard error has no line starting %q:\n%s", want, stderr)
				}
			}
			for _, line := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if !strings.HasPrefix(line, "# ") && !strings.HasPrefix(line, "spec.") && !strings.HasPrefix(line, "metadata.") {
					t.Errorf("standard error line %q is neither an object line (# ...) nor a field (path: kind: reason)", line)
				}
			}
		})
	}
}

func hasLinePrefix(text, prefix string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

// TestConvertPassesThrough: the objects that are not gardener Hvpas come out as they went in.
func TestConvertPassesThrough(t *testing.T) {
	in, err := os.ReadFile("testdata/gardener/mixed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	stdout, _, err := runConvert(t, string(in), "-f", "-")
	if err != nil {
		t.Fatalf("hvpa convert -f -: %v", err)
	}
	want, got := outputDocs(t, string(in)), outputDocs(t, stdout)
	if len(got) != 3 {
		t.Fatalf("%d objects out, want 3", len(got))
	}
	for _, i := range []int{0, 2} {
		var a, b any
		_ = json.Unmarshal(want[i], &a)
		_ = json.Unmarshal(got[i], &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("object %d changed:\n%s\nwant\n%s", i+1, got[i], want[i])
		}
	}
}

func TestConvertJSON(t *testing.T) {
	stdout, _, err := runConvert(t, "", "-f", "testdata/gardener/mixed.yaml", "-o", "json")
	if err != nil {
		t.Fatalf("hvpa convert -o json: %v", err)
	}
	var list struct {
		Kind  string
		Items []json.RawMessage
	}
	if err := json.Unmarshal([]byte(stdout), &list); err != nil || list.Kind != "List" || len(list.Items) != 3 {
		t.Fatalf("-o json printed %q (%v), want a List of 3 objects", stdout, err)
	}
	validHvpa(t, list.Items[1])

	stdout, _, err = runConvert(t, "", "-f", "testdata/gardener/etcd.yaml", "-o", "json")
	if err != nil {
		t.Fatalf("hvpa convert -o json: %v", err)
	}
	if h := validHvpa(t, []byte(stdout)); h.Kind != "Hvpa" || h.Name != "etcd-main" {
		t.Errorf("-o json of one object printed %s, want the Hvpa etcd-main", stdout)
	}
}

func TestConvertStrict(t *testing.T) {
	_, stderr, err := runConvert(t, "", "-f", "testdata/gardener/kube-apiserver.yaml", "--strict")
	if err == nil || !strings.Contains(err.Error(), "--strict: 10 fields are not carried over as they were") {
		t.Errorf("--strict with losses: error %v, want one counting the 10 fields\n%s", err, stderr)
	}
	exact := `apiVersion: autoscaling.k8s.io/v1alpha1
kind: Hvpa
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  hpa:
    deploy: true
    template:
      spec:
        minReplicas: 2
        maxReplicas: 2
  weightBasedScalingIntervals:
  - vpaWeight: 100
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
`
	stdout, stderr, err := runConvert(t, exact, "-f", "-", "--strict")
	if err != nil {
		t.Fatalf("--strict without losses: %v\n%s", err, stderr)
	}
	if want := "# Hvpa default/web (document 1): converted; every field carried over\n"; stderr != want {
		t.Errorf("standard error = %q, want %q", stderr, want)
	}
	validHvpa(t, []byte(stdout))
}

// TestConvertErrors: unreadable input and bad flags fail, naming the problem.
func TestConvertErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		stdin string
		args  []string
		want  string
	}{
		"missing file": {args: []string{"-f", "testdata/gardener/none.yaml"}, want: "none.yaml: no such file"},
		"not YAML":     {stdin: "kind: Hvpa\n  spec: [", args: []string{"-f", "-"}, want: "-: document 1 is not valid YAML or JSON"},
		"wrong type": {stdin: "apiVersion: autoscaling.k8s.io/v1alpha1\nkind: Hvpa\nmetadata: {name: a}\nspec: {replicas: two}\n",
			args: []string{"-f", "-"}, want: "spec.replicas"},
		"output":  {args: []string{"-f", "testdata/gardener/etcd.yaml", "-o", "xml"}, want: `--output "xml" is not supported`},
		"no file": {args: nil, want: `required flag(s) "file" not set`},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := runConvert(t, tc.stdin, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("hvpa convert %v: error %v, want one containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// TestConvertDocumentedExample: the example of docs/migrating-from-gardener-hvpa.md prints what the page shows:
// standard error exactly, and the output excerpts as they are.
func TestConvertDocumentedExample(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	page, err := os.ReadFile("docs/migrating-from-gardener-hvpa.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(page)
	command := regexp.MustCompile(`(?m)^\$ hvpa convert (.*)$`).FindStringSubmatch(doc)
	stderrBlock := regexp.MustCompile("(?s)<!-- stderr of the example[^\n]*\n```text\n(.*?)```").FindStringSubmatch(doc)
	_, excerpts, found := strings.Cut(doc, "<!-- excerpt of the example's output")
	if command == nil || stderrBlock == nil || !found {
		t.Fatal("the page has no example command, stderr block or output excerpt")
	}
	stdout, stderr, err := runConvert(t, "", strings.Fields(command[1])...)
	if err != nil {
		t.Fatalf("hvpa convert %s: %v", command[1], err)
	}
	if stderr != stderrBlock[1] {
		t.Errorf("hvpa convert %s prints on standard error:\n%s\nthe page shows:\n%s", command[1], stderr, stderrBlock[1])
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(excerpts, -1)
	if len(blocks) == 0 {
		t.Fatal("the page has no output excerpt")
	}
	for _, b := range blocks {
		if !strings.Contains(stdout, b[1]) {
			t.Errorf("the output has no part\n%s\nit is:\n%s", b[1], stdout)
		}
	}
}
