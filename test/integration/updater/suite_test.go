package updater_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	app "github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testadmission"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

const (
	timeout = 45 * time.Second
	poll    = 100 * time.Millisecond
	// resizeLabel tells the played kubelet how to answer a pod's resizes: accept (default), infeasible, deferred.
	resizeLabel = "played.hvpa.dev/resize"
	// leaseName is the admission Lease the suite's webhook renews.
	leaseName = testadmission.AdmissionNamespace + "/hvpa-admission"
)

var (
	env     *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	mgrC    client.Client // the manager's cached client, for the updaters the specs start
	kubelet *playedkubelet.Kubelet
	kcm     *testenv.ControllerManager
	stop    context.CancelFunc
	gates   featuregate.MutableFeatureGate
	events  record.EventRecorder
)

func TestUpdater(t *testing.T) {
	if testing.Short() {
		t.Skip("the updater suite needs the local control plane; runs in `make test`, not under -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Updater suite")
}

var _ = BeforeSuite(func() {
	var err error
	env, cfg, k8s, err = testenv.StartWithClient()
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	stop = cancel
	kubelet, err = playedkubelet.New(ctx, k8s, "played-node-1")
	Expect(err).NotTo(HaveOccurred())
	kcm, err = testenv.StartControllerManager(env, []string{"deployment-controller", "replicaset-controller", "disruption-controller"}, time.Second)
	Expect(err).NotTo(HaveOccurred())

	// the admission component sizes the pods the updater's evictions make the ReplicaSets recreate, and
	// renews the Lease the updater checks
	port, err := testenv.FreePort()
	Expect(err).NotTo(HaveOccurred())
	co, wo, err := testadmission.InstallAdmission(ctx, k8s, "hvpa", port, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(wo), Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Event{}}}}})
	Expect(err).NotTo(HaveOccurred())
	gates = features.New()
	Expect(app.Add(ctx, mgr, cfg, app.Options{Components: []string{app.Admission}, Gates: gates, Certs: &co, AdmissionLease: leaseName})).To(Succeed())
	mgrC = mgr.GetClient()
	//nolint:staticcheck // core/v1 events, as the updater records them in the product
	events = mgr.GetEventRecorderFor("hvpa-updater")
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	Expect(mgr.GetCache().WaitForCacheSync(ctx)).To(BeTrue())

	// the played kubelet: runs new pods, answers resizes by each pod's label, finishes evicted pods
	go kubelet.Loop(ctx, 50*time.Millisecond, func(p *corev1.Pod) playedkubelet.ResizeAnswer {
		switch p.Labels[resizeLabel] {
		case "infeasible":
			return playedkubelet.ResizeInfeasible
		case "deferred":
			return playedkubelet.ResizeDeferred
		}
		return playedkubelet.ResizeAccept
	}, nil, nil)
})

var _ = AfterSuite(func() {
	if stop != nil {
		stop()
	}
	if kcm != nil {
		kcm.Stop()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
