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

	coordinationv1 "k8s.io/api/coordination/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/test/testenv"
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
	c, kubeconfig := cl.c, cl.kubeconfig
	cl.runApps(ctx, t, "shop", "web", "api")

	dir := t.TempDir()
	start := func(name string) *hvpaProcess {
		return startHvpa(t, dir, name, "run", "--kubeconfig", kubeconfig, "--components", "recommender", "--recommender-interval", "500ms",
			"--leader-election-namespace", "hvpa-system", "--metrics-bind-address", freePort(t), "--metrics-secure=false",
			"--health-probe-bind-address", freePort(t), "--graceful-shutdown-timeout=5s")
	}
	leads := func(r *hvpaProcess) bool {
		b, _ := os.ReadFile(r.log)
		return strings.Contains(string(b), "Successfully acquired lease")
	}
	eventually := func(what string, within time.Duration, f func() error) time.Duration {
		t.Helper()
		return waitUntil(ctx, t, what, within, f)
	}
	recommended := func(name string) func() error { return cl.recommended(ctx, "shop", name) }
	vpa := func(name string) { t.Helper(); cl.createVPA(ctx, t, "shop", name, nil) }

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
	leader.kill(t)
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

// hvpaProcess is `hvpa` running as a process of its own (the test binary re-executed through
// TestChartHelperProcess), its output in log.
type hvpaProcess struct {
	cmd *exec.Cmd
	log string
}

// startHvpa starts `hvpa args...` as a process in namespace hvpa-system, logging to dir/name.log; the test's
// end stops it (SIGTERM) and, if the test failed, shows the end of its log.
func startHvpa(t *testing.T, dir, name string, args ...string) *hvpaProcess {
	t.Helper()
	raw, _ := json.Marshal(args)
	r := &hvpaProcess{log: filepath.Join(dir, name+".log")}
	out, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() }) // the child wrote the log through its own descriptor; closing ours loses nothing
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

// kill stops the process with SIGKILL: no shutdown, no Lease handed over, no write finished.
func (r *hvpaProcess) kill(t *testing.T) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = r.cmd.Wait()
}

// TestFaultAPIServerRestart stops kube-apiserver under a running `hvpa run --components
// recommender,hvpa,updater` (leader election on): kube-apiserver is killed (SIGKILL), left down 2 s and
// started again (several seconds without an API server in all), twice:
//   - with the default timings (Lease 15 s, renew deadline 10 s, longer than the outage): the process
//     keeps its Lease, stays up, and its watches and loop resume (a VPA created after the restart gets a
//     recommendation);
//   - with a renew deadline shorter than the outage (Lease 3 s, renew deadline 2 s): the leader cannot
//     renew its Lease in time
//     and must stop leading, which controller-runtime does by exiting (status 1) so that no two leaders
//     write; restarted as the kubelet would restart it, it leads again, serves the VPAs and stays up (no
//     crash loop).
func TestFaultAPIServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cl := startPlayedClusterWith(ctx, t, []testenv.Option{testenv.WithCertDir(t.TempDir())}, "hvpa-system", "shop")
	cl.runApps(ctx, t, "shop", "web", "api", "db")
	vpa := func(name string) { t.Helper(); cl.createVPA(ctx, t, "shop", name, nil) }
	recommended := func(name string) func() error { return cl.recommended(ctx, "shop", name) }
	dir := t.TempDir()
	start := func(name string, leaderFlags ...string) (*hvpaProcess, <-chan struct{}) {
		args := append([]string{"run", "--kubeconfig", cl.kubeconfig, "--components", "recommender,hvpa,updater",
			"--leader-election-namespace", "hvpa-system", "--recommender-interval", "500ms", "--metrics-bind-address", "0",
			"--health-probe-bind-address", "0", "--graceful-shutdown-timeout=2s"}, leaderFlags...)
		p := startHvpa(t, dir, name, args...)
		exited := make(chan struct{})
		go func() { _ = p.cmd.Wait(); close(exited) }()
		return p, exited
	}
	restart := func() {
		t.Helper()
		at := time.Now()
		if err := testenv.RestartAPIServer(cl.env, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		t.Logf("kube-apiserver killed, down 2 s and started again: %s without it", time.Since(at).Round(100*time.Millisecond))
	}

	// a renew deadline past the outage: the leader stays
	long, longExited := start("default-deadline")
	vpa("web")
	waitUntil(ctx, t, "VPA web gets a recommendation", time.Minute, recommended("web"))
	restart()
	vpa("api")
	waitUntil(ctx, t, "VPA api, created after the restart, gets a recommendation", time.Minute, recommended("api"))
	select {
	case <-longExited:
		t.Fatalf("the process with the default 10 s renew deadline exited: %s", long.cmd.ProcessState)
	default:
	}
	if err := long.cmd.Process.Signal(syscall.SIGTERM); err != nil { // hands its Lease over
		t.Fatal(err)
	}
	<-longExited

	// a renew deadline within the outage: the leader must stop leading, and a restart recovers
	short := []string{"--leader-elect-lease-duration", "3s", "--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period", "500ms"}
	p, exited := start("short-deadline", short...)
	waitUntil(ctx, t, "the second process leads", time.Minute, func() error {
		if b, _ := os.ReadFile(p.log); !strings.Contains(string(b), "Successfully acquired lease") {
			return fmt.Errorf("not leading yet")
		}
		return nil
	})
	restart()
	select {
	case <-exited:
		t.Logf("past the renew deadline the process stopped leading and exited: %s", p.cmd.ProcessState)
	case <-time.After(30 * time.Second):
		t.Fatal("past the renew deadline the process still runs: it might lead beside another leader")
	}
	if b, _ := os.ReadFile(p.log); !strings.Contains(string(b), "leader election lost") {
		t.Errorf("the process exited without saying it lost the leader election; last lines:\n%s", tail(string(b), 2000))
	}
	again, againExited := start("restarted", short...)
	vpa("db")
	waitUntil(ctx, t, "restarted: VPA db gets a recommendation", time.Minute, recommended("db"))
	select {
	case <-againExited:
		t.Fatalf("the restarted process exited: %s", again.cmd.ProcessState)
	case <-time.After(5 * time.Second):
	}
}
