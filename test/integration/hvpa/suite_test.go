package hvpa_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	app "github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	vpactrl "github.com/hvpa-dev/hvpa/controllers/vpa"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

var (
	env     *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	played  *playedkubelet.MetricsServer
	kubelet *playedkubelet.Kubelet
	kcm     *testenv.ControllerManager
	stop    context.CancelFunc
	loads   = &playedLoads{}
)

// playedLoads is the played workload: a total CPU load per Deployment, split evenly across its running pods.
type playedLoads struct{ playedkubelet.Workloads }

func (l *playedLoads) set(ns, name string, milli int64) { l.Set(ns, name, milli, 300<<20) }

func TestHvpa(t *testing.T) {
	if testing.Short() {
		t.Skip("the Hvpa suite needs the local control plane; runs in `make test`, not under -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Hvpa suite")
}

var _ = BeforeSuite(func() {
	var err error
	env, cfg, k8s, err = testenv.StartWithClient()
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	stop = cancel
	played, kubelet, err = playedkubelet.Start(ctx, k8s, "played-node-1")
	Expect(err).NotTo(HaveOccurred())
	kcm, err = testenv.StartControllerManager(env, []string{"deployment-controller", "replicaset-controller", "garbage-collector-controller",
		"horizontal-pod-autoscaler-controller"}, time.Second)
	Expect(err).NotTo(HaveOccurred())

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Event{}}}}})
	Expect(err).NotTo(HaveOccurred())
	opts := vpactrl.DefaultOptions()
	opts.Interval = 300 * time.Millisecond
	Expect(app.Add(ctx, mgr, cfg, app.Options{Components: []string{app.Recommender, app.Hvpa}, Recommender: opts, HvpaSync: 300 * time.Millisecond})).To(Succeed())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()

	// the played kubelet runs every pod the controllers create, and the played load is split across them
	go kubelet.Loop(ctx, 150*time.Millisecond, nil, &loads.Workloads, played)
})

var _ = AfterSuite(func() {
	if stop != nil {
		stop()
	}
	if kcm != nil {
		kcm.Stop()
	}
	if played != nil {
		played.Close()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
