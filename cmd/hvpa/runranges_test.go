package main

import (
	"strings"
	"testing"
)

// TestRunRefusesOutOfRangeFlags: every numeric and duration flag of hvpa run outside its range (negative
// durations, zero intervals, percentiles outside (0, 1], NaN) is refused before anything starts, with the
// flag named; values at the edges of the ranges are accepted (the run then stops at the missing kubeconfig).
func TestRunRefusesOutOfRangeFlags(t *testing.T) {
	refused := map[string]string{
		"--checkpoints-timeout=0":                          "--checkpoints-timeout 0s: must be positive",
		"--checkpoints-timeout=-5s":                        "--checkpoints-timeout -5s: must be positive",
		"--checkpoints-gc-interval=0":                      "--checkpoints-gc-interval 0s: must be positive",
		"--graceful-shutdown-timeout=-1s":                  "--graceful-shutdown-timeout -1s: must not be negative",
		"--webhook-port=70000":                             "--webhook-port 70000: must be a port in 1..65535",
		"--kube-api-qps=NaN":                               "--kube-api-qps NaN: must be a positive rate",
		"--hvpa-low-confidence-days=NaN":                   "--hvpa-low-confidence-days NaN: must be above 0",
		"--history-length=0":                               "--history-length 0s: must be positive",
		"--history-resolution=-1h":                         "--history-resolution -1h0m0s: must be positive and at most --history-length",
		"--history-resolution=9d":                          "--history-resolution 216h0m0s: must be positive and at most --history-length",
		"--pod-update-threshold=NaN":                       "--pod-update-threshold NaN: must be a fraction of at least 0",
		"--eviction-tolerance=NaN":                         "--eviction-tolerance NaN: must be a fraction in [0, 1]",
		"--eviction-rate-limit=Inf":                        "--eviction-rate-limit +Inf: must be a number of evictions per second",
		"--eviction-rate-burst=0":                          "--eviction-rate-burst 0: must be at least 1",
		"--min-replicas=-1":                                "--min-replicas -1: must not be negative",
		"--pod-min-age=-1h":                                "--pod-min-age -1h0m0s: must not be negative",
		"--oom-window=-1m":                                 "--oom-window -1m0s: must not be negative",
		"--in-place-deferred-timeout=0":                    "--in-place-deferred-timeout 0s: must be positive",
		"--in-place-in-progress-timeout=-1m":               "--in-place-in-progress-timeout -1m0s: must be positive",
		"--update-loop-window=-1h":                         "--update-loop-window -1h0m0s: must not be negative",
		"--admission-lease-max-age=0":                      "--admission-lease-max-age 0s: must be positive",
		"--target-cpu-percentile=0":                        "--target-cpu-percentile 0: must be a percentile in (0, 1]",
		"--target-memory-percentile=1.5":                   "--target-memory-percentile 1.5: must be a percentile in (0, 1]",
		"--recommendation-lower-bound-cpu-percentile=-0.1": "--recommendation-lower-bound-cpu-percentile -0.1: must be a percentile in (0, 1]",
		"--recommendation-upper-bound-memory-percentile=2": "--recommendation-upper-bound-memory-percentile 2: must be a percentile in (0, 1]",
		"--cpu-histogram-decay-half-life=0":                "--cpu-histogram-decay-half-life 0s: must be positive",
		"--memory-histogram-decay-half-life=-24h":          "--memory-histogram-decay-half-life -24h0m0s: must be positive",
		"--memory-aggregation-interval=0":                  "--memory-aggregation-interval 0s: must be positive",
		"--memory-aggregation-interval-count=0":            "--memory-aggregation-interval-count 0: must be at least 1",
		"--recommendation-margin-fraction=-0.5":            "--recommendation-margin-fraction -0.5: must be a fraction in [0, 10]",
		"--pod-recommendation-min-cpu-millicores=-25":      "--pod-recommendation-min-cpu-millicores -25: must be a number of millicores of at least 0",
		"--pod-recommendation-min-memory-mb=NaN":           "--pod-recommendation-min-memory-mb NaN: must be a number of MiB of at least 0",
		"--oom-bump-up-ratio=0.5":                          "--oom-bump-up-ratio 0.5: must be a number in [1, 10]",
		"--oom-min-bump-up-bytes=-1":                       "--oom-min-bump-up-bytes -1: must be a number of bytes in [0, 1Ti]",
		"--round-cpu-millicores=0":                         "--round-cpu-millicores 0: must be at least 1",
		"--round-memory-bytes=-1":                          "--round-memory-bytes -1: must be at least 1",
		"--recommendation-lower-bound-memory-percentile=0": "--recommendation-lower-bound-memory-percentile 0: must be a percentile in (0, 1]",
	}
	for arg, want := range refused {
		if _, err := runCommand(t, "run", arg, "--kubeconfig", "/nonexistent/kubeconfig"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one containing %q", arg, err, want)
		}
	}
	// the edges of the ranges are accepted: the run gets past the flags and stops at the kubeconfig
	edges := []string{"--graceful-shutdown-timeout=0", "--pod-min-age=0", "--oom-window=0", "--update-loop-window=0", "--min-replicas=0",
		"--eviction-rate-limit=-1", "--eviction-tolerance=1", "--webhook-port=1", "--history-resolution=8d", "--target-cpu-percentile=1",
		"--target-memory-percentile=1", "--recommendation-upper-bound-cpu-percentile=1", "--recommendation-upper-bound-memory-percentile=1",
		"--oom-bump-up-ratio=1", "--oom-min-bump-up-bytes=0", "--recommendation-margin-fraction=0", "--pod-recommendation-min-cpu-millicores=0"}
	if _, err := runCommand(t, append([]string{"run", "--kubeconfig", "/nonexistent/kubeconfig"}, edges...)...); err == nil || !strings.Contains(err.Error(), "kubeconfig") {
		t.Errorf("flags at the edges of their ranges: %v, want them accepted (the run fails later, reading the kubeconfig)", err)
	}
}
