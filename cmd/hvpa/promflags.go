package main

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	promconfig "github.com/prometheus/common/config"
	"github.com/spf13/pflag"

	"github.com/hvpa-dev/hvpa/usage"
)

// promClientFlags are how the recommender reaches Prometheus: credentials and TLS, turned into
// prometheus/common's HTTPClientConfig (the client configuration Prometheus itself uses).
type promClientFlags struct {
	bearerToken, bearerTokenFile       string // --prometheus-bearer-token (upstream's), --prometheus-bearer-token-file
	username, password, passwordFile   string // --prometheus-username (upstream: --username), --password, --prometheus-password-file
	caFile, certFile, keyFile, srvName string
	insecure                           bool // --prometheus-insecure (upstream's)
	proxyURL                           string
	cadvisorJob                        string // --prometheus-cadvisor-job-name (upstream's)
}

// prometheusFlags registers the flags of the Prometheus history (--storage=prometheus).
func prometheusFlags(f *pflag.FlagSet, o *runOptions) {
	p, c := &o.prometheus, &o.promClient
	f.StringVar(&p.Address, "prometheus-address", "", "Prometheus HTTP API address, for --storage=prometheus (http:// or https://)")
	f.DurationVar(&p.Timeout, "prometheus-timeout", p.Timeout, "time limit of each Prometheus query (the history is read with five at start); past it the recommender starts from its checkpoints")
	f.Var((*promDuration)(&p.HistoryLength), "history-length", "how much usage history to read from Prometheus (Go's or Prometheus' format: 192h, 8d)")
	f.Var((*promDuration)(&p.Resolution), "history-resolution", "step of the Prometheus range queries (Go's or Prometheus' format)")
	f.StringVar(&p.CPUQuery, "prometheus-cpu-query", p.CPUQuery, "query giving CPU usage in cores per container, the mean over each step ($RESOLUTION is replaced by --history-resolution)")
	f.StringVar(&p.MemoryQuery, "prometheus-memory-query", p.MemoryQuery, "query giving the memory working set in bytes per container, the peak within each step ($RESOLUTION as above)")
	f.StringVar(&p.PodLabelsQuery, "prometheus-pod-labels-query", p.PodLabelsQuery, "query giving one series per pod carrying its labels (empty: none; kube-state-metrics exports them with --metric-labels-allowlist=pods=[*])")
	f.StringVar(&p.PodLabelPrefix, "prometheus-pod-label-prefix", p.PodLabelPrefix, "prefix of pod labels in the pod-labels series")
	f.StringVar(&p.PodOwnerQuery, "prometheus-pod-owner-query", p.PodOwnerQuery, "query giving one series per pod with its controller in owner_kind and owner_name, for history of pods whose labels are unknown ($HISTORY is replaced by --history-length; empty: none)")
	f.StringVar(&p.ReplicaSetOwnerQuery, "prometheus-replicaset-owner-query", p.ReplicaSetOwnerQuery, "query giving one series per ReplicaSet (label replicaset) with its controller in owner_kind and owner_name ($HISTORY as above; empty: none)")
	f.StringVar(&p.NamespaceLabel, "prometheus-namespace-label", p.NamespaceLabel, "label holding the namespace")
	f.StringVar(&p.PodLabel, "prometheus-pod-label", p.PodLabel, "label holding the pod name")
	f.StringVar(&p.ContainerLabel, "prometheus-container-label", p.ContainerLabel, "label holding the container name")
	f.StringVar(&c.cadvisorJob, "prometheus-cadvisor-job-name", "", "read only the cAdvisor series of this scrape job (job=\"...\" in the default CPU and memory queries; upstream VPA's flag, whose default is kubernetes-cadvisor; default here: every job)")
	f.StringVar(&p.PodLabelsNamespaceLabel, "pod-namespace-label", "", "label holding the namespace in the pod-labels series, where it is not --prometheus-namespace-label (upstream VPA's flag, e.g. kubernetes_namespace with --metric-for-pod-labels='up{job=\"kubernetes-pods\"}')")
	f.StringVar(&p.PodLabelsPodLabel, "pod-name-label", "", "label holding the pod name in the pod-labels series, where it is not --prometheus-pod-label (upstream VPA's flag, e.g. kubernetes_pod_name)")
	f.StringVar(&c.bearerTokenFile, "prometheus-bearer-token-file", "", "file holding a bearer token for Prometheus (re-read when it changes)")
	f.StringVar(&c.username, "prometheus-username", "", "basic-auth user for Prometheus")
	f.StringVar(&c.passwordFile, "prometheus-password-file", "", "file holding the basic-auth password for Prometheus (re-read when it changes)")
	f.StringVar(&c.caFile, "prometheus-ca-file", "", "CA certificate file that signed Prometheus' serving certificate (default: the system's roots)")
	f.StringVar(&c.certFile, "prometheus-cert-file", "", "client certificate file for Prometheus (mutual TLS; with --prometheus-key-file)")
	f.StringVar(&c.keyFile, "prometheus-key-file", "", "client key file for Prometheus (with --prometheus-cert-file)")
	f.StringVar(&c.srvName, "prometheus-server-name", "", "server name to verify Prometheus' certificate against (default: the address' host)")
	f.BoolVar(&c.insecure, "prometheus-insecure", false, "do not verify Prometheus' certificate (upstream VPA's flag; prefer --prometheus-ca-file)")
	f.StringVar(&c.proxyURL, "prometheus-proxy-url", "", "HTTP proxy to reach Prometheus through (default: none; HTTPS_PROXY is not read)")
}

// httpConfig is the client configuration the flags describe; errors name the flags.
func (c promClientFlags) httpConfig() (promconfig.HTTPClientConfig, error) {
	h := promconfig.DefaultHTTPClientConfig
	token := c.bearerToken != "" || c.bearerTokenFile != ""
	basic := c.username != "" || c.password != "" || c.passwordFile != ""
	switch {
	case c.bearerToken != "" && c.bearerTokenFile != "":
		return h, errors.New("--prometheus-bearer-token and --prometheus-bearer-token-file: give one (the file keeps the token out of the pod spec)")
	case c.password != "" && c.passwordFile != "":
		return h, errors.New("--password and --prometheus-password-file: give one (the file keeps the password out of the pod spec)")
	case token && basic:
		return h, errors.New("a bearer token and basic auth (--prometheus-username, --password) for Prometheus: give one of them")
	case basic && c.username == "":
		return h, errors.New("--password or --prometheus-password-file without --prometheus-username: give the user too")
	case (c.certFile == "") != (c.keyFile == ""):
		return h, errors.New("--prometheus-cert-file and --prometheus-key-file go together: give both for mutual TLS, or neither")
	}
	if token {
		h.Authorization = &promconfig.Authorization{Type: "Bearer", Credentials: promconfig.Secret(c.bearerToken), CredentialsFile: c.bearerTokenFile}
	}
	if basic {
		h.BasicAuth = &promconfig.BasicAuth{Username: c.username, Password: promconfig.Secret(c.password), PasswordFile: c.passwordFile}
	}
	h.TLSConfig = promconfig.TLSConfig{CAFile: c.caFile, CertFile: c.certFile, KeyFile: c.keyFile, ServerName: c.srvName, InsecureSkipVerify: c.insecure}
	if c.proxyURL != "" {
		u, err := url.Parse(c.proxyURL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return h, fmt.Errorf("--prometheus-proxy-url %q: want a URL such as http://proxy.example:3128", c.proxyURL)
		}
		h.ProxyURL = promconfig.URL{URL: u}
	}
	return h, nil
}

// prometheusHistory builds the Prometheus history provider from the flags.
func prometheusHistory(o runOptions) (usage.HistoryProvider, error) {
	p, err := o.prometheusConfig()
	if err != nil {
		return nil, err
	}
	return usage.NewPrometheus(p, time.Now)
}

// prometheusConfig is the Prometheus configuration the flags give; errors name the flags.
func (o runOptions) prometheusConfig() (usage.PrometheusConfig, error) {
	p := o.prometheus
	h, err := o.promClient.httpConfig()
	if err != nil {
		return p, err
	}
	p.HTTP = h
	if job := o.promClient.cadvisorJob; job != "" {
		def := usage.DefaultPrometheusConfig()
		if p.CPUQuery != def.CPUQuery || p.MemoryQuery != def.MemoryQuery {
			return p, fmt.Errorf("--prometheus-cadvisor-job-name=%s with --prometheus-cpu-query or --prometheus-memory-query: those are whole queries; put job=%q into their selectors instead", job, job)
		}
		p.CPUQuery, p.MemoryQuery = usage.CadvisorQueries(job)
	}
	return p, nil
}
