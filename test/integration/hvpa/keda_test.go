package hvpa_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/webhooks/certs"
)

// kedaVersion is the KEDA release hack/keda.sh builds (KEDA_VERSION).
func kedaVersion() string {
	if v := os.Getenv("KEDA_VERSION"); v != "" {
		return v
	}
	return "v2.21.0"
}

// kedaOperator is the folder of KEDA's operator binary and CRDs, built by `make keda` (hack/keda.sh); the
// spec is skipped, saying so, when they are not there.
func kedaOperator() string {
	GinkgoHelper()
	root, err := testenv.ModuleRoot()
	Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(root, ".cache", "keda", kedaVersion())
	if _, err := os.Stat(filepath.Join(dir, "keda-operator")); err != nil {
		Skip(fmt.Sprintf("KEDA's operator %s is not built at %s: run `make keda` (hack/keda.sh builds it from its Go module)", kedaVersion(), dir))
	}
	return dir
}

// startKEDA installs KEDA's CRDs and runs its operator as a process against the suite's API server (a
// cluster admin, all namespaces), with a self-signed certificate for its metrics gRPC service (the metrics
// adapter, which a cpu trigger does not need, would call it). It stops with the spec.
func startKEDA(dir string) {
	GinkgoHelper()
	_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{filepath.Join(dir, "crd")}})
	Expect(err).NotTo(HaveOccurred())
	_ = k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "keda"}})

	tmp := GinkgoT().TempDir()
	ca, err := certs.NewCA("keda-test", time.Now(), time.Hour)
	Expect(err).NotTo(HaveOccurred())
	cert, key, err := ca.Issue([]string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}, time.Now(), time.Hour)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(tmp, "ca.crt"), certs.EncodeCerts([]*x509.Certificate{ca.Cert}), 0o600)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(tmp, "tls.crt"), cert, 0o600)).To(Succeed())
	Expect(os.WriteFile(filepath.Join(tmp, "tls.key"), key, 0o600)).To(Succeed())

	admin, err := cluster.Env.AddUser(envtest.User{Name: "keda-operator", Groups: []string{"system:masters"}}, nil)
	Expect(err).NotTo(HaveOccurred())
	kc, err := admin.KubeConfig()
	Expect(err).NotTo(HaveOccurred())
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	Expect(os.WriteFile(kubeconfig, kc, 0o600)).To(Succeed())

	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	grpcAddr := l.Addr().String()
	Expect(l.Close()).To(Succeed())
	cmd := exec.Command(filepath.Join(dir, "keda-operator"), "--metrics-bind-address=0", "--health-probe-bind-address=0",
		"--metrics-service-bind-address="+grpcAddr, "--cert-dir="+tmp, "--enable-webhook-patching=false", "--enable-apiservice-patching=false",
		"--leader-elect=false", "--zap-log-level=info")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "WATCH_NAMESPACE=", "KEDA_CLUSTER_OBJECT_NAMESPACE=keda", "POD_NAMESPACE=keda")
	cmd.Stdout, cmd.Stderr = GinkgoWriter, GinkgoWriter
	Expect(cmd.Start()).To(Succeed())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	DeferCleanup(func() {
		_ = cmd.Process.Kill()
		<-exited //nolint:errcheck // killed on purpose: its exit status is the kill's
	})
	Consistently(exited, 2*time.Second).ShouldNot(Receive(), "KEDA's operator exited at start")
}

var _ = Describe("an Hvpa driven by KEDA", Label("keda"), func() {
	ctx := context.Background()

	It("follows the HPA a ScaledObject with a cpu trigger makes on the Hvpa's scale subresource", func() {
		startKEDA(kedaOperator())
		ns := framework.NewNamespace(k8s, "keda")
		framework.CreateDeployment(k8s, ns, "web", 1, "500m")
		loads.set(ns, "web", 400) // 80% of 500m on one pod: the trigger's 50% wants 2
		h := epHvpa(ns, "web")
		h.Spec.HPA = &hvpav1alpha1.HpaSpec{} // KEDA's HPA, not one the Hvpa deploys
		Expect(k8s.Create(ctx, h)).To(Succeed())
		so := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
			"metadata": map[string]any{"namespace": ns, "name": "web"},
			"spec": map[string]any{
				"scaleTargetRef":  map[string]any{"apiVersion": hvpav1alpha1.GroupVersion.String(), "kind": "Hvpa", "name": "web"},
				"minReplicaCount": int64(1), "maxReplicaCount": int64(5),
				"triggers": []any{map[string]any{"type": "cpu", "metricType": "Utilization", "metadata": map[string]any{"value": "50"}}},
			}}}
		Expect(k8s.Create(ctx, so)).To(Succeed())

		hpa := &autoscalingv2.HorizontalPodAutoscaler{}
		Eventually(func() error { return k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "keda-hpa-web"}, hpa) }, framework.LongTimeout).Should(Succeed(),
			"KEDA's operator makes an HPA for the ScaledObject")
		Expect(hpa.Spec.ScaleTargetRef).To(Equal(autoscalingv2.CrossVersionObjectReference{APIVersion: hvpav1alpha1.GroupVersion.String(), Kind: "Hvpa", Name: "web"}))
		Eventually(func() *int32 { return getHvpa(ctx, ns, "web").Spec.Replicas }, framework.LongTimeout).Should(HaveValue(Equal(int32(2))),
			"the HPA writes 2 through the Hvpa's scale subresource")
		Eventually(deploymentReplicas(ctx, ns, "web"), framework.LongTimeout).Should(Equal(int32(2)))
		Eventually(hpaSource(ctx, ns, "web"), framework.LongTimeout).Should(
			Equal("HorizontalPodAutoscaler keda-hpa-web (targets this Hvpa; its Utilization metrics make totals)"))
	})
})
