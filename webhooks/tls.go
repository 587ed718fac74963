package webhooks

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	cliflag "k8s.io/component-base/cli/flag"
)

// TLSConfig is how the webhook server speaks TLS: --min-tls-version, --tls-cipher-suites, --enable-http2.
type TLSConfig struct {
	// MinVersion: tls1_2 (default) or tls1_3, as upstream VPA's admission controller takes it.
	MinVersion string
	// CipherSuites are Go's names of the TLS 1.2 suites allowed (empty: Go's defaults).
	CipherSuites []string
	// HTTP2 serves HTTP/2 too; off by default (HTTP/2 rapid reset, CVE-2023-44487, against a server that
	// only the API server needs to reach).
	HTTP2 bool
	// ClientCAFile (--webhook-client-ca-file), on the webhook server only: a client that presents a
	// certificate must present one this CA (PEM) signed, so that where the API server is configured to
	// authenticate to webhooks (its admission configuration's kubeConfigFile) no other client can pose as it.
	// Read at start.
	ClientCAFile string
	// RequireClientCert (--webhook-require-client-cert): every client must present such a certificate.
	RequireClientCert bool
}

var minVersions = map[string]uint16{"tls1_2": tls.VersionTLS12, "tls1_3": tls.VersionTLS13}

// Options are the TLS options of the webhook server (controller-runtime's webhook.Options.TLSOpts), or an
// error naming the flag and its accepted values.
func (c TLSConfig) Options() ([]func(*tls.Config), error) {
	v, ok := minVersions[c.MinVersion]
	if c.MinVersion == "" {
		v, ok = tls.VersionTLS12, true
	}
	if !ok {
		return nil, fmt.Errorf("--min-tls-version %q: use tls1_2 or tls1_3", c.MinVersion)
	}
	var suites []uint16
	if len(c.CipherSuites) > 0 {
		var err error
		if suites, err = cliflag.TLSCipherSuites(c.CipherSuites); err != nil {
			return nil, fmt.Errorf("--tls-cipher-suites: %w; possible values: %v", err, cliflag.TLSCipherPossibleValues())
		}
	}
	http2 := c.HTTP2
	return []func(*tls.Config){func(t *tls.Config) {
		t.MinVersion = v
		if suites != nil {
			t.CipherSuites = suites
		}
		if !http2 {
			t.NextProtos = []string{"http/1.1"}
		}
	}}, nil
}

// WebhookOptions are Options plus, on the webhook server only (the metrics server's scrapers authenticate
// with tokens), the verification of clients' certificates against ClientCAFile.
func (c TLSConfig) WebhookOptions() ([]func(*tls.Config), error) {
	opts, err := c.Options()
	if err != nil {
		return nil, err
	}
	if c.ClientCAFile == "" {
		if c.RequireClientCert {
			return nil, fmt.Errorf("--webhook-require-client-cert needs --webhook-client-ca-file: the CA that signs the API server's client certificate")
		}
		return opts, nil
	}
	pem, err := os.ReadFile(c.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("--webhook-client-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--webhook-client-ca-file %s: no PEM certificate in it", c.ClientCAFile)
	}
	auth := tls.VerifyClientCertIfGiven
	if c.RequireClientCert {
		auth = tls.RequireAndVerifyClientCert
	}
	return append(opts, func(t *tls.Config) { t.ClientCAs, t.ClientAuth = pool, auth }), nil
}
