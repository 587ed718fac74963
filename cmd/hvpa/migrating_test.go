package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// upstreamModule is the source of upstream's VPA module (UPSTREAM_VPA_VERSION, v1.8.1) in the Go module
// cache; `make upstream-vpa` (which make test runs) downloads it.
func upstreamModule(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs upstream VPA's Go module (make upstream-vpa)")
	}
	version := cmp.Or(os.Getenv("UPSTREAM_VPA_VERSION"), "v1.8.1")
	out, err := exec.Command("go", "mod", "download", "-json", "k8s.io/autoscaler/vertical-pod-autoscaler@"+version).Output()
	if err != nil {
		t.Fatalf("go mod download k8s.io/autoscaler/vertical-pod-autoscaler@%s: %v", version, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download: no module directory in %s (%v)", out, err)
	}
	return m.Dir
}

// declaredFlags reads the flags upstream's components declare in their source: name -> whether it is a bool.
func declaredFlags(t *testing.T, dir string) map[string]map[string]bool {
	t.Helper()
	decl := regexp.MustCompile(`flag\.([A-Za-z0-9]+)\(&?[^,"]+,\s*"([a-z0-9-]+)"`)
	out := map[string]map[string]bool{}
	for comp, globs := range map[string][]string{
		"all":                  {"common/*.go"},
		"recommender":          {"pkg/recommender/config/*.go", "pkg/recommender/main.go"},
		"updater":              {"pkg/updater/config/*.go", "pkg/updater/main.go"},
		"admission-controller": {"pkg/admission-controller/config/*.go", "pkg/admission-controller/main.go"},
	} {
		out[comp] = map[string]bool{}
		for _, g := range globs {
			files, _ := filepath.Glob(filepath.Join(dir, g))
			for _, f := range files {
				if strings.HasSuffix(f, "_test.go") {
					continue
				}
				src, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
					out[comp][m[2]] = m[1] == "BoolVar" || m[1] == "Bool"
				}
			}
		}
		if len(out[comp]) == 0 {
			t.Fatalf("no flag found in upstream's %s sources (%s): has the layout changed?", comp, strings.Join(globs, ", "))
		}
	}
	return out
}

// TestUpstreamFlagTable: every flag upstream VPA's components declare (read from its module) is in
// upstreamFlags with the right component and kind, and `hvpa run` parses each, alone and with a value.
func TestUpstreamFlagTable(t *testing.T) {
	declared := declaredFlags(t, upstreamModule(t))
	table := map[string]upstreamFlag{}
	for _, uf := range upstreamFlags {
		if _, dup := table[uf.name]; dup {
			t.Errorf("--%s is in upstreamFlags twice", uf.name)
		}
		table[uf.name] = uf
	}
	for comp, flags := range declared {
		for name, isBool := range flags {
			uf, ok := table[name]
			switch {
			case !ok:
				t.Errorf("upstream's %s declares --%s: add it to upstreamFlags (how hvpa run takes it)", comp, name)
			case uf.components != "all" && !strings.Contains(uf.components, comp):
				t.Errorf("--%s: upstreamFlags says %q, upstream's %s declares it", name, uf.components, comp)
			case uf.bool != isBool && uf.how != same && uf.how != alias:
				t.Errorf("--%s: bool %v in upstreamFlags, upstream declares bool %v", name, uf.bool, isBool)
			}
		}
	}
	// flags that come from other modules (component-base, klog): checked by name against the table only
	notInSource := []string{"feature-gates", "v", "leader-elect", "leader-elect-lease-duration", "leader-elect-renew-deadline",
		"leader-elect-retry-period", "leader-elect-resource-name", "leader-elect-resource-namespace", "leader-elect-resource-lock"}
	for _, uf := range upstreamFlags {
		found := slices.Contains(notInSource, uf.name)
		for _, flags := range declared {
			_, in := flags[uf.name]
			found = found || in
		}
		if !found {
			t.Errorf("--%s is in upstreamFlags but upstream does not declare it", uf.name)
		}
	}

	for _, uf := range upstreamFlags {
		if uf.how == differs {
			continue
		}
		cmd, _ := newRunCommandOptions()
		fl := cmd.Flags().Lookup(uf.name)
		if fl == nil {
			t.Errorf("--%s: hvpa run has no such flag (nor alias)", uf.name)
			continue
		}
		value := fl.DefValue
		if uf.how == ignored || uf.how == refused {
			value = uf.def
		}
		if uf.name == "feature-gates" {
			value = "InPlace=true,CPUStartupBoost=true,PerVPAConfig=false"
		}
		args := []string{"--" + uf.name + "=" + value}
		if uf.bool {
			args = []string{"--" + uf.name}
		}
		cmd, o := newRunCommandOptions()
		if err := cmd.Flags().Parse(args); err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if _, err := o.upstream.apply(cmd.Flags(), o); err != nil && !(uf.how == refused && uf.bool) {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// TestUpstreamChartArgs: the args upstream's own chart (in its module) gives its recommender, updater and
// admission controller run unchanged under `hvpa run`; the flags without effect are named in warnings.
func TestUpstreamChartArgs(t *testing.T) {
	dir := upstreamModule(t)
	_, helm := helmAndRoot(t)
	objs := renderChart(t, helm, filepath.Join(dir, "charts", "vertical-pod-autoscaler"), "--set", "updater.enabled=true,admissionController.enabled=true,recommender.enabled=true")
	seen := 0
	for _, o := range byKind(objs, "Deployment") {
		dep := convert[appsv1.Deployment](t, o)
		for _, c := range dep.Spec.Template.Spec.Containers {
			cmd, opts := newRunCommandOptions()
			if err := cmd.Flags().Parse(c.Args); err != nil {
				t.Errorf("Deployment %s: hvpa run refuses upstream's args: %v\nargs: %q", dep.Name, err, c.Args)
				continue
			}
			warnings, err := opts.upstream.apply(cmd.Flags(), opts)
			if err != nil {
				t.Errorf("Deployment %s: %v\nargs: %q", dep.Name, err, c.Args)
				continue
			}
			if err := opts.validate(); err != nil {
				t.Errorf("Deployment %s: %v\nargs: %q", dep.Name, err, c.Args)
			}
			for _, a := range c.Args {
				if strings.HasPrefix(a, "--stderrthreshold") && !slices.ContainsFunc(warnings, func(w string) bool { return strings.HasPrefix(w, "--stderrthreshold") }) {
					t.Errorf("Deployment %s: %s is accepted without a warning that it has no effect: %q", dep.Name, a, warnings)
				}
			}
			t.Logf("Deployment %s: %q -> warnings %q", dep.Name, c.Args, warnings)
			seen++
		}
	}
	if seen < 3 {
		t.Fatalf("upstream's chart rendered %d containers, want the recommender, updater and admission controller", seen)
	}
}

// migrationFlags renders the flag section of docs/migrating-from-vpa.md from upstreamFlags.
func migrationFlags() string {
	var b strings.Builder
	b.WriteString("| upstream flag | component | hvpa run | how |\n|---|---|---|---|\n")
	flags := slices.Clone(upstreamFlags)
	sort.SliceStable(flags, func(i, j int) bool { return flags[i].name < flags[j].name })
	for _, uf := range flags {
		hv := "`--" + uf.name + "`"
		switch uf.how {
		case alias:
			hv = "`--" + uf.hvpa + "`"
		case ignored:
			hv = "accepted, no effect (a warning at start)"
		case refused:
			hv = fmt.Sprintf("only `%s` (upstream's default); another value is refused", cmp.Or(uf.def, `""`))
		case differs:
			hv = "hvpa's flag of this name means something else"
		}
		fmt.Fprintf(&b, "| `--%s` | %s | %s | %s |\n", uf.name, uf.components, hv, strings.ReplaceAll(uf.why, "|", "\\|"))
	}
	fmt.Fprintf(&b, "| klog's `--%s` | all | accepted, no effect (a warning at start) | hvpa logs with zap: `--zap-log-level`, `--zap-encoder`; `--v` sets the level |\n",
		strings.Join(klogFlags, "`, `--"))
	return b.String()
}

func TestMigrationReference(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "migrating-from-vpa.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- BEGIN flags: generated from cmd/hvpa/upstreamflags.go by `go test ./cmd/hvpa -run MigrationReference -update` -->\n", "<!-- END flags -->"
	i, j := strings.Index(string(doc), begin), strings.Index(string(doc), end)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated flags section (%q ... %q)", path, begin, end)
	}
	want := string(doc[:i]) + begin + migrationFlags() + string(doc[j:])
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(doc) != want {
		t.Errorf("the flags of %s differ from upstreamFlags; run `go test ./cmd/hvpa -run MigrationReference -update`", path)
	}
}

// schemaPaths lists every property path of a CRD version's schema (.spec.updatePolicy.updateMode, ...).
func schemaPaths(s *apiextensionsv1.JSONSchemaProps, prefix string, out map[string]bool) {
	if s == nil {
		return
	}
	for name, p := range s.Properties {
		out[prefix+"."+name] = true
		schemaPaths(&p, prefix+"."+name, out)
	}
	if s.Items != nil {
		schemaPaths(s.Items.Schema, prefix+"[]", out)
	}
	if s.AdditionalProperties != nil {
		schemaPaths(s.AdditionalProperties.Schema, prefix+"{}", out)
	}
}

// crdVersion is what a CRD says of one version besides its schema: whether it is served, and the
// subresources it has ("status,scale"), which decide what a create or a patch of the object stores.
type crdVersion struct {
	served       bool
	subresources string
}

// crdVersions reads the CRDs of a YAML file: "kind/version" -> property paths, and how it is served.
func crdVersions(t *testing.T, path string) (map[string]map[string]bool, map[string]crdVersion) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	paths, served := map[string]map[string]bool{}, map[string]crdVersion{}
	for _, doc := range strings.Split(string(data), "\n---") {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := sigsyaml.Unmarshal([]byte(doc), crd); err != nil || crd.Kind != "CustomResourceDefinition" {
			continue
		}
		for _, v := range crd.Spec.Versions {
			key := crd.Spec.Names.Kind + "/" + v.Name
			var subs []string
			if v.Subresources != nil && v.Subresources.Status != nil {
				subs = append(subs, "status")
			}
			if v.Subresources != nil && v.Subresources.Scale != nil {
				subs = append(subs, "scale")
			}
			paths[key], served[key] = map[string]bool{}, crdVersion{v.Served, strings.Join(subs, ",")}
			if v.Schema != nil {
				schemaPaths(v.Schema.OpenAPIV3Schema, "", paths[key])
			}
		}
	}
	return paths, served
}

// TestCRDsHaveUpstreamFields: hvpa's VerticalPodAutoscaler and checkpoint CRDs have every field of upstream's
// (its module's deploy/vpa-v1-crd-gen.yaml), in v1 and in the unserved v1beta2 entries upstream keeps, and
// its subresources: upstream's recommender writes a checkpoint's status in the object, which a status
// subresource would drop.
func TestCRDsHaveUpstreamFields(t *testing.T) {
	upstream, upServed := crdVersions(t, filepath.Join(upstreamModule(t), "deploy", "vpa-v1-crd-gen.yaml"))
	ours := map[string]map[string]bool{}
	ourServed := map[string]crdVersion{}
	for _, f := range []string{"autoscaling.k8s.io_verticalpodautoscalers.yaml", "autoscaling.k8s.io_verticalpodautoscalercheckpoints.yaml"} {
		p, s := crdVersions(t, filepath.Join("..", "..", "charts", "hvpa", "crds", f))
		maps.Copy(ours, p)
		maps.Copy(ourServed, s)
	}
	if len(upstream) != 4 {
		t.Fatalf("upstream's CRDs have versions %v, want VerticalPodAutoscaler and its checkpoint in v1 and v1beta2", slices.Sorted(maps.Keys(upstream)))
	}
	for key, fields := range upstream {
		if _, ok := ours[key]; !ok {
			t.Errorf("%s: upstream has it, hvpa's CRD does not", key)
			continue
		}
		if ourServed[key] != upServed[key] {
			t.Errorf("%s: served and subresources %+v, upstream %+v", key, ourServed[key], upServed[key])
		}
		for f := range fields {
			if !ours[key][f] {
				t.Errorf("%s: upstream's field %s is missing", key, f)
			}
		}
	}
}

// valuePaths lists the leaf paths of a values.yaml (a.b.c; an empty map or a list is a leaf).
func valuePaths(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := sigsyaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for k, x := range m {
			if sub, ok := x.(map[string]any); ok && len(sub) > 0 {
				walk(sub, prefix+k+".")
				continue
			}
			out = append(out, prefix+k)
		}
	}
	walk(v, "")
	sort.Strings(out)
	return out
}

// TestMigrationChartValues: every value path of upstream's chart (its module's values.yaml) is in the chart
// table of docs/migrating-from-vpa.md, and every hvpa value the table names is in charts/hvpa/values.yaml.
func TestMigrationChartValues(t *testing.T) {
	upstreamValues := valuePaths(t, filepath.Join(upstreamModule(t), "charts", "vertical-pod-autoscaler", "values.yaml"))
	ours := valuePaths(t, filepath.Join("..", "..", "charts", "hvpa", "values.yaml"))
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "migrating-from-vpa.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	if i := strings.Index(section, "## Chart values"); i >= 0 {
		section = section[i:]
	} else {
		t.Fatal("docs/migrating-from-vpa.md has no Chart values section")
	}
	if i := strings.Index(section[1:], "\n## "); i >= 0 {
		section = section[:i+1]
	}
	components := []string{"recommender", "updater", "admissionController"}
	expand := func(p string) []string {
		for placeholder, names := range map[string][]string{"<c>": components, "<l>": components[:2]} {
			if strings.Contains(p, placeholder) {
				var out []string
				for _, c := range names {
					out = append(out, strings.ReplaceAll(p, placeholder, c))
				}
				return out
			}
		}
		return []string{p}
	}
	covers := func(pattern, path string) bool {
		if rest, ok := strings.CutSuffix(pattern, ".*"); ok {
			return strings.HasPrefix(path, rest+".")
		}
		return path == pattern
	}
	code := regexp.MustCompile("`([^`]+)`")
	var covered []string
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		rows++
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			covered = append(covered, expand(m[1])...)
		}
		for _, m := range code.FindAllStringSubmatch(cells[2], -1) {
			for _, p := range expand(m[1]) {
				if !slices.ContainsFunc(ours, func(o string) bool { return o == p || strings.HasPrefix(o, p+".") }) {
					t.Errorf("the chart table names hvpa value %s, which charts/hvpa/values.yaml does not have", p)
				}
			}
		}
	}
	if rows < 10 {
		t.Fatalf("the chart table has %d rows", rows)
	}
	for _, p := range upstreamValues {
		if !slices.ContainsFunc(covered, func(c string) bool { return covers(c, p) }) {
			t.Errorf("upstream's chart value %s is not in the chart table of docs/migrating-from-vpa.md", p)
		}
	}
}
