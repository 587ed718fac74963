// Package testenv starts the real local control plane (kube-apiserver and etcd built by `make controlplane`)
// for integration suites, with the hvpa CRDs installed from charts/hvpa/crds.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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

// ModuleRoot is the folder holding go.mod, found from the working directory upwards.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testenv: no go.mod above the working directory")
		}
		dir = parent
	}
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

// StartWithClient starts the local control plane (Start) and returns a client with Scheme.
func StartWithClient() (*envtest.Environment, *rest.Config, client.Client, error) {
	env, cfg, err := Start()
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
