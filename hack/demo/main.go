// Command demo is `make demo`: the product's main job on a local default. It starts the local control plane
// (kube-apiserver, etcd and kube-controller-manager with the HPA, deployment, replicaset, disruption and
// garbage collector controllers, all built by `make controlplane`), the hvpa manager (recommender, Hvpa
// controller, admission webhooks, updater) in this process, and a demo Deployment with an Hvpa that deploys
// an HPA. A PLAYED workload (a simulation: pods are marked Running by a played kubelet, which also accepts
// in-place resizes, and report usage through a played metrics API) raises and lowers its load; a live table
// shows time, load, replicas, per-pod intent, the pods' actual requests and the last decision. It exits after
// the scenario (or on Ctrl-C) and stops everything it started.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testadmission"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// phase is one step of the played load (total CPU of the workload, split across its running pods).
type phase struct {
	d     time.Duration
	milli int64
	what  string
}

var scenario = []phase{
	{25 * time.Second, 300, "quiet"},
	{35 * time.Second, 1300, "load rises"},
	{40 * time.Second, 3500, "peak"},
	{50 * time.Second, 900, "load falls"},
	{50 * time.Second, 250, "quiet again"},
}

func main() {
	hold := flag.String("hold", "forever", "after the scenario, keep the control plane running: a duration (0s exits at once) or forever (until Ctrl-C)")
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := run(ctx, *hold, os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, hold string, out io.Writer) error {
	holdFor, err := parseHold(hold)
	if err != nil {
		return err
	}
	root, err := testenv.ModuleRoot()
	if err != nil {
		return err
	}
	assets, err := testenv.AssetsDir()
	if err != nil {
		return err
	}
	// progress lines: the scenario table below checks its writes and ends the demo if out fails
	say := func(format string, args ...any) { _, _ = fmt.Fprintf(out, format+"\n", args...) }

	env, cfg, c, stopControlPlane, err := startControlPlane(say)
	if err != nil {
		return err
	}
	defer stopControlPlane()

	say("== SIMULATION: a played kubelet runs the pods and a played metrics API reports the load below (no real containers run here)")
	ms, kubelet, err := startPlayed(ctx, c)
	if err != nil {
		return err
	}
	defer ms.Close()

	sayManager(say)
	mgrCtx, stopMgr := context.WithCancel(ctx)
	defer stopMgr()
	if err := startManager(mgrCtx, cfg, c); err != nil {
		return err
	}

	kubeconfigPath, err := writeKubeconfig(env, root)
	if err != nil {
		return err
	}
	kubectl := kubectlFunc(filepath.Join(assets, "kubectl"), kubeconfigPath)
	if err := applyDemo(kubectl, say); err != nil {
		return err
	}
	seen, err := playScenario(ctx, c, out, kubelet, ms)
	if err != nil {
		return err
	}
	showResult(kubectl, say)
	if err := check(seen, say); err != nil {
		return err
	}
	holdOn(ctx, holdFor, say, kubeconfigPath, filepath.Join(assets, "kubectl"))
	stopMgr()
	return nil
}

// parseHold reads the --hold flag: a duration of at least 0, or -1 for forever.
func parseHold(hold string) (time.Duration, error) {
	if hold == "forever" {
		return -1, nil
	}
	d, err := time.ParseDuration(hold)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("--hold %q: want a duration such as 30s, 0s, or forever", hold)
	}
	return d, nil
}

// startControlPlane starts the local control plane (kube-apiserver, etcd, and kube-controller-manager with the
// HPA, deployment, replicaset, disruption and garbage collector controllers) and a client for it. The returned
// function stops it all; on an error what was started is stopped already.
func startControlPlane(say func(string, ...any)) (*envtest.Environment, *rest.Config, client.Client, func(), error) {
	say("== starting the local control plane: kube-apiserver + etcd + kube-controller-manager %s (HPA, deployment, replicaset, garbage collector)", testenv.K8sVersion)
	env, cfg, err := testenv.Start()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	stopEnv := func() { say("== stopping the local control plane"); _ = env.Stop() }
	kcm, err := testenv.StartControllerManager(env, []string{"deployment-controller", "replicaset-controller", "garbage-collector-controller",
		"horizontal-pod-autoscaler-controller", "disruption-controller"}, 2*time.Second)
	if err != nil {
		stopEnv()
		return nil, nil, nil, nil, err
	}
	stop := func() { kcm.Stop(); stopEnv() }
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		stop()
		return nil, nil, nil, nil, err
	}
	return env, cfg, c, stop, nil
}

// startPlayed creates the demo namespace and starts the played kubelet and the played metrics API.
func startPlayed(ctx context.Context, c client.Client) (*playedkubelet.MetricsServer, *playedkubelet.Kubelet, error) {
	for _, ns := range []string{"demo"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return nil, nil, err
		}
	}
	return playedkubelet.Start(ctx, c, "played-node-1")
}

// sayManager says what the hvpa manager runs and how the demo sets it up.
func sayManager(say func(string, ...any)) {
	say("== starting the hvpa manager in this process (recommender, Hvpa controller, admission webhooks, updater)")
	say("   demo setting: the recommender's CPU half-life is 15s instead of 24h, so that recommendations follow the load within the demo,")
	say("   an Hvpa's recommendation is confident after 30s of history instead of a day (--hvpa-low-confidence-days),")
	say("   and its total follows the load over seconds instead of minutes (windows of 5s and 15s instead of 5 and 15 minutes)")
	say("   the Hvpa publishes its per-pod intent (DESIRED, CPU/POD, MEM/POD); the admission webhook sizes new pods and")
	say("   the updater resizes running ones in place (the played kubelet accepts resizes): RUNNING shows the pods' requests")
}

// writeKubeconfig adds the demo user (system:masters) to the control plane and writes its kubeconfig to
// .cache/demo/kubeconfig under root, returning the file's path.
func writeKubeconfig(env *envtest.Environment, root string) (string, error) {
	user, err := env.AddUser(envtest.User{Name: "demo", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	kubeconfigPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kc, 0o600); err != nil {
		return "", err
	}
	return kubeconfigPath, nil
}

// kubectlFunc returns a function that runs the kubectl binary at path against the kubeconfig at kubeconfigPath
// with stdin as its input, and returns its combined output.
func kubectlFunc(path, kubeconfigPath string) func(stdin string, args ...string) (string, error) {
	return func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(path, append([]string{"--kubeconfig", kubeconfigPath}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		err := cmd.Run()
		return b.String(), err
	}
}

// applyDemo applies the demo's Deployment and Hvpa with kubectl and says what kubectl answered.
func applyDemo(kubectl func(string, ...string) (string, error), say func(string, ...any)) error {
	say("$ kubectl apply -n demo -f - <<< '<Deployment web + Hvpa web (EP-0001 intervals, HPA at 80%% CPU, embedded recommender)>'")
	o, err := kubectl(demoManifests, "apply", "-n", "demo", "-f", "-")
	if err != nil {
		return fmt.Errorf("kubectl apply: %w\n%s", err, o)
	}
	say("%s", strings.TrimSpace(o))
	return nil
}

// playScenario plays the scenario's load on the played workload (pods run, load split across the running pods)
// and prints a row of the live table every 5 s; it returns what the last row of each phase saw, or ctx's
// error if ctx ends first.
func playScenario(ctx context.Context, c client.Client, out io.Writer, kubelet *playedkubelet.Kubelet, ms *playedkubelet.MetricsServer) ([]observed, error) {
	var played playedkubelet.Workloads
	load := scenario[0].milli
	played.Set("demo", "web", load, 600<<20)
	go kubelet.Loop(ctx, 500*time.Millisecond, playedkubelet.AcceptResizes, &played, ms)

	if _, err := fmt.Fprintf(out, "\n== the scenario (%s); a row every 5 s\n", scenarioLength()); err != nil {
		return nil, err
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "TIME\tPHASE\tLOAD\tHPA WANTS\tREPLICAS\tDESIRED\tCPU/POD\tMEM/POD\tRUNNING\tLAST DECISION") // held until Flush
	if err := tw.Flush(); err != nil {
		return nil, err
	}
	start := time.Now()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	seen := make([]observed, len(scenario))
	for i, p := range scenario {
		load = p.milli
		played.Set("demo", "web", load, 600<<20)
		end := time.Now().Add(p.d)
		for time.Now().Before(end) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-tick.C:
			}
			if o, ok := row(ctx, c, tw, time.Since(start), p, load); ok {
				seen[i] = o
			}
			if err := tw.Flush(); err != nil {
				return nil, err
			}
		}
	}
	return seen, nil
}

// observed is what a row of the live table saw: the Deployment's replicas and the CPU requests of the running
// pods together (millicores).
type observed struct {
	replicas   int32
	runningCPU int64
}

// check fails the demo when the played workload was not scaled as an Hvpa must scale it: by the end of the
// peak the running pods' CPU requests cover the peak's load with more replicas than in the first quiet phase,
// and by the end of the scenario, at a twelfth of the peak's load, the workload is back to fewer replicas and
// at most half the peak's CPU.
func check(seen []observed, say func(string, ...any)) error {
	quiet, peak, last := seen[0], seen[2], seen[len(seen)-1]
	var failed []string
	if peak.runningCPU < scenario[2].milli {
		failed = append(failed, fmt.Sprintf("at the end of the peak the running pods request %dm CPU, less than its %dm load", peak.runningCPU, scenario[2].milli))
	}
	if peak.replicas <= quiet.replicas {
		failed = append(failed, fmt.Sprintf("the peak ended with %d replicas, no more than the quiet start's %d", peak.replicas, quiet.replicas))
	}
	if last.replicas >= peak.replicas {
		failed = append(failed, fmt.Sprintf("the scenario ended with %d replicas, not fewer than the peak's %d", last.replicas, peak.replicas))
	}
	if 2*last.runningCPU > peak.runningCPU {
		failed = append(failed, fmt.Sprintf("the scenario ended with %dm CPU requested, more than half the peak's %dm", last.runningCPU, peak.runningCPU))
	}
	if len(failed) > 0 {
		return fmt.Errorf("the workload was not scaled as expected:\n  %s", strings.Join(failed, "\n  "))
	}
	say("== check: the peak ended at %d replicas with %dm CPU requested (load %dm); the scenario ended at %d replicas with %dm (load %dm)",
		peak.replicas, peak.runningCPU, scenario[2].milli, last.replicas, last.runningCPU, scenario[len(scenario)-1].milli)
	return nil
}

// showResult shows the Hvpa, the HPA and the Deployment as kubectl prints them after the scenario.
func showResult(kubectl func(string, ...string) (string, error), say func(string, ...any)) {
	show := func(args ...string) {
		o, _ := kubectl("", args...)
		say("$ kubectl %s\n%s", strings.Join(args, " "), o)
	}
	say("")
	show("get", "hvpa", "-n", "demo", "-o", "wide")
	show("get", "hpa,deployment", "-n", "demo")
	show("describe", "hvpa", "-n", "demo", "web")
}

// holdOn keeps the control plane running after the scenario: until ctx ends when holdFor is negative (forever),
// for holdFor when it is positive, and not at all when it is 0.
func holdOn(ctx context.Context, holdFor time.Duration, say func(string, ...any), kubeconfigPath, kubectlPath string) {
	switch {
	case holdFor < 0:
		say("The control plane keeps running: export KUBECONFIG=%s and use %s; press Ctrl-C to stop everything.", kubeconfigPath, kubectlPath)
		<-ctx.Done()
	case holdFor > 0:
		say("The control plane keeps running for %s (KUBECONFIG=%s); Ctrl-C stops it earlier.", holdFor, kubeconfigPath)
		select {
		case <-ctx.Done():
		case <-time.After(holdFor):
		}
	}
}

func scenarioLength() time.Duration {
	var d time.Duration
	for _, p := range scenario {
		d += p.d
	}
	return d
}

// startManager runs what `hvpa run --components=recommender,hvpa,admission,updater` runs, in this process,
// with the demo's faster settings (runs every 2 s; CPU half-life 15 s). The webhook configurations point at
// this process on 127.0.0.1, with a self-managed certificate.
func startManager(ctx context.Context, cfg *rest.Config, c client.Client) error {
	dir, err := os.MkdirTemp("", "hvpa-demo-certs-")
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); _ = os.RemoveAll(dir) }()
	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	co, wo, err := testadmission.InstallAdmission(ctx, c, "hvpa", port, dir)
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(wo), Cache: app.CacheOptions(), Client: app.ClientOptions()})
	if err != nil {
		return err
	}
	opts := recommenderctrl.DefaultOptions()
	opts.Interval = 2 * time.Second
	model := recommender.Defaults()
	model.CPUHalfLife = 15 * time.Second
	uo := updater.DefaultOptions()
	uo.Interval = 2 * time.Second
	// the load-following total's windows in the demo's compressed time (its minutes are the defaults' quarter
	// hours): falls show within the demo
	tracking := scaling.DefaultTracking
	tracking.UpWindow, tracking.DownWindow, tracking.MemoryWindow, tracking.TrendWindow = 5*time.Second, 15*time.Second, time.Minute, 5*time.Second
	if err := app.Add(ctx, mgr, cfg, app.Options{Components: app.Available, Recommender: opts, Model: &model, HvpaSync: 2 * time.Second, HvpaLowConfidenceDays: 30.0 / 86400,
		HvpaTracking: &tracking,
		Updater:      uo, Certs: &co, AdmissionLease: testadmission.AdmissionLease}); err != nil {
		return err
	}
	go func() { _ = mgr.Start(ctx) }()
	return nil
}

// demoManifests: a Deployment and an Hvpa on the EP-0001 kube-apiserver intervals with an HPA (80% CPU) and
// the embedded recommender; scale-up and scale-down stabilization of 10 s so that steps are visible; a memory
// base of 500Mi per pod (each played pod holds 600Mi whatever its load, so that is not load).
const demoManifests = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.example/web:1.0
          resources:
            requests: {cpu: 500m, memory: 1Gi}
---
apiVersion: autoscaling.k8s.io/v1alpha1
kind: Hvpa
metadata:
  name: web
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  hpa:
    deploy: true
    template:
      minReplicas: 1
      maxReplicas: 5
      metrics:
        - type: Resource
          resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
  vpa:
    deploy: true
  scalingIntervals:
    - {maxReplicas: 1, maxResources: {cpu: 500m, memory: 2Gi}}
    - {maxReplicas: 2, maxResources: {cpu: "1", memory: 4Gi}}
    - {maxReplicas: 3, maxResources: {cpu: "2", memory: 8Gi}}
    - {maxReplicas: 4, maxResources: {cpu: "4", memory: 16Gi}}
    - {maxReplicas: 5, maxResources: {cpu: "8", memory: 32Gi}}
  scalingIntervalsOverlap:
    cpu: {percentage: 30}
    memory: {percentage: 30}
  baseResourcesPerReplica:
    cpu: {value: 50m, percentage: 5}
    memory: {value: 500Mi}
  scaleUp:
    stabilizationDuration: 10s
  scaleDown:
    stabilizationDuration: 10s
`

// row prints one row of the live table and returns what it saw (false when the objects could not be read).
func row(ctx context.Context, c client.Client, w io.Writer, t time.Duration, p phase, load int64) (observed, bool) {
	h := &hvpav1alpha1.Hvpa{}
	d := &appsv1.Deployment{}
	if c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web"}, h) != nil || c.Get(ctx, client.ObjectKey{Namespace: "demo", Name: "web"}, d) != nil {
		return observed{}, false
	}
	hpa, desired, cpu, mem, last := "-", "-", "-", "-", "-"
	if h.Spec.Replicas != nil {
		hpa = fmt.Sprint(*h.Spec.Replicas)
	}
	if ds := h.Status.Desired; ds != nil {
		desired = fmt.Sprint(ds.Replicas)
		if len(ds.Containers) > 0 {
			cpu = ds.Containers[0].Requests.Cpu().String()
			mem = scaling.Format(scaling.Memory, float64(ds.Containers[0].Requests.Memory().Value()))
		}
	}
	if ls := h.Status.LastScaling; ls != nil {
		last = fmt.Sprintf("%s ago: %s", time.Since(ls.Time.Time).Round(time.Second), ls.Message)
	}
	if b := h.Status.LastBlockedScaling; b != nil && (h.Status.LastScaling == nil || b.Time.After(h.Status.LastScaling.Time.Time)) {
		last = fmt.Sprintf("blocked: %s (%s)", b.Parts[0].Part, b.Parts[0].Reason)
	}
	if c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionConfigUnsupported); c != nil && c.Status == metav1.ConditionTrue {
		last = "config unsupported: " + c.Message
	}
	summary, total := running(ctx, c)
	// the tabwriter holds the row until the caller's Flush, which returns a write error
	_, _ = fmt.Fprintf(w, "%s\t%s\t%dm\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", t.Round(time.Second), p.what, load, hpa, *d.Spec.Replicas, desired, cpu, mem, summary, last)
	return observed{replicas: *d.Spec.Replicas, runningCPU: total}, true
}

// running summarises the live pods' cpu requests, e.g. "3x750m" or "1x500m+2x750m" while pods are resized,
// and returns their sum in millicores.
func running(ctx context.Context, c client.Client) (string, int64) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace("demo"), client.MatchingLabels{"app": "web"}); err != nil {
		return "?", 0
	}
	count := map[string]int{}
	var order []string
	var total int64
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		cpu := p.Spec.Containers[0].Resources.Requests.Cpu()
		total += cpu.MilliValue()
		q := cpu.String()
		if count[q] == 0 {
			order = append(order, q)
		}
		count[q]++
	}
	sort.Strings(order)
	var parts []string
	for _, q := range order {
		parts = append(parts, fmt.Sprintf("%dx%s", count[q], q))
	}
	if len(parts) == 0 {
		return "-", 0
	}
	return strings.Join(parts, "+"), total
}
