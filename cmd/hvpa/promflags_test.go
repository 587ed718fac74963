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

// TestUpstreamPrometheusAndCapFlags: upstream's --prometheus-cadvisor-job-name, --pod-namespace-label,
// --pod-name-label and --container-recommendation-max-allowed-cpu/-memory reach the configuration with
// upstream's meaning; a job name beside whole queries of one's own is refused with the flags named.
func TestUpstreamPrometheusAndCapFlags(t *testing.T) {
	parse := func(t *testing.T, args ...string) *runOptions {
		t.Helper()
		cmd, o := newRunCommandOptions()
		if err := cmd.Flags().Parse(args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		return o
	}
	o := parse(t, "--prometheus-cadvisor-job-name=kubernetes-cadvisor", "--metric-for-pod-labels=up{job=\"kubernetes-pods\"}",
		"--pod-namespace-label=kubernetes_namespace", "--pod-name-label=kubernetes_pod_name",
		"--container-recommendation-max-allowed-cpu=2", "--container-recommendation-max-allowed-memory=8Gi")
	cfg, err := o.prometheusConfig()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{cfg.CPUQuery, cfg.MemoryQuery} {
		if !strings.Contains(q, `{job="kubernetes-cadvisor", container!=""`) {
			t.Errorf("query %s: no job selector", q)
		}
	}
	if cfg.PodLabelsQuery != `up{job="kubernetes-pods"}` || cfg.PodLabelsNamespaceLabel != "kubernetes_namespace" || cfg.PodLabelsPodLabel != "kubernetes_pod_name" {
		t.Errorf("pod labels: query %q, namespace label %q, pod label %q", cfg.PodLabelsQuery, cfg.PodLabelsNamespaceLabel, cfg.PodLabelsPodLabel)
	}
	if o.recommender.MaxAllowedCPU != 2 || o.recommender.MaxAllowedMemory != 8<<30 {
		t.Errorf("max allowed %g cores, %g bytes; want 2 and 8Gi", o.recommender.MaxAllowedCPU, o.recommender.MaxAllowedMemory)
	}

	cfg, err = parse(t).prometheusConfig()
	if err != nil || strings.Contains(cfg.CPUQuery, "job=") {
		t.Errorf("no job name: %v, query %s; want every job", err, cfg.CPUQuery)
	}
	_, err = parse(t, "--prometheus-cadvisor-job-name=kubelet", "--prometheus-cpu-query=sum(rate(x[5m]))").prometheusConfig()
	if err == nil || !strings.Contains(err.Error(), "--prometheus-cadvisor-job-name=kubelet with --prometheus-cpu-query") {
		t.Errorf("job name with a whole query: %v, want it refused naming both flags", err)
	}
	cmd, _ := newRunCommandOptions()
	if err := cmd.Flags().Parse([]string{"--container-recommendation-max-allowed-cpu=-1"}); err == nil || !strings.Contains(err.Error(), "no CPU quantity above 0") {
		t.Errorf("negative maximum: %v", err)
	}
}
