package recommender

import (
	"math"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// TestWithOverridesWithoutAny: an object without annotations under the prefix gets base as it is, without
// validating it again (the recommender asks this of every VPA at every run; its base was validated from the
// flags): a base the flags would refuse shows it.
func TestWithOverridesWithoutAny(t *testing.T) {
	base := Defaults()
	base.TargetPercentile = 7 // refused by Validate: returned as it is
	c, err := WithOverrides(base, map[string]string{"unrelated.example.com/x": "kept out"})
	if err != nil || c != base {
		t.Errorf("no override: %+v, %v; want base as it is", c, err)
	}
	if _, err := WithOverrides(base, map[string]string{AnnotationSafetyMargin: "0.2"}); err == nil {
		t.Error("an override over a base Validate refuses: no error")
	}
}

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
	if got := m.Config.OOMBump(1000 * mi); got != 1500*mi {
		t.Errorf("OOM with ratio 1.5 at 1000Mi: %v Mi", got/mi)
	}
	for name, tc := range map[string]struct{ key, value, want string }{
		"ratio below 1":        {AnnotationOOMBumpUpRatio, "0.9", "not a number in [1, 10]"},
		"ratio infinite":       {AnnotationOOMBumpUpRatio, "Inf", "not a number in [1, 10]"},
		"ratio NaN":            {AnnotationOOMBumpUpRatio, "NaN", "not a number in [1, 10]"},
		"margin infinite":      {AnnotationSafetyMargin, "infinity", "not a fraction in [0, 10]"},
		"margin huge":          {AnnotationSafetyMargin, "1e300", "not a fraction in [0, 10]"},
		"bump beyond 1Ti":      {AnnotationOOMMinBumpUp, "8Ei", "not a memory quantity in [0, 1Ti]"},
		"not a quantity":       {AnnotationOOMMinBumpUp, "lots", "not a memory quantity"},
		"zero interval":        {AnnotationMemoryAggregationInterval, "0s", "not a positive duration"},
		"count zero":           {AnnotationMemoryAggregationIntervalCount, "0", "not an integer >= 1"},
		"percentile above 1":   {AnnotationTargetPercentile, "90", "not a number in (0, 1]"},
		"percentile below P50": {AnnotationTargetPercentile, "0.3", "must be ordered"},
		"negative margin":      {AnnotationSafetyMargin, "-0.1", "not a fraction in [0, 10]"},
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

// TestValidateRefusesNonFinite: flags and overrides meet Validate, which refuses NaN, infinities and values
// beyond the limits by name.
func TestValidateRefusesNonFinite(t *testing.T) {
	for name, tc := range map[string]struct {
		set  func(*Config)
		want string
	}{
		"NaN margin":       {func(c *Config) { c.SafetyMargin = math.NaN() }, "safetyMargin NaN: must be a finite number"},
		"infinite pod min": {func(c *Config) { c.PodMinMemory = math.Inf(1) }, "podMinMemory +Inf: must be a finite number"},
		"ratio 1e6":        {func(c *Config) { c.OOMBumpUpRatio = 1e6 }, "oomBumpUpRatio 1e+06: must be at most 10"},
	} {
		c := Defaults()
		tc.set(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	if err := Defaults().Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}

// TestContainerConfig: a container policy's model fields override the object's configuration for the
// containers the policy applies to (its own, else "*"), and a value out of range names the field.
func TestContainerConfig(t *testing.T) {
	q := resource.MustParse
	ratio, minBump, low := q("2"), q("50Mi"), q("0.9")
	rp := &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{
		{ContainerName: "*", OOMBumpUpRatio: &ratio, MemoryAggregationIntervalSeconds: ptr.To[int32](3600), MemoryAggregationIntervalCount: ptr.To[int64](48)},
		{ContainerName: "app", OOMMinBumpUp: &minBump},
		{ContainerName: "plain"},
		{ContainerName: "bad", OOMBumpUpRatio: &low},
	}}
	base := Defaults()
	for _, tc := range []struct {
		container string
		has       bool
		want      func(*Config)
		err       string
	}{
		{container: "other", has: true, want: func(c *Config) {
			c.OOMBumpUpRatio, c.MemoryAggregationInterval, c.MemoryAggregationIntervalCount = 2, time.Hour, 48
		}},
		{container: "app", has: true, want: func(c *Config) { c.OOMMinBumpUp = 50 << 20 }},
		{container: "plain"},
		{container: "bad", has: true, err: "spec.resourcePolicy.containerPolicies[containerName=bad].oomBumpUpRatio 900m: must be in [1, 10]"},
	} {
		got, has, err := ContainerConfig(base, rp, tc.container)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.container, err, tc.err)
			}
			continue
		}
		want := base
		if tc.want != nil {
			tc.want(&want)
		}
		if err != nil || has != tc.has || got != want {
			t.Errorf("%s: %+v, %v, %v; want %+v, %v", tc.container, got, has, err, want, tc.has)
		}
	}
	if _, has, err := ContainerConfig(base, nil, "app"); has || err != nil {
		t.Errorf("no policy: %v, %v", has, err)
	}
}
