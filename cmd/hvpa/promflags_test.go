package main

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/promql/parser"
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
		"token and basic auth":      {promClientFlags{bearerTokenFile: "/t", username: "u", password: "p"}, ""},
		"token twice":               {promClientFlags{bearerToken: "x", bearerTokenFile: "/t"}, ""},
		"token twice and a user":    {promClientFlags{bearerToken: "x", bearerTokenFile: "/t", username: "u"}, "--prometheus-bearer-token, --prometheus-bearer-token-file and --username"},
		"password twice":            {promClientFlags{username: "u", password: "x", passwordFile: "/p"}, "--password and --prometheus-password-file"},
		"certificate without a key": {promClientFlags{certFile: "/c"}, "--prometheus-cert-file and --prometheus-key-file go together"},
		"bad proxy":                 {promClientFlags{proxyURL: "proxy:3128"}, "--prometheus-proxy-url"},
	} {
		h, _, err := tc.f.httpConfig()
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

// TestPromAuth: the credentials are chosen by upstream VPA's rule (a bearer token wins over basic auth; basic
// auth needs a user and a password, from the flags, else from PROMETHEUS_USERNAME and PROMETHEUS_PASSWORD),
// and credentials given but not used are said.
func TestPromAuth(t *testing.T) {
	for name, tc := range map[string]struct {
		f            promClientFlags
		token        string // the bearer token (file) used
		user, secret string // the basic auth used (secret: password or password file)
		unused       []string
	}{
		"none":                       {f: promClientFlags{}},
		"token":                      {f: promClientFlags{bearerToken: "tok"}, token: "tok"},
		"token file and basic auth":  {f: promClientFlags{bearerTokenFile: "/t", username: "u", password: "p"}, token: "/t", unused: []string{"the bearer token wins"}},
		"token and token file":       {f: promClientFlags{bearerToken: "tok", bearerTokenFile: "/t"}, token: "/t", unused: []string{"--prometheus-bearer-token-file wins"}},
		"token and the environment":  {f: promClientFlags{bearerToken: "tok", envUsername: "eu", envPassword: "ep"}, token: "tok", unused: []string{"PROMETHEUS_USERNAME and PROMETHEUS_PASSWORD are not used: the bearer token wins"}},
		"flags":                      {f: promClientFlags{username: "u", password: "p"}, user: "u", secret: "p"},
		"flags with a password file": {f: promClientFlags{username: "u", passwordFile: "/p"}, user: "u", secret: "/p"},
		"flags win over environment": {f: promClientFlags{username: "u", password: "p", envUsername: "eu", envPassword: "ep"}, user: "u", secret: "p", unused: []string{"--prometheus-username wins"}},
		"environment":                {f: promClientFlags{envUsername: "eu", envPassword: "ep"}, user: "eu", secret: "ep"},
		"user flag, environment":     {f: promClientFlags{username: "u", envUsername: "eu", envPassword: "ep"}, user: "eu", secret: "ep", unused: []string{"go together"}},
		"user without a password":    {f: promClientFlags{username: "u"}, unused: []string{"--prometheus-username and a password"}},
		"password without a user":    {f: promClientFlags{password: "p"}, unused: []string{"--prometheus-username and a password"}},
		"environment user alone":     {f: promClientFlags{envUsername: "eu"}, unused: []string{"PROMETHEUS_USERNAME and PROMETHEUS_PASSWORD go together"}},
	} {
		a := tc.f.auth()
		token := ""
		if a.authorization != nil {
			token = string(a.authorization.Credentials) + a.authorization.CredentialsFile
		}
		user, secret := "", ""
		if a.basic != nil {
			user, secret = a.basic.Username, string(a.basic.Password)+a.basic.PasswordFile
		}
		if token != tc.token || user != tc.user || secret != tc.secret {
			t.Errorf("%s: token %q, basic auth %q:%q; want token %q, basic auth %q:%q", name, token, user, secret, tc.token, tc.user, tc.secret)
		}
		if a.authorization != nil && a.basic != nil {
			t.Errorf("%s: a bearer token and basic auth both set", name)
		}
		if len(a.unused) != len(tc.unused) {
			t.Errorf("%s: unused %q, want %d", name, a.unused, len(tc.unused))
			continue
		}
		for i, w := range tc.unused {
			if !strings.Contains(a.unused[i], w) {
				t.Errorf("%s: unused %q, want %q", name, a.unused[i], w)
			}
		}
		if want := usedSays(tc.token, tc.user, tc.f.username); !strings.Contains(a.used, want) {
			t.Errorf("%s: used %q, want it to say %q", name, a.used, want)
		}
	}
}

// usedSays is what promAuth.used says for the credentials used: the token, the user given by the flag
// (flagUser) or another one (from the environment), or none.
func usedSays(token, user, flagUser string) string {
	switch {
	case token != "":
		return "bearer token"
	case user != "" && user == flagUser:
		return "basic auth (--prometheus-username)"
	case user != "":
		return "basic auth (PROMETHEUS_USERNAME, PROMETHEUS_PASSWORD)"
	}
	return "none"
}

// TestPrometheusEnvAuth: upstream VPA's PROMETHEUS_USERNAME and PROMETHEUS_PASSWORD authenticate the history's
// queries when the flags give no basic auth, and upstream's --username and --password win over them.
func TestPrometheusEnvAuth(t *testing.T) {
	var seen string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
	}))
	defer srv.Close()
	t.Setenv(envPrometheusUsername, "user")
	t.Setenv(envPrometheusPassword, "pw")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"environment":          {nil, "Basic " + base64.StdEncoding.EncodeToString([]byte("user:pw"))},
		"upstream's flags win": {[]string{"--username=admin", "--password=secret"}, "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:secret"))},
		"a token wins":         {[]string{"--prometheus-bearer-token=tok"}, "Bearer tok"},
	} {
		cmd, o := newRunCommandOptions()
		if err := cmd.Flags().Parse(append([]string{"--storage=prometheus", "--prometheus-address=" + srv.URL}, tc.args...)); err != nil {
			t.Fatal(err)
		}
		if err := o.fromUpstream(cmd.Flags()); err != nil {
			t.Fatal(err)
		}
		h, err := prometheusHistory(*o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		seen = ""
		_, _ = h.History(context.Background()) // no series: an error; the request is what counts
		if seen != tc.want {
			t.Errorf("%s: Authorization %q, want %q", name, seen, tc.want)
		}
	}
}

// TestPrometheusFlagDefaults: upstream VPA's defaults of --prometheus-address and --prometheus-query-timeout,
// so that its args start the same.
func TestPrometheusFlagDefaults(t *testing.T) {
	cmd, o := newRunCommandOptions()
	if err := cmd.Flags().Parse(nil); err != nil {
		t.Fatal(err)
	}
	if o.prometheus.Address != "http://prometheus.monitoring.svc" || o.prometheus.Timeout != 5*time.Minute {
		t.Errorf("address %q, timeout %s; want upstream's http://prometheus.monitoring.svc and 5m", o.prometheus.Address, o.prometheus.Timeout)
	}
}

// TestUpstreamPrometheusLabelFlags: upstream's --container-namespace-label, --container-pod-name-label and
// --container-name-label name the labels the default CPU and memory queries select and group by (not only
// those read from their results), with --prometheus-cadvisor-job-name too, and upstream's
// --history-cpu-metric and --history-memory-metric the metrics they read (accepted and ignored before); a query
// of one's own is kept as given (a metric flag with it is refused), and an empty label name or a metric flag
// that names no metric is refused.
func TestUpstreamPrometheusLabelFlags(t *testing.T) {
	labels := []string{"--container-namespace-label=kubernetes_namespace", "--container-pod-name-label=pod_name", "--container-name-label=name"}
	for name, tc := range map[string]struct {
		args        []string
		cpu, memory string
		err         string
	}{
		"upstream's label names": {args: labels,
			cpu:    `max by (kubernetes_namespace, pod_name, name) (rate(container_cpu_usage_seconds_total{name!="", name!="POD", pod_name!=""}[$RESOLUTION]))`,
			memory: `max by (kubernetes_namespace, pod_name, name) (max_over_time(container_memory_working_set_bytes{name!="", name!="POD", pod_name!=""}[$RESOLUTION]))`},
		"with the job": {args: append([]string{"--prometheus-cadvisor-job-name=kubernetes-cadvisor"}, labels...),
			cpu:    `max by (kubernetes_namespace, pod_name, name) (rate(container_cpu_usage_seconds_total{job="kubernetes-cadvisor", name!="", name!="POD", pod_name!=""}[$RESOLUTION]))`,
			memory: `max by (kubernetes_namespace, pod_name, name) (max_over_time(container_memory_working_set_bytes{job="kubernetes-cadvisor", name!="", name!="POD", pod_name!=""}[$RESOLUTION]))`},
		"a CPU query of one's own": {args: append([]string{"--prometheus-cpu-query=sum by (namespace, pod_name, name) (rate(x[5m]))"}, labels...),
			cpu:    `sum by (namespace, pod_name, name) (rate(x[5m]))`,
			memory: `max by (kubernetes_namespace, pod_name, name) (max_over_time(container_memory_working_set_bytes{name!="", name!="POD", pod_name!=""}[$RESOLUTION]))`},
		"defaults": {
			cpu:    `max by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{container!="", container!="POD", pod!=""}[$RESOLUTION]))`,
			memory: `max by (namespace, pod, container) (max_over_time(container_memory_working_set_bytes{container!="", container!="POD", pod!=""}[$RESOLUTION]))`},
		"empty label": {args: []string{"--container-name-label="}, err: "--prometheus-container-label is empty"},
		"upstream's metric names": {args: []string{"--history-cpu-metric=cadvisor_cpu_seconds_total", "--history-memory-metric=cadvisor_working_set_bytes"},
			cpu:    `max by (namespace, pod, container) (rate(cadvisor_cpu_seconds_total{container!="", container!="POD", pod!=""}[$RESOLUTION]))`,
			memory: `max by (namespace, pod, container) (max_over_time(cadvisor_working_set_bytes{container!="", container!="POD", pod!=""}[$RESOLUTION]))`},
		"a metric name with the whole query": {args: []string{"--history-cpu-metric=cadvisor_cpu_seconds_total", "--prometheus-cpu-query=rate(x[5m])"},
			err: "put the metric into the query"},
		"not a metric name": {args: []string{"--history-memory-metric=working set"}, err: `--history-memory-metric="working set" is not a metric name`},
		"one namespace served": {args: []string{"--vpa-object-namespace=shop"},
			cpu:    `max by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{container!="", container!="POD", pod!="", namespace="shop"}[$RESOLUTION]))`,
			memory: `max by (namespace, pod, container) (max_over_time(container_memory_working_set_bytes{container!="", container!="POD", pod!="", namespace="shop"}[$RESOLUTION]))`},
		"namespaces served": {args: []string{"--namespaces=shop,web.v2"},
			cpu:    `max by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{container!="", container!="POD", pod!="", namespace=~"shop|web\\.v2"}[$RESOLUTION]))`,
			memory: `max by (namespace, pod, container) (max_over_time(container_memory_working_set_bytes{container!="", container!="POD", pod!="", namespace=~"shop|web\\.v2"}[$RESOLUTION]))`},
	} {
		cmd, o := newRunCommandOptions()
		if err := cmd.Flags().Parse(tc.args); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cfg, _, err := o.prometheusConfig()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error with %q", name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, q := range []string{cfg.CPUQuery, cfg.MemoryQuery} {
			if _, err := parser.NewParser(parser.Options{}).ParseExpr(strings.ReplaceAll(q, "$RESOLUTION", "1h")); err != nil {
				t.Errorf("%s: %s is no PromQL: %v", name, q, err)
			}
		}
		if cfg.CPUQuery != tc.cpu || cfg.MemoryQuery != tc.memory {
			t.Errorf("%s:\n cpu    %s\n memory %s\nwant\n cpu    %s\n memory %s", name, cfg.CPUQuery, cfg.MemoryQuery, tc.cpu, tc.memory)
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
	cfg, _, err := o.prometheusConfig()
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

	cfg, _, err = parse(t).prometheusConfig()
	if err != nil || strings.Contains(cfg.CPUQuery, "job=") {
		t.Errorf("no job name: %v, query %s; want every job", err, cfg.CPUQuery)
	}
	_, _, err = parse(t, "--prometheus-cadvisor-job-name=kubelet", "--prometheus-cpu-query=sum(rate(x[5m]))").prometheusConfig()
	if err == nil || !strings.Contains(err.Error(), "--prometheus-cadvisor-job-name=kubelet with --prometheus-cpu-query") {
		t.Errorf("job name with a whole query: %v, want it refused naming both flags", err)
	}
	cmd, _ := newRunCommandOptions()
	if err := cmd.Flags().Parse([]string{"--container-recommendation-max-allowed-cpu=-1"}); err == nil || !strings.Contains(err.Error(), "no CPU quantity above 0") {
		t.Errorf("negative maximum: %v", err)
	}
}
