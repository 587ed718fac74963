package updater_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	app "github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testadmission"
)

var (
	cluster *framework.Cluster
	k8s     client.Client
	mgrC    client.Client // the manager's cached client, for the updaters the specs start
	gates   featuregate.MutableFeatureGate
	events  record.EventRecorder
)

func TestUpdater(t *testing.T) {
	framework.RunSuite(t, "Updater suite", framework.Integration)
}

var _ = BeforeSuite(func() {
	// the played metrics.k8s.io API: the updater reads memory usage before it lowers a memory limit
	cluster = framework.StartCluster(framework.Options{Kubelet: true, MetricsAPI: true,
		Controllers: []string{"deployment-controller", "replicaset-controller", "disruption-controller"}})
	k8s = cluster.Client

	// the admission component sizes the pods the updater's evictions make the ReplicaSets recreate, and
	// renews the Lease the updater checks
	co, wo, err := testadmission.InstallAdmission(cluster.Ctx, k8s, "hvpa", framework.FreePort(), GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	mo := framework.ManagerOptions(&wo)
	// the product's cache: pods stripped of what the updater does not read (images, volumes, ...), as it runs
	mo.Cache, mo.Client = app.CacheOptions(), app.ClientOptions()
	mgr, err := ctrl.NewManager(cluster.Cfg, mo)
	Expect(err).NotTo(HaveOccurred())
	gates = features.New()
	Expect(app.Add(cluster.Ctx, mgr, cluster.Cfg, app.Options{Components: []string{app.Admission}, Gates: gates, Certs: &co, AdmissionLease: testadmission.AdmissionLease})).To(Succeed())
	mgrC = mgr.GetClient()
	//nolint:staticcheck // core/v1 events, as the updater records them in the product
	events = mgr.GetEventRecorderFor("hvpa-updater")
	cluster.Run(mgr)

	// the played kubelet: runs new pods, answers resizes by each pod's label, finishes evicted pods
	go cluster.Kubelet.Loop(cluster.Ctx, 50*time.Millisecond, playedkubelet.AnswerByLabel, nil, nil)
})

var _ = AfterSuite(func() { cluster.Stop() })
