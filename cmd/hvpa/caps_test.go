package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
)

// TestRunMaxAllowedAndClusterCheck: `hvpa run --container-recommendation-max-allowed-cpu=2` (upstream VPA's flag,
// refused before) starts and caps a VPA's target at 2 CPU where the VPA sets no maxAllowed; at start it reads
// the cluster's version and finds pods/resize by discovery.
func TestRunMaxAllowedAndClusterCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startPlayedCluster(ctx, t, "hvpa-system", "shop")

	s, err := checkCluster(cl.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Supported || !s.InPlaceResize || !strings.HasPrefix(s.Version, "v1.") ||
		!strings.Contains(s.Message(), "supported (1.30 or later); in-place resize: pods/resize is served") {
		t.Errorf("cluster check %+v: %s", s, s.Message())
	}

	cl.runApps(ctx, t, "shop", "web")
	cl.metrics.Set("shop", "web-1", "app", playedkubelet.Usage{CPUMilli: 3000, MemoryBytes: 200 << 20})
	cl.createVPA(ctx, t, "shop", "web", nil)
	cmd := newRootCommand()
	cmd.SetArgs([]string{"run", "--kubeconfig", cl.kubeconfig, "--components", "recommender", "--recommender-interval", "300ms",
		"--leader-elect=false", "--health-probe-bind-address", freePort(t), "--metrics-bind-address", "0",
		"--container-recommendation-max-allowed-cpu=2"})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(runCtx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("hvpa run ended with %v", err)
		}
	}()
	waitUntil(ctx, t, "the VPA's cpu target is capped at 2", 60*time.Second, func() error {
		v := &vpav1.VerticalPodAutoscaler{}
		if err := cl.c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, v); err != nil {
			return err
		}
		if v.Status.Recommendation == nil || len(v.Status.Recommendation.ContainerRecommendations) != 1 {
			return fmt.Errorf("no recommendation yet: %+v", v.Status)
		}
		r := v.Status.Recommendation.ContainerRecommendations[0]
		if r.Target.Cpu().MilliValue() != 2000 || r.UncappedTarget.Cpu().MilliValue() < 3000 {
			return fmt.Errorf("target %s, uncapped %s: want 2 and the usage's 3+", r.Target.Cpu(), r.UncappedTarget.Cpu())
		}
		return nil
	})
}
