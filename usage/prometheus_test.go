package usage

import (
	"context"
	"encoding/pem"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	promconfig "github.com/prometheus/common/config"

	"github.com/hvpa-dev/hvpa/test/prometheus"
)

const mi = 1 << 20

// Played usage: CPU constant within each hour (0.2, 0.3, 0.4, 0.5 cores in turn), memory a baseline of 100,
// 110 or 120 MiB with a spike of half as much again at minute 17 of every hour.
func cpuAt(t time.Time) float64 { return 0.2 + 0.1*float64(t.Add(-time.Second).Hour()%4) }

func memBase(t time.Time) float64 { return float64(100+10*(t.Hour()%3)) * mi }

func memAt(t time.Time) float64 {
	if t.Minute() == 17 {
		return memBase(t) * 1.5
	}
	return memBase(t)
}

// history is 8 days of web-a (alive throughout) and web-old (gone three days before end), both of
// Deployment web through ReplicaSets.
func history(end time.Time, allowLabels bool) prometheus.History {
	pod := func(name, rs string, from, to time.Time) prometheus.Pod {
		return prometheus.Pod{Namespace: "shop", Name: name, Container: "app", ReplicaSet: rs, Deployment: "web",
			Labels: map[string]string{"app": "web"}, From: from, To: to, CPU: cpuAt, Memory: memAt}
	}
	return prometheus.History{AllowLabels: allowLabels, Pods: []prometheus.Pod{
		pod("web-a", "web-222", end.Add(-8*24*time.Hour), end),
		pod("web-old", "web-111", end.Add(-8*24*time.Hour), end.Add(-3*24*time.Hour)),
	}}
}

func startPrometheus(t *testing.T, h prometheus.History) *prometheus.Server {
	t.Helper()
	return startPrometheusWith(t, h.OpenMetrics())
}

// startPrometheusWith starts a Prometheus backfilled with OpenMetrics text.
func startPrometheusWith(t *testing.T, om []byte) *prometheus.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("runs a Prometheus server; runs in `make test`, not under -short")
	}
	s, err := prometheus.Start(context.Background(), t.TempDir(), prometheus.Options{Backfill: om})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// TestPrometheusHistory reads cAdvisor and kube-state-metrics v2 series from a real Prometheus: CPU is the
// mean of each hour, memory its peak (the spike, not the sample at the step), gone pods keep their history
// and are attributed to their Deployment through the owner series, pod labels come only with the allow-list.
func TestPrometheusHistory(t *testing.T) {
	end := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	for _, allow := range []bool{false, true} {
		s := startPrometheus(t, history(end, allow))
		cfg := DefaultPrometheusConfig()
		cfg.Address = s.URL
		p, err := NewPrometheus(cfg, func() time.Time { return end })
		if err != nil {
			t.Fatal(err)
		}
		got, err := p.History(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Pod != "web-a" || got[1].Pod != "web-old" {
			t.Fatalf("history of %d containers %+v, want web-a and web-old", len(got), got)
		}
		checkContainer(t, got[0], end, allow)
		checkContainer(t, got[1], end.Add(-3*24*time.Hour), allow)
		if last := got[1].CPU[len(got[1].CPU)-1].Time; last.After(end.Add(-3*24*time.Hour + time.Hour)) {
			t.Errorf("web-old's history ends at %s, after the pod went", last)
		}
	}
}

// TestPrometheusOwnersBestEffort: a failing owner query (here one Prometheus cannot parse) costs only what
// it adds: without the ReplicaSets' owners a pod's owner is its ReplicaSet, without the pods' owners there is
// none; the rest of the history is read (before, the whole history was dropped for either).
func TestPrometheusOwnersBestEffort(t *testing.T) {
	end := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	s := startPrometheus(t, history(end, false))
	cfg := DefaultPrometheusConfig()
	cfg.Address, cfg.ReplicaSetOwnerQuery = s.URL, "kube_replicaset_owner{"
	p, err := NewPrometheus(cfg, func() time.Time { return end })
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.History(context.Background())
	if err != nil {
		t.Fatalf("a failing owner query failed the history: %v", err)
	}
	if len(got) != 2 || len(got[0].CPU) == 0 || got[0].Owner != (Owner{Kind: "ReplicaSet", Name: "web-222"}) {
		t.Errorf("history %+v: want web-a and web-old with their samples, their owner their ReplicaSet", got)
	}
	cfg.PodOwnerQuery = "kube_pod_owner{" // both fail: no owner, the history still read
	if p, err = NewPrometheus(cfg, func() time.Time { return end }); err != nil {
		t.Fatal(err)
	}
	if got, err = p.History(context.Background()); err != nil || len(got) != 2 || got[0].Owner != (Owner{}) {
		t.Errorf("both owner queries failing: history %+v, %v; want web-a and web-old without owners", got, err)
	}
}

// checkContainer checks the history of a pod that went at to.
func checkContainer(t *testing.T, c ContainerHistory, to time.Time, allow bool) {
	t.Helper()
	if c.Owner != (Owner{Kind: "Deployment", Name: "web"}) || c.Step != time.Hour {
		t.Errorf("%s: owner %+v step %s, want Deployment web (through its ReplicaSet) and 1h", c.Pod, c.Owner, c.Step)
	}
	if allow != (c.Labels["app"] == "web") {
		t.Errorf("%s: labels %v with the allow-list %v", c.Pod, c.Labels, allow)
	}
	if len(c.CPU) < 24*5 || len(c.Memory) < 24*5 {
		t.Fatalf("%s: %d cpu and %d memory samples, want one per hour of its life", c.Pod, len(c.CPU), len(c.Memory))
	}
	for _, s := range c.CPU[1:] { // each is the mean of the hour before its step
		if want := cpuAt(s.Time); math.Abs(s.Value-want) > 1e-9 {
			t.Fatalf("%s: cpu at %s is %g, want the hour's mean %g", c.Pod, s.Time, s.Value, want)
		}
	}
	for _, s := range c.Memory[1:] { // each is the peak of the samples in the hour up to its step
		want := 0.0
		for m := time.Duration(0); m <= time.Hour; m += time.Minute {
			if at := s.Time.Add(-m); !at.After(to) {
				want = max(want, memAt(at))
			}
		}
		if s.Value != want {
			t.Fatalf("%s: memory at %s is %g, want the hour's peak %g (the sample at the step: %g)", c.Pod, s.Time, s.Value, want, memAt(s.Time))
		}
	}
}

// TestPrometheusClientOptions: TLS with a CA file, a bearer token from a file (re-read), basic auth, and
// errors that say what failed.
func TestPrometheusClientOptions(t *testing.T) {
	end := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	s := startPrometheus(t, history(end, false))
	backend, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	proxy := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
		if a := r.Header.Get("Authorization"); a != "Bearer s3cret" && a != "Basic dXNlcjpwdw==" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		httputil.NewSingleHostReverseProxy(backend).ServeHTTP(w, r)
	}))
	defer proxy.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.crt")
	writeFile(t, ca, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: proxy.Certificate().Raw})))
	token := filepath.Join(dir, "token")
	writeFile(t, token, "s3cret\n")
	password := filepath.Join(dir, "password")
	writeFile(t, password, "pw")

	tlsCA := promconfig.TLSConfig{CAFile: ca}
	for name, tc := range map[string]struct {
		http promconfig.HTTPClientConfig
		want string // "" works, else in the error
	}{
		"bearer token file and CA": {promconfig.HTTPClientConfig{TLSConfig: tlsCA, Authorization: &promconfig.Authorization{Type: "Bearer", CredentialsFile: token}}, ""},
		"basic auth":               {promconfig.HTTPClientConfig{TLSConfig: tlsCA, BasicAuth: &promconfig.BasicAuth{Username: "user", PasswordFile: password}}, ""},
		"no CA":                    {promconfig.HTTPClientConfig{Authorization: &promconfig.Authorization{Type: "Bearer", CredentialsFile: token}}, "certificate"},
		"insecure":                 {promconfig.HTTPClientConfig{TLSConfig: promconfig.TLSConfig{InsecureSkipVerify: true}, Authorization: &promconfig.Authorization{Type: "Bearer", Credentials: "s3cret"}}, ""},
		"wrong token":              {promconfig.HTTPClientConfig{TLSConfig: tlsCA, Authorization: &promconfig.Authorization{Type: "Bearer", Credentials: "nope"}}, "401"},
	} {
		cfg := DefaultPrometheusConfig()
		cfg.Address, cfg.HTTP = proxy.URL, tc.http
		p, err := NewPrometheus(cfg, func() time.Time { return end })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := p.History(context.Background())
		if tc.want == "" && (err != nil || len(got) != 2) {
			t.Errorf("%s: %d containers, %v", name, len(got), err)
		}
		if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
	if len(seen) == 0 {
		t.Fatal("no request reached the TLS front")
	}
}

// TestPrometheusDown: a Prometheus that does not answer is an error naming the query.
func TestPrometheusDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close()
	cfg := DefaultPrometheusConfig()
	cfg.Address, cfg.Timeout = addr, 5*time.Second
	p, err := NewPrometheus(cfg, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.History(context.Background()); err == nil || !strings.Contains(err.Error(), "container_cpu_usage_seconds_total") {
		t.Errorf("Prometheus down: %v, want an error naming the query", err)
	}
	cfg.Address = ""
	if _, err := NewPrometheus(cfg, time.Now); err == nil || !strings.Contains(err.Error(), "--prometheus-address") {
		t.Errorf("no address: %v", err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPrometheusUpstreamLabelNames: upstream VPA's --prometheus-cadvisor-job-name reads only that job's cAdvisor
// series, and --pod-namespace-label / --pod-name-label read the pod-labels series under other label names (as
// upstream's up{job="kubernetes-pods"} with kubernetes_namespace and kubernetes_pod_name), on a real Prometheus.
func TestPrometheusUpstreamLabelNames(t *testing.T) {
	end := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	s := startPrometheus(t, history(end, true))
	history := func(mutate func(*PrometheusConfig)) ([]ContainerHistory, error) {
		t.Helper()
		cfg := DefaultPrometheusConfig()
		cfg.Address = s.URL
		mutate(&cfg)
		p, err := NewPrometheus(cfg, func() time.Time { return end })
		if err != nil {
			t.Fatal(err)
		}
		return p.History(context.Background())
	}
	read := func(mutate func(*PrometheusConfig)) []ContainerHistory {
		t.Helper()
		got, err := history(mutate)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	// no series: an error (the checkpoints are loaded instead), naming the flag
	if got, err := history(func(c *PrometheusConfig) { c.CPUQuery, c.MemoryQuery = c.CadvisorQueries("kubernetes-cadvisor") }); err == nil || !strings.Contains(err.Error(), "--prometheus-cadvisor-job-name") {
		t.Errorf("job kubernetes-cadvisor (the series are the kubelet job's): %d containers, %v; want an error naming --prometheus-cadvisor-job-name", len(got), err)
	}
	if got := read(func(c *PrometheusConfig) { c.CPUQuery, c.MemoryQuery = c.CadvisorQueries("kubelet") }); len(got) != 2 {
		t.Errorf("job kubelet: %d containers, want 2", len(got))
	}
	// the pod labels under upstream's label names only
	upstreamNames := `sum by (kubernetes_namespace, kubernetes_pod_name, label_app) (label_replace(label_replace(kube_pod_labels, "kubernetes_namespace", "$1", "namespace", "(.*)"), "kubernetes_pod_name", "$1", "pod", "(.*)"))`
	got := read(func(c *PrometheusConfig) { c.PodLabelsQuery = upstreamNames })
	if len(got) != 2 || got[0].Labels["app"] != "" {
		t.Fatalf("pod labels under other names, without the label flags: %+v, want none found", got)
	}
	got = read(func(c *PrometheusConfig) {
		c.PodLabelsQuery, c.PodLabelsNamespaceLabel, c.PodLabelsPodLabel = upstreamNames, "kubernetes_namespace", "kubernetes_pod_name"
	})
	if len(got) != 2 || got[0].Labels["app"] != "web" || got[1].Labels["app"] != "web" {
		t.Errorf("pod labels with --pod-namespace-label and --pod-name-label: %+v, want app=web for both pods", got)
	}
}
