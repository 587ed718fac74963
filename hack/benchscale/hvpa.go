package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hvpa-dev/hvpa/test/testadmission"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// webhookConfig names the webhook configurations installed for the admission process.
const webhookConfig = "hvpa"

// component is one hvpa process of the benchmark, as the chart deploys them: the recommender (its loops,
// requests, CPU and memory measured) and the admission webhook (its added pod-create latency measured).
type component struct {
	name string // --components
	user string // the process's identity (the audit log records only the recommender's)
	log  string // file name of its log in the run's folder
}

var (
	recommenderProcess = component{name: "recommender", user: hvpaUser, log: "hvpa.log"}
	admissionProcess   = component{name: "admission", user: admissionUser, log: "admission.log"}
)

// admissionReplica is the i-th admission process (0: admissionProcess); every replica serves the same
// webhook configurations and shares the certificate Secret, as the chart's replicas do.
func admissionReplica(i int) component {
	if i == 0 {
		return admissionProcess
	}
	return component{name: "admission", user: fmt.Sprintf("%s-%d", admissionUser, i), log: fmt.Sprintf("admission-%d.log", i)}
}

// hvpaProcess is `hvpa run --components=<one component>` running as a child process under its own user.
type hvpaProcess struct {
	cmd    *exec.Cmd
	done   chan struct{}
	logOut *os.File
	watch  *watcher
	stopW  context.CancelFunc
}

// startHvpa starts the hvpa binary running one component with its log in dir, and waits until it is ready.
// For the admission component it first installs the webhook configurations (pointed at 127.0.0.1, the
// caBundle filled in by the process's self-managed certificate) and waits for the caBundle too.
// With front, the webhook configurations point at that round-robin proxy, which forwards to this process too.
func startHvpa(ctx context.Context, env *envtest.Environment, c client.Client, cfg config, dir string, comp component, front *roundRobin) (*hvpaProcess, error) {
	user, err := env.AddUser(envtest.User{Name: comp.user, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, strings.TrimSuffix(comp.log, ".log")+".kubeconfig") // one per process, as its log
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return nil, err
	}
	var ports [3]int // webhook, metrics, probes
	for i := range ports {
		if ports[i], err = testenv.FreePort(); err != nil {
			return nil, err
		}
	}
	components := comp.name
	if comp == recommenderProcess {
		components = cfg.components
	}
	args := []string{"run", "--components=" + components, "--kubeconfig", kubeconfig,
		"--recommender-interval", cfg.interval.String(), "--leader-elect=false", "--profiling", "--metrics-secure=false",
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[1]), "--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", ports[2]),
		"--zap-log-level", "info", "--zap-time-encoding", "rfc3339nano"}
	if comp == recommenderProcess {
		args = append(args, "--checkpoint-period", cfg.checkpointPeriod.String())
	}
	if comp.name == admissionProcess.name {
		more, err := admissionArgs(ctx, c, dir, comp, ports[0], front)
		if err != nil {
			return nil, err
		}
		args = append(args, more...)
	}
	args = append(args, cfg.hvpaArgs...)
	logPath := filepath.Join(dir, comp.log)
	logOut, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	h := &hvpaProcess{cmd: exec.Command(cfg.binary, args...), done: make(chan struct{}), logOut: logOut}
	h.cmd.Stdout, h.cmd.Stderr = logOut, logOut
	h.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := h.cmd.Start(); err != nil {
		_ = logOut.Close() // nothing was written to it; the failed start is the error to report
		return nil, fmt.Errorf("starting %s: %w", cfg.binary, err)
	}
	go func() { _ = h.cmd.Wait(); close(h.done) }()
	watchCtx, stopW := context.WithCancel(ctx)
	h.stopW = stopW
	h.watch = newWatcher(h.cmd.Process.Pid, logPath, fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[1]))
	go h.watch.follow(watchCtx)
	go h.watch.sample(watchCtx)
	if err := h.waitReady(ctx, c, ports[2], comp.name == admissionProcess.name); err != nil {
		h.stop()
		return nil, fmt.Errorf("%w; last lines of %s:\n%s", err, logPath, tail(logPath, 20))
	}
	return h, nil
}

// waitReady waits for /readyz and, with webhooks, for the caBundle of both webhook configurations.
func (h *hvpaProcess) waitReady(ctx context.Context, c client.Client, probePort int, webhooks bool) error {
	return waitFor(ctx, stdout, "hvpa ready", time.Minute, func() (bool, string, error) {
		if err := h.exited(); err != nil {
			return false, "", err
		}
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort))
		if err != nil {
			return false, err.Error(), nil
		}
		_ = resp.Body.Close() // only the status matters
		if resp.StatusCode != http.StatusOK {
			return false, "readyz " + resp.Status, nil
		}
		if !webhooks {
			return true, "", nil
		}
		m := &admissionregistrationv1.MutatingWebhookConfiguration{}
		v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: webhookConfig}, m); err != nil {
			return false, err.Error(), nil
		}
		if err := c.Get(ctx, client.ObjectKey{Name: webhookConfig}, v); err != nil {
			return false, err.Error(), nil
		}
		return len(m.Webhooks[0].ClientConfig.CABundle) > 0 && len(v.Webhooks[0].ClientConfig.CABundle) > 0, "no caBundle yet", nil
	})
}

// admissionArgs installs the webhook configurations (pointed at port, or at front, which forwards to port
// too) and returns the admission process's flags for them.
func admissionArgs(ctx context.Context, c client.Client, dir string, comp component, port int, front *roundRobin) ([]string, error) {
	certDir := filepath.Join(dir, "certs-"+comp.user)
	url := port
	if front != nil {
		url = front.add(port)
	}
	if _, _, err := testadmission.InstallAdmission(ctx, c, webhookConfig, url, certDir); err != nil {
		return nil, fmt.Errorf("installing the webhook configurations: %w", err)
	}
	return []string{"--webhook-config-name", webhookConfig, "--webhook-host", "127.0.0.1", "--webhook-port", fmt.Sprint(port),
		"--cert-dir", certDir, "--webhook-cert-ips", "127.0.0.1"}, nil
}

// exited is an error once the process has ended.
func (h *hvpaProcess) exited() error {
	if h == nil { // no process (-first-rec-floor)
		return nil
	}
	select {
	case <-h.done:
		return fmt.Errorf("the hvpa process exited (%s); last lines of its log:\n%s", h.cmd.ProcessState, tail(h.logOut.Name(), 20))
	default:
		return nil
	}
}

// commandLine is how the process was started, for the report.
func (h *hvpaProcess) commandLine() string {
	return strings.Join(append([]string{filepath.Base(h.cmd.Path)}, h.cmd.Args[1:]...), " ")
}

// stop ends the process (SIGTERM, then SIGKILL after 30 s) and its watcher; calling it again does nothing.
func (h *hvpaProcess) stop() {
	select {
	case <-h.done:
	default:
		_ = h.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-h.done:
		case <-time.After(30 * time.Second):
			_ = h.cmd.Process.Kill()
			<-h.done
		}
	}
	h.stopW()
	_ = h.logOut.Close() // the process wrote its log through its own descriptor; closing ours loses nothing
}

// tail is the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
