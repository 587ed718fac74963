package vpa_test

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

var (
	env      *envtest.Environment
	cfg      *rest.Config
	k8s      client.Client
	played   *playedkubelet.MetricsServer
	kubelet  *playedkubelet.Kubelet
	mclient  metricsclient.Interface
	recorder events.EventRecorder
	stopRec  context.CancelFunc
)

func TestRecommender(t *testing.T) {
	if testing.Short() {
		t.Skip("the recommender suite needs the local control plane; runs in `make test`, not under -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Recommender suite")
}

var _ = BeforeSuite(func() {
	var err error
	env, cfg, k8s, err = testenv.StartWithClient()
	Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()
	played, kubelet, err = playedkubelet.Start(ctx, k8s, "played-node-1")
	Expect(err).NotTo(HaveOccurred())
	mclient, err = metricsclient.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
	rctx, cancel := context.WithCancel(ctx)
	stopRec = cancel
	b.StartRecordingToSink(rctx.Done())
	recorder = b.NewRecorder(testenv.Scheme(), "hvpa-recommender")
})

var _ = AfterSuite(func() {
	if stopRec != nil {
		stopRec()
	}
	if played != nil {
		played.Close()
	}
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
