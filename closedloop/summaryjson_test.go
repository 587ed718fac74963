package closedloop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadSummaries: the summaries written as a SummaryDocument (as --summary-json writes them) read back the
// same, and a file that is not one is an error naming it.
func TestReadSummaries(t *testing.T) {
	dir := t.TempDir()
	want := []Summary{{Namespace: "ns", Workload: "w", Policy: "hvpa", CPUProvidedOverDemand: 1.25}, {Namespace: "ns", Workload: "w", Policy: "vpa"}}
	data, err := json.Marshal(SummaryDocument{Workloads: want})
	if err != nil {
		t.Fatal(err)
	}
	good, bad := filepath.Join(dir, "good.json"), filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSummaries(good)
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("ReadSummaries = %+v, %v; want %+v", got, err, want)
	}
	if _, err := ReadSummaries(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a broken file: %v, want an error naming %s", err, bad)
	}
}
