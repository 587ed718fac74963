package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// makeHelp is what `make help` prints in the repository: the Makefile's own rule (its help target), run.
func makeHelp(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("make")
	if err != nil {
		t.Skip("make is not on PATH: the README's Makefile section is what `make help` prints, and that needs make")
	}
	out, err := exec.Command(bin, "-s", "--no-print-directory", "-C", filepath.Join("..", ".."), "help").Output()
	if err != nil {
		t.Fatalf("make help: %v", err)
	}
	return string(out)
}

// TestReadmeMakefileHelp keeps the README's Makefile section what `make help` prints (every target and its
// description, from the Makefile's ## comments); -update rewrites it.
func TestReadmeMakefileHelp(t *testing.T) {
	want := makeHelp(t)
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
