package updater

import (
	"fmt"
	"testing"
	"time"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// BenchmarkPlan500Pods plans one workload of 500 pods, half of them outside the bounds: the updater's
// per-workload work in one loop besides the API calls.
func BenchmarkPlan500Pods(b *testing.B) {
	c := vpaCtl(vpav1.UpdateModeInPlaceOrRecreate, 500, 400, 600)
	pods := make([]Pod, 500)
	for i := range pods {
		req := 500.0
		if i%2 == 0 {
			req = 100
		}
		pods[i] = pod(fmt.Sprintf("p%d", i), time.Hour, req, 2*req)
	}
	o := DefaultOptions()
	b.ReportAllocs()
	for b.Loop() {
		if a := Plan(c, pods, now, o); len(a) != 250 {
			b.Fatalf("%d actions, want 250", len(a))
		}
	}
}
