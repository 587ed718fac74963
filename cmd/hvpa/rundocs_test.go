package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// runReference renders docs/run.md from the run command itself: its description and every flag with its
// default and meaning, so the page cannot miss or misstate a flag.
func runReference() string {
	cmd := newRunCommand()
	var b strings.Builder
	b.WriteString("# hvpa run\n\n")
	b.WriteString("<!-- generated from `hvpa run --help` by `go test ./cmd/hvpa -run RunReference -update`; a test checks it -->\n\n")
	b.WriteString("```text\n" + cmd.Long + "\n```\n\n")
	b.WriteString("Upstream VPA's flag names are accepted too: [migrating-from-vpa.md](migrating-from-vpa.md) maps each.\n\n")
	b.WriteString("| flag | default | meaning |\n|---|---|---|\n")
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		def := f.DefValue
		switch {
		case def == "" || def == "[]":
			def = ""
		case f.Name == "webhook-namespace":
			def = "$POD_NAMESPACE, else hvpa-system"
		case f.Name == "cert-dir":
			def = "$TMPDIR/k8s-webhook-server/serving-certs"
		}
		usage := strings.ReplaceAll(f.Usage, "|", "\\|")
		if def != "" {
			def = "`" + strings.ReplaceAll(def, "|", "\\|") + "`"
		}
		fmt.Fprintf(&b, "| `--%s` | %s | %s |\n", f.Name, def, usage)
	})
	return b.String()
}

// generatedDoc writes docs/<name> from want with -update, and fails the test when the file differs from it
// (what it is generated from, and the test that regenerates it, named in the message); it returns the file.
func generatedDoc(t *testing.T, name, want, from, test string) []byte {
	t.Helper()
	path := filepath.Join("..", "..", "docs", name)
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("docs/%s differs from %s; run `go test ./cmd/hvpa -run %s -update` and review the diff", name, from, test)
	}
	return got
}

func TestRunReference(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "")
	got := generatedDoc(t, "run.md", runReference(), "`hvpa run --help`", "RunReference")
	// every flag appears in the page
	newRunCommand().Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && !strings.Contains(string(got), "`--"+f.Name+"`") {
			t.Errorf("docs/run.md does not document --%s", f.Name)
		}
	})
}
