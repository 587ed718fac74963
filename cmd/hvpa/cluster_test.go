package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
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
	return startPlayedClusterWith(ctx, t, nil, namespaces...)
}

// startPlayedClusterWith is startPlayedCluster with the control plane configured by opts.
func startPlayedClusterWith(ctx context.Context, t *testing.T, opts []testenv.Option, namespaces ...string) *playedCluster {
	t.Helper()
	env, _, c, err := testenv.StartWithClient(opts...)
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

// runApps creates, for each app, a Deployment of one pod (app=<name>, container app, 100m/128Mi) and that
// pod, Running on the played node and using 300m and 200Mi.
func (cl *playedCluster) runApps(ctx context.Context, t *testing.T, ns string, apps ...string) {
	t.Helper()
	for _, app := range apps {
		if err := cl.c.Create(ctx, wrappers.MakeDeployment(ns, app).Container(wrappers.MakeContainer("app").Requests("100m", "128Mi").Obj()).Obj()); err != nil {
			t.Fatal(err)
		}
		pod := wrappers.MakePod(ns, app+"-1").Label("app", app).Container(wrappers.MakeContainer("app").Obj()).Obj()
		if err := cl.kubelet.Run(ctx, pod); err != nil {
			t.Fatal(err)
		}
		cl.metrics.Set(ns, app+"-1", "app", playedkubelet.Usage{CPUMilli: 300, MemoryBytes: 200 << 20})
	}
}

// createVPA creates VPA name on Deployment name (mode: nil for the default).
func (cl *playedCluster) createVPA(ctx context.Context, t *testing.T, ns, name string, mode *vpav1.UpdateMode) {
	t.Helper()
	v := &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: vpav1.VerticalPodAutoscalerSpec{TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name}}}
	if mode != nil {
		v.Spec.UpdatePolicy = &vpav1.PodUpdatePolicy{UpdateMode: mode}
	}
	if err := cl.c.Create(ctx, v); err != nil {
		t.Fatal(err)
	}
}

// recommended says why VPA name has no recommendation yet (nil once it has one).
func (cl *playedCluster) recommended(ctx context.Context, ns, name string) func() error {
	return func() error {
		v := &vpav1.VerticalPodAutoscaler{}
		if err := cl.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, v); err != nil {
			return err
		}
		if v.Status.Recommendation == nil {
			return fmt.Errorf("VPA %s has no recommendation yet", name)
		}
		return nil
	}
}
