package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hvpa-dev/hvpa/internal/playedkubelet"
	"github.com/hvpa-dev/hvpa/internal/recording"
	"github.com/hvpa-dev/hvpa/internal/testenv"
	"github.com/hvpa-dev/hvpa/internal/testenv/testadmission"
)

const (
	timeout = 60 * time.Second
	poll    = 200 * time.Millisecond
	// resizeLabel tells the played kubelet how to answer a pod's resizes: accept (default) or infeasible.
	resizeLabel = "played.hvpa.dev/resize"
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
	hvpa     *process
	binary   string
	workDir  string
	webhook  int
	metrics  int
	probes   int
	kubeconf string
)

func TestE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("the e2e suite runs the hvpa binary against the local control plane; runs in `make test`, not under -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "e2e suite")
}

// process is the hvpa binary running as a child process.
type process struct {
	cmd *exec.Cmd
	log string
	out *os.File
}

// args are the chart's arguments for an all-in-one manager (charts/hvpa renders the same flags per
// component), pointed at this machine and with the short loops the suite needs.
func args() []string {
	return []string{"run", "--kubeconfig", kubeconf,
		"--components", "recommender,hvpa,admission,updater",
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metrics), "--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", probes),
		"--leader-elect", "--leader-election-namespace", testadmission.AdmissionNamespace, "--leader-election-id", "hvpa-e2e",
		"--webhook-host", "127.0.0.1", "--webhook-port", fmt.Sprint(webhook), "--cert-mode", "self-managed", "--cert-dir", filepath.Join(workDir, "certs"),
		"--webhook-namespace", testadmission.AdmissionNamespace, "--webhook-config-name", "hvpa", "--webhook-cert-ips", "127.0.0.1",
		"--recommender-interval", "1s", "--hvpa-sync-period", "1s", "--updater-interval", "1s", "--pod-min-age", "0s",
		"--checkpoints-gc-interval", "10s", "--zap-log-level", "info"}
}

// startHvpa runs the binary and waits until it is ready (/readyz: webhook server and certificate).
func startHvpa() *process {
	log := filepath.Join(workDir, fmt.Sprintf("hvpa-%d.log", time.Now().UnixNano()))
	out, err := os.Create(log)
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(binary, args()...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	Expect(cmd.Start()).To(Succeed())
	p := &process{cmd: cmd, log: log, out: out}
	Eventually(func() error {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", probes))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("readyz %d", resp.StatusCode)
		}
		return nil
	}, timeout, poll).Should(Succeed(), func() string { return p.tail() })
	return p
}

// stopGracefully sends SIGTERM and waits for the process to exit.
func (p *process) stopGracefully() {
	Expect(p.cmd.Process.Signal(syscall.SIGTERM)).To(Succeed())
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		Expect(err).NotTo(HaveOccurred(), "hvpa exits cleanly on SIGTERM:\n%s", p.tail())
	case <-time.After(45 * time.Second):
		_ = p.cmd.Process.Kill()
		Fail("hvpa did not stop within 45 s of SIGTERM:\n" + p.tail())
	}
	p.out.Close()
}

func (p *process) logText() string {
	b, _ := os.ReadFile(p.log)
	return string(b)
}

// scrape reads one sample of the binary's /metrics (the line's exact name and labels), -1 when absent.
func scrape(series string) float64 {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics))
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

func (p *process) tail() string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(string(b), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return strings.Join(lines, "\n")
}

var _ = BeforeSuite(func() {
	workDir = GinkgoT().TempDir()
	binary = os.Getenv("HVPA_BINARY")
	if binary == "" {
		root, err := testenv.ModuleRoot()
		Expect(err).NotTo(HaveOccurred())
		binary = filepath.Join(workDir, "hvpa")
		build := exec.Command("go", "build", "-o", binary, "./cmd/hvpa")
		build.Dir = root
		out, err := build.CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
	}
	var err error
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
	for _, p := range []*int{&webhook, &metrics, &probes} {
		*p, err = testenv.FreePort()
		Expect(err).NotTo(HaveOccurred())
	}
	_, _, err = testadmission.InstallAdmission(ctx, k8s, "hvpa", webhook, filepath.Join(workDir, "unused"))
	Expect(err).NotTo(HaveOccurred())
	hvpa = startHvpa()

	// the binary's /metrics over the whole run, for the dashboard images (HVPA_E2E_RECORDING keeps the file)
	recPath := os.Getenv("HVPA_E2E_RECORDING")
	if recPath == "" {
		recPath = filepath.Join(workDir, "metrics.prom.gz")
	}
	recorder := &recording.Recorder{}
	recDone := make(chan struct{})
	go func() {
		defer close(recDone)
		_ = recorder.Start(ctx, fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics), recPath, time.Second)
	}()
	DeferCleanup(func() {
		stop()
		<-recDone
		n, failed := recorder.Counts()
		GinkgoWriter.Printf("recorded %d scrapes of /metrics (%d failed: the binary was restarted) into %s\n", n, failed, recPath)
	})

	// the played kubelet: runs pods, answers resizes by each pod's label, finishes evicted pods; the played
	// metrics API reports each workload's load
	go func() {
		for ctx.Err() == nil {
			_, _ = kubelet.RunPending(ctx, "")
			_, _ = kubelet.AnswerResizes(ctx, "", func(p *corev1.Pod) playedkubelet.ResizeAnswer {
				if p.Labels[resizeLabel] == "infeasible" {
					return playedkubelet.ResizeInfeasible
				}
				return playedkubelet.ResizeAccept
			})
			_, _ = kubelet.FinishTerminating(ctx, "")
			loads.Play(ctx, k8s, played)
			time.Sleep(100 * time.Millisecond)
		}
	}()
})

var _ = AfterSuite(func() {
	if hvpa != nil && hvpa.cmd.ProcessState == nil {
		hvpa.stopGracefully()
	}
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
	if CurrentSpecReport().Failed() && hvpa != nil {
		GinkgoWriter.Println("hvpa log (last lines):\n" + hvpa.tail())
	}
})
