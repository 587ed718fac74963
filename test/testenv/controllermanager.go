package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// ControllerManager is a running kube-controller-manager (the real one, built by `make controlplane`).
type ControllerManager struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
	done chan struct{}
}

// StartControllerManager runs kube-controller-manager against env's API server with only the given
// controllers (e.g. deployment-controller, replicaset-controller, garbage-collector-controller,
// horizontal-pod-autoscaler-controller) and a short HPA sync period; extraArgs are more flags (e.g.
// --kube-api-qps=1000 for many objects). Create CRDs before starting it: its discovery refreshes only every 30 s.
func StartControllerManager(env *envtest.Environment, controllers []string, hpaSync time.Duration, extraArgs ...string) (*ControllerManager, error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	user, err := env.AddUser(envtest.User{Name: "kube-controller-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kcm-")
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return nil, err
	}
	cm := &ControllerManager{done: make(chan struct{})}
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--controllers=" + strings.Join(controllers, ","),
		"--secure-port=0",
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--horizontal-pod-autoscaler-sync-period=" + hpaSync.String(),
		"--horizontal-pod-autoscaler-cpu-initialization-period=1s",
		"--horizontal-pod-autoscaler-initial-readiness-delay=1s",
		"--concurrent-horizontal-pod-autoscaler-syncs=5",
		"--v=1",
	}
	cm.cmd = exec.Command(filepath.Join(assets, "kube-controller-manager"), append(args, extraArgs...)...)
	cm.cmd.Stdout = &lockedWriter{cm}
	cm.cmd.Stderr = &lockedWriter{cm}
	if err := cm.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting kube-controller-manager: %w", err)
	}
	go func() { _ = cm.cmd.Wait(); close(cm.done) }()
	return cm, nil
}

type lockedWriter struct{ cm *ControllerManager }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.cm.mu.Lock()
	defer w.cm.mu.Unlock()
	return w.cm.logs.Write(p)
}

// Logs returns what it printed so far.
func (cm *ControllerManager) Logs() string {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	return cm.logs.String()
}

// Stop ends it.
func (cm *ControllerManager) Stop() {
	_ = cm.cmd.Process.Kill()
	<-cm.done
}
