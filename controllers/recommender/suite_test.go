package recommender_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

var (
	cluster  *framework.Cluster
	env      *envtest.Environment
	cfg      *rest.Config
	k8s      client.Client
	played   *playedkubelet.MetricsServer
	kubelet  *playedkubelet.Kubelet
	mclient  metricsclient.Interface
	recorder events.EventRecorder
)

func TestRecommender(t *testing.T) {
	framework.RunSuite(t, "Recommender suite", framework.Integration)
}

var _ = BeforeSuite(func() {
	cluster = framework.StartCluster(framework.Options{MetricsAPI: true})
	env, cfg, k8s, played, kubelet = cluster.Env, cluster.Cfg, cluster.Client, cluster.Metrics, cluster.Kubelet
	var err error
	mclient, err = metricsclient.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	b.StartRecordingToSink(cluster.Ctx.Done())
	recorder = b.NewRecorder(testenv.Scheme(), "hvpa-recommender")
})

var _ = AfterSuite(func() { cluster.Stop() })
