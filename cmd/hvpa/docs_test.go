package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the outputs of the examples in docs/cli.md and docs/simulate.md (and its scores table) from this build")

// exampleBlock matches a console block of docs/cli.md: "$ hvpa ARGS" then the printed output.
var exampleBlock = regexp.MustCompile("(?s)```console\n\\$ (hvpa [^\n]*)\n(.*?)```")

// TestDocumentedExamples runs every `$ hvpa ...` example of docs/cli.md from the repository root and
// compares what it prints with what the page shows. `go test ./cmd/hvpa -run Documented -update` rewrites
// the page from this build: review the diff.
func TestDocumentedExamples(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	page, err := os.ReadFile("docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := exampleBlock.FindAllSubmatchIndex(page, -1)
	if len(blocks) < 6 {
		t.Fatalf("docs/cli.md has %d examples, want at least 6", len(blocks))
	}
	var out strings.Builder
	last := 0
	for _, b := range blocks {
		command := string(page[b[2]:b[3]])
		want := string(page[b[4]:b[5]])
		got, runErr := runCommand(t, strings.Fields(command)[1:]...)
		if strings.HasPrefix(want, "Error: ") != (runErr != nil) {
			t.Errorf("%s: error %v, but the page shows %q", command, runErr, firstLine(want))
		}
		if got != want && !*update {
			t.Errorf("%s prints something else than docs/cli.md shows:\n--- got\n%s--- page\n%s", command, got, want)
		}
		out.Write(page[last:b[4]])
		out.WriteString(got)
		last = b[5]
	}
	out.Write(page[last:])
	if *update {
		if err := os.WriteFile("docs/cli.md", []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func firstLine(s string) string { return strings.SplitN(s, "\n", 2)[0] }
