package upstream_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/testadmission"
	"github.com/hvpa-dev/hvpa/test/wrappers"
	"github.com/hvpa-dev/hvpa/webhooks/pod"
)

// startUpstream runs one of upstream's binaries until the spec ends, its output in a log shown on failure.
func startUpstream(name string, args ...string) {
	log, err := os.Create(filepath.Join(GinkgoT().TempDir(), name+".log"))
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(filepath.Join(upstream, name), append([]string{"--kubeconfig=" + kubeconfig, "--v=2"}, args...)...)
	cmd.Env = append(os.Environ(), "NAMESPACE=kube-system")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	Expect(cmd.Start()).To(Succeed())
	DeferCleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if CurrentSpecReport().Failed() {
			b, _ := os.ReadFile(log.Name())
			out := string(b)
			if len(out) > 4000 {
				out = out[len(out)-4000:]
			}
			AddReportEntry(name+" log (last 4000 bytes)", out)
		}
	})
}

// servingCerts writes a CA and a serving certificate for 127.0.0.1 signed by it, in the files upstream's
// admission controller reads (--client-ca-file, --tls-cert-file, --tls-private-key).
func servingCerts(dir string) (ca, cert, key string) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "upstream-vpa-test-ca"}, IsCA: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	Expect(err).NotTo(HaveOccurred())
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caTmpl, &srvKey.PublicKey, caKey)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	Expect(err).NotTo(HaveOccurred())
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		Expect(os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)).To(Succeed())
		return p
	}
	return write("caCert.pem", "CERTIFICATE", caDER), write("serverCert.pem", "CERTIFICATE", srvDER), write("serverKey.pem", "EC PRIVATE KEY", keyDER)
}

// workload runs Deployment web in ns with two pods far below their usage, and a Recreate VPA on it served by
// recommender ("": the default one, hvpa's).
func workload(ns, recommender string) *vpav1.VerticalPodAutoscaler {
	ctx := context.Background()
	loads.SetPerPod(ns, "web", 300, 400<<20)
	framework.CreateAnswering(k8s, ns, "web", 2, "accept", wrappers.Resources("100m", "128Mi"), nil)
	Eventually(func() int { return len(framework.LivePods(k8s, ns, "web")) }, framework.Timeout, framework.Interval).Should(Equal(2))
	v := wrappers.MakeVPA(ns, "web").Mode(vpav1.UpdateModeRecreate).Recommender(recommender).Obj()
	Expect(k8s.Create(ctx, v)).To(Succeed())
	return v
}

// target waits for the VPA's recommendation from the pods' usage and returns its target for container app. A
// recommender's first run can see a new pod before the metrics API has a usage window of it (upstream's then
// recommends the pod minimum, 25m): the target counts once it is above the pods' 100m requests, as their
// 300m usage asks.
func target(ns string) corev1.ResourceList {
	var out corev1.ResourceList
	Eventually(func() error {
		v := &vpav1.VerticalPodAutoscaler{}
		if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, v); err != nil {
			return err
		}
		if v.Status.Recommendation == nil || len(v.Status.Recommendation.ContainerRecommendations) == 0 {
			return fmt.Errorf("no recommendation yet")
		}
		out = v.Status.Recommendation.ContainerRecommendations[0].Target
		if out.Cpu().MilliValue() <= 100 {
			return fmt.Errorf("target %s: not from the pods' usage yet", resourceString(out))
		}
		return nil
	}, framework.LongTimeout, framework.Interval).Should(Succeed())
	return out
}

// sizedAs waits until every live pod of web in ns has been recreated with the requests want, and returns
// the pods.
func sizedAs(ns string, want corev1.ResourceList, before []corev1.Pod) []corev1.Pod {
	old := map[string]bool{}
	for _, p := range before {
		old[string(p.UID)] = true
	}
	var pods []corev1.Pod
	Eventually(func() error {
		pods = framework.LivePods(k8s, ns, "web")
		if len(pods) != 2 {
			return fmt.Errorf("%d live pods", len(pods))
		}
		for _, p := range pods {
			got := p.Spec.Containers[0].Resources.Requests
			if old[string(p.UID)] || got.Cpu().Cmp(*want.Cpu()) != 0 || got.Memory().Cmp(*want.Memory()) != 0 {
				return fmt.Errorf("pod %s (recreated %v): requests cpu %s memory %s, want %s %s", p.Name, !old[string(p.UID)],
					got.Cpu(), got.Memory(), want.Cpu(), want.Memory())
			}
		}
		return nil
	}, framework.LongTimeout, framework.Interval).Should(Succeed())
	return pods
}

var _ = Describe("hvpa beside upstream VPA's binaries", Ordered, func() {
	ctx := context.Background()
	var upstreamActs, hvpaActs corev1.ResourceList // the targets each side's pods are sized to

	It("upstream's admission controller and updater act on hvpa's recommendation", func() {
		before := framework.LivePods(k8s, nsUpstreamActs, "web")
		workload(nsUpstreamActs, "")
		upstreamActs = target(nsUpstreamActs)

		port := framework.FreePort()
		ca, cert, key := servingCerts(GinkgoT().TempDir())
		startUpstream("vpa-admission-controller", "--client-ca-file="+ca, "--tls-cert-file="+cert, "--tls-private-key="+key,
			"--register-by-url=true", "--webhook-address=https://127.0.0.1", fmt.Sprintf("--webhook-port=%d", port), fmt.Sprintf("--port=%d", port),
			"--vpa-object-namespace="+nsUpstreamActs, fmt.Sprintf("--address=127.0.0.1:%d", framework.FreePort()))
		Eventually(func() error {
			return k8s.Get(ctx, client.ObjectKey{Name: "vpa-webhook-config"}, &admissionregistrationv1.MutatingWebhookConfiguration{})
		}, framework.LongTimeout, framework.Interval).Should(Succeed(), "upstream's admission controller registers its webhook")
		startUpstream("vpa-updater", "--updater-interval=1s", "--in-recommendation-bounds-eviction-lifetime-threshold=1s",
			"--vpa-object-namespace="+nsUpstreamActs, fmt.Sprintf("--address=127.0.0.1:%d", framework.FreePort()))

		pods := sizedAs(nsUpstreamActs, upstreamActs, append(before, framework.LivePods(k8s, nsUpstreamActs, "web")...))
		for _, p := range pods {
			Expect(p.Annotations).To(HaveKeyWithValue("vpaUpdates", ContainSubstring("Pod resources updated by web")), "sized by upstream's admission controller")
			Expect(p.Annotations).NotTo(HaveKey(pod.AnnotationSizedBy), "hvpa's webhook is not called in this namespace")
		}
	})

	It("hvpa's admission webhook and updater act on upstream's recommender's recommendation", func() {
		before := framework.LivePods(k8s, nsHvpaActs, "web")
		workload(nsHvpaActs, "upstream")
		startUpstream("vpa-recommender", "--recommender-name=upstream", "--recommender-interval=1s", "--vpa-object-namespace="+nsHvpaActs,
			"--leader-elect=false", fmt.Sprintf("--address=127.0.0.1:%d", framework.FreePort()))
		hvpaActs = target(nsHvpaActs)

		o := updater.DefaultOptions()
		o.Interval, o.MinPodAge, o.AdmissionLease = 300*time.Millisecond, time.Second, testadmission.AdmissionLease
		runCtx, cancel := context.WithCancel(ctx)
		DeferCleanup(cancel)
		u := updater.New(mgrC, k8s, events, clock.RealClock{}, gates, o, updater.NewMetrics(nil))
		go func() {
			defer GinkgoRecover()
			Expect(u.Start(runCtx)).To(Succeed())
		}()

		pods := sizedAs(nsHvpaActs, hvpaActs, append(before, framework.LivePods(k8s, nsHvpaActs, "web")...))
		for _, p := range pods {
			Expect(p.Annotations).To(HaveKeyWithValue(pod.AnnotationSizedBy, "VerticalPodAutoscaler/web"), "sized by hvpa's webhook")
		}
	})

	It("sizes the pods the same either way: hvpa's and upstream's recommenders give the same target for the same usage", func() {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			a, b := upstreamActs[r], hvpaActs[r]
			Expect(a.Cmp(b)).To(Equal(0), "%s: hvpa's recommender %s, upstream's %s", r, a.String(), b.String())
		}
		GinkgoWriter.Printf("target from the same usage (300m, 400Mi per pod): hvpa %s, upstream %s\n", resourceString(upstreamActs), resourceString(hvpaActs))
	})

	It("keeps a VPA's history when it moves from upstream's recommender to hvpa's (spec.recommenders)", func() {
		// upstream's recommender (stopped with the spec before) wrote the VPA's checkpoint
		cp := &vpav1.VerticalPodAutoscalerCheckpoint{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: nsHvpaActs, Name: "web-app"}, cp)).To(Succeed())
		Expect(cp.Labels).NotTo(HaveKey(recommenderctrl.WriterLabel), "upstream's recommender wrote it (hvpa labels its own)")
		// upstream creates it with its status and patches /status of the object: a status subresource on the CRD
		// would drop both
		Expect(cp.Status.TotalSamplesCount).To(BeNumerically(">", 0), "upstream's recommender stored its history: %+v", cp.Status)
		Expect(cp.Status.CPUHistogram.BucketWeights).NotTo(BeEmpty())
		v := &vpav1.VerticalPodAutoscaler{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: nsHvpaActs, Name: "web"}, v)).To(Succeed())
		v.Spec.Recommenders = nil // the default recommender: hvpa's
		Expect(k8s.Update(ctx, v)).To(Succeed())
		// hvpa's recommender has tracked the pods' usage all along (without --memory-saver), so the VPA keeps
		// its target at once, and hvpa takes its checkpoint over
		Eventually(func() error {
			cp := &vpav1.VerticalPodAutoscalerCheckpoint{}
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: nsHvpaActs, Name: "web-app"}, cp); err != nil {
				return err
			}
			if cp.Labels[recommenderctrl.WriterLabel] != "default" {
				return fmt.Errorf("checkpoint written by %q", cp.Labels[recommenderctrl.WriterLabel])
			}
			return nil
		}, framework.LongTimeout, framework.Interval).Should(Succeed())
		got := target(nsHvpaActs)
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			a, b := got[r], hvpaActs[r]
			Expect(a.Cmp(b)).To(Equal(0), "%s after the move %s, before %s", r, a.String(), b.String())
		}
	})
})

func resourceString(l corev1.ResourceList) string {
	var parts []string
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q := l[r]
		parts = append(parts, string(r)+"="+q.String())
	}
	return strings.Join(parts, " ")
}
