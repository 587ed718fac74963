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
