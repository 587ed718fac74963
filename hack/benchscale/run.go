package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// hvpaUser is the identity the recommender process runs as; the audit log records only its requests.
// admissionUser is the admission process's.
const (
	hvpaUser      = "hvpa-bench"
	admissionUser = "hvpa-bench-admission"
)

// runOne benchmarks n Deployments (each with a VPA) on a fresh control plane and prints their table.
func runOne(ctx context.Context, cfg config, n int, out *report) (*result, error) {
	r, err := newResult(cfg, n)
	if err != nil {
		return nil, err
	}
	say := func(format string, args ...any) { out.Printf(format+"\n", args...) }
	say("\n== N=%d: %d Deployments x %d pods = %d pods in %d namespaces, recommender interval %s (logs in %s)",
		n, n, cfg.podsPerApp, r.pods, r.namespaces, cfg.interval, r.dir)
	phase := r.phases(say)
	cl, err := setUpCluster(ctx, out, cfg, n, r, phase, say)
	if err != nil {
		return nil, err
	}
	defer cl.stop()
	env, restCfg, c, dir, auditLog := cl.env, cl.restCfg, cl.c, r.dir, cl.auditLog
	// as the chart deploys them: the recommender (with -components=recommender,hvpa the Hvpa controller beside
	// it, as in the chart's default) and the admission webhook in processes of their own
	h, err := startHvpa(ctx, env, c, cfg, dir, recommenderProcess, nil)
	if err != nil {
		return nil, err
	}
	defer h.stop()
	say("-- hvpa recommender running (pid %d): %s", h.cmd.Process.Pid, h.commandLine())
	adms, err := startAdmission(ctx, env, c, cfg, dir, say)
	defer stopAll(adms)
	if err != nil {
		return nil, err
	}
	phase("hvpa ready")
	if err := measureRecommender(ctx, out, restCfg, c, cfg, n, h, r, phase, say); err != nil {
		return nil, err
	}
	if err := measureAdmission(ctx, out, restCfg, c, cfg, h, adms, r, phase); err != nil {
		return nil, err
	}
	if err := r.attributeAudit(auditLog); err != nil {
		return nil, err
	}
	return r, r.print(out, cfg)
}

// newResult is the result of the run at n, with its logs' directory made afresh.
func newResult(cfg config, n int) (*result, error) {
	r := &result{n: n, pods: n * cfg.podsPerApp, namespaces: (n + cfg.perNamespace - 1) / cfg.perNamespace}
	dir, err := freshRunDir(cfg, n)
	if err != nil {
		return nil, err
	}
	r.dir = dir
	return r, nil
}

// cluster is a run's local control plane with its played fleet running the workloads; stop stops them all.
type cluster struct {
	env      *envtest.Environment
	restCfg  *rest.Config
	c        client.Client
	auditLog string
	stop     func()
}

// setUpCluster starts the local control plane (with an audit log of hvpaUser's requests in r.dir), a played
// fleet of kubelets and a played metrics API, and the n Deployments (setUpWorkloads); on an error what was
// started is stopped already.
func setUpCluster(ctx context.Context, out *report, cfg config, n int, r *result, phase func(string), say func(string, ...any)) (*cluster, error) {
	say("-- starting the local control plane (kube-apiserver with an audit log of %s's requests, etcd, kube-controller-manager)", hvpaUser)
	cl := &cluster{auditLog: filepath.Join(r.dir, "audit.log")}
	env, restCfg, c, stopControlPlane, err := startControlPlane(r.dir, cl.auditLog)
	if err != nil {
		return nil, err
	}
	cl.env, cl.restCfg, cl.c = env, restCfg, c
	phase("control plane up")

	say("-- SIMULATION: a played fleet of kubelets runs the pods and a played metrics.k8s.io API reports their usage (no containers run)")
	ms := playedkubelet.StartMetricsServer()
	fleetCtx, stopFleet := context.WithCancel(ctx)
	cl.stop = func() {
		stopFleet()
		ms.Close()
		stopControlPlane()
	}
	live := &livePlay{ms: ms}
	fleet, err := newPlayedFleet(ctx, c, ms, r.pods, live)
	if err != nil {
		cl.stop()
		return nil, err
	}
	go fleet.Loop(fleetCtx, time.Second)
	go live.run(fleetCtx)
	if err := setUpWorkloads(ctx, out, c, cfg, n, fleet, r, phase); err != nil {
		cl.stop()
		return nil, err
	}
	return cl, nil
}

// stopAll stops the processes.
func stopAll(ps []*hvpaProcess) {
	for _, p := range ps {
		p.stop()
	}
}

// startAdmission starts cfg.webhookReplicas admission processes, behind a round-robin proxy (as a Service)
// when more than one; it returns those started, also with an error.
func startAdmission(ctx context.Context, env *envtest.Environment, c client.Client, cfg config, dir string, say func(string, ...any)) ([]*hvpaProcess, error) {
	var front *roundRobin
	if cfg.webhookReplicas > 1 {
		var err error
		if front, err = newRoundRobin(ctx); err != nil {
			return nil, err
		}
	}
	var adms []*hvpaProcess
	for i := range cfg.webhookReplicas {
		a, err := startHvpa(ctx, env, c, cfg, dir, admissionReplica(i), front)
		if err != nil {
			return adms, err
		}
		say("-- hvpa admission running (pid %d): %s", a.cmd.Process.Pid, a.commandLine())
		adms = append(adms, a)
	}
	return adms, nil
}

// freshRunDir returns the absolute path of the directory for the N=n run's logs, emptied and created afresh.
func freshRunDir(cfg config, n int) (string, error) {
	dir, err := filepath.Abs(filepath.Join(cfg.outDir, fmt.Sprintf("n%d", n)))
	if err != nil {
		return "", err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// startControlPlane starts the local control plane (kube-apiserver with an audit log of hvpaUser's requests at
// auditLog, etcd, and kube-controller-manager with the deployment and replicaset controllers) and a client for
// it. The returned function stops kube-controller-manager, saves its log in dir, and stops the rest; on an error
// what was started is stopped already.
func startControlPlane(dir, auditLog string) (*envtest.Environment, *rest.Config, client.Client, func(), error) {
	env, restCfg, err := testenv.Start(testenv.WithAudit(auditLog, []string{hvpaUser}, nil))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	kcm, err := testenv.StartControllerManager(env, []string{"deployment-controller", "replicaset-controller"}, 15*time.Second,
		"--kube-api-qps=1000", "--kube-api-burst=2000", "--concurrent-deployment-syncs=10", "--concurrent-replicaset-syncs=10")
	if err != nil {
		_ = env.Stop()
		return nil, nil, nil, nil, err
	}
	stop := func() {
		kcm.Stop()
		_ = os.WriteFile(filepath.Join(dir, "kube-controller-manager.log"), []byte(kcm.Logs()), 0o644)
		_ = env.Stop()
	}
	c, err := client.New(restCfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		stop()
		return nil, nil, nil, nil, err
	}
	return env, restCfg, c, stop, nil
}

// newPlayedFleet registers the played metrics API ms and returns a played fleet of kubelets for pods pods that
// report their played usage (live: usageAt, from the moment each pod runs) to it.
func newPlayedFleet(ctx context.Context, c client.Client, ms *playedkubelet.MetricsServer, pods int, live *livePlay) (*playedkubelet.Fleet, error) {
	if err := ms.Register(ctx, c); err != nil {
		return nil, err
	}
	fleet, err := playedkubelet.NewFleet(ctx, c, "played-node", pods)
	if err != nil {
		return nil, err
	}
	fleet.Metrics, fleet.Usage = ms, live.usage
	return fleet, nil
}

// setUpWorkloads creates the n Deployments, waits until the fleet runs every pod and the metrics API reports
// them all, and seeds cfg.history of usage history if asked.
func setUpWorkloads(ctx context.Context, out *report, c client.Client, cfg config, n int, fleet *playedkubelet.Fleet, r *result, phase func(string)) error {
	if err := createWorkloads(ctx, c, cfg, n); err != nil {
		return err
	}
	phase("workloads created")
	podsWait := 2*time.Minute + time.Duration(r.pods)*100*time.Millisecond
	if err := waitFor(ctx, out, "every pod Running", podsWait, func() (bool, string, error) {
		return fleet.Started() >= r.pods, fmt.Sprintf("%d of %d pods Running", fleet.Started(), r.pods), nil
	}); err != nil {
		return fmt.Errorf("%w; kube-controller-manager's log is in %s", err, r.dir)
	}
	phase(fmt.Sprintf("%d pods Running", r.pods))
	if err := waitFor(ctx, out, "metrics.k8s.io reports every pod", 2*time.Minute, func() (bool, string, error) {
		var l metricsv1beta1.PodMetricsList
		if err := c.List(ctx, &l); err != nil {
			return false, err.Error(), nil
		}
		return len(l.Items) >= r.pods, fmt.Sprintf("%d of %d pods reported", len(l.Items), r.pods), nil
	}); err != nil {
		return err
	}
	phase("metrics API reports every pod")

	if cfg.history > 0 {
		if err := seedHistory(ctx, c, cfg, n, cfg.history); err != nil {
			return err
		}
		phase(fmt.Sprintf("%s of usage history seeded as %d checkpoints", cfg.history, n))
	}
	return nil
}

// measureRecommender waits for two recommender runs that see every pod, measures the time to every VPA's
// recommendation and the steady-state loops, and saves the recommender's memory statistics and heap profile.
func measureRecommender(ctx context.Context, out *report, restCfg *rest.Config, c client.Client, cfg config, n int, h *hvpaProcess, r *result,
	phase func(string), say func(string, ...any)) error {
	if err := waitFor(ctx, out, "two recommender runs that see every pod", 3*cfg.interval+5*time.Minute, func() (bool, string, error) {
		seen := 0
		for _, x := range h.watch.snapshot() {
			if x.int("pods") >= r.pods {
				seen++
			}
		}
		return seen >= 2, fmt.Sprintf("%d runs so far (%d seeing every pod)", len(h.watch.snapshot()), seen), h.exited()
	}); err != nil {
		return err
	}
	phase("two recommender runs")

	if err := measureRecommendations(ctx, out, restCfg, c, cfg, n, h, r); err != nil {
		return err
	}
	phase("every VPA has a recommendation")
	seeded := 0
	if cfg.history > 0 {
		seeded = n
	}
	// the CPU profile from here on (the settling and the observed loops, at most 5 minutes): where a loop's CPU goes
	cpuSeconds := min(cfg.loops*int(cfg.interval.Seconds()), 300)
	cpuDone := make(chan error, 1)
	go func() {
		cpuDone <- h.watch.saveProfile(filepath.Join(r.dir, "cpu.pprof"), fmt.Sprintf("profile?seconds=%d", cpuSeconds), time.Duration(cpuSeconds+60)*time.Second)
	}()
	if err := observeSteadyState(ctx, out, cfg, h, r, seeded); err != nil {
		return err
	}
	phase(fmt.Sprintf("%d steady-state loops", cfg.loops))
	if err := <-cpuDone; err != nil {
		say("   no CPU profile: %v", err)
	}
	if err := h.watch.saveMemStats(filepath.Join(r.dir, "memstats.txt")); err != nil {
		say("   no memory statistics: %v", err)
	}
	if err := h.watch.saveProfile(filepath.Join(r.dir, "heap.pprof"), "heap?gc=1", 30*time.Second); err != nil {
		say("   no heap profile: %v", err)
	}
	return nil
}

// measureAdmission measures the admission webhook's latency and the processes' memory, then stops both
// processes.
func measureAdmission(ctx context.Context, out *report, restCfg *rest.Config, c client.Client, cfg config, h *hvpaProcess, adms []*hvpaProcess, r *result, phase func(string)) error {
	adm := adms[0]
	r.admissionRSS = adm.watch.rssBetween(time.Time{}, time.Now())
	var err error
	if r.webhook, r.bursts, err = measureWebhook(ctx, out, restCfg, c, cfg, adms); err != nil {
		return err
	}
	phase("webhook latency")
	r.peakRSS = h.watch.peakRSS()
	r.admissionPeakRSS = adm.watch.peakRSS()
	h.stop()
	stopAll(adms)
	phase("hvpa stopped")
	return nil
}

// phases returns a function that records the time since the previous call under a name, and prints it.
func (r *result) phases(say func(string, ...any)) func(string) {
	last := time.Now()
	return func(name string) {
		d := time.Since(last).Round(100 * time.Millisecond)
		last = time.Now()
		r.setup = append(r.setup, phaseTime{name, d})
		say("   %s (%s)", name, d)
	}
}

// namespaceOf and appName name the i-th Deployment and its namespace.
func namespaceOf(cfg config, i int) string { return fmt.Sprintf("bench-%03d", i/cfg.perNamespace) }
func appName(i int) string                 { return fmt.Sprintf("app-%04d", i) }

// createWorkloads creates the namespaces and n Deployments of cfg.podsPerApp pods (one container requesting
// 100m and 128Mi), 16 at a time.
func createWorkloads(ctx context.Context, c client.Client, cfg config, n int) error {
	var g errgroup.Group
	g.SetLimit(16)
	for i := 0; i < n; i += cfg.perNamespace {
		g.Go(func() error {
			return c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceOf(cfg, i)}})
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("creating namespaces: %w", err)
	}
	for i := range n {
		g.Go(func() error {
			d := wrappers.MakeDeployment(namespaceOf(cfg, i), appName(i)).Replicas(int32(cfg.podsPerApp)).
				Container(wrappers.MakeContainer("app").Requests("100m", "128Mi").Obj()).Obj()
			return c.Create(ctx, d)
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("creating Deployments: %w", err)
	}
	return nil
}

// waitFor polls check every 500ms until it is done, printing its progress every 15 s; it fails after timeout,
// on check's error, or when ctx ends.
func waitFor(ctx context.Context, out *report, what string, timeout time.Duration, check func() (bool, string, error)) error {
	start := time.Now()
	lastSaid := start
	for {
		done, progress, err := check()
		switch {
		case err != nil:
			return fmt.Errorf("waiting for %s: %w", what, err)
		case done:
			return nil
		case time.Since(start) > timeout:
			return fmt.Errorf("waiting for %s: not done after %s: %s", what, timeout, progress)
		case time.Since(lastSaid) >= 15*time.Second:
			out.Printf("   ... %s: %s (%s)\n", what, progress, time.Since(start).Round(time.Second))
			lastSaid = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
