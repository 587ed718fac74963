package usage

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"
)

// editFamilies rewrites OpenMetrics text a metric family at a time: edit gets a family's name and its sample
// lines and returns the lines to write instead (a family's series stay together, as promtool wants them).
func editFamilies(om []byte, edit func(family string, lines []string) []string) []byte {
	var b strings.Builder
	family, lines := "", []string(nil)
	flush := func() {
		for _, l := range edit(family, lines) {
			b.WriteString(l + "\n")
		}
		lines = nil
	}
	for _, l := range strings.Split(strings.TrimSuffix(string(om), "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "# TYPE "), l == "# EOF":
			flush()
			b.WriteString(l + "\n")
			if f := strings.Fields(l); len(f) > 2 {
				family = f[2]
			}
		default:
			lines = append(lines, l)
		}
	}
	return []byte(b.String())
}

// cadvisorFamily: the family holds cAdvisor's CPU or memory series.
func cadvisorFamily(family string) bool {
	return family == "container_cpu_usage_seconds" || family == "container_memory_working_set_bytes"
}

// TestPrometheusCadvisorScrapedTwice: a container's cAdvisor series scraped twice (the kubelet's
// /metrics/cadvisor and /metrics/resource, both read by the default of every job) are its usage once, not
// twice (the default CPU query summed them).
func TestPrometheusCadvisorScrapedTwice(t *testing.T) {
	end := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	om := editFamilies(history(end, true).OpenMetrics(), func(family string, lines []string) []string {
		if !cadvisorFamily(family) {
			return lines
		}
		out := lines
		for _, l := range lines {
			out = append(out, strings.Replace(l, `metrics_path="/metrics/cadvisor"`, `metrics_path="/metrics/resource"`, 1))
		}
		return out
	})
	s := startPrometheusWith(t, om)
	got := readHistory(t, s.URL, end, func(*PrometheusConfig) {})
	if len(got) != 2 {
		t.Fatalf("history of %d containers, want web-a and web-old", len(got))
	}
	checkContainer(t, got[0], end, true)
	checkContainer(t, got[1], end.Add(-3*24*time.Hour), true)
}

// TestPrometheusContainerLabelNames: with the namespace, pod and container under other label names (upstream
// VPA's --container-*-label flags, e.g. cAdvisor's older pod_name and name), the default queries written with
// them read the same history, and the owners (kube-state-metrics' series, whose names do not change) still
// count. Queries whose series carry none of the names are an error naming the flags, not an empty history.
func TestPrometheusContainerLabelNames(t *testing.T) {
	end := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	om := editFamilies(history(end, true).OpenMetrics(), func(family string, lines []string) []string {
		if !cadvisorFamily(family) {
			return lines
		}
		out := make([]string, 0, len(lines))
		for _, l := range lines {
			out = append(out, strings.NewReplacer(`,pod="`, `,pod_name="`, `,container="`, `,name="`).Replace(l))
		}
		return out
	})
	s := startPrometheusWith(t, om)
	got := readHistory(t, s.URL, end, func(c *PrometheusConfig) {
		c.PodLabel, c.ContainerLabel, c.PodLabelsPodLabel = "pod_name", "name", "pod"
		c.CPUQuery, c.MemoryQuery = c.CadvisorQueries("")
	})
	if len(got) != 2 {
		t.Fatalf("history of %d containers, want web-a and web-old", len(got))
	}
	checkContainer(t, got[0], end, true)
	checkContainer(t, got[1], end.Add(-3*24*time.Hour), true)

	cfg := DefaultPrometheusConfig()
	cfg.Address, cfg.CPUQuery = s.URL, `rate(container_cpu_usage_seconds_total[$RESOLUTION])`
	p, err := NewPrometheus(cfg, func() time.Time { return end })
	if err != nil {
		t.Fatal(err)
	}
	h, err := p.History(context.Background())
	if err == nil || !strings.Contains(err.Error(), "--prometheus-container-label") || !strings.Contains(err.Error(), `pod_name="web-`) {
		t.Errorf("series without the label names: %d containers, %v; want an error naming the flags and a series", len(h), err)
	}
}

// TestPrometheusPodLabelsQueries: the pod-labels query in upstream VPA's form, a range vector, is evaluated at
// the end of the history (Prometheus refuses it in a range query), and in every form a pod relabelled during
// the history has the labels of its newest series, not the union of all of them.
func TestPrometheusPodLabelsQueries(t *testing.T) {
	end := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	om := editFamilies(history(end, true).OpenMetrics(), func(family string, lines []string) []string {
		if family != "kube_pod_labels" {
			return lines
		}
		// web-a's labels until two days ago
		for at := end.Add(-8 * 24 * time.Hour); !at.After(end.Add(-2 * 24 * time.Hour)); at = at.Add(5 * time.Minute) {
			lines = append(lines, fmt.Sprintf(`kube_pod_labels{namespace="shop",pod="web-a",label_app="web-old",label_canary="true"} 1 %d`, at.Unix()))
		}
		return lines
	})
	s := startPrometheusWith(t, om)
	for _, q := range []string{
		`kube_pod_labels`,
		`kube_pod_labels{namespace="shop"}[8d]`,
		`(kube_pod_labels[8d])`,
		`kube_pod_labels[8d:1h]`,
	} {
		got := readHistory(t, s.URL, end, func(c *PrometheusConfig) { c.PodLabelsQuery = q })
		want := map[string]string{"app": "web"}
		if len(got) != 2 || !maps.Equal(got[0].Labels, want) || !maps.Equal(got[1].Labels, want) {
			t.Errorf("%s: labels %v, want %v for both pods (web-a's newest series)", q, labelsOf(got), want)
		}
	}
}

func labelsOf(hs []ContainerHistory) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, h := range hs {
		out[h.Pod] = h.Labels
	}
	return out
}

// readHistory reads the history from the Prometheus at url with the default configuration mutate changes.
func readHistory(t *testing.T, url string, end time.Time, mutate func(*PrometheusConfig)) []ContainerHistory {
	t.Helper()
	cfg := DefaultPrometheusConfig()
	cfg.Address = url
	mutate(&cfg)
	p, err := NewPrometheus(cfg, func() time.Time { return end })
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.History(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestRangeVector: which pod-labels queries run as an instant query (range vectors) and which over the history.
func TestRangeVector(t *testing.T) {
	for q, want := range map[string]bool{
		`kube_pod_labels`:                                            false,
		`up{job="kubernetes-pods"}`:                                  false,
		`kube_pod_labels{job="kube-state-metrics"}[8d]`:              true,
		`(kube_pod_labels[1w])`:                                      true,
		`kube_pod_labels[8d:1h]`:                                     true,
		`last_over_time(kube_pod_labels[8d])`:                        false,
		`max by (namespace, pod, label_app) (kube_pod_labels)`:       false,
		`kube_pod_labels[8d] offset 1h`:                              true,
		`kube_pod_labels[`:                                           false, // refused: Prometheus says why
		`label_replace(kube_pod_labels, "a", "$1", "pod", "(.*)")`:   false,
		`{__name__="kube_pod_labels", "k8s.namespace.name"!=""}[1d]`: true,
	} {
		if got := rangeVector(q); got != want {
			t.Errorf("%s: range vector %v, want %v", q, got, want)
		}
	}
}

// TestNewerSeries: the series with the later last sample is newer; at the same time the choice depends on
// the labels alone, never on the order of the two.
func TestNewerSeries(t *testing.T) {
	stream := func(app string, last model.Time) *model.SampleStream {
		return &model.SampleStream{Metric: model.Metric{"label_app": model.LabelValue(app)}, Values: []model.SamplePair{{Timestamp: 0, Value: 1}, {Timestamp: last, Value: 1}}}
	}
	for name, tc := range map[string]struct {
		a, b *model.SampleStream
		want bool
	}{
		"later":                   {stream("a", 2000), stream("b", 1000), true},
		"earlier":                 {stream("a", 1000), stream("b", 2000), false},
		"same time, labels first": {stream("a", 1000), stream("b", 1000), true},
		"same time, labels later": {stream("b", 1000), stream("a", 1000), false},
		"same series":             {stream("a", 1000), stream("a", 1000), false},
	} {
		if got := newerSeries(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

// TestCadvisorQueries: the default queries are written with the configured label names (quoted where they are
// no classic names) and the job, and Prometheus' parser takes them.
func TestCadvisorQueries(t *testing.T) {
	for name, tc := range map[string]struct {
		ns, pod, container, job string
		want                    []string // in both queries
	}{
		"defaults":          {"namespace", "pod", "container", "", []string{`max by (namespace, pod, container) (`, `{container!="", container!="POD", pod!=""}`}},
		"upstream's old":    {"namespace", "pod_name", "name", "kubernetes-cadvisor", []string{`max by (namespace, pod_name, name) (`, `{job="kubernetes-cadvisor", name!="", name!="POD", pod_name!=""}`}},
		"UTF-8 label names": {"k8s.namespace.name", "k8s.pod.name", "k8s.container.name", "", []string{`max by ("k8s.namespace.name", "k8s.pod.name", "k8s.container.name") (`, `{"k8s.container.name"!="", "k8s.container.name"!="POD", "k8s.pod.name"!=""}`}},
	} {
		c := DefaultPrometheusConfig()
		c.NamespaceLabel, c.PodLabel, c.ContainerLabel = tc.ns, tc.pod, tc.container
		cpu, memory := c.CadvisorQueries(tc.job)
		for _, q := range []string{cpu, memory} {
			for _, w := range tc.want {
				if !strings.Contains(q, w) {
					t.Errorf("%s: %s, want %s in it", name, q, w)
				}
			}
			if _, err := promql.ParseExpr(strings.ReplaceAll(q, "$RESOLUTION", "1h")); err != nil {
				t.Errorf("%s: %s: %v", name, q, err)
			}
		}
	}
}
