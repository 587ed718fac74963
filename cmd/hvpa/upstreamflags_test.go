package main

import (
	"strings"
	"testing"
	"time"
)

// TestUpstreamFlags: an upstream VPA args list runs unchanged: upstream's names reach the options with
// upstream's meaning, Prometheus durations like 8d parse, and a value hvpa cannot honour is refused with the
// flag named.
func TestUpstreamFlags(t *testing.T) {
	parse := func(t *testing.T, args ...string) *runOptions {
		t.Helper()
		cmd, o := newRunCommandOptions()
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return o
	}
	o := parse(t, "--address=:8942", "--v=4", "--history-length=8d", "--history-resolution=1h", "--prometheus-query-timeout=5m",
		"--in-place-skip-disruption-budget=false", "--kube-api-qps=50", "--kube-api-burst=100",
		"--recommendation-margin-fraction=0.2", "--pod-recommendation-min-cpu-millicores=50", "--pod-recommendation-min-memory-mb=100",
		"--target-cpu-percentile=0.95", "--target-memory-percentile=0.95", "--cpu-histogram-decay-half-life=12h",
		"--memory-histogram-decay-half-life=48h", "--memory-aggregation-interval=12h", "--memory-aggregation-interval-count=16",
		"--oom-bump-up-ratio=1.5", "--oom-min-bump-up-bytes=209715200", "--round-cpu-millicores=10", "--round-memory-bytes=1048576")
	if o.metricsAddr != ":8942" {
		t.Errorf("--address: metrics address %q", o.metricsAddr)
	}
	if o.prometheus.HistoryLength != 8*24*time.Hour || o.prometheus.Resolution != time.Hour || o.prometheus.Timeout != 5*time.Minute {
		t.Errorf("history %s, resolution %s, timeout %s", o.prometheus.HistoryLength, o.prometheus.Resolution, o.prometheus.Timeout)
	}
	if o.updater.InPlaceSkipDisruptionBudget {
		t.Error("--in-place-skip-disruption-budget=false did not reach the updater")
	}
	m, err := o.model.model()
	if err != nil || m == nil {
		t.Fatalf("model flags: %v, %v", m, err)
	}
	if m.SafetyMargin != 0.2 || m.PodMinCPU != 0.05 || m.PodMinMemory != 100<<20 || m.TargetPercentile != 0.95 ||
		m.CPUHalfLife != 12*time.Hour || m.MemoryHalfLife != 48*time.Hour || m.MemoryAggregationInterval != 12*time.Hour ||
		m.MemoryAggregationIntervalCount != 16 || m.OOMBumpUpRatio != 1.5 || m.OOMMinBumpUp != 200<<20 ||
		m.RoundCPUMillicores != 10 || m.RoundMemoryBytes != 1<<20 {
		t.Errorf("model from upstream's flags: %+v", *m)
	}
	if m, err := parse(t).model.model(); m != nil || err != nil {
		t.Errorf("no model flag: %+v, %v; want the defaults (nil)", m, err)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--target-cpu-percentile=0.9", "--target-memory-percentile=0.95"}, "--target-cpu-percentile=0.9 and --target-memory-percentile=0.95"},
		{[]string{"--oom-bump-up-ratio=0.5"}, "--oom-bump-up-ratio 0.5: must be a number in [1, 10]"}, // by the flag's name
	} {
		if _, err := parse(t, tc.args...).model.model(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one naming %q", tc.args, err, tc.want)
		}
	}
	applied := func(t *testing.T, args ...string) (*runOptions, []string, error) {
		t.Helper()
		cmd, o := newRunCommandOptions()
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		w, err := o.upstream.apply(cmd.Flags(), o)
		return o, w, err
	}
	for _, tc := range []struct {
		args    []string
		lease   string // the --admission-lease it gives
		warning string // a warning it gives
		err     string // the error it gives
	}{
		{args: []string{"--confidence-interval-cpu=24h"}},
		{args: []string{"--confidence-interval-cpu=12h"}, err: "--confidence-interval-cpu=12h: not supported by hvpa"},
		{args: []string{"--use-external-metrics"}, err: "--use-external-metrics=true: not supported"},
		{args: []string{"--register-webhook=true", "--stderrthreshold=info"}, warning: "--register-webhook has no effect"},
		{args: []string{"--log_dir=/tmp"}, warning: "--log-dir has no effect"},
		{args: []string{"--use-admission-controller-status=false"}, lease: "-"},
		{args: []string{"--status-lease-namespace=vpa", "--status-lease-name=status", "--admission-controller-status-lease-namespace=vpa",
			"--admission-controller-status-lease-name=status"}, lease: "vpa/status"},
		{args: []string{"--status-lease-name=a", "--admission-controller-status-lease-name=b"}, err: "name different Leases"},
	} {
		o, warnings, err := applied(t, tc.args...)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		case err != nil:
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if o.admissionLease != tc.lease {
			t.Errorf("%q: --admission-lease %q, want %q", tc.args, o.admissionLease, tc.lease)
		}
		if tc.warning != "" && !strings.Contains(strings.Join(warnings, "\n"), tc.warning) {
			t.Errorf("%q: warnings %q, want %q", tc.args, warnings, tc.warning)
		}
	}
	if err := newRunCommand().Flags().Parse([]string{"--history-length=8 days"}); err == nil || !strings.Contains(err.Error(), "Prometheus' format") {
		t.Errorf("--history-length=8 days: %v", err)
	}
}
