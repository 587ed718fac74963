package webhooks

import (
	"crypto/tls"
	"slices"
	"strings"
	"testing"
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
