package main

import (
	"strings"
	"testing"
)

// The Prometheus client flags become prometheus/common's client configuration, and a combination that
// cannot work is refused with the flags named.
func TestPromClientFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		f    promClientFlags
		want string // "" valid
	}{
		"none":                      {promClientFlags{}, ""},
		"token file, CA, proxy":     {promClientFlags{bearerTokenFile: "/t", caFile: "/ca", proxyURL: "http://proxy:3128"}, ""},
		"basic auth from a file":    {promClientFlags{username: "u", passwordFile: "/p"}, ""},
		"mutual TLS":                {promClientFlags{certFile: "/c", keyFile: "/k", srvName: "prom"}, ""},
		"token twice":               {promClientFlags{bearerToken: "x", bearerTokenFile: "/t"}, "--prometheus-bearer-token and --prometheus-bearer-token-file"},
		"password twice":            {promClientFlags{username: "u", password: "x", passwordFile: "/p"}, "--password and --prometheus-password-file"},
		"token and basic auth":      {promClientFlags{bearerToken: "x", username: "u", password: "p"}, "a bearer token and basic auth"},
		"password without user":     {promClientFlags{password: "p"}, "without --prometheus-username"},
		"certificate without a key": {promClientFlags{certFile: "/c"}, "--prometheus-cert-file and --prometheus-key-file go together"},
		"bad proxy":                 {promClientFlags{proxyURL: "proxy:3128"}, "--prometheus-proxy-url"},
	} {
		h, err := tc.f.httpConfig()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if err := h.Validate(); err != nil {
				t.Errorf("%s: prometheus/common refuses the configuration: %v", name, err)
			}
			if tc.f.bearerTokenFile != "" && (h.Authorization == nil || h.Authorization.CredentialsFile != "/t") {
				t.Errorf("%s: authorization %+v", name, h.Authorization)
			}
			if tc.f.caFile != "" && h.TLSConfig.CAFile != "/ca" || tc.f.proxyURL != "" && h.ProxyURL.String() != tc.f.proxyURL {
				t.Errorf("%s: TLS %+v proxy %v", name, h.TLSConfig, h.ProxyURL)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}
