package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/prometheus"
	"github.com/hvpa-dev/hvpa/test/testadmission"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

var (
	env      *envtest.Environment
	cfg      *rest.Config
	k8s      client.Client
	kcm      *testenv.ControllerManager
	played   *playedkubelet.MetricsServer
	kubelet  *playedkubelet.Kubelet
	loads    playedkubelet.Workloads
	stop     context.CancelFunc
	procs    []*process
	binary   string
	workDir  string
	webhook  int
	kubeconf string
	// prom scrapes every process as the chart's ServiceMonitors say, from runStart on
	prom     *prometheus.Server
	runStart time.Time
	jobs     []prometheus.ScrapeConfig
)

func TestE2E(t *testing.T) {
	framework.RunSuite(t, "e2e suite", framework.E2E, framework.Slow)
}

// process is the hvpa binary running as a child process: one Deployment of the chart.
type process struct {
	name    string
	args    []string
	probes  int
	metrics int
	cmd     *exec.Cmd
	log     string
	out     *os.File
	// the pod labels, and the name and ports of the container, as rendered
	podLabels map[string]string
	container corev1.Container
}

// rendered is what the e2e runs of the chart: the Deployments, the metrics Services and their ServiceMonitors.
type rendered struct {
	deployments []appsv1.Deployment
	services    []corev1.Service
	monitors    []serviceMonitor
}

// serviceMonitor is the part of a monitoring.coreos.com/v1 ServiceMonitor the e2e plays.
type serviceMonitor struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
		Endpoints []struct {
			Port        string `json:"port"`
			Path        string `json:"path"`
			Scheme      string `json:"scheme"`
			HonorLabels bool   `json:"honorLabels"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// renderChart renders the chart with e2e/testdata/values.yaml, its ServiceMonitors on and its metrics over
// plain HTTP (on loopback; the chart's secure default, HTTPS with TokenReview and SubjectAccessReview, is
// proved in cmd/hvpa's TestChartRBAC).
func renderChart(root string) rendered {
	helm := filepath.Join(root, ".cache", "tools", "bin", "helm")
	if _, err := os.Stat(helm); err != nil {
		Fail("no helm at " + helm + ": run `make helm` (make test does)")
	}
	render := exec.Command(helm, "template", "hvpa", filepath.Join(root, "charts", "hvpa"), "-n", testadmission.AdmissionNamespace,
		"-f", filepath.Join(root, "e2e", "testdata", "values.yaml"), "--set", "serviceMonitor.enabled=true", "--set", "metrics.secure=false")
	out, err := render.Output()
	Expect(err).NotTo(HaveOccurred(), "helm template")
	var r rendered
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			Expect(err).To(MatchError(io.EOF))
			break
		}
		raw, err := json.Marshal(doc)
		Expect(err).NotTo(HaveOccurred())
		switch doc["kind"] {
		case "Deployment":
			r.deployments = append(r.deployments, appsv1.Deployment{})
			Expect(json.Unmarshal(raw, &r.deployments[len(r.deployments)-1])).To(Succeed())
		case "Service":
			r.services = append(r.services, corev1.Service{})
			Expect(json.Unmarshal(raw, &r.services[len(r.services)-1])).To(Succeed())
		case "ServiceMonitor":
			r.monitors = append(r.monitors, serviceMonitor{})
			Expect(json.Unmarshal(raw, &r.monitors[len(r.monitors)-1])).To(Succeed())
		}
	}
	return r
}

// chartProcesses makes a process of every rendered Deployment: its arguments as rendered, plus what this
// machine needs instead of a cluster (a kubeconfig, listen addresses on 127.0.0.1, a certificate folder and
// address for the webhook).
func chartProcesses(r rendered) []*process {
	var procs []*process
	for _, d := range r.deployments {
		c := d.Spec.Template.Spec.Containers[0]
		p := &process{name: d.Name, args: append([]string(nil), c.Args...), podLabels: d.Spec.Template.Labels, container: c}
		var err error
		p.probes, err = testenv.FreePort()
		Expect(err).NotTo(HaveOccurred())
		p.metrics, err = testenv.FreePort()
		Expect(err).NotTo(HaveOccurred())
		Expect(p.args).To(ContainElement("--metrics-secure=false"), "%s: metrics over plain HTTP, as rendered", d.Name)
		p.args = append(p.args, "--kubeconfig", kubeconf, "--zap-log-level", "info",
			"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", p.metrics), "--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", p.probes))
		if strings.Contains(strings.Join(p.args, " "), "--components=admission") {
			p.args = append(p.args, "--webhook-host", "127.0.0.1", "--webhook-port", fmt.Sprint(webhook),
				"--cert-dir", filepath.Join(workDir, "certs"), "--webhook-cert-ips", "127.0.0.1")
		}
		procs = append(procs, p)
	}
	Expect(procs).To(HaveLen(3), "the chart's default Deployments: recommender (with the Hvpa controller), admission, updater")
	return procs
}

// scrapeJobs plays what the Prometheus Operator makes of the rendered ServiceMonitors: a job per endpoint of
// each Service a ServiceMonitor selects, named like the Service (the operator's job label), that scrapes the
// pods behind it, here the process of the Deployment whose pods the Service selects, every second. The
// operator's target labels (namespace, service, pod, container, endpoint) are static labels; the
// ServiceMonitor's honorLabels decides whether hvpa's own namespace and container labels (of the object a
// series describes) win over them.
func scrapeJobs(r rendered, procs []*process) []prometheus.ScrapeConfig {
	var jobs []prometheus.ScrapeConfig
	for _, sm := range r.monitors {
		Expect(sm.Spec.Endpoints).To(HaveLen(1), "ServiceMonitor %s", sm.Metadata.Name)
		ep := sm.Spec.Endpoints[0]
		Expect(ep.Scheme).To(Equal("http"), "ServiceMonitor %s: the e2e scrapes plain HTTP", sm.Metadata.Name)
		for _, svc := range r.services {
			if !slices.Contains(sm.Spec.NamespaceSelector.MatchNames, svc.Namespace) ||
				!labels.SelectorFromSet(sm.Spec.Selector.MatchLabels).Matches(labels.Set(svc.Labels)) {
				continue
			}
			job := prometheus.ScrapeConfig{JobName: svc.Name, ScrapeInterval: "1s", Scheme: ep.Scheme, MetricsPath: ep.Path, HonorLabels: ep.HonorLabels}
			for _, p := range procs {
				if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(p.podLabels)) {
					continue
				}
				job.StaticConfigs = append(job.StaticConfigs, prometheus.StaticConfig{
					Targets: []string{fmt.Sprintf("127.0.0.1:%d", p.metrics)},
					Labels: map[string]string{"namespace": svc.Namespace, "service": svc.Name, "pod": p.name + "-e2e",
						"container": p.container.Name, "endpoint": ep.Port},
				})
			}
			Expect(job.StaticConfigs).To(HaveLen(1), "Service %s selects one Deployment", svc.Name)
			jobs = append(jobs, job)
		}
	}
	Expect(jobs).To(HaveLen(len(procs)), "a metrics Service and a ServiceMonitor per Deployment")
	return jobs
}

// startPrometheus starts a real Prometheus with the jobs; it keeps its TSDB in $HVPA_E2E_PROMETHEUS_DATA
// (emptied first; `make dashboards` renders the images from it), else in the suite's folder.
func startPrometheus(ctx context.Context) {
	dir := os.Getenv("HVPA_E2E_PROMETHEUS_DATA")
	if dir == "" {
		dir = filepath.Join(workDir, "prometheus")
	} else {
		Expect(os.RemoveAll(dir)).To(Succeed())
	}
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	var err error
	prom, err = prometheus.Start(ctx, dir, prometheus.Options{Scrape: jobs, ScrapeInterval: time.Second})
	Expect(err).NotTo(HaveOccurred())
	runStart = time.Now()
	DeferCleanup(func() {
		prom.Stop()
		GinkgoWriter.Printf("Prometheus scraped %d jobs from %s for %s into %s\n", len(jobs), runStart.Format(time.TimeOnly),
			time.Since(runStart).Round(time.Second), prom.DataDir)
	})
}

// start runs the process and waits until it is ready (/readyz).
func (p *process) start() {
	p.log = filepath.Join(workDir, fmt.Sprintf("%s-%d.log", p.name, time.Now().UnixNano()))
	out, err := os.Create(p.log)
	Expect(err).NotTo(HaveOccurred())
	p.out = out
	p.cmd = exec.Command(binary, p.args...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	Expect(p.cmd.Start()).To(Succeed())
	Eventually(func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", p.probes))
		if err != nil {
			return err
		}
		_ = resp.Body.Close() // only the status matters
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %d", resp.StatusCode)
		}
		return nil
	}, framework.LongTimeout, framework.Interval).Should(Succeed(), func() string { return p.tail() })
}

func startAll() {
	for _, p := range procs {
		p.start()
	}
}

func stopAll() {
	for _, p := range procs {
		if p.cmd != nil && p.cmd.ProcessState == nil {
			p.stopGracefully()
		}
	}
}

// stopGracefully sends SIGTERM and waits for the process to exit.
func (p *process) stopGracefully() {
	Expect(p.cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		Expect(err).NotTo(HaveOccurred(), "%s exits cleanly on SIGTERM:\n%s", p.name, p.tail())
	case <-time.After(45 * time.Second):
		_ = p.cmd.Process.Kill()
		Fail(p.name + " did not stop within 45 s of SIGTERM:\n" + p.tail())
	}
	_ = p.out.Close() // the child wrote the log through its own descriptor; closing ours loses nothing
}

func (p *process) logText() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

func (p *process) tail() string {
	lines := strings.Split(p.logText(), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return p.name + ":\n" + strings.Join(lines, "\n")
}

// proc is the process of a chart Deployment by name suffix (recommender, admission, updater).
func proc(suffix string) *process {
	for _, p := range procs {
		if strings.HasSuffix(p.name, "-"+suffix) {
			return p
		}
	}
	Fail("no process " + suffix)
	return nil
}

// scrape reads one sample of a process's /metrics (the line's exact name and labels), -1 when absent.
func scrape(p *process, series string) float64 {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.metrics))
	if err != nil {
		return -1
	}
	defer func() { _ = resp.Body.Close() }() // a response body's Close has nothing to report once it is read
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			var v float64
			if _, err := fmt.Sscan(rest, &v); err == nil {
				return v
			}
		}
	}
	return -1
}

var _ = BeforeSuite(func() {
	workDir = GinkgoT().TempDir()
	root, err := testenv.ModuleRoot()
	Expect(err).NotTo(HaveOccurred())
	binary = os.Getenv("HVPA_BINARY")
	if binary == "" {
		binary = filepath.Join(workDir, "hvpa")
		build := exec.Command("go", "build", "-o", binary, "./cmd/hvpa")
		build.Dir = root
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
	}
	env, cfg, k8s, err = testenv.StartWithClient()
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	stop = cancel
	played, kubelet, err = playedkubelet.Start(ctx, k8s, "played-node-1")
	Expect(err).NotTo(HaveOccurred())
	kcm, err = testenv.StartControllerManager(env, []string{"deployment-controller", "replicaset-controller", "garbage-collector-controller",
		"horizontal-pod-autoscaler-controller", "disruption-controller"}, time.Second)
	Expect(err).NotTo(HaveOccurred())

	user, err := env.AddUser(envtest.User{Name: "hvpa-e2e", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kc, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	kubeconf = filepath.Join(workDir, "kubeconfig")
	Expect(os.WriteFile(kubeconf, kc, 0o600)).To(Succeed())
	webhook, err = testenv.FreePort()
	Expect(err).NotTo(HaveOccurred())
	_, _, err = testadmission.InstallAdmission(ctx, k8s, "hvpa", webhook, filepath.Join(workDir, "unused"))
	Expect(err).NotTo(HaveOccurred())
	chart := renderChart(root)
	procs = chartProcesses(chart)
	// a real Prometheus scrapes every process's /metrics over the whole run, as the chart's ServiceMonitors
	// say: the dashboards' queries are checked against it after the specs (dashboards_test.go)
	jobs = scrapeJobs(chart, procs)
	startPrometheus(ctx)
	startAll()

	// the played kubelet: runs pods, answers resizes by each pod's label, finishes evicted pods; the played
	// metrics API reports each workload's load
	go kubelet.Loop(ctx, 100*time.Millisecond, playedkubelet.AnswerByLabel, &loads, played)
})

var _ = AfterSuite(func() {
	// while every process still runs and Prometheus scrapes it
	problems := dashboardProblems(context.Background())
	stopAll()
	if stop != nil {
		stop()
	}
	if kcm != nil {
		kcm.Stop()
	}
	if played != nil {
		played.Close()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
	Expect(problems).To(BeEmpty(), "the scrape's labels and the dashboards' queries, against the Prometheus that scraped the run")
})

var _ = JustAfterEach(func() {
	if CurrentSpecReport().Failed() {
		for _, p := range procs {
			GinkgoWriter.Println(p.tail())
		}
	}
})
