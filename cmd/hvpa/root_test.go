package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hvpa-dev/hvpa/internal/version"
)

func runCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func TestVersion(t *testing.T) {
	out, err := runCommand(t, "version")
	if err != nil {
		t.Fatalf("hvpa version: %v", err)
	}
	if !strings.HasPrefix(out, "hvpa "+version.Version+" (go") {
		t.Errorf("hvpa version printed %q, want it to start with %q", out, "hvpa "+version.Version+" (go")
	}

	out, err = runCommand(t, "version", "-o", "json")
	if err != nil {
		t.Fatalf("hvpa version -o json: %v", err)
	}
	var info version.Info
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("hvpa version -o json printed invalid JSON %q: %v", out, err)
	}
	if info.Version != version.Version || info.GoVersion == "" {
		t.Errorf("hvpa version -o json = %+v, want version %q and a Go version", info, version.Version)
	}

	if _, err := runCommand(t, "version", "-o", "xml"); err == nil || !strings.Contains(err.Error(), "--output") {
		t.Errorf("hvpa version -o xml: error %v, want one naming --output", err)
	}
}
