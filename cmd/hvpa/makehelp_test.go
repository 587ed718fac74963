package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// makeHelp renders what `make help` prints for a Makefile: its rule (the help target's awk program) read in
// Go. A target line `name: ... ## text` is "  name (padded to 18) text" with the text after the last "##"; a
// `##@ Section` line starts a section after an empty line.
func makeHelp(makefile string) (string, error) {
	data, err := os.ReadFile(makefile)
	if err != nil {
		return "", err
	}
	target := regexp.MustCompile(`^[a-zA-Z0-9_-]+:.*?##`)
	var b strings.Builder
	b.WriteString("Usage: make <target>\n")
	for _, line := range strings.Split(string(data), "\n") {
		if target.MatchString(line) {
			name := line[:strings.Index(line, ":")]
			text := line[strings.LastIndex(line, "##")+2:]
			fmt.Fprintf(&b, "  %-18s %s\n", name, text)
		}
		if strings.HasPrefix(line, "##@") {
			fmt.Fprintf(&b, "\n%s\n", line[min(len(line), 4):])
		}
	}
	return b.String(), nil
}

// TestReadmeMakefileHelp keeps the README's Makefile section what `make help` prints (every target and its
// description, from the Makefile's ## comments); -update rewrites it.
func TestReadmeMakefileHelp(t *testing.T) {
	want, err := makeHelp(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const open = "## Makefile\n\n```\n"
	start := strings.Index(string(readme), open)
	if start < 0 {
		t.Fatalf("README.md has no %q section followed by a code block", "## Makefile")
	}
	start += len(open)
	end := strings.Index(string(readme[start:]), "```")
	if end < 0 {
		t.Fatal("README.md's Makefile code block does not end")
	}
	end += start
	if *update {
		readme = []byte(string(readme[:start]) + want + string(readme[end:]))
		if err := os.WriteFile(path, readme, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := string(readme[start:end]); got != want {
		t.Errorf("README.md's Makefile section differs from `make help`; run `go test ./cmd/hvpa -run ReadmeMakefileHelp -update` and review the diff")
	}
}
