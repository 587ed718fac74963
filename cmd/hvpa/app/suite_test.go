package app_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	vpactrl "github.com/hvpa-dev/hvpa/controllers/vpa"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testadmission"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

var (
	env    *envtest.Environment
	cfg    *rest.Config
	k8s    client.Client
	kcm    *testenv.ControllerManager
	played *playedkubelet.MetricsServer
	loads  playedkubelet.Workloads
	stop   context.CancelFunc
)

// The whole product in one manager (recommender, Hvpa controller, admission webhooks, updater) with the real
// HPA, deployment, replicaset, disruption and garbage-collector controllers: the scenarios where the pods'
// actual resources matter, because the webhook and the updater bring them to the Hvpa's intent.
func TestAllComponents(t *testing.T) {
	if testing.Short() {
		t.Skip("the all-components suite needs the local control plane; runs in `make test`, not under -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "All components suite")
}

var _ = BeforeSuite(func() {
	var err error
	env, cfg, k8s, err = testenv.StartWithClient()
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	stop = cancel
	var kubelet *playedkubelet.Kubelet
	played, kubelet, err = playedkubelet.Start(ctx, k8s, "played-node-1")
	Expect(err).NotTo(HaveOccurred())
	kcm, err = testenv.StartControllerManager(env, []string{"deployment-controller", "replicaset-controller", "garbage-collector-controller",
		"horizontal-pod-autoscaler-controller", "disruption-controller"}, time.Second)
	Expect(err).NotTo(HaveOccurred())

	port, err := testenv.FreePort()
	Expect(err).NotTo(HaveOccurred())
	co, wo, err := testadmission.InstallAdmission(ctx, k8s, "hvpa", port, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(wo), Cache: app.CacheOptions(), Client: app.ClientOptions()})
	Expect(err).NotTo(HaveOccurred())
	ro := vpactrl.DefaultOptions()
	ro.Interval = 300 * time.Millisecond
	uo := updater.DefaultOptions()
	uo.Interval = 300 * time.Millisecond
	Expect(app.Add(ctx, mgr, cfg, app.Options{Components: app.Available, Recommender: ro, HvpaSync: 300 * time.Millisecond,
		Updater: uo, Certs: &co, AdmissionLease: testadmission.AdmissionNamespace + "/hvpa-admission"})).To(Succeed())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	go kubelet.Loop(ctx, 100*time.Millisecond, playedkubelet.AcceptResizes, &loads, played)
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
