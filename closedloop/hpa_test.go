package closedloop

import (
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// cpuUtilization is a Resource metric on CPU with a utilization target.
func cpuUtilization(pct int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(pct)}}}
}

// readyPods are n ready pods of 500m each using cpu millicores.
func readyPods(n int, cpu float64) []hpaPod {
	out := make([]hpaPod, n)
	for i := range out {
		out[i] = hpaPod{hasMetric: true, requests: scaling.V(500, 1<<30), usage: scaling.V(cpu, 1<<29)}
	}
	return out
}

// baseline is the HPA of the hpa policy (upstream's default behavior, a 300s scale-down window) on 80% CPU.
func baseline(current, maxReplicas int32) *hpaModel {
	return newHPA(hvpav1alpha1.HpaTemplate{MinReplicas: ptr.To[int32](1), MaxReplicas: maxReplicas, Metrics: []autoscalingv2.MetricSpec{cpuUtilization(80)}},
		DefaultHPA(), current, 5*time.Minute)
}

// TestHPAReplicaCalculator: one sync's proposal follows upstream's replica calculator: the tolerance, ceil of
// the ratio over the ready pods, unready pods as 0 on a scale-up (and left out otherwise), pods without a
// metric as 0 on a scale-up and as their request on a scale-down, no change when that turns the direction
// around, whole-percent utilization, AverageValue targets.
func TestHPAReplicaCalculator(t *testing.T) {
	pending := hpaPod{pending: true, requests: scaling.V(500, 1<<30)}
	smallPending := hpaPod{pending: true, requests: scaling.V(250, 1<<30)}
	young := hpaPod{cpuUnready: true, hasMetric: true, requests: scaling.V(500, 1<<30), usage: scaling.V(900, 1<<29)}
	missing := hpaPod{requests: scaling.V(500, 1<<30)}
	bigMissing := hpaPod{requests: scaling.V(1000, 1<<30)}
	util120 := cpuUtilization(120)
	avg := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resource.MustParse("200m"))}}}
	cases := map[string]struct {
		current int32
		pods    []hpaPod
		metric  *autoscalingv2.MetricSpec
		want    int32
		valid   bool
	}{
		"at target":                     {2, readyPods(2, 400), nil, 2, true},
		"within the tolerance (1.0875)": {2, readyPods(2, 435), nil, 2, true},
		// 88% against 80% is a ratio of 1.1: within, as upstream compares 1 - 0.1 <= ratio <= 1 + 0.1 (|1 - 1.1|
		// is 0.10000000000000009 in floats)
		"at the tolerance's upper edge (1.1)": {2, readyPods(2, 440), nil, 2, true},
		"beyond the tolerance (1.125)":        {4, readyPods(4, 450), nil, 5, true},
		"within below (0.9)":                  {4, readyPods(4, 360), nil, 4, true},
		"beyond below (0.875)":                {4, readyPods(4, 350), nil, 4, true}, // ceil(0.875 x 4) = 4: the ceiling keeps it
		"halved load":                         {4, readyPods(4, 200), nil, 2, true}, // 40% / 80%: ceil(0.5 x 4)
		"no ready pod":                        {2, []hpaPod{pending, missing}, nil, 0, false},
		// 2 x 900m on 500m: 2.25 (ceil(4.5) = 5 over the ready pods); with the two pending pods of 250m at 0
		// over all requests: 1800/1500 = 1.5 -> ceil(6)
		"pending pods count 0 going up": {4, append(readyPods(2, 900), smallPending, smallPending), nil, 6, true},
		// 2.5 over the ready pod, 0.625 with the pending ones at 0: the direction turns around, the replicas stay
		"pending pods turning the direction": {4, append(readyPods(1, 1000), pending, pending, pending), nil, 4, true},
		// a young pod at 900m is left out: 2 x 100m is 0.25 -> 1
		"young pods are left out going down": {3, append(readyPods(2, 100), young), nil, 1, true},
		// 0.5 over the ready pods; the missing one at its request: 900/1500 = 0.75 -> ceil(2.25) = 3
		"missing pods count their request going down": {3, append(readyPods(2, 200), missing), nil, 3, true},
		// a target above 100%: the missing pods count at the target going down (upstream's max(100, target)):
		// (200m + 4 x 600m) / 3000m = 86% against 120% -> ceil(0.7167 x 6) = 5 (at 100% of their request: 4)
		"missing pods count the target above 100% going down": {6, append(readyPods(2, 100), missing, missing, missing, missing), &util120, 5, true},
		// 2.0 over the ready pods; the missing one (1000m) at 0: 1600/2000 = 1.0, within the tolerance
		"missing pods count 0 going up": {3, append(readyPods(2, 800), bigMissing), nil, 3, true},
		// 96.18% is 96% for the controller: 1.2 -> 12, not ceil(12.02) = 13
		"whole percent":        {10, readyPods(10, 480.9), nil, 12, true},
		"average value":        {2, readyPods(2, 300), &avg, 3, true},
		"average value within": {2, readyPods(2, 210), &avg, 2, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := baseline(tc.current, 100)
			m := cpuUtilization(80)
			if tc.metric != nil {
				m = *tc.metric
			}
			got, valid, _ := h.metricReplicas(m, tc.current, tc.pods)
			if valid != tc.valid || (valid && got != tc.want) {
				t.Errorf("proposal %d (valid %v), want %d (valid %v)", got, valid, tc.want, tc.valid)
			}
		})
	}
}

// TestHPABehavior: the behavior's windows and rate limits over consecutive syncs, as upstream's
// normalizeDesiredReplicasWithBehaviors does with the API's defaults: scale-ups at once but by at most
// max(4 pods, 100%) per 15s, scale-downs held for the 300s window (the highest recommendation in it), none for
// an Hvpa's HPA, a template's policies instead of the defaults, and the bounds.
func TestHPABehavior(t *testing.T) {
	t0 := time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC).Unix()
	type sync struct {
		cpu  float64 // per pod, millicores, on `current` ready pods
		want int32
	}
	run := func(t *testing.T, h *hpaModel, syncs []sync) {
		t.Helper()
		current := h.desired
		for i, s := range syncs {
			got := h.sync(t0+int64(15*i), current, readyPods(int(current), s.cpu))
			if got != s.want {
				t.Fatalf("sync %d (%ds): %d pods at %gm -> %d, want %d", i, 15*i, current, s.cpu, got, s.want)
			}
			current = got
		}
	}
	t.Run("scale-up by at most max(4 pods, 100%) per 15s", func(t *testing.T) {
		// 1 pod at 10x its target wants 13: 1 -> 5 (4 pods beat 100%), 5 -> 10 (100% beats 4 pods), then the
		// ratio over 10 pods is 1.3: 13
		run(t, baseline(1, 100), []sync{{4000, 5}, {800, 10}, {500, 13}, {320, 13}})
	})
	t.Run("scale-up capped by maxReplicas", func(t *testing.T) {
		run(t, baseline(2, 3), []sync{{4000, 3}, {4000, 3}})
	})
	t.Run("scale-down held by the 300s window", func(t *testing.T) {
		// 8 pods whose load halves at once: the recommendation (4) waits until the higher ones leave the window
		syncs := []sync{{400, 8}}
		for i := 1; i < 20; i++ {
			syncs = append(syncs, sync{200, 8})
		}
		syncs = append(syncs, sync{200, 4})
		run(t, baseline(8, 100), syncs)
	})
	t.Run("the replicas first seen are in the window", func(t *testing.T) {
		// upstream's recordInitialRecommendation: a new HPA on 8 pods whose load is half its target scales
		// down only once the 8 it first saw leave the window
		syncs := []sync{}
		for range 20 {
			syncs = append(syncs, sync{200, 8})
		}
		run(t, baseline(8, 100), append(syncs, sync{200, 4}))
	})
	t.Run("the highest recommendation of the window wins", func(t *testing.T) {
		// a short rise to 12 (rate-limited from 8) keeps the replicas up for the window after it
		h := baseline(8, 100)
		run(t, h, []sync{{400, 8}, {600, 12}, {200, 12}, {200, 12}})
	})
	t.Run("an Hvpa's HPA has no scale-down window", func(t *testing.T) {
		h := newHPA(hvpav1alpha1.HpaTemplate{MaxReplicas: 10, Metrics: []autoscalingv2.MetricSpec{cpuUtilization(80)}}, DefaultHPA(), 8, 0)
		run(t, h, []sync{{400, 8}, {200, 4}})
	})
	t.Run("the template's scale-down policy: 1 pod per minute", func(t *testing.T) {
		h := newHPA(hvpav1alpha1.HpaTemplate{MaxReplicas: 10, Metrics: []autoscalingv2.MetricSpec{cpuUtilization(80)},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](0),
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}}}}, DefaultHPA(), 8, 0)
		// 8 -> 7, then held for the rest of the minute, then 6
		run(t, h, []sync{{100, 7}, {100, 7}, {100, 7}, {100, 7}, {100, 6}})
	})
	// an HPA without behavior (kubectl autoscale's): upstream's normalizeDesiredReplicas, scale-ups limited to
	// max(2 x current, 4) per sync and the highest recommendation of the 300s window taken, also above the
	// current replicas
	legacy := func(current int32) *hpaModel {
		return newBaselineHPA(hvpav1alpha1.HpaTemplate{MinReplicas: ptr.To[int32](1), MaxReplicas: 100, Metrics: []autoscalingv2.MetricSpec{cpuUtilization(80)}},
			DefaultHPA(), current)
	}
	t.Run("no behavior: scale-up by at most max(2 x current, 4) per sync", func(t *testing.T) {
		// 1 pod at 10x its target wants 10: 1 -> 4 (not 5), 4 -> 8, then 10
		run(t, legacy(1), []sync{{4000, 4}, {800, 8}, {500, 10}, {400, 10}})
	})
	t.Run("no behavior: a recommendation of the window above the replicas is taken", func(t *testing.T) {
		// 4 pods want 10 (limited to 8), then 6: the window's 10 wins, where the behavior path stays at 8
		run(t, legacy(4), []sync{{1000, 8}, {300, 10}})
		run(t, baseline(4, 100), []sync{{1000, 8}, {300, 8}})
	})
	t.Run("no behavior: scale-down held by the 300s window, its edge included", func(t *testing.T) {
		syncs := []sync{{400, 8}}
		for i := 1; i <= 20; i++ { // the first recommendation, 300s old at the 21st sync, still counts
			syncs = append(syncs, sync{200, 8})
		}
		run(t, legacy(8), append(syncs, sync{200, 4}))
	})
	t.Run("minReplicas", func(t *testing.T) {
		h := newHPA(hvpav1alpha1.HpaTemplate{MinReplicas: ptr.To[int32](2), MaxReplicas: 10, Metrics: []autoscalingv2.MetricSpec{cpuUtilization(80)}}, DefaultHPA(), 4, 0)
		run(t, h, []sync{{10, 2}, {10, 2}})
	})
}

// TestHPAInvalidMetric: as upstream's computeReplicasForMetrics, a metric that cannot be computed (CPU while
// every pod is in its CPU initialization period) stops a scale-down the others propose, not a scale-up.
func TestHPAInvalidMetric(t *testing.T) {
	memory := autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceMemory, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}}}
	young := func(n int, mem float64) []hpaPod {
		out := make([]hpaPod, n)
		for i := range out {
			out[i] = hpaPod{cpuUnready: true, hasMetric: true, requests: scaling.V(500, 1<<30), usage: scaling.V(100, mem)}
		}
		return out
	}
	for name, tc := range map[string]struct {
		mem  float64
		want int32
	}{
		"memory at 25% proposes 2: held":   {1 << 28, 4},
		"memory at 120% proposes 6: taken": {1.2 * (1 << 30), 6},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHPA(hvpav1alpha1.HpaTemplate{MaxReplicas: 10, Metrics: []autoscalingv2.MetricSpec{cpuUtilization(80), memory}}, DefaultHPA(), 4, 0)
			if got := h.sync(t0, 4, young(4, tc.mem)); got != tc.want {
				t.Errorf("4 pods, CPU not computable: %d replicas, want %d", got, tc.want)
			}
		})
	}
}

// TestHPADefaultMetric: a template without metrics scales on 80% CPU utilization, as the API defaults it.
func TestHPADefaultMetric(t *testing.T) {
	h := newHPA(hvpav1alpha1.HpaTemplate{MaxReplicas: 10}, DefaultHPA(), 2, 0)
	if got := h.sync(t0, 2, readyPods(2, 800)); got != 4 {
		t.Errorf("2 pods at 160%% of their request: %d replicas, want 4", got)
	}
}

// TestBaselineHPABehavior: the baselines' HPA has `behavior: {}` (the API's default rules) unless
// HPAConfig.NoBehavior, when it has none and its model takes the controller's older path.
func TestBaselineHPABehavior(t *testing.T) {
	h := &hvpav1alpha1.Hvpa{}
	for _, none := range []bool{false, true} {
		cfg := DefaultHPA()
		cfg.NoBehavior = none
		tpl := baselineHPA(h, cfg, false)
		if m := newBaselineHPA(tpl, cfg, 2); (tpl.Behavior == nil) != none || m.legacy != none {
			t.Errorf("NoBehavior %v: behavior %+v, older path %v", none, tpl.Behavior, m.legacy)
		}
	}
}

// TestHPAPodsReadAfterTheLastReadiness: within the CPU initialization period a pod's CPU counts once a whole
// window has been measured after its last readiness, as the HPA controller reads its Ready condition's last
// transition: a pod whose container restarted (an OOM kill) after its start is unready again until then
// (found in review: its first readiness was read).
func TestHPAPodsReadAfterTheLastReadiness(t *testing.T) {
	sim := &Simulator{opts: Options{HPA: DefaultHPA()}}
	p := &pod{created: 0, readyAt: 60, ctr: []podContainer{{restartAt: 200, startedAt: 200}}}
	w := &workload{run: &run{sim: sim}, pods: []*pod{p}}
	for _, tc := range []struct {
		prevMetric int64 // the start of the last closed window
		unready    bool
	}{{prevMetric: 120, unready: true}, {prevMetric: 180, unready: true}, {prevMetric: 240, unready: false}} {
		w.prevMetric = tc.prevMetric
		if got := w.hpaPods(250)[0].cpuUnready; got != tc.unready {
			t.Errorf("restarted at 200, last window from %d: cpuUnready %v, want %v", tc.prevMetric, got, tc.unready)
		}
	}
}
