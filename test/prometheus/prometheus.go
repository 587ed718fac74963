// Package prometheus runs a real Prometheus server for tests: the binary `make prometheus` unpacks from
// Debian's package (hack/prometheus.sh), on a loopback port, with the scrape configuration and the
// backfilled history a test gives (promtool tsdb create-blocks-from openmetrics). It is part of the test
// kit: the product never imports it.
package prometheus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"

	"github.com/hvpa-dev/hvpa/test/testenv"
)

// BinDir is the folder with prometheus and promtool: $HVPA_PROMETHEUS_BIN, or the one `make prometheus` fills.
func BinDir() (string, error) {
	dir := os.Getenv("HVPA_PROMETHEUS_BIN")
	if dir == "" {
		root, err := testenv.ModuleRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, ".cache", "prometheus", "usr", "bin")
	}
	for _, b := range []string{"prometheus", "promtool"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", fmt.Errorf("prometheus: %s not found in %s: run `make prometheus` (or set HVPA_PROMETHEUS_BIN)", b, dir)
		}
	}
	return dir, nil
}

// ScrapeConfig is one scrape job (Prometheus' scrape_config, the fields tests use).
type ScrapeConfig struct {
	JobName        string         `json:"job_name"`
	ScrapeInterval string         `json:"scrape_interval,omitempty"`
	Scheme         string         `json:"scheme,omitempty"`
	MetricsPath    string         `json:"metrics_path,omitempty"`
	StaticConfigs  []StaticConfig `json:"static_configs"`
	// HonorLabels keeps the target's own job and instance labels.
	HonorLabels bool `json:"honor_labels,omitempty"`
	// TLSConfig and Authorization are passed through as Prometheus reads them.
	TLSConfig     map[string]any `json:"tls_config,omitempty"`
	Authorization map[string]any `json:"authorization,omitempty"`
}

// StaticConfig is a list of targets with labels.
type StaticConfig struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels,omitempty"`
}

// Options configure a server.
type Options struct {
	// Scrape are the scrape jobs (none: Prometheus only serves what was backfilled).
	Scrape []ScrapeConfig
	// ScrapeInterval is the global scrape and evaluation interval (default 1s: tests are short).
	ScrapeInterval time.Duration
	// Backfill is OpenMetrics text with timestamps (ending in "# EOF") turned into TSDB blocks before the
	// server starts.
	Backfill []byte
	// Retention keeps samples this long (default 30d, so that backfilled weeks stay).
	Retention time.Duration
	// Args are extra flags of the server.
	Args []string
}

// Server is a running Prometheus.
type Server struct {
	// URL is the HTTP API's base, e.g. http://127.0.0.1:40123.
	URL string
	// API queries it.
	API     promv1.API
	DataDir string
	cmd     *exec.Cmd
	log     *bytes.Buffer
	exited  chan error
}

// Start starts a server in a new folder under dir (a test's TempDir).
func Start(ctx context.Context, dir string, o Options) (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	s := &Server{DataDir: filepath.Join(dir, "data"), log: &bytes.Buffer{}, exited: make(chan error, 1)}
	if err := os.MkdirAll(s.DataDir, 0o755); err != nil {
		return nil, err
	}
	if len(o.Backfill) > 0 {
		if err := backfill(ctx, bin, dir, s.DataDir, o.Backfill); err != nil {
			return nil, err
		}
	}
	cfgPath, err := writeConfig(dir, o)
	if err != nil {
		return nil, err
	}
	port, err := testenv.FreePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.URL = "http://" + addr
	retention := o.Retention
	if retention == 0 {
		retention = 30 * 24 * time.Hour
	}
	args := append([]string{"--config.file=" + cfgPath, "--storage.tsdb.path=" + s.DataDir, "--web.listen-address=" + addr,
		"--storage.tsdb.retention.time=" + model.Duration(retention).String(), "--web.enable-lifecycle", "--log.level=warn"}, o.Args...)
	s.cmd = exec.Command(filepath.Join(bin, "prometheus"), args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	c, err := promapi.NewClient(promapi.Config{Address: s.URL})
	if err != nil {
		s.Stop()
		return nil, err
	}
	s.API = promv1.NewAPI(c)
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func writeConfig(dir string, o Options) (string, error) {
	interval := o.ScrapeInterval
	if interval == 0 {
		interval = time.Second
	}
	cfg := map[string]any{
		"global":         map[string]any{"scrape_interval": model.Duration(interval).String(), "evaluation_interval": model.Duration(interval).String()},
		"scrape_configs": o.Scrape,
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "prometheus.yml")
	return path, os.WriteFile(path, data, 0o644)
}

// backfill writes openMetrics into TSDB blocks in data with promtool.
func backfill(ctx context.Context, bin, dir, data string, openMetrics []byte) error {
	in := filepath.Join(dir, "backfill.om")
	if err := os.WriteFile(in, openMetrics, 0o644); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, filepath.Join(bin, "promtool"), "tsdb", "create-blocks-from", "openmetrics", in, data).CombinedOutput()
	if err != nil {
		return fmt.Errorf("promtool tsdb create-blocks-from openmetrics: %w\n%s", err, out)
	}
	return nil
}

// waitReady waits until /-/ready answers 200 (the TSDB is open, blocks loaded).
func (s *Server) waitReady(ctx context.Context) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.exited:
			return fmt.Errorf("prometheus exited: %w\n%s", err, s.log)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(s.URL + "/-/ready")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("prometheus not ready at %s within 60s:\n%s", s.URL, s.log)
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s); a stopped server stays stopped.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited: //nolint:errcheck // stopped on purpose: its exit status is the signal's
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited //nolint:errcheck // killed on purpose: its exit status is the kill's
	}
	s.cmd = nil
}

// Log is what the server printed.
func (s *Server) Log() string { return s.log.String() }

// Query evaluates q at t.
func (s *Server) Query(ctx context.Context, q string, t time.Time) (model.Value, error) {
	v, warnings, err := s.API.Query(ctx, q, t)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", q, err)
	}
	if len(warnings) > 0 {
		return v, fmt.Errorf("query %q: warnings %v", q, warnings)
	}
	return v, nil
}

// WaitForSeries waits until q returns at least one series (a scrape landed), or timeout.
func (s *Server) WaitForSeries(ctx context.Context, q string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		v, err := s.Query(ctx, q, time.Now())
		if err == nil && nonEmpty(v) {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.Join(fmt.Errorf("no series for %q within %s", q, timeout), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func nonEmpty(v model.Value) bool {
	switch x := v.(type) {
	case model.Vector:
		return len(x) > 0
	case model.Matrix:
		return len(x) > 0
	case *model.Scalar:
		return x != nil
	}
	return false
}
