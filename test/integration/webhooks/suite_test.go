package webhooks_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	app "github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/test/testadmission"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

const (
	timeout = 30 * time.Second
	poll    = 100 * time.Millisecond
)

var (
	env      *envtest.Environment
	cfg      *rest.Config
	k8s      client.Client
	cached   client.Client // the manager's client: what the webhook reads
	kcm      *testenv.ControllerManager
	stop     context.CancelFunc
	gates    featuregate.MutableFeatureGate
	registry *prometheus.Registry
	port     int
)

func TestWebhooks(t *testing.T) {
	if testing.Short() {
		t.Skip("the webhook suite needs the local control plane; runs in `make test`, not under -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Webhooks suite")
}

func freePort() int {
	p, err := testenv.FreePort()
	Expect(err).NotTo(HaveOccurred())
	return p
}

var urlConfig = testadmission.URLConfig

var _ = BeforeSuite(func() {
	var err error
	env, cfg, k8s, err = testenv.StartWithClient()
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	stop = cancel
	kcm, err = testenv.StartControllerManager(env, []string{"deployment-controller", "replicaset-controller"}, time.Second)
	Expect(err).NotTo(HaveOccurred())

	// The webhook configurations as the chart installs them, pointed at this machine, without a caBundle:
	// the certificate rotator must fill it in.
	port = freePort()
	co, whOpts, err := testadmission.InstallAdmission(ctx, k8s, "hvpa", port, GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(whOpts)})
	Expect(err).NotTo(HaveOccurred())
	cached = mgr.GetClient()
	gates = features.New()
	registry = prometheus.NewRegistry()
	Expect(app.Add(ctx, mgr, cfg, app.Options{Components: []string{app.Admission}, Gates: gates, Certs: &co, Registry: registry})).To(Succeed())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()
	// serving: the API server reaches the webhook over TLS with the patched caBundle and gets our answer
	Eventually(func() string {
		err := k8s.Create(ctx, badVPA("probe"), client.DryRunAll)
		if err == nil {
			return "admitted"
		}
		return err.Error()
	}, timeout, poll).Should(ContainSubstring("minAllowed"))
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

// newNamespace creates a namespace for one spec.
func newNamespace(prefix string) string {
	ns, err := testenv.NewNamespace(context.Background(), k8s, prefix)
	Expect(err).NotTo(HaveOccurred())
	return ns
}
