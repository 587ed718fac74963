package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/internal/playedkubelet"
	"github.com/hvpa-dev/hvpa/internal/testenv"
)

// TestFaultLeaderFailover runs `hvpa run --components=recommender` as two processes with leader election, as
// two replicas of the chart's recommender would run. The leader is killed with SIGKILL (it cannot hand its
// Lease over): the other process takes the Lease once it expires, within twice the Lease duration, and the
// recommendations go on (a VPA created after the kill gets one from the new leader).
func TestFaultLeaderFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cl := startPlayedCluster(ctx, t, "hvpa-system", "shop")
	c, ms, kubelet, kubeconfig := cl.c, cl.metrics, cl.kubelet, cl.kubeconfig
	for _, app := range []string{"web", "api"} {
		if err := c.Create(ctx, testenv.Deployment("shop", app, 1, nil, testenv.Container("app", testenv.Resources("100m", "128Mi"), nil))); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: app + "-1", Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played"}}}}
		if err := kubelet.Run(ctx, pod); err != nil {
			t.Fatal(err)
		}
		ms.Set("shop", app+"-1", "app", playedkubelet.Usage{CPUMilli: 300, MemoryBytes: 200 << 20})
	}

	dir := t.TempDir()
	type replica struct {
		cmd *exec.Cmd
		log string
	}
	start := func(name string) *replica {
		args := []string{"run", "--kubeconfig", kubeconfig, "--components", "recommender", "--recommender-interval", "500ms",
			"--leader-election-namespace", "hvpa-system", "--metrics-bind-address", freePort(t), "--metrics-secure=false",
			"--health-probe-bind-address", freePort(t), "--graceful-shutdown-timeout=5s"}
		raw, _ := json.Marshal(args)
		r := &replica{log: filepath.Join(dir, name+".log")}
		out, err := os.Create(r.log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { out.Close() })
		r.cmd = exec.Command(os.Args[0], "-test.run=^TestChartHelperProcess$")
		r.cmd.Env = append(os.Environ(), chartHelperEnv+"="+string(raw), "POD_NAMESPACE=hvpa-system")
		r.cmd.Stdout, r.cmd.Stderr = out, out
		r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := r.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if r.cmd.ProcessState == nil {
				_ = r.cmd.Process.Signal(syscall.SIGTERM)
				_ = r.cmd.Wait()
			}
			if t.Failed() {
				b, _ := os.ReadFile(r.log)
				t.Logf("%s (last 3000 bytes):\n%s", name, tail(string(b), 3000))
			}
		})
		return r
	}
	leads := func(r *replica) bool {
		b, _ := os.ReadFile(r.log)
		return strings.Contains(string(b), "Successfully acquired lease")
	}
	eventually := func(what string, within time.Duration, f func() error) time.Duration {
		t.Helper()
		return waitUntil(ctx, t, what, within, f)
	}
	recommended := func(name string) func() error {
		return func() error {
			v := &vpav1.VerticalPodAutoscaler{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: name}, v); err != nil {
				return err
			}
			if v.Status.Recommendation == nil {
				return fmt.Errorf("VPA %s has no recommendation yet", name)
			}
			return nil
		}
	}
	vpa := func(name string) {
		t.Helper()
		if err := c.Create(ctx, &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: vpav1.VerticalPodAutoscalerSpec{TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name}}}); err != nil {
			t.Fatal(err)
		}
	}

	a, b := start("a"), start("b")
	eventually("one replica leads", time.Minute, func() error {
		if leads(a) == leads(b) {
			return fmt.Errorf("leading: a %t, b %t", leads(a), leads(b))
		}
		return nil
	})
	leader, standby := a, b
	if leads(b) {
		leader, standby = b, a
	}
	vpa("web")
	eventually("the leader recommends for VPA web", time.Minute, recommended("web"))

	lease := &coordinationv1.Lease{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "hvpa-system", Name: "hvpa-recommender"}, lease); err != nil {
		t.Fatal(err)
	}
	held := *lease.Spec.HolderIdentity
	duration := time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = leader.cmd.Wait()
	took := eventually("the standby takes the Lease", 2*duration, func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: "hvpa-system", Name: "hvpa-recommender"}, lease); err != nil {
			return err
		}
		if h := *lease.Spec.HolderIdentity; h == held || !leads(standby) {
			return fmt.Errorf("the Lease is still held by %s", h)
		}
		return nil
	})
	t.Logf("the standby took the Lease %s after the leader was killed (Lease duration %s)", took.Round(100*time.Millisecond), duration)
	vpa("api")
	eventually("the new leader recommends for VPA api, created after the kill", time.Minute, recommended("api"))
	if standby.cmd.ProcessState != nil {
		t.Fatalf("the new leader exited: %s", standby.cmd.ProcessState)
	}
}
