package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hvpa-dev/hvpa/internal/playedkubelet"
	"github.com/hvpa-dev/hvpa/internal/testenv"
)

// playedCluster is the local control plane with the namespaces and a played node (its kubelet and metrics
// API), and the kubeconfig of a system:masters user for hvpa processes; all stopped when the test ends.
type playedCluster struct {
	env        *envtest.Environment
	c          client.Client
	metrics    *playedkubelet.MetricsServer
	kubelet    *playedkubelet.Kubelet
	kubeconfig string
}

func startPlayedCluster(ctx context.Context, t *testing.T, namespaces ...string) *playedCluster {
	t.Helper()
	env, _, c, err := testenv.StartWithClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	for _, ns := range namespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	ms, kubelet, err := playedkubelet.Start(ctx, c, "node-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ms.Close)
	user, err := env.AddUser(envtest.User{Name: "hvpa", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return &playedCluster{env: env, c: c, metrics: ms, kubelet: kubelet, kubeconfig: kubeconfig}
}

// waitUntil retries f every 200 ms until it succeeds and returns how long that took; the test fails with f's
// last error once within has passed or ctx has ended.
func waitUntil(ctx context.Context, t *testing.T, what string, within time.Duration, f func() error) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		err := f()
		if err == nil {
			return time.Since(start)
		}
		if time.Since(start) > within || ctx.Err() != nil {
			t.Fatalf("%s: not within %s: %v", what, within, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
