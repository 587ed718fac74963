package app_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testadmission"
)

var (
	cluster *framework.Cluster
	k8s     client.Client
	loads   playedkubelet.Workloads
)

// The whole product in one manager (recommender, Hvpa controller, admission webhooks, updater) with the real
// HPA, deployment, replicaset, disruption and garbage-collector controllers: the scenarios where the pods'
// actual resources matter, because the webhook and the updater bring them to the Hvpa's intent.
func TestAllComponents(t *testing.T) {
	framework.RunSuite(t, "All components suite", framework.Integration, framework.Slow)
}

var _ = BeforeSuite(func() {
	cluster = framework.StartCluster(framework.Options{MetricsAPI: true, Controllers: []string{"deployment-controller", "replicaset-controller",
		"garbage-collector-controller", "horizontal-pod-autoscaler-controller", "disruption-controller"}})
	k8s = cluster.Client
	ctx, cfg := cluster.Ctx, cluster.Cfg

	co, wo, err := testadmission.InstallAdmission(ctx, k8s, "hvpa", framework.FreePort(), GinkgoT().TempDir())
	Expect(err).NotTo(HaveOccurred())
	mo := framework.ManagerOptions(&wo)
	mo.Cache, mo.Client = app.CacheOptions(), app.ClientOptions() // the product's cache, as hvpa run sets it
	mgr, err := ctrl.NewManager(cfg, mo)
	Expect(err).NotTo(HaveOccurred())
	ro := recommenderctrl.DefaultOptions()
	ro.Interval = 300 * time.Millisecond
	uo := updater.DefaultOptions()
	uo.Interval = 300 * time.Millisecond
	Expect(app.Add(ctx, mgr, cfg, app.Options{Components: app.Available, Recommender: ro, HvpaSync: 300 * time.Millisecond,
		Updater: uo, Certs: &co, AdmissionLease: testadmission.AdmissionLease})).To(Succeed())
	cluster.Run(mgr)
	go cluster.Kubelet.Loop(ctx, 100*time.Millisecond, playedkubelet.AcceptResizes, &loads, cluster.Metrics)
})

var _ = AfterSuite(func() { cluster.Stop() })
