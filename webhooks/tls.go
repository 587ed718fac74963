package webhooks

import (
	"crypto/tls"
	"fmt"

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
