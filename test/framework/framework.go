// Package framework is what every Ginkgo suite on the local control plane shares: one way to start and stop
// the cluster (kube-apiserver and etcd, the real kube-controller-manager, the played kubelet and metrics
// API), one way to make a namespace, a manager and to run it, the timeouts suites wait with and the labels
// that select suites (`ginkgo --label-filter`).
package framework

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// How long suites wait. Timeout: for what one loop of a controller does (a status, an event, a resize);
// LongTimeout: for what takes several (a scale-out through the HPA, a recommendation from history).
const (
	Timeout     = 45 * time.Second
	LongTimeout = 90 * time.Second
	Interval    = 100 * time.Millisecond
)

// Labels of the suites: Integration (envtest with the real kube-controller-manager), E2E (the built binary
// as a process), Slow (a suite of more than a minute).
var (
	Integration = ginkgo.Label("integration")
	E2E         = ginkgo.Label("e2e")
	Slow        = ginkgo.Label("slow")
)

// Node is the played node every suite's pods run on.
const Node = "played-node-1"

// Options choose what runs beside the API server.
type Options struct {
	// Controllers of the real kube-controller-manager to run (none: it does not run).
	Controllers []string
	// Kubelet plays a node (pods are not run by Kubelet.Loop until a suite starts it); MetricsAPI also
	// serves metrics.k8s.io from the played usage.
	Kubelet, MetricsAPI bool
	// Env are testenv options (audit logs, API server flags).
	Env []testenv.Option
}

// Cluster is a suite's local control plane.
type Cluster struct {
	Env     *envtest.Environment
	Cfg     *rest.Config
	Client  client.Client
	Kubelet *playedkubelet.Kubelet
	Metrics *playedkubelet.MetricsServer
	KCM     *testenv.ControllerManager
	// Ctx ends when the cluster stops: the managers and loops a suite starts run under it.
	Ctx    context.Context
	cancel context.CancelFunc
}

// StartCluster starts the control plane o asks for; call it in BeforeSuite (it fails the suite on error).
func StartCluster(o Options) *Cluster {
	ginkgo.GinkgoHelper()
	c := &Cluster{}
	var err error
	c.Env, c.Cfg, c.Client, err = testenv.StartWithClient(o.Env...)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	c.Ctx, c.cancel = context.WithCancel(context.Background())
	switch {
	case o.MetricsAPI:
		c.Metrics, c.Kubelet, err = playedkubelet.Start(c.Ctx, c.Client, Node)
	case o.Kubelet:
		c.Kubelet, err = playedkubelet.New(c.Ctx, c.Client, Node)
	}
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	if len(o.Controllers) > 0 {
		c.KCM, err = testenv.StartControllerManager(c.Env, o.Controllers, time.Second)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
	}
	return c
}

// Stop stops what StartCluster started, the suite's managers and loops first; call it in AfterSuite. A
// cluster that did not start (nil) is nothing to stop.
func (c *Cluster) Stop() {
	ginkgo.GinkgoHelper()
	if c == nil {
		return
	}
	c.cancel()
	if c.KCM != nil {
		c.KCM.Stop()
	}
	if c.Metrics != nil {
		c.Metrics.Close()
	}
	gomega.Expect(c.Env.Stop()).To(gomega.Succeed())
}

// ManagerOptions are the options of a suite's manager: the suite's scheme, no metrics listener, Events read
// live (as the product does), and the webhook server wo when given.
func ManagerOptions(wo *webhook.Options) ctrl.Options {
	o := ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Event{}}}}}
	if wo != nil {
		o.WebhookServer = webhook.NewServer(*wo)
	}
	return o
}

// Run starts mgr under the cluster's context and waits until its caches are synced.
func (c *Cluster) Run(mgr ctrl.Manager) {
	ginkgo.GinkgoHelper()
	go func() {
		defer ginkgo.GinkgoRecover()
		gomega.Expect(mgr.Start(c.Ctx)).To(gomega.Succeed())
	}()
	gomega.Expect(mgr.GetCache().WaitForCacheSync(c.Ctx)).To(gomega.BeTrue())
}

// NewNamespace creates a namespace named prefix-<random> for one spec and returns its name. If the spec
// fails, its report gets the namespace's State as it was at the end: the autoscalers' statuses and events a
// failure that does not recur would otherwise take with it.
func NewNamespace(c client.Client, prefix string) string {
	ginkgo.GinkgoHelper()
	ns, err := testenv.NewNamespace(context.Background(), c, prefix)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func(ctx context.Context) {
		if ginkgo.CurrentSpecReport().Failed() {
			ginkgo.AddReportEntry("state of namespace "+ns+" after the failure", State(ctx, c, ns))
		}
	})
	return ns
}

// FreePort is a local TCP port free now.
func FreePort() int {
	ginkgo.GinkgoHelper()
	p, err := testenv.FreePort()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return p
}

// RunSuite runs the Ginkgo specs of a suite on the local control plane, with labels; under -short (the
// unit tests of `make test-unit`) it skips them.
func RunSuite(t *testing.T, name string, labels ...any) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s needs the local control plane; runs in `make test`, not under -short", name)
	}
	gomega.RegisterFailHandler(ginkgo.Fail)
	// the controllers' logs (info and errors; HVPA_TEST_V=N adds their V(N) debug lines) go to GinkgoWriter:
	// Ginkgo prints them with a spec that fails
	level := zapcore.InfoLevel
	if v, err := strconv.Atoi(os.Getenv("HVPA_TEST_V")); err == nil && v > 0 {
		level = zapcore.Level(-v)
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.Level(level)))
	ginkgo.RunSpecs(t, name, labels...)
}

// CreateDeployment creates Deployment name of replicas pods with one container "app" requesting cpu and 1Gi.
func CreateDeployment(c client.Client, ns, name string, replicas int32, cpu string) {
	ginkgo.GinkgoHelper()
	d := wrappers.MakeDeployment(ns, name).Replicas(replicas).Container(wrappers.MakeContainer("app").Requests(cpu, "1Gi").Obj()).Obj()
	gomega.Expect(c.Create(context.Background(), d)).To(gomega.Succeed())
}

// CreateAnswering creates Deployment name of replicas pods with one container "app" (req, lim) whose resizes
// the played kubelet answers as answer says (playedkubelet.AnswerLabel: accept, infeasible, deferred, ignore).
func CreateAnswering(c client.Client, ns, name string, replicas int32, answer string, req, lim corev1.ResourceList) *appsv1.Deployment {
	ginkgo.GinkgoHelper()
	d := wrappers.MakeDeployment(ns, name).Replicas(replicas).PodLabel(playedkubelet.AnswerLabel, answer).
		Container(wrappers.MakeContainer("app").Resources(req, lim).Obj()).Obj()
	gomega.Expect(c.Create(context.Background(), d)).To(gomega.Succeed())
	return d
}

// LivePods are the Running, Ready, not terminating pods labelled app=<app> (a wrappers.MakeDeployment's).
func LivePods(c client.Client, ns, app string) []corev1.Pod {
	ginkgo.GinkgoHelper()
	var l corev1.PodList
	gomega.Expect(c.List(context.Background(), &l, client.InNamespace(ns), client.MatchingLabels{"app": app})).To(gomega.Succeed())
	var out []corev1.Pod
	for _, p := range l.Items {
		ready := false
		for _, cond := range p.Status.Conditions {
			ready = ready || (cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue)
		}
		if p.Status.Phase == corev1.PodRunning && ready && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}
