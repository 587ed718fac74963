package hvpa

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

func TestScalingIntervalMetric(t *testing.T) {
	// spec interval 0 has effective intervals of 1 and 2 replicas, spec interval 1 one of 4
	iv := []scaling.EffectiveInterval{{Replicas: 1, Source: 0}, {Replicas: 2, Source: 0}, {Replicas: 4, Source: 1}}
	h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "h"}}
	for replicas, want := range map[int32]float64{1: 0, 2: 0, 3: 1, 4: 1, 9: 1} {
		m := NewMetrics(prometheus.NewRegistry())
		m.observe(h, scaling.Decision{Intervals: iv, Replicas: replicas}, scaling.State{})
		if got := testutil.ToFloat64(m.Interval.WithLabelValues("ns", "h")); got != want {
			t.Errorf("%d replicas: scaling interval %v, want %v", replicas, got, want)
		}
	}
	m := NewMetrics(nil)
	m.observe(h, scaling.Decision{Replicas: 3}, scaling.State{}) // no intervals: no series
	if n := testutil.CollectAndCount(m.Interval); n != 0 {
		t.Errorf("without intervals: %d series, want 0", n)
	}
	m.observe(h, scaling.Decision{Intervals: iv, Replicas: 3}, scaling.State{})
	m.forget("ns", "h")
	if n := testutil.CollectAndCount(m.Interval); n != 0 {
		t.Errorf("after forget: %d series, want 0", n)
	}
}

// Without per-object series the gauges stay empty and the counters add up over all Hvpas.
func TestPerObjectMetricsOff(t *testing.T) {
	m := NewMetrics(nil)
	m.PerObject = false
	d := scaling.Decision{Replicas: 2, CurrentReplicas: 1, Intervals: []scaling.EffectiveInterval{{Replicas: 2}},
		Blocked: []scaling.BlockedPart{{Part: "replicas", Reason: hvpav1alpha1.BlockReasonSaturated}}}
	for _, name := range []string{"a", "b"} {
		h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
		m.observe(h, d, scaling.State{})
		m.blocked(h, hvpav1alpha1.BlockReasonSaturated)
		m.setUnsupported(h, true)
	}
	for name, g := range map[string]prometheus.Collector{"replicas": m.Replicas, "interval": m.Interval, "unsupported": m.Unsupported} {
		if n := testutil.CollectAndCount(g); n != 0 {
			t.Errorf("%s: %d series, want 0", name, n)
		}
	}
	if got := testutil.ToFloat64(m.Decisions.WithLabelValues("", "")); got != 2 {
		t.Errorf("decisions over all Hvpas %v, want 2", got)
	}
	if n, got := testutil.CollectAndCount(m.Blocked), testutil.ToFloat64(m.Blocked.WithLabelValues("", "", "Saturated")); n != 1 || got != 2 {
		t.Errorf("blocked: %d series, total %v; want one series of 2", n, got)
	}
}
