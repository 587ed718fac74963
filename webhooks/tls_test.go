package webhooks

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTLSConfigOptions(t *testing.T) {
	apply := func(c TLSConfig) (*tls.Config, error) {
		opts, err := c.Options()
		if err != nil {
			return nil, err
		}
		t := &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
		for _, o := range opts {
			o(t)
		}
		return t, nil
	}
	got, err := apply(TLSConfig{})
	if err != nil || got.MinVersion != tls.VersionTLS12 || !slices.Equal(got.NextProtos, []string{"http/1.1"}) || got.CipherSuites != nil {
		t.Errorf("defaults: %+v, %v (want TLS 1.2, HTTP/1.1 only, Go's suites)", got, err)
	}
	got, err = apply(TLSConfig{MinVersion: "tls1_3", HTTP2: true, CipherSuites: []string{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}})
	if err != nil || got.MinVersion != tls.VersionTLS13 || !slices.Contains(got.NextProtos, "h2") || len(got.CipherSuites) != 1 {
		t.Errorf("tls1_3, HTTP/2, one suite: %+v, %v", got, err)
	}
	for c, want := range map[*TLSConfig]string{
		{MinVersion: "tls1_1"}:                  "--min-tls-version \"tls1_1\": use tls1_2 or tls1_3",
		{CipherSuites: []string{"TLS_MADE_UP"}}: "--tls-cipher-suites",
	} {
		if _, err := c.Options(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", *c, err, want)
		}
	}
}

// testCA is a certificate authority for the client-certificate test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue makes a certificate for a client (or, with dns, a server).
func (ca *testCA) issue(t *testing.T, name string, usage x509.ExtKeyUsage, dns ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name}, DNSNames: dns,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestWebhookClientCertificates: with --webhook-client-ca-file the webhook server refuses a client whose
// certificate another CA signed (and, with --webhook-require-client-cert, a client without one), and serves
// the API server's; the metrics server's options (Options) never ask for client certificates.
func TestWebhookClientCertificates(t *testing.T) {
	apiServerCA, otherCA, servingCA := newTestCA(t, "api-server-client-ca"), newTestCA(t, "someone-else"), newTestCA(t, "serving")
	caFile := filepath.Join(t.TempDir(), "client-ca.pem")
	if err := os.WriteFile(caFile, apiServerCA.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	serving := servingCA.issue(t, "hvpa-webhook", x509.ExtKeyUsageServerAuth, "localhost")
	apiServer := apiServerCA.issue(t, "kube-apiserver", x509.ExtKeyUsageClientAuth)
	forged := otherCA.issue(t, "kube-apiserver", x509.ExtKeyUsageClientAuth)
	roots := x509.NewCertPool()
	roots.AddCert(servingCA.cert)

	call := func(c TLSConfig, client *tls.Certificate) error {
		opts, err := c.WebhookOptions()
		if err != nil {
			return err
		}
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{serving}}
		for _, o := range opts {
			o(srv.TLS)
		}
		srv.StartTLS()
		defer srv.Close()
		cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
		if client != nil { // sent whatever CAs the server names (Go's client would withhold a forged one)
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return client, nil }
		}
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 5 * time.Second}
		resp, err := hc.Get(srv.URL)
		if err != nil {
			return err
		}
		_ = resp.Body.Close() // the handshake is what is tested
		return nil
	}
	verify := TLSConfig{ClientCAFile: caFile}
	require := TLSConfig{ClientCAFile: caFile, RequireClientCert: true}
	cases := []struct {
		name   string
		config TLSConfig
		client *tls.Certificate
		served bool
	}{
		{"no client CA: any client", TLSConfig{}, nil, true},
		{"no client CA: a certificate is not checked", TLSConfig{}, &forged, true},
		{"client CA: the API server's certificate", verify, &apiServer, true},
		{"client CA: a certificate another CA signed", verify, &forged, false},
		{"client CA: no certificate (the NetworkPolicy's part)", verify, nil, true},
		{"required: the API server's certificate", require, &apiServer, true},
		{"required: no certificate", require, nil, false},
		{"required: a certificate another CA signed", require, &forged, false},
	}
	for _, tc := range cases {
		err := call(tc.config, tc.client)
		if served := err == nil; served != tc.served {
			t.Errorf("%s: served %t (%v), want %t", tc.name, served, err, tc.served)
		}
	}

	opts, err := require.Options()
	if err != nil {
		t.Fatal(err)
	}
	metrics := &tls.Config{}
	for _, o := range opts {
		o(metrics)
	}
	if metrics.ClientAuth != tls.NoClientCert || metrics.ClientCAs != nil {
		t.Errorf("the metrics server's options ask for client certificates: %v", metrics.ClientAuth)
	}
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for c, want := range map[*TLSConfig]string{
		{ClientCAFile: filepath.Join(t.TempDir(), "missing.pem")}: "--webhook-client-ca-file: open",
		{ClientCAFile: notPEM}:    "no PEM certificate in it",
		{RequireClientCert: true}: "--webhook-require-client-cert needs --webhook-client-ca-file",
	} {
		if _, err := c.WebhookOptions(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want %q", *c, err, want)
		}
	}
}
