// Command benchscale is `make bench-scale`: a scale benchmark of the hvpa binary (not a test). For each N it
// starts a fresh local control plane (kube-apiserver with an audit log of the recommender process's requests, etcd,
// kube-controller-manager with the deployment and replicaset controllers), a PLAYED fleet of kubelets and a
// played metrics.k8s.io API (no containers run: pods are marked Running and report a usage with a little
// per-pod variation), N Deployments of 10 pods each, and `hvpa run --components=recommender` (-components)
// and `hvpa run --components=admission` as processes under users of their own, as the chart deploys them.
// After the recommender has run twice it creates N VerticalPodAutoscalers at once and measures the time to
// each one's first recommendation; then it observes a few steady-state loops (loop time, API requests per
// loop by verb and resource from the audit log, CPU, RSS and Go heap of the recommender process) and the
// admission webhook's cost on pod creation. It prints a table per N and stops everything it started
// (also on Ctrl-C).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// config is the benchmark's settings, from flags.
type config struct {
	sizes        []int         // N: Deployments (and VPAs) per run
	podsPerApp   int           // replicas of each Deployment
	perNamespace int           // Deployments per namespace
	interval     time.Duration // --recommender-interval
	loops        int           // steady-state loops observed
	settle       int           // loops skipped between the last first recommendation and the observed ones
	creates      int           // pod creations per webhook latency case
	// webhookReplicas admission processes serve the webhook (behind a round-robin proxy when more than one)
	webhookReplicas int
	burstRate       int           // pod CREATEs a second in the webhook burst (0: no burst)
	burstFor        time.Duration // how long the burst lasts
	burstHvpas      int           // Hvpas created before the burst, besides the N VPAs
	binary          string        // the hvpa binary
	hvpaArgs        []string      // more flags for hvpa run
	components      string        // --components of the measured process (recommender, or the chart's recommender,hvpa)
	outDir          string        // logs of each run are kept here
	history         time.Duration // age of the usage history seeded as checkpoints before hvpa starts (0: none)
	// checkpointPeriod is hvpa's --checkpoint-period; the seeded checkpoints were written evenly over the last one
	checkpointPeriod time.Duration
	// floor: measure the first recommendation's floor instead of hvpa (runFloor), floorWorkers patches at once
	floor        bool
	floorWorkers int
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchscale:", err)
		os.Exit(2)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	var results []*result
	run := runOne
	if cfg.floor {
		run = runFloor
	}
	for _, n := range cfg.sizes {
		r, err := run(ctx, cfg, n, stdout)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				fmt.Fprintln(os.Stderr, "benchscale: interrupted; everything it started is stopped")
			} else {
				fmt.Fprintf(os.Stderr, "benchscale: N=%d: %v\n", n, err)
			}
			os.Exit(1)
		}
		results = append(results, r)
	}
	if !cfg.floor {
		printSummary(stdout, cfg, results)
	}
	if stdout.Err() != nil {
		fmt.Fprintln(os.Stderr, "benchscale: writing the report:", stdout.Err())
		os.Exit(1)
	}
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("benchscale", flag.ContinueOnError)
	sizes := fs.String("n", "100 1000", "numbers of Deployments (each with a VPA), space- or comma-separated; each runs on a fresh control plane")
	c := config{}
	fs.IntVar(&c.podsPerApp, "pods", 10, "pods per Deployment")
	fs.IntVar(&c.perNamespace, "per-namespace", 10, "Deployments per namespace")
	fs.DurationVar(&c.interval, "interval", 30*time.Second, "hvpa's --recommender-interval")
	fs.IntVar(&c.loops, "loops", 5, "steady-state recommender loops to observe once every VPA has a recommendation")
	fs.IntVar(&c.settle, "settle", 0, "recommender loops to skip, besides those in which the recommender writes each seeded checkpoint for the first time, before the observed ones (with -history 0 the bounds drift past the status dead band for about 10 intervals)")
	fs.DurationVar(&c.checkpointPeriod, "checkpoint-period", 10*time.Minute, "hvpa's --checkpoint-period; the seeded checkpoints were written evenly over the last period, so that about N x interval / period of them are due at each run")
	fs.IntVar(&c.creates, "creates", 1000, "pod creations per webhook latency case")
	fs.IntVar(&c.webhookReplicas, "webhook-replicas", 1, "admission processes serving the webhook; with more than one, a round-robin TCP proxy stands in front of them as a Service would")
	fs.IntVar(&c.burstRate, "burst-rate", 0, "pod CREATEs a second in a webhook burst, timed with the webhook and without it (0: no burst)")
	fs.DurationVar(&c.burstFor, "burst-for", time.Minute, "how long the webhook burst lasts")
	fs.IntVar(&c.burstHvpas, "burst-hvpas", 200, "Hvpas created before the burst, besides the N VPAs")
	fs.StringVar(&c.binary, "hvpa", "bin/hvpa", "the hvpa binary (make build)")
	fs.StringVar(&c.components, "components", "recommender", "--components of the measured process: recommender, or recommender,hvpa as the chart's default recommender Deployment runs it (the Hvpa controller beside it)")
	hvpaArgs := fs.String("hvpa-args", "", "more flags for `hvpa run`, space-separated (e.g. --kube-api-qps=200)")
	fs.DurationVar(&c.history, "history", 8*24*time.Hour, "usage history each VPA has when the run starts, seeded as checkpoints (0: new VPAs without history, whose bounds move past the status dead band at every run for about 10 intervals)")
	fs.BoolVar(&c.floor, "first-rec-floor", false, "instead of hvpa, a clairvoyant writer patches each new VPA's recommendation the moment it sees it created: the floor of the time to a first recommendation on this machine's API server")
	fs.IntVar(&c.floorWorkers, "floor-workers", 10, "with -first-rec-floor: status patches the writer sends at once (hvpa's --update-worker-count)")
	fs.StringVar(&c.outDir, "out", ".cache/benchscale", "folder for each run's hvpa log, audit log and kube-controller-manager log")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	for _, f := range strings.FieldsFunc(*sizes, func(r rune) bool { return r == ' ' || r == ',' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return c, fmt.Errorf("-n %q: want positive numbers of Deployments such as \"100 1000\"", *sizes)
		}
		c.sizes = append(c.sizes, n)
	}
	c.hvpaArgs = strings.Fields(*hvpaArgs)
	if len(c.sizes) == 0 {
		return c, fmt.Errorf("-n %q: name at least one number of Deployments, e.g. 100", *sizes)
	}
	if err := c.checkRanges(); err != nil {
		return c, err
	}
	if _, err := os.Stat(c.binary); err != nil {
		return c, fmt.Errorf("-hvpa %s: %w (run `make build`)", c.binary, err)
	}
	return c, nil
}

// checkRanges refuses the numeric flags out of their ranges, naming the flag.
func (c config) checkRanges() error {
	switch {
	case c.webhookReplicas < 1 || c.burstRate < 0 || c.burstHvpas < 0 || c.burstFor <= 0:
		return fmt.Errorf("-webhook-replicas (%d) must be at least 1, -burst-rate (%d) and -burst-hvpas (%d) at least 0, -burst-for (%s) positive", c.webhookReplicas, c.burstRate, c.burstHvpas, c.burstFor)
	case c.podsPerApp < 1 || c.perNamespace < 1 || c.loops < 1 || c.creates < 1 || c.floorWorkers < 1:
		return fmt.Errorf("-pods (%d), -per-namespace (%d), -loops (%d), -creates (%d) and -floor-workers (%d) must be at least 1",
			c.podsPerApp, c.perNamespace, c.loops, c.creates, c.floorWorkers)
	case c.history < 0:
		return fmt.Errorf("-history %s: want 0 or a positive duration such as 192h", c.history)
	case c.settle < 0:
		return fmt.Errorf("-settle %d: want 0 or more loops", c.settle)
	case c.checkpointPeriod < 0:
		return fmt.Errorf("-checkpoint-period %s: want 0 (every checkpoint at every run) or a positive duration such as 10m", c.checkpointPeriod)
	case c.interval < time.Second:
		return fmt.Errorf("-interval %s: want at least 1s (the recommender's interval)", c.interval)
	}
	return nil
}
