package main

import (
	"context"
	"fmt"
	"io"
	"k8s.io/apimachinery/pkg/types"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
)

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }() // the listener only found a free port
	return l.Addr().String()
}

// TestRunRecommender runs `hvpa run --components=recommender,hvpa` in process against the local control plane:
// leader election takes a Lease, /healthz and /readyz answer, /metrics exports hvpa_recommender_*, and a VPA
// gets a recommendation through the manager's cached client, and an Hvpa with the embedded recommender scales
// its Deployment. With upstream's --container-recommendation-max-allowed-cpu=2 (refused before) it starts, and a
// VPA whose usage needs 3 CPU gets a target of 2.
func TestRunRecommender(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startPlayedCluster(ctx, t, "hvpa-system", "shop")
	c, ms, kubelet, kubeconfig := cl.c, cl.metrics, cl.kubelet, cl.kubeconfig
	labels := map[string]string{"app": "web"}
	if err := c.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played"}}}}}}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played"}}}}
	if err := kubelet.Run(ctx, pod); err != nil {
		t.Fatal(err)
	}
	ms.Set("shop", "web-1", "app", playedkubelet.Usage{CPUMilli: 300, MemoryBytes: 200 << 20})
	cl.runApps(ctx, t, "shop", "big")
	ms.Set("shop", "big-1", "app", playedkubelet.Usage{CPUMilli: 3000, MemoryBytes: 200 << 20})
	cl.createVPA(ctx, t, "shop", "big", ptr.To(vpav1.UpdateModeOff))
	if err := c.Create(ctx, &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: vpav1.VerticalPodAutoscalerSpec{TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}}); err != nil {
		t.Fatal(err)
	}

	// an Hvpa with the embedded recommender on another Deployment: 1 pod using 1.5 CPU leaves the 1-replica
	// interval (500m per pod) for the next one, which without extrapolation is one effective interval at its
	// maxReplicas, 3
	api := map[string]string{"app": "api"}
	if err := c.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: api}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: api},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played"}}}}}}); err != nil {
		t.Fatal(err)
	}
	if err := kubelet.Run(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api-1", Labels: api}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played"}}}}); err != nil {
		t.Fatal(err)
	}
	ms.Set("shop", "api-1", "app", playedkubelet.Usage{CPUMilli: 1500, MemoryBytes: 200 << 20})
	half, one := resource.MustParse("500m"), resource.MustParse("1")
	if err := c.Create(ctx, &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api"}, Spec: hvpav1alpha1.HvpaSpec{
		TargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"},
		VPA:       &hvpav1alpha1.VpaSpec{Deploy: true},
		ScalingIntervals: []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](1), MaxResources: &hvpav1alpha1.ScaledResources{CPU: &half}},
			{MaxReplicas: ptr.To[int32](3), MaxResources: &hvpav1alpha1.ScaledResources{CPU: &one}}}}}); err != nil {
		t.Fatal(err)
	}

	probe, metricsAddr := freePort(t), freePort(t)
	cmd := newRootCommand()
	cmd.SetArgs([]string{"run", "--kubeconfig", kubeconfig, "--components", "recommender,hvpa", "--recommender-interval", "300ms", "--hvpa-sync-period", "300ms",
		"--leader-election-namespace", "hvpa-system", "--health-probe-bind-address", probe, "--metrics-bind-address", metricsAddr, "--profiling",
		"--metrics-secure=false", // plain HTTP (the chart's secure default is proved in TestChartRBAC)
		"--container-recommendation-max-allowed-cpu=2"})
	runCtx, stop := context.WithCancel(ctx)
	cmd.SetContext(runCtx)
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(runCtx) }()
	defer func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("hvpa run ended with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("hvpa run did not stop within 30s of its context ending")
		}
	}()

	eventually := func(what string, f func() error) {
		t.Helper()
		waitUntil(ctx, t, what, 60*time.Second, f)
	}
	get := func(url string) (string, error) {
		resp, err := http.Get(url)
		if err != nil {
			return "", err
		}
		defer func() { _ = resp.Body.Close() }() // a response body's Close has nothing to report once it is read
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return "", fmt.Errorf("%s: %s", url, resp.Status)
		}
		return string(b), nil
	}
	eventually("/healthz and /readyz answer, with the liveness of the recommender loop and the Hvpa controller", func() error {
		for _, path := range []string{"/healthz", "/healthz/recommender-loop", "/healthz/hvpa-controller"} {
			if _, err := get("http://" + probe + path); err != nil {
				return err
			}
		}
		_, err := get("http://" + probe + "/readyz")
		return err
	})
	eventually("the leader election Lease exists", func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: "hvpa-system", Name: "hvpa-controller-recommender"}, &coordinationv1.Lease{})
	})
	eventually("the VPA gets a recommendation", func() error {
		v := &vpav1.VerticalPodAutoscaler{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, v); err != nil {
			return err
		}
		if v.Status.Recommendation == nil || len(v.Status.Recommendation.ContainerRecommendations) != 1 {
			return fmt.Errorf("no recommendation yet: %+v", v.Status)
		}
		return nil
	})
	eventually("the Hvpa scales its Deployment to 3", deploymentReplicas(ctx, c, "shop", "api", 3))
	eventually("--container-recommendation-max-allowed-cpu caps the VPA of 3 CPU at 2", func() error {
		v := &vpav1.VerticalPodAutoscaler{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "big"}, v); err != nil {
			return err
		}
		if v.Status.Recommendation == nil || len(v.Status.Recommendation.ContainerRecommendations) != 1 {
			return fmt.Errorf("no recommendation yet: %+v", v.Status)
		}
		r := v.Status.Recommendation.ContainerRecommendations[0]
		if r.Target.Cpu().MilliValue() != 2000 || r.UncappedTarget.Cpu().MilliValue() < 3000 {
			return fmt.Errorf("target %s, uncapped %s: want 2 and the usage's 3 or more", r.Target.Cpu(), r.UncappedTarget.Cpu())
		}
		return nil
	})
	eventually("--profiling serves pprof on the metrics address", func() error {
		body, err := get("http://" + metricsAddr + "/debug/pprof/")
		if err == nil && !strings.Contains(body, "goroutine") {
			return fmt.Errorf("no profile index: %.200s", body)
		}
		return err
	})
	eventually("/metrics exports the recommender's metrics", func() error {
		body, err := get("http://" + metricsAddr + "/metrics")
		if err != nil {
			return err
		}
		for _, m := range []string{`hvpa_controller_replicas{hvpa="api",namespace="shop",state="applied"} 3`, `hvpa_build_info{`, `hvpa_recommender_objects{mode="Auto",supported="true"} 1`, "hvpa_recommender_loop_step_duration_seconds_bucket", "hvpa_recommender_recommendation_latency_seconds_count 2"} {
			if !strings.Contains(body, m) {
				return fmt.Errorf("no %q in /metrics", m)
			}
		}
		return nil
	})
}

func TestRunRefusesUnknownComponents(t *testing.T) {
	_, err := runCommand(t, "run", "--components", "autopilot", "--kubeconfig", "/nonexistent")
	if err == nil || !strings.Contains(err.Error(), `"autopilot" is not available in this version; available: recommender, hvpa, admission, updater`) {
		t.Errorf("error %v", err)
	}
}

// deploymentReplicas checks that a Deployment's spec.replicas is want.
func deploymentReplicas(ctx context.Context, c client.Client, ns, name string, want int32) func() error {
	return func() error {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			return err
		}
		if *d.Spec.Replicas != want {
			return fmt.Errorf("replicas %d, want %d", *d.Spec.Replicas, want)
		}
		return nil
	}
}

// TestKubeAPIRateLimits: --kube-api-qps and --kube-api-burst apply with a kubeconfig file as without one
// (client-go alone would give 5 queries per second), and bad values are refused by name.
func TestKubeAPIRateLimits(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := restConfig(kubeconfig, 50, 100)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.QPS != 50 || cfg.Burst != 100 {
		t.Errorf("with --kubeconfig: QPS %v burst %d, want 50 and 100", cfg.QPS, cfg.Burst)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	if cfg, err = restConfig("", 7, 9); err != nil || cfg.QPS != 7 || cfg.Burst != 9 {
		t.Errorf("without --kubeconfig: QPS %v burst %d (%v), want 7 and 9", cfg.QPS, cfg.Burst, err)
	}
	for args, want := range map[string]string{
		"--kube-api-qps=0":     "--kube-api-qps 0: must be a positive rate",
		"--kube-api-burst=2.5": "--kube-api-burst 2.5: must be a whole number of at least 1",
		"--kube-api-burst=0":   "--kube-api-burst 0: must be a whole number of at least 1",
	} {
		if _, err := runCommand(t, "run", args, "--kubeconfig", kubeconfig); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", args, err, want)
		}
	}
	// upstream VPA's own spelling of a burst (a float flag there) is accepted: the run gets past the rate limits
	// and stops at the missing kubeconfig
	if _, err := runCommand(t, "run", "--kube-api-burst=10.0", "--kube-api-qps=5.0", "--kubeconfig", "/nonexistent/kubeconfig"); err == nil ||
		strings.Contains(err.Error(), "kube-api") || !strings.Contains(err.Error(), "kubeconfig") {
		t.Errorf("--kube-api-burst=10.0: %v, want it accepted (the run fails later, reading the kubeconfig)", err)
	}
}

// TestRecommenderOptionFlags: the recommender's options it cannot run with (recommenderctrl.Options.Validate)
// are refused with the other flags, before the kubeconfig is read, naming the flag.
func TestRecommenderOptionFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--update-worker-count=0": "--update-worker-count 0: must be at least 1",
		"--storage=disk":          `--storage "disk": use checkpoint or prometheus`,
	} {
		if _, err := runCommand(t, "run", args, "--kubeconfig", "/nonexistent/kubeconfig"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", args, err, want)
		}
	}
}

// TestNamespacedNameFlags: --admission-lease and --update-loop-records take namespace/name and refuse anything
// else at start, naming the flag; the lease's default and "-" (none) resolve as documented.
func TestNamespacedNameFlags(t *testing.T) {
	for args, want := range map[string]string{
		"--admission-lease=web":              `--admission-lease "web": must be namespace/name, or - for none`,
		"--admission-lease=/lease":           `--admission-lease "/lease": must be namespace/name`,
		"--admission-lease=ns/a/b":           `--admission-lease "ns/a/b": must be namespace/name`,
		"--update-loop-records=loops":        `invalid argument "loops" for "--update-loop-records" flag: must be namespace/name`,
		"--update-loop-records=hvpa-system/": `invalid argument "hvpa-system/" for "--update-loop-records" flag: must be namespace/name`,
	} {
		if _, err := runCommand(t, "run", args, "--kubeconfig", "/nonexistent/kubeconfig"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", args, err, want)
		}
	}
	o := &runOptions{webhookNamespace: "hvpa-system"}
	for flag, want := range map[string]types.NamespacedName{
		"":            {Namespace: "hvpa-system", Name: "hvpa-admission"},
		"-":           {},
		"other/lease": {Namespace: "other", Name: "lease"},
	} {
		o.admissionLease = flag
		if got, err := o.lease(); err != nil || got != want {
			t.Errorf("--admission-lease=%q: %v (%v), want %v", flag, got, err, want)
		}
	}
}
