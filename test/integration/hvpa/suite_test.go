package hvpa_test

import (
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	app "github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
)

var (
	cluster *framework.Cluster
	cfg     *rest.Config
	k8s     client.Client
	loads   = &playedLoads{}
)

// playedLoads is the played workload: a total CPU load per Deployment, split evenly across its running pods.
type playedLoads struct{ playedkubelet.Workloads }

func (l *playedLoads) set(ns, name string, milli int64) { l.Set(ns, name, milli, 300<<20) }

func TestHvpa(t *testing.T) {
	framework.RunSuite(t, "Hvpa suite", framework.Integration, framework.Slow)
}

var _ = BeforeSuite(func() {
	cluster = framework.StartCluster(framework.Options{MetricsAPI: true,
		Controllers: []string{"deployment-controller", "replicaset-controller", "garbage-collector-controller", "horizontal-pod-autoscaler-controller"}})
	cfg, k8s = cluster.Cfg, cluster.Client

	mo := framework.ManagerOptions(nil)
	mo.Cache, mo.Client = app.CacheOptions(), app.ClientOptions() // the product's cache, as hvpa run sets it (stripped pods)
	mgr, err := ctrl.NewManager(cfg, mo)
	Expect(err).NotTo(HaveOccurred())
	opts := recommenderctrl.DefaultOptions()
	opts.Interval = 300 * time.Millisecond
	Expect(app.Add(cluster.Ctx, mgr, cfg, app.Options{Components: []string{app.Recommender, app.Hvpa}, Recommender: opts, HvpaSync: 300 * time.Millisecond})).To(Succeed())
	cluster.Run(mgr)

	// the played kubelet runs every pod the controllers create, and the played load is split across them
	go cluster.Kubelet.Loop(cluster.Ctx, 150*time.Millisecond, nil, &loads.Workloads, cluster.Metrics)
})

var _ = AfterSuite(func() { cluster.Stop() })
