package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// upstreamRecommender is upstream's VPA recommender binary, built by `make upstream-vpa`.
func upstreamRecommender(t *testing.T) string {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	version := os.Getenv("UPSTREAM_VPA_VERSION")
	if version == "" {
		version = "v1.8.1"
	}
	bin := filepath.Join(root, ".cache", "upstream", version, "vpa-recommender")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("upstream's VPA recommender %s is not built at %s: run `make upstream-vpa` (make test does)", version, bin)
	}
	return bin
}

// TestUpstreamGarbageCollectionSparesHvpaHistory runs upstream's VPA recommender (v1.8.1, from its Go module)
// beside `hvpa run --components=recommender`. Upstream's checkpoint garbage collection deletes every
// VerticalPodAutoscalerCheckpoint whose vpaObjectName names no VPA (a canary shows that it ran); an Hvpa's
// history is an HvpaCheckpoint, which it never lists: the Hvpa's history stays and keeps growing.
func TestUpstreamGarbageCollectionSparesHvpaHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local control plane and upstream's recommender")
	}
	bin := upstreamRecommender(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl := startPlayedCluster(ctx, t, "hvpa-system", "shop")
	c := cl.c
	cl.runApps(ctx, t, "shop", "web")
	if err := c.Create(ctx, &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: hvpav1alpha1.HvpaSpec{
		TargetRef:        autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		VPA:              &hvpav1alpha1.VpaSpec{Deploy: true},
		ScalingIntervals: []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](4)}}}}); err != nil {
		t.Fatal(err)
	}
	canary := &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "gone-app"},
		Spec: vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: "gone", ContainerName: "app"}}
	if err := c.Create(ctx, canary); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	startHvpa(t, dir, "hvpa", "run", "--kubeconfig", cl.kubeconfig, "--components", "recommender", "--recommender-interval", "500ms",
		"--checkpoint-period", "0", "--leader-election-namespace", "hvpa-system", "--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	samples := func() (int, error) {
		cp := &hvpav1alpha1.HvpaCheckpoint{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web-app"}, cp); err != nil {
			return 0, err
		}
		return cp.Status.TotalSamplesCount, nil
	}
	waitUntil(ctx, t, "hvpa writes the Hvpa's history", time.Minute, func() error {
		if n, err := samples(); err != nil || n == 0 {
			return fmt.Errorf("HvpaCheckpoint web-app: %d samples, %w", n, err)
		}
		return nil
	})

	log, err := os.Create(filepath.Join(dir, "upstream.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = log.Close() }() // the child wrote the log through its own descriptor; closing ours loses nothing
	up := exec.Command(bin, "--kubeconfig", cl.kubeconfig, "--checkpoints-gc-interval=1s", "--recommender-interval=1s",
		"--address="+freePort(t), "--leader-elect=false", "--v=3")
	up.Stdout, up.Stderr = log, log
	up.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = up.Process.Kill()
		_ = up.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("upstream recommender (last 3000 bytes):\n%s", tail(string(b), 3000))
		}
	})
	waitUntil(ctx, t, "upstream's garbage collection deletes the canary (a checkpoint naming no VPA)", time.Minute, func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(canary), &vpav1.VerticalPodAutoscalerCheckpoint{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the canary is still there (%w)", err)
		}
		return nil
	})
	before, err := samples()
	if err != nil {
		t.Fatalf("after upstream's garbage collection ran, the Hvpa's history: %v", err)
	}
	time.Sleep(3 * time.Second) // three more of upstream's collections
	waitUntil(ctx, t, "the Hvpa's history keeps growing beside upstream's recommender", 30*time.Second, func() error {
		n, err := samples()
		if err != nil {
			return err
		}
		if n <= before {
			return fmt.Errorf("%d samples, %d before", n, before)
		}
		return nil
	})
}
