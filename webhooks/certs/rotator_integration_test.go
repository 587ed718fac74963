package certs_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/webhooks/certs"
)

const (
	ns         = "hvpa-certs"
	mutating   = "hvpa-certs-test-mutating"
	validating = "hvpa-certs-test-validating"
)

var _ = Describe("self-managed webhook certificates", Ordered, func() {
	var (
		ctx    context.Context
		clk    *clocktesting.FakePassiveClock
		dir1   string
		dir2   string
		r1, r2 *certs.Rotator
		opts   func(secret, dir string) certs.Options
	)

	BeforeAll(func() {
		ctx = context.Background()
		clk = clocktesting.NewFakePassiveClock(time.Now())
		dir1, dir2 = tempDir(), tempDir() // the two replicas' folders live across the specs
		opts = func(secret, dir string) certs.Options {
			o := certs.DefaultOptions()
			o.CertDir = dir
			o.SecretNamespace, o.SecretName, o.ServiceName = ns, secret, "hvpa-webhook"
			o.ExtraDNSNames, o.IPAddresses = []string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1")}
			o.MutatingWebhookConfigurations = []string{mutating, "hvpa-certs-test-not-there"}
			o.ValidatingWebhookConfigurations = []string{validating}
			o.Interval = 200 * time.Millisecond
			return o
		}
		Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
		rules := []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule: admissionregistrationv1.Rule{APIGroups: []string{"certs.test.hvpa.dev"}, APIVersions: []string{"v1"}, Resources: []string{"widgets"}}}}
		clientConfig := func(path string) admissionregistrationv1.WebhookClientConfig {
			return admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:9443" + path)}
		}
		none := ptr.To(admissionregistrationv1.SideEffectClassNone)
		ignore := ptr.To(admissionregistrationv1.Ignore)
		Expect(k8s.Create(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: mutating},
			Webhooks: []admissionregistrationv1.MutatingWebhook{
				{Name: "a.certs.test.hvpa.dev", ClientConfig: clientConfig("/a"), Rules: rules, SideEffects: none, FailurePolicy: ignore, AdmissionReviewVersions: []string{"v1"}},
				{Name: "b.certs.test.hvpa.dev", ClientConfig: clientConfig("/b"), Rules: rules, SideEffects: none, FailurePolicy: ignore, AdmissionReviewVersions: []string{"v1"}},
			}})).To(Succeed())
		Expect(k8s.Create(ctx, &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: validating},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{
				{Name: "c.certs.test.hvpa.dev", ClientConfig: clientConfig("/c"), Rules: rules, SideEffects: none, FailurePolicy: ignore, AdmissionReviewVersions: []string{"v1"}},
			}})).To(Succeed())
	})

	It("creates the Secret, writes the files and sets every caBundle", func() {
		var err error
		r1, err = certs.NewRotator(k8s, clk, opts("hvpa-webhook-certs", dir1))
		Expect(err).NotTo(HaveOccurred())
		Expect(r1.ReadyCheck(nil)).NotTo(Succeed(), "not ready before the first sync")

		Expect(r1.Ensure(ctx)).To(Succeed(), "a missing webhook configuration is not an error")

		s := secret(ctx, "hvpa-webhook-certs")
		Expect(s.Type).To(Equal(corev1.SecretTypeTLS))
		Expect(s.Data).To(HaveKey(corev1.TLSCertKey))
		Expect(s.Data).To(HaveKey(corev1.TLSPrivateKeyKey))
		Expect(s.Data).To(HaveKey(certs.CACertKey))
		Expect(s.Data).To(HaveKey(certs.CAKeyKey))
		Expect(readFile(dir1, "tls.crt")).To(Equal(s.Data[corev1.TLSCertKey]))
		Expect(readFile(dir1, "tls.key")).To(Equal(s.Data[corev1.TLSPrivateKeyKey]))
		Expect(caBundles(ctx)).To(HaveEach(Equal(s.Data[certs.CACertKey])))
		Expect(caBundles(ctx)).To(HaveLen(3))
		for _, host := range []string{"hvpa-webhook." + ns + ".svc", "hvpa-webhook." + ns + ".svc.cluster.local", "hvpa-webhook", "localhost", "127.0.0.1"} {
			Expect(verify(s.Data[corev1.TLSCertKey], caBundles(ctx)[0], host, clk.Now())).To(Succeed(), host)
		}
		Expect(r1.ReadyCheck(nil)).To(Succeed())
	})

	It("lets a second replica adopt the same certificates", func() {
		before := secret(ctx, "hvpa-webhook-certs")
		var err error
		r2, err = certs.NewRotator(k8s, clk, opts("hvpa-webhook-certs", dir2))
		Expect(err).NotTo(HaveOccurred())
		Expect(r2.Ensure(ctx)).To(Succeed())
		Expect(secret(ctx, "hvpa-webhook-certs").ResourceVersion).To(Equal(before.ResourceVersion), "nothing regenerated")
		Expect(readFile(dir2, "tls.crt")).To(Equal(readFile(dir1, "tls.crt")))
		Expect(readFile(dir2, "tls.key")).To(Equal(readFile(dir1, "tls.key")))
	})

	It("lets replicas that race on a new Secret agree on one CA and certificate", func() {
		const racers = 3
		dirs := make([]string, racers)
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			dirs[i] = GinkgoT().TempDir()
			o := opts("hvpa-webhook-certs-race", dirs[i])
			o.MutatingWebhookConfigurations, o.ValidatingWebhookConfigurations = nil, nil
			r, err := certs.NewRotator(k8s, clk, o)
			Expect(err).NotTo(HaveOccurred())
			wg.Go(func() { errs[i] = r.Ensure(ctx) })
		}
		wg.Wait()
		Expect(errors.Join(errs...)).NotTo(HaveOccurred())
		s := secret(ctx, "hvpa-webhook-certs-race")
		for _, dir := range dirs {
			Expect(readFile(dir, "tls.crt")).To(Equal(s.Data[corev1.TLSCertKey]))
		}
	})

	It("renews the certificate before it expires, and a running server serves the new one without a restart", func() {
		sctx, cancel := context.WithCancel(ctx)
		DeferCleanup(cancel)
		addr := serve(sctx, dir1)
		go func() {
			defer GinkgoRecover()
			Expect(r1.Start(sctx)).To(Succeed())
		}()

		old := readFile(dir1, "tls.crt")
		Expect(served(ctx, addr, clk)).To(Equal(old))
		oldCert := parse(old)
		rv := secret(ctx, "hvpa-webhook-certs").ResourceVersion

		clk.SetTime(certs.RenewAt(oldCert).Add(time.Minute))
		Eventually(func() []byte { return readFile(dir1, "tls.crt") }, testenv.Timeout, testenv.Interval).ShouldNot(Equal(old),
			"the running Rotator renews the certificate")
		renewed := readFile(dir1, "tls.crt")
		Expect(secret(ctx, "hvpa-webhook-certs").Data[corev1.TLSCertKey]).To(Equal(renewed))
		Expect(parse(renewed).NotAfter).To(BeTemporally(">", oldCert.NotAfter))
		Eventually(func() ([]byte, error) { return served(ctx, addr, clk) }, testenv.Timeout, testenv.Interval).Should(Equal(renewed),
			"the server reloads the files")
		Expect(verify(renewed, caBundles(ctx)[0], "hvpa-webhook."+ns+".svc", clk.Now())).To(Succeed(), "the CA did not change")

		rv2 := secret(ctx, "hvpa-webhook-certs").ResourceVersion
		Expect(rv2).NotTo(Equal(rv))
		Expect(r2.Ensure(ctx)).To(Succeed())
		Expect(secret(ctx, "hvpa-webhook-certs").ResourceVersion).To(Equal(rv2), "the second replica adopts the renewal")
	})

	It("rolls the CA over, trusting both CAs until the old one expires", func() {
		sctx, cancel := context.WithCancel(ctx)
		DeferCleanup(cancel)
		addr := serve(sctx, dir1)
		go func() {
			defer GinkgoRecover()
			Expect(r1.Start(sctx)).To(Succeed())
		}()
		oldCAs, err := certs.ParseCerts(caBundles(ctx)[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(oldCAs).To(HaveLen(1))
		oldCA := oldCAs[0]

		clk.SetTime(certs.RenewAt(oldCA).Add(time.Minute))
		Eventually(func() int { return countCAs(caBundles(ctx)) }, testenv.Timeout, testenv.Interval).Should(Equal(2), "the new CA joins the old one")
		Expect(caBundles(ctx)).To(HaveEach(Equal(secret(ctx, "hvpa-webhook-certs").Data[certs.CACertKey])))
		Eventually(func() ([]byte, error) { return served(ctx, addr, clk) }, testenv.Timeout, testenv.Interval).Should(
			WithTransform(func(b []byte) string { return parse(b).Issuer.CommonName }, Not(Equal(oldCA.Subject.CommonName))),
			"the expired certificate is renewed by the new CA and served")

		clk.SetTime(oldCA.NotAfter.Add(time.Minute))
		Eventually(func() int { return countCAs(caBundles(ctx)) }, testenv.Timeout, testenv.Interval).Should(Equal(1), "the expired CA leaves")
		Expect(parse(caBundles(ctx)[0]).Equal(oldCA)).To(BeFalse(), "the new CA stays")
		Eventually(func() error { _, err := served(ctx, addr, clk); return err }, testenv.Timeout, testenv.Interval).Should(Succeed())
	})
})

func tempDir() string {
	GinkgoHelper()
	dir, err := os.MkdirTemp("", "hvpa-certs-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	return dir
}

func secret(ctx context.Context, name string) *corev1.Secret {
	GinkgoHelper()
	var s corev1.Secret
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s)).To(Succeed())
	return &s
}

// caBundles returns the caBundle of every webhook in the two configurations.
func caBundles(ctx context.Context) [][]byte {
	GinkgoHelper()
	var m admissionregistrationv1.MutatingWebhookConfiguration
	Expect(k8s.Get(ctx, client.ObjectKey{Name: mutating}, &m)).To(Succeed())
	var v admissionregistrationv1.ValidatingWebhookConfiguration
	Expect(k8s.Get(ctx, client.ObjectKey{Name: validating}, &v)).To(Succeed())
	var out [][]byte
	for _, w := range m.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	for _, w := range v.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	return out
}

func countCAs(bundles [][]byte) int {
	cas, err := certs.ParseCerts(bundles[0])
	if err != nil {
		return -1
	}
	for _, b := range bundles[1:] {
		if !bytes.Equal(b, bundles[0]) {
			return -1
		}
	}
	return len(cas)
}

func readFile(dir, name string) []byte {
	GinkgoHelper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	Expect(err).NotTo(HaveOccurred())
	return b
}

func parse(certPEM []byte) *x509.Certificate {
	GinkgoHelper()
	cs, err := certs.ParseCerts(certPEM)
	Expect(err).NotTo(HaveOccurred())
	Expect(cs).NotTo(BeEmpty())
	return cs[0]
}

func verify(certPEM, bundle []byte, host string, now time.Time) error {
	pool, err := certs.Bundle(bundle)
	if err != nil {
		return err
	}
	cs, err := certs.ParseCerts(certPEM)
	if err != nil {
		return err
	}
	_, err = cs[0].Verify(x509.VerifyOptions{DNSName: host, Roots: pool, CurrentTime: now})
	return err
}

// serve starts an HTTPS server on 127.0.0.1 whose certificate comes from the folder through a certwatcher,
// like controller-runtime's webhook server, until ctx ends. It returns the server's address.
func serve(ctx context.Context, dir string) string {
	GinkgoHelper()
	cw, err := certwatcher.New(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"))
	Expect(err).NotTo(HaveOccurred())
	cw = cw.WithWatchInterval(100 * time.Millisecond)
	go func() { _ = cw.Start(ctx) }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = fmt.Fprint(w, "ok") }),
		TLSConfig:         &tls.Config{GetCertificate: cw.GetCertificate, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 5 * time.Second,
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	return ln.Addr().String()
}

// served connects like the API server does: trusting only the caBundle of the webhook configuration, at the
// (fake) time now. It returns the certificate the server presented, as PEM.
func served(ctx context.Context, addr string, clk *clocktesting.FakePassiveClock) ([]byte, error) {
	pool, err := certs.Bundle(caBundles(ctx)[0])
	if err != nil {
		return nil, err
	}
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DisableKeepAlives: true, // a new handshake every time
		TLSClientConfig:   &tls.Config{RootCAs: pool, Time: clk.Now, MinVersion: tls.VersionTLS12},
	}}
	resp, err := c.Get("https://" + addr + "/")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }() // a response body's Close has nothing to report once it is read
	return certs.EncodeCerts(resp.TLS.PeerCertificates[:1]), nil
}
