package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// refConst is one exported constant of the reference: its name, value and doc comment.
type refConst struct{ name, value, doc string }

// refSource is where one table of docs/reference.md comes from: the constants of file (relative to the
// module root) that match.
type refSource struct {
	file  string
	match func(name, typ string) bool
}

var referenceSections = []struct {
	title, intro string
	sources      []refSource
}{
	{"VerticalPodAutoscaler conditions", "Condition types in a VPA's status.", []refSource{
		{"apis/autoscaling/v1/verticalpodautoscaler_types.go", func(_, typ string) bool { return typ == "VerticalPodAutoscalerConditionType" }}}},
	{"VerticalPodAutoscaler condition reasons", "The reasons hvpa's recommender sets on them (and as event reasons on the VPA).", []refSource{
		{"apis/autoscaling/v1/reasons.go", func(n, _ string) bool { return strings.HasPrefix(n, "Reason") }}}},
	{"Hvpa conditions", "Condition types in an Hvpa's status.", []refSource{
		{"apis/autoscaling/v1alpha1/hvpa_status.go", func(n, _ string) bool { return strings.HasPrefix(n, "Condition") }}}},
	{"Hvpa condition reasons", "", []refSource{
		{"apis/autoscaling/v1alpha1/reasons.go", func(n, _ string) bool { return strings.HasPrefix(n, "Reason") }}}},
	{"Hvpa blocked-part reasons", "Why a part of a decision was not applied (status.lastBlockedScaling, ScalingBlocked events).", []refSource{
		{"apis/autoscaling/v1alpha1/hvpa_status.go", func(_, typ string) bool { return typ == "BlockReason" }}}},
	{"Event reasons", "Events on Hvpas, and the updater's on pods and their VPA or Hvpa (a skipped update says its reason first in the message).", []refSource{
		{"apis/autoscaling/v1alpha1/reasons.go", func(n, _ string) bool { return strings.HasPrefix(n, "Event") }},
		{"controllers/updater/events.go", func(n, _ string) bool { return strings.HasPrefix(n, "Event") || strings.HasPrefix(n, "Reason") }}}},
	{"Annotations", "", []refSource{
		// pod.AnnotationSizedBy is vpav1's (apis/autoscaling/v1/sizing.go), listed there
		{"webhooks/pod/handler.go", func(n, _ string) bool { return strings.HasPrefix(n, "Annotation") && n != "AnnotationSizedBy" }},
		{"apis/autoscaling/v1/startupboost.go", func(n, _ string) bool { return strings.HasPrefix(n, "Annotation") }},
		{"apis/autoscaling/v1/sizing.go", func(n, _ string) bool { return strings.HasPrefix(n, "Annotation") }},
		{"recommender/overrides.go", func(n, _ string) bool { return strings.HasPrefix(n, "Annotation") && n != "AnnotationPrefix" }},
		{"recommender/adaptive/config.go", func(n, _ string) bool { return n == "AnnotationModel" }},
		{"controllers/hvpa/hvpa_controller.go", func(n, _ string) bool { return strings.HasPrefix(n, "Annotation") }}}},
	{"Labels", "", []refSource{
		{"controllers/recommender/checkpoints.go", func(n, _ string) bool { return strings.HasSuffix(n, "Label") }}}},
}

// fileConsts parses a Go file's exported constants, with their type (when declared), value (string
// literals, and + of them, and constants of the same files) and doc comment (the spec's own, else the
// comment on the run of constants it belongs to).
func fileConsts(t *testing.T, root, file string, known map[string]string) []struct {
	refConst
	typ string
} {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, file), nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []struct {
		refConst
		typ string
	}
	var value func(e ast.Expr) string
	value = func(e ast.Expr) string {
		switch x := e.(type) {
		case *ast.BasicLit:
			s, _ := strconv.Unquote(x.Value)
			return s
		case *ast.BinaryExpr:
			return value(x.X) + value(x.Y)
		case *ast.Ident:
			return known[x.Name]
		case *ast.SelectorExpr:
			return known[x.Sel.Name]
		}
		return ""
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		group := strings.TrimSpace(g.Doc.Text()) // the block's comment, until a comment over a run replaces it
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			doc := strings.TrimSpace(vs.Doc.Text())
			if doc != "" && len(vs.Names) == 1 && !strings.HasPrefix(doc, vs.Names[0].Name) {
				group = doc // a comment over a run of constants
			}
			if doc == "" {
				doc = strings.TrimSpace(vs.Comment.Text())
			}
			if doc == "" {
				doc = group
			}
			typ := ""
			if id, ok := vs.Type.(*ast.Ident); ok {
				typ = id.Name
			}
			for i, n := range vs.Names {
				if !n.IsExported() || i >= len(vs.Values) {
					continue
				}
				v := value(vs.Values[i])
				known[n.Name] = v
				out = append(out, struct {
					refConst
					typ string
				}{refConst{n.Name, v, strings.Join(strings.Fields(doc), " ")}, typ})
			}
		}
	}
	return out
}

// reference renders docs/reference.md from the constants of referenceSections.
func reference(t *testing.T) string {
	t.Helper()
	root := filepath.Join("..", "..")
	known := map[string]string{}
	// the values other files refer to (vpav1 reasons in v1alpha1, AnnotationPrefix)
	for _, f := range []string{"apis/autoscaling/v1/reasons.go", "recommender/overrides.go"} {
		fileConsts(t, root, f, known)
	}
	var b strings.Builder
	b.WriteString("# Reference: conditions, reasons, events, annotations and labels\n\n")
	b.WriteString("<!-- generated from the constants of the code by `go test ./cmd/hvpa -run Reference -update`; a test checks it -->\n\n")
	for _, sec := range referenceSections {
		fmt.Fprintf(&b, "## %s\n\n", sec.title)
		if sec.intro != "" {
			b.WriteString(sec.intro + "\n\n")
		}
		b.WriteString("| value | constant | notes |\n|---|---|---|\n")
		for _, src := range sec.sources {
			for _, c := range fileConsts(t, root, src.file, known) {
				if !src.match(c.name, c.typ) {
					continue
				}
				if c.value == "" {
					t.Errorf("%s %s: no value could be read", src.file, c.name)
				}
				fmt.Fprintf(&b, "| `%s` | `%s` (%s) | %s |\n", c.value, c.name, filepath.Dir(src.file), strings.ReplaceAll(c.doc, "|", "\\|"))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestReference: docs/reference.md is what the code's constants say, and every annotation or label key of
// hvpa's (autoscaling.hvpa.dev/..., recommender.hvpa.dev/...) in the product code is in it.
func TestReference(t *testing.T) {
	want := reference(t)
	generatedDoc(t, "reference.md", want, "the code's constants", "Reference")
	key := regexp.MustCompile(`"((?:autoscaling|recommender)\.hvpa\.dev/[a-z0-9-]*)"`)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() && (strings.HasPrefix(rel, ".") && rel != "." || rel == "test" || rel == "hack" || rel == "e2e" || rel == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range key.FindAllStringSubmatch(string(src), -1) {
			if m[1] == "recommender.hvpa.dev/" {
				continue // the prefix of the override annotations
			}
			if !strings.Contains(want, "`"+m[1]+"`") {
				t.Errorf("%s uses %s, which docs/reference.md does not list: make it a constant in one of the reference's sources", rel, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
