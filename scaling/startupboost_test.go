package scaling

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

func TestBoostCPU(t *testing.T) {
	factor := func(f int32) *vpav1.GenericStartupBoost {
		return &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostFactor, Factor: ptr.To(f), DurationSeconds: ptr.To[int32](10)}
	}
	add := func(q string) *vpav1.GenericStartupBoost {
		return &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostQuantity, Quantity: ptr.To(resource.MustParse(q))}
	}
	for name, tc := range map[string]struct {
		b                  *vpav1.GenericStartupBoost
		req, lim           float64
		requestsOnly       bool
		maxCPU             float64
		wantReq, wantLimit float64
	}{
		"factor 3, no limit":                                      {factor(3), 300, -1, false, 0, 900, -1},
		"factor 3, the limit keeps its ratio":                     {factor(3), 300, 600, false, 0, 900, 1800},
		"guaranteed stays guaranteed":                             {factor(2), 500, 500, false, 0, 1000, 1000},
		"RequestsOnly: the limit stays, caps it 1m below":         {factor(3), 300, 600, true, 0, 599, 600},
		"RequestsOnly: boosted to the limit exactly, 1m below":    {factor(2), 300, 600, true, 0, 599, 600},
		"RequestsOnly: at its limit, not boosted (QoS stays)":     {factor(2), 500, 500, true, 0, 500, 500},
		"RequestsOnly: below the limit, boosted":                  {factor(2), 300, 1000, true, 0, 600, 1000},
		"quantity 500m is added":                                  {add("500m"), 250, -1, false, 0, 750, -1},
		"quantity: the limit keeps its ratio":                     {add("500m"), 250, 500, false, 0, 750, 1500},
		"quantity rounds up to a millicore":                       {add("0.0005"), 100, -1, false, 0, 101, -1},
		"no boost":                                                {nil, 300, 600, false, 0, 300, 600},
		"--max-allowed-cpu-boost caps, the limit keeps its ratio": {factor(3), 300, 600, false, 500, 500, 1000},
		"the cap never lowers the request":                        {factor(3), 300, 600, false, 200, 300, 600},
		"no request: nothing to boost":                            {factor(2), -1, -1, false, 0, -1, -1},
	} {
		req, lim := BoostCPU(tc.b, tc.req, tc.lim, tc.requestsOnly, tc.maxCPU)
		if req != tc.wantReq || lim != tc.wantLimit {
			t.Errorf("%s: %v/%v, want %v/%v", name, req, lim, tc.wantReq, tc.wantLimit)
		}
	}
	if d := BoostDuration(factor(3)); d != 10*time.Second {
		t.Errorf("duration %s, want 10s", d)
	}
	if d := BoostDuration(add("1")); d != 0 {
		t.Errorf("duration %s, want 0 (ends when Ready)", d)
	}
}
