package version

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	NewMetrics(reg)
	i := Get()
	want := `# HELP hvpa_build_info Always 1; the labels say which build runs: version, revision (git commit), go_version and platform.
# TYPE hvpa_build_info gauge
hvpa_build_info{go_version="` + i.GoVersion + `",platform="` + i.Platform + `",revision="` + i.Commit + `",version="` + i.Version + `"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "hvpa_build_info"); err != nil {
		t.Error(err)
	}
}
