package recommender

import (
	"strings"
	"testing"
	"time"
)

func TestWithOverrides(t *testing.T) {
	c, err := WithOverrides(Defaults(), map[string]string{
		AnnotationOOMBumpUpRatio: "1.5", AnnotationOOMMinBumpUp: "200Mi", AnnotationMemoryAggregationInterval: "12h",
		AnnotationMemoryAggregationIntervalCount: "14", AnnotationTargetPercentile: "0.95", AnnotationSafetyMargin: "0.25",
		"unrelated.example.com/x": "kept out",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.OOMBumpUpRatio != 1.5 || c.OOMMinBumpUp != 200<<20 || c.MemoryAggregationInterval != 12*time.Hour ||
		c.MemoryAggregationIntervalCount != 14 || c.TargetPercentile != 0.95 || c.SafetyMargin != 0.25 {
		t.Errorf("overrides not applied: %+v", c)
	}
	m, err := NewModel(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.OOMNeeded(1000 * mi); got != 1500*mi {
		t.Errorf("OOM with ratio 1.5 at 1000Mi: %v Mi", got/mi)
	}
	for name, tc := range map[string]struct{ key, value, want string }{
		"ratio below 1":        {AnnotationOOMBumpUpRatio, "0.9", "not a number >= 1"},
		"not a quantity":       {AnnotationOOMMinBumpUp, "lots", "not a memory quantity"},
		"zero interval":        {AnnotationMemoryAggregationInterval, "0s", "not a positive duration"},
		"count zero":           {AnnotationMemoryAggregationIntervalCount, "0", "not an integer >= 1"},
		"percentile above 1":   {AnnotationTargetPercentile, "90", "not a number in (0, 1]"},
		"percentile below P50": {AnnotationTargetPercentile, "0.3", "must be ordered"},
		"negative margin":      {AnnotationSafetyMargin, "-0.1", "not a fraction >= 0"},
		"typo":                 {AnnotationPrefix + "oom-bumpup-ratio", "2", "is not an override; known:"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := WithOverrides(Defaults(), map[string]string{tc.key: tc.value})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
