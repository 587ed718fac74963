package hvpa_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	vpactrl "github.com/hvpa-dev/hvpa/controllers/vpa"
	"github.com/hvpa-dev/hvpa/internal/manager"
	"github.com/hvpa-dev/hvpa/internal/playedkubelet"
	"github.com/hvpa-dev/hvpa/internal/testenv"
)

var (
	env     *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
	played  *playedkubelet.MetricsServer
	kubelet *playedkubelet.Kubelet
	kcm     *testenv.ControllerManager
	stop    context.CancelFunc
	loads   = &load{byDeployment: map[string]int64{}}
)

// load is the played workload: a total CPU load per Deployment, split evenly across its running pods.
type load struct {
	mu           sync.Mutex
	byDeployment map[string]int64 // "ns/name" -> millicores in total; negative: no samples
}

func (l *load) set(ns, name string, milli int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byDeployment[ns+"/"+name] = milli
}

func TestHvpa(t *testing.T) {
	if testing.Short() {
		t.Skip("the Hvpa suite needs the local control plane; runs in `make test`, not under -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Hvpa suite")
}

var _ = BeforeSuite(func() {
	var err error
	env, cfg, k8s, err = testenv.StartWithClient()
	Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	stop = cancel
	played, kubelet, err = playedkubelet.Start(ctx, k8s, "played-node-1")
	Expect(err).NotTo(HaveOccurred())
	kcm, err = testenv.StartControllerManager(env, []string{"deployment-controller", "replicaset-controller", "garbage-collector-controller",
		"horizontal-pod-autoscaler-controller"}, time.Second)
	Expect(err).NotTo(HaveOccurred())

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: testenv.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"},
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Event{}}}}})
	Expect(err).NotTo(HaveOccurred())
	opts := vpactrl.DefaultOptions()
	opts.Interval = 300 * time.Millisecond
	Expect(manager.Add(ctx, mgr, cfg, manager.Options{Components: []string{manager.Recommender, manager.Hvpa}, Recommender: opts, HvpaSync: 300 * time.Millisecond})).To(Succeed())
	go func() {
		defer GinkgoRecover()
		Expect(mgr.Start(ctx)).To(Succeed())
	}()

	// the played kubelet runs every pod the controllers create, and the played load is split across them
	go func() {
		for ctx.Err() == nil {
			_, _ = kubelet.RunPending(ctx, "")
			playLoad(ctx)
			time.Sleep(150 * time.Millisecond)
		}
	}()
})

func playLoad(ctx context.Context) {
	loads.mu.Lock()
	defer loads.mu.Unlock()
	played.Clear()
	for key, milli := range loads.byDeployment {
		if milli < 0 { // no usage samples at all
			continue
		}
		var ns, name string
		fmt.Sscanf(replaceSlash(key), "%s %s", &ns, &name)
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
			continue
		}
		var running []corev1.Pod
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running = append(running, p)
			}
		}
		for _, p := range running {
			for _, c := range p.Spec.Containers {
				played.Set(ns, p.Name, c.Name, playedkubelet.Usage{CPUMilli: milli / int64(len(running)), MemoryBytes: 300 << 20})
			}
		}
	}
}

func replaceSlash(s string) string {
	for i := range s {
		if s[i] == '/' {
			return s[:i] + " " + s[i+1:]
		}
	}
	return s
}

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
