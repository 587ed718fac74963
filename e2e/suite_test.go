package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hvpa-dev/hvpa/hack/recording"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
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
}

// chartProcesses renders the chart with e2e/testdata/values.yaml and makes a process of every Deployment:
// its arguments as rendered, plus what this machine needs instead of a cluster (a kubeconfig, listen
// addresses on 127.0.0.1, a certificate folder and address for the webhook).
func chartProcesses(root string) []*process {
	helm := filepath.Join(root, ".cache", "tools", "bin", "helm")
	if _, err := os.Stat(helm); err != nil {
		Fail("no helm at " + helm + ": run `make helm` (make test does)")
	}
	render := exec.Command(helm, "template", "hvpa", filepath.Join(root, "charts", "hvpa"), "-n", testadmission.AdmissionNamespace,
		"-f", filepath.Join(root, "e2e", "testdata", "values.yaml"))
	out, err := render.Output()
	Expect(err).NotTo(HaveOccurred(), "helm template")
	var procs []*process
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(out), 4096)
	for {
		var d appsv1.Deployment
		if err := dec.Decode(&d); err != nil {
			Expect(err).To(MatchError(io.EOF))
			break
		}
		if d.Kind != "Deployment" {
			continue
		}
		p := &process{name: d.Name, args: append([]string(nil), d.Spec.Template.Spec.Containers[0].Args...)}
		p.probes, err = testenv.FreePort()
		Expect(err).NotTo(HaveOccurred())
		p.metrics, err = testenv.FreePort()
		Expect(err).NotTo(HaveOccurred())
		// metrics over plain HTTP on loopback, scraped for the recording (the chart's secure default, HTTPS with
		// TokenReview and SubjectAccessReview, is proved in cmd/hvpa's TestChartRBAC)
		p.args = append(p.args, "--kubeconfig", kubeconf, "--zap-log-level", "info", "--metrics-secure=false",
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
		resp.Body.Close()
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
	p.out.Close()
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
	defer resp.Body.Close()
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

// mergedMetrics serves the /metrics of every process as one exposition, each sample labelled with its
// component (the processes share the standard metric families), for the recording.
func mergedMetrics(w http.ResponseWriter, _ *http.Request) {
	families := map[string]*dto.MetricFamily{}
	for _, p := range procs {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", p.metrics))
		if err != nil {
			continue // restarting
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		got, err := parser.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			continue
		}
		component := strings.TrimPrefix(p.name, "hvpa-")
		for name, f := range got {
			for _, m := range f.Metric {
				m.Label = append(m.Label, &dto.LabelPair{Name: ptr.To("component"), Value: ptr.To(component)})
			}
			if have, ok := families[name]; ok {
				have.Metric = append(have.Metric, f.Metric...)
			} else {
				families[name] = f
			}
		}
	}
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, n := range names {
		_ = enc.Encode(families[n])
	}
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
	procs = chartProcesses(root)
	startAll()

	// the binary's /metrics over the whole run, for the dashboard images (HVPA_E2E_RECORDING keeps the file)
	recPath := os.Getenv("HVPA_E2E_RECORDING")
	if recPath == "" {
		recPath = filepath.Join(workDir, "metrics.prom.gz")
	}
	merged := httptest.NewServer(http.HandlerFunc(mergedMetrics))
	recorder := &recording.Recorder{}
	recDone := make(chan struct{})
	go func() {
		defer close(recDone)
		_ = recorder.Start(ctx, merged.URL, recPath, time.Second)
	}()
	DeferCleanup(func() {
		stop()
		<-recDone
		merged.Close()
		n, failed := recorder.Counts()
		GinkgoWriter.Printf("recorded %d scrapes of /metrics (%d failed: the binary was restarted) into %s\n", n, failed, recPath)
	})

	// the played kubelet: runs pods, answers resizes by each pod's label, finishes evicted pods; the played
	// metrics API reports each workload's load
	go kubelet.Loop(ctx, 100*time.Millisecond, playedkubelet.AnswerByLabel, &loads, played)
})

var _ = AfterSuite(func() {
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
})

var _ = JustAfterEach(func() {
	if CurrentSpecReport().Failed() {
		for _, p := range procs {
			GinkgoWriter.Println(p.tail())
		}
	}
})
