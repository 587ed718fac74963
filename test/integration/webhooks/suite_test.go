package webhooks_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	app "github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/testadmission"
)

var (
	cluster  *framework.Cluster
	cfg      *rest.Config
	k8s      client.Client
	cached   client.Client // the manager's client: what the webhook reads
	gates    featuregate.MutableFeatureGate
	registry *prometheus.Registry
)

func TestWebhooks(t *testing.T) {
	framework.RunSuite(t, "Webhooks suite", framework.Integration)
}

var urlConfig = testadmission.URLConfig

var _ = BeforeSuite(func() {
	cluster = framework.StartCluster(framework.Options{Controllers: []string{"deployment-controller", "replicaset-controller"}})
	cfg, k8s = cluster.Cfg, cluster.Client
	ctx := cluster.Ctx

	// The webhook configurations as the chart installs them, pointed at this machine, without a caBundle:
	// the certificate rotator must fill it in.
	co, whOpts, err := testadmission.InstallAdmission(ctx, k8s, "hvpa", framework.FreePort(), GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())

	mgr, err := ctrl.NewManager(cfg, framework.ManagerOptions(&whOpts))
	Expect(err).NotTo(HaveOccurred())
	cached = mgr.GetClient()
	gates = features.New()
	registry = prometheus.NewRegistry()
	Expect(app.Add(ctx, mgr, cfg, app.Options{Components: []string{app.Admission}, Gates: gates, Certs: &co, Registry: registry})).To(Succeed())
	cluster.Run(mgr)
	// serving: the API server reaches the webhook over TLS with the patched caBundle and gets our answer
	Eventually(func() string {
		err := k8s.Create(ctx, badVPA("probe"), client.DryRunAll)
		if err == nil {
			return "admitted"
		}
		return err.Error()
	}, framework.Timeout, framework.Interval).Should(ContainSubstring("minAllowed"))
})

var _ = AfterSuite(func() { cluster.Stop() })
