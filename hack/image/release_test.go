package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestReleaseCheck: `make release-check` passes for the version the chart names (its appVersion, the image
// tag the chart runs by default, is the version the binary and image are built with) and refuses others
// with the reason.
func TestReleaseCheck(t *testing.T) {
	chart, err := os.ReadFile("../../charts/hvpa/Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^appVersion: "?(v[^"\s]+)"?$`).FindSubmatch(chart)
	if m == nil {
		t.Fatal("Chart.yaml has no appVersion")
	}
	current := string(m[1])
	for version, want := range map[string]string{
		current:   "is consistent",
		"v99.0.0": "appVersion is " + current + ", not v99.0.0",
		"latest":  "is not vX.Y.Z",
	} {
		cmd := exec.Command("make", "-s", "release-check", "VERSION="+version)
		cmd.Dir = "../.."
		out, err := cmd.CombinedOutput()
		if (err == nil) != (want == "is consistent") || !strings.Contains(string(out), want) {
			t.Errorf("release-check VERSION=%s: %v\n%s\nwant %q", version, err, out, want)
		}
	}
}
