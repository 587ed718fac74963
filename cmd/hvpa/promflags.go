package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"time"

	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/hvpa-dev/hvpa/usage"
)

// promClientFlags are how the recommender reaches Prometheus: credentials and TLS, turned into
// prometheus/common's HTTPClientConfig (the client configuration Prometheus itself uses).
type promClientFlags struct {
	bearerToken, bearerTokenFile       string // --prometheus-bearer-token (upstream's), --prometheus-bearer-token-file
	username, password, passwordFile   string // --prometheus-username (upstream: --username), --password, --prometheus-password-file
	envUsername, envPassword           string // upstream's PROMETHEUS_USERNAME and PROMETHEUS_PASSWORD
	caFile, certFile, keyFile, srvName string
	insecure                           bool // --prometheus-insecure (upstream's)
	proxyURL                           string
	cadvisorJob                        string // --prometheus-cadvisor-job-name (upstream's)
}

// Upstream VPA's environment variables for basic auth, read when the flags give none: its FAQ sets them from
// a Secret (secretKeyRef), which keeps the password out of the pod spec and its args.
const (
	envPrometheusUsername = "PROMETHEUS_USERNAME"
	envPrometheusPassword = "PROMETHEUS_PASSWORD"
)

// prometheusFlags registers the flags of the Prometheus history (--storage=prometheus).
func prometheusFlags(f *pflag.FlagSet, o *runOptions) {
	p, c := &o.prometheus, &o.promClient
	f.StringVar(&p.Address, "prometheus-address", p.Address, "Prometheus HTTP API address, for --storage=prometheus (http:// or https://; the default is upstream VPA's)")
	f.DurationVar(&p.Timeout, "prometheus-timeout", p.Timeout, "time limit of each Prometheus query (the history is read with five at start; upstream VPA's default); past it the recommender starts from its checkpoints")
	f.Var((*promDuration)(&p.HistoryLength), "history-length", "how much usage history to read from Prometheus (Go's or Prometheus' format: 192h, 8d)")
	f.Var((*promDuration)(&p.Resolution), "history-resolution", "step of the Prometheus range queries (Go's or Prometheus' format)")
	f.StringVar(&p.CPUQuery, "prometheus-cpu-query", p.CPUQuery, "query giving CPU usage in cores per container, the mean over each step ($RESOLUTION is replaced by --history-resolution; the default is written with the --prometheus-*-label names)")
	f.StringVar(&p.MemoryQuery, "prometheus-memory-query", p.MemoryQuery, "query giving the memory working set in bytes per container, the peak within each step ($RESOLUTION and the label names as above)")
	f.StringVar(&p.PodLabelsQuery, "prometheus-pod-labels-query", p.PodLabelsQuery, "query giving series carrying the pods' labels, a pod's newest counting (empty: none; kube-state-metrics exports them with --metric-labels-allowlist=pods=[*]); a range vector such as kube_pod_labels[8d] (upstream VPA's form) is evaluated at the end of the history")
	f.StringVar(&p.PodLabelPrefix, "prometheus-pod-label-prefix", p.PodLabelPrefix, "prefix of pod labels in the pod-labels series")
	f.StringVar(&p.PodOwnerQuery, "prometheus-pod-owner-query", p.PodOwnerQuery, "query giving one series per pod (labels namespace, pod) with its controller in owner_kind and owner_name, for history of pods whose labels are unknown ($HISTORY is replaced by --history-length; empty: none)")
	f.StringVar(&p.ReplicaSetOwnerQuery, "prometheus-replicaset-owner-query", p.ReplicaSetOwnerQuery, "query giving one series per ReplicaSet (labels namespace, replicaset) with its controller in owner_kind and owner_name ($HISTORY as above; empty: none)")
	f.StringVar(&p.NamespaceLabel, "prometheus-namespace-label", p.NamespaceLabel, "label holding the namespace in the CPU and memory series")
	f.StringVar(&p.PodLabel, "prometheus-pod-label", p.PodLabel, "label holding the pod name in the CPU and memory series")
	f.StringVar(&p.ContainerLabel, "prometheus-container-label", p.ContainerLabel, "label holding the container name in the CPU and memory series")
	f.StringVar(&p.CPUMetric, "history-cpu-metric", p.CPUMetric, "the CPU usage counter the default CPU query reads (upstream VPA's flag)")
	f.StringVar(&p.MemoryMetric, "history-memory-metric", p.MemoryMetric, "the memory working-set gauge the default memory query reads (upstream VPA's flag)")
	f.StringVar(&c.cadvisorJob, "prometheus-cadvisor-job-name", "", "read only the cAdvisor series of this scrape job (job=\"...\" in the default CPU and memory queries; upstream VPA's flag, whose default is kubernetes-cadvisor; default here: every job)")
	f.StringVar(&p.PodLabelsNamespaceLabel, "pod-namespace-label", "", "label holding the namespace in the pod-labels series, where it is not --prometheus-namespace-label (upstream VPA's flag, e.g. kubernetes_namespace with --metric-for-pod-labels='up{job=\"kubernetes-pods\"}')")
	f.StringVar(&p.PodLabelsPodLabel, "pod-name-label", "", "label holding the pod name in the pod-labels series, where it is not --prometheus-pod-label (upstream VPA's flag, e.g. kubernetes_pod_name)")
	f.StringVar(&c.bearerTokenFile, "prometheus-bearer-token-file", "", "file holding a bearer token for Prometheus (re-read when it changes; wins over basic auth, as upstream's)")
	f.StringVar(&c.username, "prometheus-username", "", "basic-auth user for Prometheus, with --password or --prometheus-password-file (else from PROMETHEUS_USERNAME and PROMETHEUS_PASSWORD, as upstream VPA's)")
	f.StringVar(&c.passwordFile, "prometheus-password-file", "", "file holding the basic-auth password for Prometheus (re-read when it changes)")
	f.StringVar(&c.caFile, "prometheus-ca-file", "", "CA certificate file that signed Prometheus' serving certificate (default: the system's roots)")
	f.StringVar(&c.certFile, "prometheus-cert-file", "", "client certificate file for Prometheus (mutual TLS; with --prometheus-key-file)")
	f.StringVar(&c.keyFile, "prometheus-key-file", "", "client key file for Prometheus (with --prometheus-cert-file)")
	f.StringVar(&c.srvName, "prometheus-server-name", "", "server name to verify Prometheus' certificate against (default: the address' host)")
	f.BoolVar(&c.insecure, "prometheus-insecure", false, "do not verify Prometheus' certificate (upstream VPA's flag; prefer --prometheus-ca-file)")
	f.StringVar(&c.proxyURL, "prometheus-proxy-url", "", "HTTP proxy to reach Prometheus through (default: none; HTTPS_PROXY is not read)")
}

// promAuth is the authentication to Prometheus the flags and the environment choose: how, said at start,
// and the credentials given but not used (warnings).
type promAuth struct {
	authorization *promconfig.Authorization
	basic         *promconfig.BasicAuth
	used          string
	unused        []string
}

// given are the credentials the flags and the environment give: a bearer token; some of basic auth and all of
// it (a user and a password) from the flags, and from the environment.
type given struct{ token, flags, flagsBasic, env, envBasic bool }

func (c promClientFlags) given() given {
	return given{
		token:      c.bearerToken != "" || c.bearerTokenFile != "",
		flags:      c.username != "" || c.password != "" || c.passwordFile != "",
		flagsBasic: c.username != "" && (c.password != "" || c.passwordFile != ""),
		env:        c.envUsername != "" || c.envPassword != "",
		envBasic:   c.envUsername != "" && c.envPassword != "",
	}
}

// auth chooses the credentials by upstream VPA's rule, so that its args and environment authenticate the
// same: a bearer token wins over basic auth; basic auth needs a user and a password, from the flags, else
// from PROMETHEUS_USERNAME and PROMETHEUS_PASSWORD; a user without a password, or a password without a
// user, is no basic auth.
func (c promClientFlags) auth() promAuth {
	g := c.given()
	a := promAuth{used: "none", unused: g.unused()}
	if c.bearerToken != "" && c.bearerTokenFile != "" {
		a.unused = append(a.unused, "--prometheus-bearer-token is not used: --prometheus-bearer-token-file wins, as in upstream VPA")
	}
	switch {
	case g.token:
		a.authorization = &promconfig.Authorization{Type: "Bearer", Credentials: promconfig.Secret(c.bearerToken)}
		a.used = "bearer token (--prometheus-bearer-token)"
		if c.bearerTokenFile != "" { // the file wins over the flag's token, as upstream reads it into the token
			a.authorization = &promconfig.Authorization{Type: "Bearer", CredentialsFile: c.bearerTokenFile}
			a.used = "bearer token (--prometheus-bearer-token-file)"
		}
	case g.flagsBasic:
		a.basic = &promconfig.BasicAuth{Username: c.username, Password: promconfig.Secret(c.password), PasswordFile: c.passwordFile}
		a.used = "basic auth (--prometheus-username)"
	case g.envBasic:
		a.basic = &promconfig.BasicAuth{Username: c.envUsername, Password: promconfig.Secret(c.envPassword)}
		a.used = "basic auth (" + envPrometheusUsername + ", " + envPrometheusPassword + ")"
	}
	return a
}

// unused says why credentials given are not used (auth's rule), for warnings at start.
func (g given) unused() []string {
	var out []string
	switch {
	case g.token && g.flags:
		out = append(out, "basic auth (--prometheus-username, --password) is not used: the bearer token wins, as in upstream VPA")
	case g.flags && !g.flagsBasic:
		out = append(out, "--prometheus-username and a password (--password or --prometheus-password-file) go together: without both, no basic auth from the flags, as in upstream VPA")
	}
	env := envPrometheusUsername + " and " + envPrometheusPassword
	switch {
	case g.token && g.env:
		out = append(out, env+" are not used: the bearer token wins, as in upstream VPA")
	case g.flagsBasic && g.env:
		out = append(out, env+" are not used: --prometheus-username wins, as in upstream VPA")
	case g.env && !g.envBasic:
		out = append(out, env+" go together: without both, no basic auth from them, as in upstream VPA")
	}
	return out
}

// httpConfig is the client configuration the flags describe, and the authentication it uses; errors name the
// flags.
func (c promClientFlags) httpConfig() (promconfig.HTTPClientConfig, promAuth, error) {
	h := promconfig.DefaultHTTPClientConfig
	switch {
	case c.bearerToken != "" && c.bearerTokenFile != "" && c.username != "":
		return h, promAuth{}, errors.New("--prometheus-bearer-token, --prometheus-bearer-token-file and --username (--prometheus-username): give a token or a user, not all three (upstream VPA refuses them too)")
	case c.password != "" && c.passwordFile != "":
		return h, promAuth{}, errors.New("--password and --prometheus-password-file: give one (the file keeps the password out of the pod spec)")
	case (c.certFile == "") != (c.keyFile == ""):
		return h, promAuth{}, errors.New("--prometheus-cert-file and --prometheus-key-file go together: give both for mutual TLS, or neither")
	}
	a := c.auth()
	h.Authorization, h.BasicAuth = a.authorization, a.basic
	h.TLSConfig = promconfig.TLSConfig{CAFile: c.caFile, CertFile: c.certFile, KeyFile: c.keyFile, ServerName: c.srvName, InsecureSkipVerify: c.insecure}
	if c.proxyURL != "" {
		u, err := url.Parse(c.proxyURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return h, a, fmt.Errorf("--prometheus-proxy-url %q: want a URL such as http://proxy.example:3128", c.proxyURL)
		}
		h.ProxyURL = promconfig.URL{URL: u}
	}
	return h, a, nil
}

// prometheusHistory builds the Prometheus history provider from the flags, and logs how it authenticates.
func prometheusHistory(o runOptions) (usage.HistoryProvider, error) {
	o.promClient.envUsername, o.promClient.envPassword = os.Getenv(envPrometheusUsername), os.Getenv(envPrometheusPassword)
	p, auth, err := o.prometheusConfig()
	if err != nil {
		return nil, err
	}
	log := ctrl.Log.WithName("prometheus")
	log.Info("usage history from Prometheus", "address", p.Address, "authentication", auth.used)
	for _, w := range auth.unused {
		log.Info("warning: " + w)
	}
	return usage.NewPrometheus(p, time.Now)
}

// prometheusConfig is the Prometheus configuration the flags give, and the authentication it uses; errors
// name the flags. A default CPU or memory query is written with the label names and the job the flags give
// (upstream VPA's --container-*-label flags name the labels its queries select and group by).
func (o runOptions) prometheusConfig() (usage.PrometheusConfig, promAuth, error) {
	p := o.prometheus
	h, auth, err := o.promClient.httpConfig()
	if err != nil {
		return p, auth, err
	}
	p.HTTP = h
	for _, l := range []struct{ flag, name string }{
		{"prometheus-namespace-label", p.NamespaceLabel}, {"prometheus-pod-label", p.PodLabel}, {"prometheus-container-label", p.ContainerLabel},
	} {
		if l.name == "" {
			return p, auth, fmt.Errorf("--%s is empty: name the label of the CPU and memory series that holds it", l.flag)
		}
	}
	for _, m := range []struct{ flag, name string }{{"history-cpu-metric", p.CPUMetric}, {"history-memory-metric", p.MemoryMetric}} {
		if !model.LegacyValidation.IsValidMetricName(m.name) {
			return p, auth, fmt.Errorf("--%s=%q is not a metric name: name the cAdvisor metric, e.g. its default", m.flag, m.name)
		}
	}
	def := usage.DefaultPrometheusConfig()
	job := o.promClient.cadvisorJob
	if job != "" && (p.CPUQuery != def.CPUQuery || p.MemoryQuery != def.MemoryQuery) {
		return p, auth, fmt.Errorf("--prometheus-cadvisor-job-name=%s with --prometheus-cpu-query or --prometheus-memory-query: those are whole queries; put job=%q into their selectors instead", job, job)
	}
	if (p.CPUMetric != def.CPUMetric && p.CPUQuery != def.CPUQuery) || (p.MemoryMetric != def.MemoryMetric && p.MemoryQuery != def.MemoryQuery) {
		return p, auth, errors.New("--history-cpu-metric or --history-memory-metric with the whole query of that resource (--prometheus-cpu-query, --prometheus-memory-query): put the metric into the query instead")
	}
	p.Namespaces = o.recommender.Namespaces // the history of the namespaces served only, as upstream reads it
	cpu, memory := p.CadvisorQueries(job)
	if p.CPUQuery == def.CPUQuery {
		p.CPUQuery = cpu
	}
	if p.MemoryQuery == def.MemoryQuery {
		p.MemoryQuery = memory
	}
	return p, auth, nil
}
