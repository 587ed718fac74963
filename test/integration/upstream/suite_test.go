// Package upstream_test runs hvpa beside upstream VPA's own binaries (v1.8.1, built from their Go module by
// make upstream-vpa) on the local control plane: upstream's admission controller and updater acting on hvpa's
// recommendations, and hvpa's admission webhook and updater acting on upstream's recommender's.
package upstream_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	app "github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testadmission"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

const (
	// nsUpstreamActs: hvpa's recommender recommends, upstream's admission controller and updater act.
	nsUpstreamActs = "upstream-acts"
	// nsHvpaActs: upstream's recommender recommends, hvpa's admission webhook and updater act.
	nsHvpaActs = "hvpa-acts"
)

var (
	cluster    *framework.Cluster
	k8s        client.Client
	mgrC       client.Client
	kubeconfig string // for upstream's binaries
	upstream   string // the folder of upstream's binaries
	loads      = &playedkubelet.Workloads{}
	events     record.EventRecorder
	gates      = features.New()
)

func TestUpstream(t *testing.T) {
	framework.RunSuite(t, "Upstream VPA suite", framework.Integration, framework.Slow)
}

var _ = BeforeSuite(func() {
	root, err := testenv.ModuleRoot()
	Expect(err).NotTo(HaveOccurred())
	version := os.Getenv("UPSTREAM_VPA_VERSION")
	if version == "" {
		version = "v1.8.1"
	}
	upstream = filepath.Join(root, ".cache", "upstream", version)
	for _, b := range []string{"vpa-recommender", "vpa-admission-controller", "vpa-updater"} {
		_, err := os.Stat(filepath.Join(upstream, b))
		Expect(err).NotTo(HaveOccurred(), "upstream's %s %s is not built: run `make upstream-vpa` (make test does)", b, version)
	}

	cluster = framework.StartCluster(framework.Options{Kubelet: true, MetricsAPI: true,
		Controllers: []string{"deployment-controller", "replicaset-controller", "disruption-controller"}})
	k8s = cluster.Client
	for _, ns := range []string{nsUpstreamActs, nsHvpaActs} {
		Expect(k8s.Create(cluster.Ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	user, err := cluster.Env.AddUser(envtest.User{Name: "upstream-vpa", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kc, err := user.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	kubeconfig = filepath.Join(GinkgoT().TempDir(), "kubeconfig")
	Expect(os.WriteFile(kubeconfig, kc, 0o600)).To(Succeed())

	// hvpa: the recommender (it serves the VPAs naming no recommender: nsUpstreamActs'), and the admission
	// webhook, which is not called for nsUpstreamActs (upstream's admission controller sizes those pods)
	co, wo, err := testadmission.InstallAdmission(cluster.Ctx, k8s, "hvpa", framework.FreePort(), GinkgoT().TempDir(), nsUpstreamActs)
	Expect(err).NotTo(HaveOccurred())
	mgr, err := ctrl.NewManager(cluster.Cfg, framework.ManagerOptions(&wo))
	Expect(err).NotTo(HaveOccurred())
	ro := recommenderctrl.DefaultOptions()
	ro.Interval = 500 * time.Millisecond
	Expect(app.Add(cluster.Ctx, mgr, cluster.Cfg, app.Options{Components: []string{app.Recommender, app.Admission}, Recommender: ro,
		Gates: gates, Certs: &co, AdmissionLease: testadmission.AdmissionLease})).To(Succeed())
	mgrC = mgr.GetClient()
	//nolint:staticcheck // core/v1 events, as the updater records them in the product
	events = mgr.GetEventRecorderFor("hvpa-updater")
	cluster.Run(mgr)
	go cluster.Kubelet.Loop(cluster.Ctx, 100*time.Millisecond, playedkubelet.AnswerByLabel, loads, cluster.Metrics)
})

var _ = AfterSuite(func() { cluster.Stop() })
