// Package testenv starts the real local control plane (kube-apiserver and etcd built by `make controlplane`)
// for integration suites, with the hvpa CRDs installed from charts/hvpa/crds.
package testenv

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// K8sVersion is the Kubernetes version of the local control plane.
const K8sVersion = "v1.36.3"

// Shared timeouts for Eventually in integration suites.
const (
	Timeout  = 30 * time.Second
	Interval = 100 * time.Millisecond
)

// Scheme knows the built-in Kubernetes types and every hvpa API.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, metricsv1beta1.AddToScheme, vpav1.AddToScheme, hvpav1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

// ProductModule is the module path of the repository's root module (go.mod at the repository root).
const ProductModule = "github.com/hvpa-dev/hvpa"

// ModuleRoot is the repository root: the folder, from the working directory upwards, whose go.mod declares
// ProductModule. The go.mod of a nested module (hack/go.mod, module github.com/hvpa-dev/hvpa/hack) is passed
// over, so that the tools' tests and commands find charts/, docs/ and .cache/ from hack/ too.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		path, err := modulePath(filepath.Join(dir, "go.mod"))
		if err != nil {
			return "", err
		}
		if path == ProductModule {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testenv: no go.mod of module %s above the working directory", ProductModule)
		}
		dir = parent
	}
}

// modulePath is the module path that the go.mod at path declares; "" when there is no file.
func modulePath(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	return "", fmt.Errorf("testenv: %s has no module line", path)
}

// AssetsDir is the folder with kube-apiserver, kube-controller-manager, kubectl and etcd: $KUBEBUILDER_ASSETS,
// or the cache folder `make controlplane` fills.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		root, err := ModuleRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, ".cache", "controlplane", K8sVersion, "bin")
	}
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("testenv: %s not found in %s: run `make controlplane` (or set KUBEBUILDER_ASSETS)", b, dir)
		}
	}
	return dir, nil
}

// Option configures the local control plane before it starts (e.g. WithAudit).
type Option func(*envtest.Environment) error

// Start starts kube-apiserver and etcd with the hvpa CRDs installed, configured by opts. Stop the returned
// environment when done.
func Start(opts ...Option) (*envtest.Environment, *rest.Config, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, nil, err
	}
	assets, err := AssetsDir()
	if err != nil {
		return nil, nil, err
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "charts", "hvpa", "crds")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		Scheme:                Scheme(),
	}
	for _, o := range opts {
		if err := o(env); err != nil {
			return nil, nil, err
		}
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, nil, fmt.Errorf("testenv: starting the local control plane from %s: %w", assets, err)
	}
	return env, cfg, nil
}

// StartWithClient starts the local control plane (Start, configured by opts) and returns a client with Scheme.
func StartWithClient(opts ...Option) (*envtest.Environment, *rest.Config, client.Client, error) {
	env, cfg, err := Start(opts...)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		_ = env.Stop()
		return nil, nil, nil, err
	}
	return env, cfg, c, nil
}

// WithCertDir gives the API server a certificate directory of the caller's (certDir, existing and empty):
// unlike the random one envtest makes and removes at Stop, it keeps the API server's serving certificate
// across RestartAPIServer, and with it every client's trust; the port and the client CA are kept anyway.
func WithCertDir(certDir string) Option {
	return func(env *envtest.Environment) error {
		env.ControlPlane.GetAPIServer().CertDir = certDir
		return nil
	}
}

// RestartAPIServer kills kube-apiserver with SIGKILL (a crash: no graceful shutdown; etcd keeps running),
// leaves it down for down, and starts it again on the same address; it returns once the API server is
// healthy. Start the environment WithCertDir, or its clients no longer trust the restarted server.
func RestartAPIServer(env *envtest.Environment, down time.Duration) error {
	api := env.ControlPlane.GetAPIServer()
	pid, err := apiServerPID(api.CertDir)
	if err != nil {
		return err
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("testenv: killing kube-apiserver (pid %d): %w", pid, err)
	}
	// envtest reaps it; then Stop finds it exited and only tidies up, once envtest has marked it so (below)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("testenv: kube-apiserver (pid %d) still there 10 s after SIGKILL", pid)
		}
	}
	// envtest marks the process exited only after its Wait returns, so for a moment after the reaping its Stop
	// still signals the gone process group and fails with ESRCH: ask again until it sees the exit
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		err := api.Stop()
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ESRCH) || time.Now().After(deadline) {
			return fmt.Errorf("testenv: stopping kube-apiserver: %w", err)
		}
	}
	time.Sleep(down)
	if err := api.Start(); err != nil {
		return fmt.Errorf("testenv: starting kube-apiserver again: %w", err)
	}
	return nil
}

// apiServerPID finds the kube-apiserver process serving from certDir.
func apiServerPID(certDir string) (int, error) {
	if certDir == "" {
		return 0, fmt.Errorf("testenv: the API server has no certificate directory of its own: start it WithCertDir")
	}
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		return 0, err
	}
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		args := strings.Split(string(b), "\x00")
		if strings.HasSuffix(args[0], "kube-apiserver") && slices.Contains(args, "--cert-dir="+certDir) {
			return strconv.Atoi(filepath.Base(filepath.Dir(f)))
		}
	}
	return 0, fmt.Errorf("testenv: no kube-apiserver process with --cert-dir=%s", certDir)
}

// Kubectl runs kubectl with args against env's API server as a cluster admin (system:masters), the way a
// user would, and returns its standard output; the error carries its standard error.
func Kubectl(env *envtest.Environment, args ...string) ([]byte, error) {
	admin, err := env.AddUser(envtest.User{Name: "kubectl-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	kubectl, err := admin.Kubectl()
	if err != nil {
		return nil, err
	}
	stdout, stderr, err := kubectl.Run(args...)
	out, _ := io.ReadAll(stdout)
	if err != nil {
		errText, _ := io.ReadAll(stderr)
		return out, fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, errText)
	}
	return out, nil
}
