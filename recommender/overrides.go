package recommender

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// AnnotationPrefix starts the annotations that override the model for one VerticalPodAutoscaler or Hvpa.
const AnnotationPrefix = "recommender.hvpa.dev/"

// The override annotations, their values and ranges.
const (
	// AnnotationOOMBumpUpRatio: a number >= 1, e.g. "1.5" (default 1.2).
	AnnotationOOMBumpUpRatio = AnnotationPrefix + "oom-bump-up-ratio"
	// AnnotationOOMMinBumpUp: a memory quantity >= 0, e.g. "200Mi" (default 100Mi).
	AnnotationOOMMinBumpUp = AnnotationPrefix + "oom-min-bump-up"
	// AnnotationMemoryAggregationInterval: a duration > 0, e.g. "12h" (default 24h).
	AnnotationMemoryAggregationInterval = AnnotationPrefix + "memory-aggregation-interval"
	// AnnotationMemoryAggregationIntervalCount: an integer >= 1, e.g. "14" (default 8).
	AnnotationMemoryAggregationIntervalCount = AnnotationPrefix + "memory-aggregation-interval-count"
	// AnnotationTargetPercentile: a number in (0, 1] between the bounds' percentiles, e.g. "0.95" (default 0.9).
	AnnotationTargetPercentile = AnnotationPrefix + "target-percentile"
	// AnnotationSafetyMargin: a fraction >= 0 added to every estimate, e.g. "0.25" (default 0.15).
	AnnotationSafetyMargin = AnnotationPrefix + "safety-margin"
)

// annotationModel chooses an object's model (adaptive.AnnotationModel); it is not a Config override.
const annotationModel = AnnotationPrefix + "model"

// WithOverrides applies the override annotations of one object to base and validates the result. Errors
// name the annotation and say what it takes; annotations under the prefix that are not overrides are
// errors too (a typo must not be silently ignored). An object without annotations under the prefix gets base
// as it is: a base is validated where it is made (the flags), not again for each object at each run.
func WithOverrides(base Config, annotations map[string]string) (Config, error) {
	var keys []string
	for k := range annotations {
		if strings.HasPrefix(k, AnnotationPrefix) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return base, nil
	}
	c := base
	var errs []error
	sort.Strings(keys)
	for _, k := range keys {
		if k == annotationModel {
			continue // the model choice, read by whoever picks the model (package adaptive)
		}
		parse, known := overrides[k]
		if !known {
			errs = append(errs, fmt.Errorf("annotation %s is not an override; known: %s", k, strings.Join(knownOverrides(), ", ")))
			continue
		}
		if want, ok := parse(&c, strings.TrimSpace(annotations[k])); !ok {
			errs = append(errs, fmt.Errorf("annotation %s: %q is not %s", k, annotations[k], want))
		}
	}
	if len(errs) > 0 {
		return base, errors.Join(errs...)
	}
	if err := c.Validate(); err != nil {
		return base, fmt.Errorf("annotations under %s: %w", AnnotationPrefix, err)
	}
	return c, nil
}

// overrides set one field of a configuration from an annotation's value; they return what the value must
// be, and whether it is.
var overrides = map[string]func(c *Config, v string) (string, bool){
	AnnotationOOMBumpUpRatio: func(c *Config, v string) (string, bool) {
		var ok bool
		c.OOMBumpUpRatio, ok = number(v, 1, MaxOOMBumpUpRatio, false)
		return fmt.Sprintf("a number in [1, %g] (e.g. 1.5)", float64(MaxOOMBumpUpRatio)), ok
	},
	AnnotationOOMMinBumpUp: func(c *Config, v string) (string, bool) {
		q, err := resource.ParseQuantity(v)
		c.OOMMinBumpUp = q.AsApproximateFloat64()
		return "a memory quantity in [0, 1Ti] (e.g. 200Mi)", err == nil && q.Sign() >= 0 && q.Cmp(*resource.NewQuantity(MaxOOMMinBumpUp, resource.BinarySI)) <= 0
	},
	AnnotationMemoryAggregationInterval: func(c *Config, v string) (string, bool) {
		d, err := time.ParseDuration(v)
		c.MemoryAggregationInterval = d
		return "a positive duration (e.g. 12h)", err == nil && d > 0
	},
	AnnotationMemoryAggregationIntervalCount: func(c *Config, v string) (string, bool) {
		n, err := strconv.Atoi(v)
		c.MemoryAggregationIntervalCount = n
		return "an integer >= 1 (e.g. 14)", err == nil && n >= 1
	},
	AnnotationTargetPercentile: func(c *Config, v string) (string, bool) {
		var ok bool
		c.TargetPercentile, ok = number(v, 0, 1, true)
		return "a number in (0, 1] (e.g. 0.95)", ok
	},
	AnnotationSafetyMargin: func(c *Config, v string) (string, bool) {
		var ok bool
		c.SafetyMargin, ok = number(v, 0, MaxSafetyMargin, false)
		return fmt.Sprintf("a fraction in [0, %g] (e.g. 0.25 for +25%%)", float64(MaxSafetyMargin)), ok
	},
}

// number parses a finite number in [lo, hi] ((lo, hi] when openLow).
func number(v string, lo, hi float64, openLow bool) (float64, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f > hi || f < lo || (openLow && f == lo) {
		return f, false
	}
	return f, true
}

func knownOverrides() []string {
	return []string{AnnotationOOMBumpUpRatio, AnnotationOOMMinBumpUp, AnnotationMemoryAggregationInterval,
		AnnotationMemoryAggregationIntervalCount, AnnotationTargetPercentile, AnnotationSafetyMargin}
}

// ContainerConfig applies the model fields of container's policy in rp (oomBumpUpRatio, oomMinBumpUp,
// memoryAggregationIntervalSeconds, memoryAggregationIntervalCount: upstream's per-container
// configuration) to cfg and validates the result; an error names the field. No such field: cfg, false.
func ContainerConfig(cfg Config, rp *vpav1.PodResourcePolicy, container string) (Config, bool, error) {
	p := rp.PolicyFor(container)
	if p == nil || (p.OOMBumpUpRatio == nil && p.OOMMinBumpUp == nil && p.MemoryAggregationIntervalSeconds == nil && p.MemoryAggregationIntervalCount == nil) {
		return cfg, false, nil
	}
	field := fmt.Sprintf("spec.resourcePolicy.containerPolicies[containerName=%s]", p.ContainerName)
	var errs []error
	if q := p.OOMBumpUpRatio; q != nil {
		cfg.OOMBumpUpRatio = q.AsApproximateFloat64()
		if cfg.OOMBumpUpRatio < 1 || cfg.OOMBumpUpRatio > MaxOOMBumpUpRatio {
			errs = append(errs, fmt.Errorf("%s.oomBumpUpRatio %s: must be in [1, %d] (e.g. 1.5)", field, q.String(), MaxOOMBumpUpRatio))
		}
	}
	if q := p.OOMMinBumpUp; q != nil {
		cfg.OOMMinBumpUp = q.AsApproximateFloat64()
		if q.Sign() < 0 || cfg.OOMMinBumpUp > MaxOOMMinBumpUp {
			errs = append(errs, fmt.Errorf("%s.oomMinBumpUp %s: must be a memory quantity in [0, 1Ti] (e.g. 200Mi)", field, q.String()))
		}
	}
	if s := p.MemoryAggregationIntervalSeconds; s != nil {
		cfg.MemoryAggregationInterval = time.Duration(*s) * time.Second
		if *s < 1 {
			errs = append(errs, fmt.Errorf("%s.memoryAggregationIntervalSeconds %d: must be at least 1", field, *s))
		}
	}
	if n := p.MemoryAggregationIntervalCount; n != nil {
		cfg.MemoryAggregationIntervalCount = int(min(*n, math.MaxInt32))
		if *n < 1 {
			errs = append(errs, fmt.Errorf("%s.memoryAggregationIntervalCount %d: must be at least 1", field, *n))
		}
	}
	if len(errs) == 0 {
		if err := cfg.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
		}
	}
	return cfg, true, errors.Join(errs...)
}
