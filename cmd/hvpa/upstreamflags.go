package main

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
	"time"

	promodel "github.com/prometheus/common/model"
	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/api/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/hvpa-dev/hvpa/recommender"
)

// promDuration is a time.Duration flag that also takes Prometheus' duration format ("8d", "1w", "1d12h"), as
// upstream VPA's --history-length and --history-resolution do.
type promDuration time.Duration

func (d *promDuration) String() string { return promodel.Duration(*d).String() }
func (d *promDuration) Type() string   { return "duration" }
func (d *promDuration) Set(s string) error {
	if v, err := time.ParseDuration(s); err == nil {
		*d = promDuration(v)
		return nil
	}
	v, err := promodel.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is no duration: use Go's (90m, 192h) or Prometheus' format (8d, 1w)", s)
	}
	*d = promDuration(v)
	return nil
}

// modelFlags are upstream VPA recommender's model flags, with its names and meanings: the defaults of every
// VerticalPodAutoscaler and Hvpa (their recommender.hvpa.dev/ annotations override them per object).
type modelFlags struct {
	cfg                            recommender.Config
	podMinCPUMilli, podMinMemoryMB float64
	targetCPU, targetMemory        float64
	lowerCPU, lowerMemory          float64
	upperCPU, upperMemory          float64
	roundCPU, roundMemory          int64
	memoryAggregationCount         int
}

func (m *modelFlags) register(f *pflag.FlagSet) {
	d := recommender.Defaults()
	m.cfg = d
	f.Float64Var(&m.cfg.SafetyMargin, "recommendation-margin-fraction", d.SafetyMargin, "fraction of usage added as the safety margin to the target and bounds (upstream VPA's flag)")
	f.Float64Var(&m.podMinCPUMilli, "pod-recommendation-min-cpu-millicores", d.PodMinCPU*1000, "smallest CPU recommendation for a pod, in millicores, split across its containers (upstream VPA's flag); an Hvpa's totals from the load are at least its share per pod")
	f.Float64Var(&m.podMinMemoryMB, "pod-recommendation-min-memory-mb", d.PodMinMemory/(1<<20), "smallest memory recommendation for a pod, in MiB, split across its containers (upstream VPA's flag); an Hvpa's totals from the load are at least its share per pod")
	f.Float64Var(&m.targetCPU, "target-cpu-percentile", d.TargetPercentile, "usage percentile of the CPU target (upstream VPA's flag; hvpa's model takes one target percentile: set target-memory-percentile to the same value)")
	f.Float64Var(&m.targetMemory, "target-memory-percentile", d.TargetPercentile, "usage percentile of the memory target (upstream VPA's flag; equal to --target-cpu-percentile)")
	f.Float64Var(&m.lowerCPU, "recommendation-lower-bound-cpu-percentile", d.LowerBoundPercentile, "usage percentile of the CPU lower bound (upstream VPA's flag; equal to the memory one)")
	f.Float64Var(&m.lowerMemory, "recommendation-lower-bound-memory-percentile", d.LowerBoundPercentile, "usage percentile of the memory lower bound (upstream VPA's flag; equal to the CPU one)")
	f.Float64Var(&m.upperCPU, "recommendation-upper-bound-cpu-percentile", d.UpperBoundPercentile, "usage percentile of the CPU upper bound (upstream VPA's flag; equal to the memory one)")
	f.Float64Var(&m.upperMemory, "recommendation-upper-bound-memory-percentile", d.UpperBoundPercentile, "usage percentile of the memory upper bound (upstream VPA's flag; equal to the CPU one)")
	f.DurationVar(&m.cfg.CPUHalfLife, "cpu-histogram-decay-half-life", d.CPUHalfLife, "a CPU sample this much older weighs half as much (upstream VPA's flag)")
	f.DurationVar(&m.cfg.MemoryHalfLife, "memory-histogram-decay-half-life", d.MemoryHalfLife, "a memory peak this much older weighs half as much (upstream VPA's flag)")
	f.DurationVar(&m.cfg.MemoryAggregationInterval, "memory-aggregation-interval", d.MemoryAggregationInterval, "length of one memory peak window (upstream VPA's flag)")
	f.IntVar(&m.memoryAggregationCount, "memory-aggregation-interval-count", d.MemoryAggregationIntervalCount, "memory peak windows that make the memory history (upstream VPA's flag)")
	f.Float64Var(&m.cfg.OOMBumpUpRatio, "oom-bump-up-ratio", d.OOMBumpUpRatio, "memory after an OOM kill is at least this times what the container used (upstream VPA's flag)")
	f.Float64Var(&m.cfg.OOMMinBumpUp, "oom-min-bump-up-bytes", d.OOMMinBumpUp, "memory after an OOM kill is at least this many bytes more than the container used (upstream VPA's flag)")
	f.Int64Var(&m.roundCPU, "round-cpu-millicores", d.RoundCPUMillicores, "round CPU recommendations up to a multiple of this many millicores (upstream VPA's flag)")
	f.Int64Var(&m.roundMemory, "round-memory-bytes", d.RoundMemoryBytes, "round memory recommendations up to a multiple of this many bytes (upstream VPA's flag)")
}

// model returns the model configuration the flags give, nil when none was set (recommender.Defaults()), or an
// error naming the flag.
func (m *modelFlags) model() (*recommender.Config, error) {
	if err := m.ranges(); err != nil {
		return nil, fmt.Errorf("recommender model flags: %w", err)
	}
	pairs := []struct {
		a, b   string
		va, vb float64
		dst    *float64
	}{
		{"target-cpu-percentile", "target-memory-percentile", m.targetCPU, m.targetMemory, &m.cfg.TargetPercentile},
		{"recommendation-lower-bound-cpu-percentile", "recommendation-lower-bound-memory-percentile", m.lowerCPU, m.lowerMemory, &m.cfg.LowerBoundPercentile},
		{"recommendation-upper-bound-cpu-percentile", "recommendation-upper-bound-memory-percentile", m.upperCPU, m.upperMemory, &m.cfg.UpperBoundPercentile},
	}
	for _, p := range pairs {
		if p.va != p.vb {
			return nil, fmt.Errorf("--%s=%g and --%s=%g: hvpa's model takes one percentile for CPU and memory; set both to the same value", p.a, p.va, p.b, p.vb)
		}
		*p.dst = p.va
	}
	m.cfg.PodMinCPU = m.podMinCPUMilli / 1000
	m.cfg.PodMinMemory = m.podMinMemoryMB * (1 << 20)
	m.cfg.MemoryAggregationIntervalCount = m.memoryAggregationCount
	m.cfg.RoundCPUMillicores, m.cfg.RoundMemoryBytes = m.roundCPU, m.roundMemory
	if m.cfg == recommender.Defaults() {
		return nil, nil
	}
	if err := m.cfg.Validate(); err != nil {
		return nil, fmt.Errorf("recommender model flags: %w", err)
	}
	c := m.cfg
	return &c, nil
}

// How hvpa takes one of upstream VPA's flags.
const (
	// same: hvpa has a flag of this name with upstream's meaning.
	same = "same"
	// alias: another name of hvpa's flag (upstreamFlag.hvpa) with upstream's meaning.
	alias = "alias"
	// ignored: accepted, with no effect; a warning at start names it and why.
	ignored = "ignored"
	// refused: accepted at upstream's default only; another value is an error naming the flag and the fix.
	refused = "refused"
	// differs: hvpa has a flag of this name with another meaning (upstreamFlag.why says which).
	differs = "differs"
)

// upstreamFlag is one flag of upstream VPA's recommender, updater or admission controller (v1.8.1, with the
// leader-election and klog flags their binaries take), and how hvpa run takes it.
type upstreamFlag struct {
	name, components string
	how, hvpa        string
	bool             bool   // a boolean flag (--name alone means true)
	def              string // upstream's default (refused flags: the one value taken)
	why              string
}

// upstreamFlags is every upstream flag, by component: docs/migrating-from-vpa.md is generated from it and a
// test checks it against the flags upstream's module declares.
var upstreamFlags = []upstreamFlag{
	{name: "kubeconfig", components: "all", how: same},
	{name: "kube-api-qps", components: "all", how: same, why: "hvpa's default is 200 (upstream: 5)"},
	{name: "kube-api-burst", components: "all", how: same, why: "hvpa's default is 300 (upstream: 10)"},
	{name: "profiling", components: "all", how: same, bool: true},
	{name: "vpa-object-namespace", components: "all", how: alias, hvpa: "namespaces", why: "hvpa's recommender serves the VerticalPodAutoscalers of these namespaces, and reads only their Prometheus history (as upstream narrows its queries)"},
	{name: "ignored-vpa-object-namespaces", components: "all", how: alias, hvpa: "exclude-namespaces"},
	{name: "feature-gates", components: "all", how: same, why: "upstream's gates InPlace, CPUStartupBoost and PerVPAConfig, with upstream's meaning"},
	{name: "address", components: "all", how: alias, hvpa: "metrics-bind-address", why: "one process serves the metrics of every component it runs"},
	{name: "v", components: "all", how: same, why: "klog's verbosity N is zap's level -N (--zap-log-level=N)"},
	{name: "leader-elect", components: "recommender, updater", how: same, bool: true, why: "hvpa's default is true (upstream: false)"},
	{name: "leader-elect-lease-duration", components: "recommender, updater", how: same},
	{name: "leader-elect-renew-deadline", components: "recommender, updater", how: same},
	{name: "leader-elect-retry-period", components: "recommender, updater", how: same},
	{name: "leader-elect-resource-name", components: "recommender, updater", how: alias, hvpa: "leader-election-id"},
	{name: "leader-elect-resource-namespace", components: "recommender, updater", how: alias, hvpa: "leader-election-namespace"},
	{name: "leader-elect-resource-lock", components: "recommender, updater", how: ignored, def: "leases", why: "hvpa always elects with a Lease"},

	{name: "recommender-name", components: "recommender", how: same},
	{name: "recommender-interval", components: "recommender", how: same},
	{name: "checkpoints-gc-interval", components: "recommender", how: same},
	{name: "checkpoints-timeout", components: "recommender", how: same},
	{name: "storage", components: "recommender", how: same},
	{name: "memory-saver", components: "recommender", how: same, bool: true},
	{name: "update-worker-count", components: "recommender", how: same},
	{name: "min-checkpoints", components: "recommender", how: ignored, def: "10", why: "deprecated upstream too; hvpa spreads checkpoints by --checkpoint-period"},
	{name: "recommendation-margin-fraction", components: "recommender", how: same},
	{name: "pod-recommendation-min-cpu-millicores", components: "recommender", how: same},
	{name: "pod-recommendation-min-memory-mb", components: "recommender", how: same},
	{name: "target-cpu-percentile", components: "recommender", how: same, why: "one percentile for CPU and memory: must equal --target-memory-percentile"},
	{name: "target-memory-percentile", components: "recommender", how: same, why: "must equal --target-cpu-percentile"},
	{name: "recommendation-lower-bound-cpu-percentile", components: "recommender", how: same, why: "must equal the memory one"},
	{name: "recommendation-lower-bound-memory-percentile", components: "recommender", how: same, why: "must equal the CPU one"},
	{name: "recommendation-upper-bound-cpu-percentile", components: "recommender", how: same, why: "must equal the memory one"},
	{name: "recommendation-upper-bound-memory-percentile", components: "recommender", how: same, why: "must equal the CPU one"},
	{name: "confidence-interval-cpu", components: "recommender", how: refused, def: "24h0m0s", why: "hvpa's confidence is days of history: leave it at 24h"},
	{name: "confidence-interval-memory", components: "recommender", how: refused, def: "24h0m0s", why: "hvpa's confidence is days of history: leave it at 24h"},
	{name: "humanize-memory", components: "recommender", how: ignored, bool: true, def: "false", why: "deprecated upstream; hvpa writes memory in bytes"},
	{name: "round-cpu-millicores", components: "recommender", how: same},
	{name: "round-memory-bytes", components: "recommender", how: same},
	{name: "memory-aggregation-interval", components: "recommender", how: same},
	{name: "memory-aggregation-interval-count", components: "recommender", how: same},
	{name: "memory-histogram-decay-half-life", components: "recommender", how: same},
	{name: "cpu-histogram-decay-half-life", components: "recommender", how: same},
	{name: "oom-bump-up-ratio", components: "recommender", how: same},
	{name: "oom-min-bump-up-bytes", components: "recommender", how: same},
	{name: "cpu-integer-post-processor-enabled", components: "recommender", how: same, why: "with the VPA annotation vpa-post-processor.kubernetes.io/<container>_integerCPU: \"true\", as upstream"},
	{name: "container-recommendation-max-allowed-cpu", components: "recommender", how: same, why: "a VerticalPodAutoscaler's own maxAllowed takes precedence; Hvpas are bounded by their intervals"},
	{name: "container-recommendation-max-allowed-memory", components: "recommender", how: same, why: "a VerticalPodAutoscaler's own maxAllowed takes precedence; Hvpas are bounded by their intervals"},
	{name: "use-external-metrics", components: "recommender", how: refused, bool: true, def: "false", why: "hvpa reads usage from metrics.k8s.io (and history from Prometheus)"},
	{name: "external-metrics-cpu-metric", components: "recommender", how: ignored, def: "", why: "only with --use-external-metrics"},
	{name: "external-metrics-memory-metric", components: "recommender", how: ignored, def: "", why: "only with --use-external-metrics"},
	{name: "prometheus-address", components: "recommender", how: same},
	{name: "prometheus-insecure", components: "recommender", how: same, why: "hvpa also takes --prometheus-ca-file, --prometheus-cert-file and --prometheus-key-file"},
	{name: "prometheus-cadvisor-job-name", components: "recommender", how: same, why: "hvpa's default is empty (every job; upstream: kubernetes-cadvisor); refused with --prometheus-cpu-query or --prometheus-memory-query, which are whole queries"},
	{name: "history-length", components: "recommender", how: same, why: "Go's or Prometheus' duration format (8d)"},
	{name: "history-resolution", components: "recommender", how: same, why: "Go's or Prometheus' duration format"},
	{name: "history-cpu-metric", components: "recommender", how: same, why: "the metric of the default CPU query; refused with --prometheus-cpu-query, a whole query"},
	{name: "history-memory-metric", components: "recommender", how: same, why: "the metric of the default memory query; refused with --prometheus-memory-query, a whole query"},
	{name: "prometheus-query-timeout", components: "recommender", how: alias, hvpa: "prometheus-timeout"},
	{name: "pod-label-prefix", components: "recommender", how: alias, hvpa: "prometheus-pod-label-prefix"},
	{name: "metric-for-pod-labels", components: "recommender", how: alias, hvpa: "prometheus-pod-labels-query"},
	{name: "pod-namespace-label", components: "recommender", how: same, why: "the namespace label of the pod-labels series; hvpa's default is --prometheus-namespace-label's (upstream: kubernetes_namespace)"},
	{name: "pod-name-label", components: "recommender", how: same, why: "the pod label of the pod-labels series; hvpa's default is --prometheus-pod-label's (upstream: kubernetes_pod_name)"},
	{name: "container-namespace-label", components: "recommender", how: alias, hvpa: "prometheus-namespace-label"},
	{name: "container-pod-name-label", components: "recommender", how: alias, hvpa: "prometheus-pod-label"},
	{name: "container-name-label", components: "recommender", how: alias, hvpa: "prometheus-container-label"},
	{name: "username", components: "recommender", how: alias, hvpa: "prometheus-username"},
	{name: "password", components: "recommender", how: same, why: "hvpa also takes --prometheus-password-file"},
	{name: "prometheus-bearer-token", components: "recommender", how: same},
	{name: "prometheus-bearer-token-file", components: "recommender", how: same, why: "wins over --prometheus-bearer-token, as upstream"},

	{name: "updater-interval", components: "updater", how: same},
	{name: "min-replicas", components: "updater", how: same},
	{name: "eviction-tolerance", components: "updater", how: same, why: "above 1 is refused at start (upstream's then disrupts every replica in one loop)"},
	{name: "eviction-rate-limit", components: "updater", how: same, why: "0 or -1: unlimited, as upstream"},
	{name: "eviction-rate-burst", components: "updater", how: same, why: "0 with a rate set counts as 1 (upstream's then never evicts)"},
	{name: "evict-after-oom-threshold", components: "updater", how: alias, hvpa: "oom-window"},
	{name: "in-recommendation-bounds-eviction-lifetime-threshold", components: "updater", how: alias, hvpa: "pod-min-age"},
	{name: "pod-update-threshold", components: "updater", how: same},
	{name: "in-place-skip-disruption-budget", components: "updater", how: same, bool: true, why: "hvpa's default is true: a resize that restarts nothing disrupts nothing"},
	{name: "use-admission-controller-status", components: "updater", how: same, bool: true, why: "false is --admission-lease=-"},
	{name: "admission-controller-status-lease-name", components: "updater", how: same, why: "the name part of --admission-lease"},
	{name: "admission-controller-status-lease-namespace", components: "updater", how: same, why: "the namespace part of --admission-lease"},
	{name: "admission-controller-status-lease-timeout", components: "updater", how: alias, hvpa: "admission-lease-max-age"},
	{name: "concurrent-cpu-startup-boost-syncs", components: "updater", how: ignored, def: "1", why: "hvpa's updater ends startup boosts in its update loop (--updater-interval)"},

	{name: "port", components: "admission-controller", how: alias, hvpa: "webhook-port", why: "the port the webhook server listens on"},
	{name: "min-tls-version", components: "admission-controller", how: same},
	{name: "tls-ciphers", components: "admission-controller", how: alias, hvpa: "tls-cipher-suites", why: "comma-separated Go cipher suite names"},
	{name: "tls-cert-file", components: "admission-controller", how: ignored, def: "/etc/tls-certs/serverCert.pem", why: "hvpa keeps its serving certificate itself, or reads tls.crt from --cert-dir with --cert-mode=external"},
	{name: "tls-private-key", components: "admission-controller", how: ignored, def: "/etc/tls-certs/serverKey.pem", why: "hvpa keeps its serving certificate itself, or reads tls.key from --cert-dir with --cert-mode=external"},
	{name: "client-ca-file", components: "admission-controller", how: ignored, def: "/etc/tls-certs/caCert.pem", why: "hvpa writes its CA into the webhook configurations' caBundle itself"},
	{name: "reload-cert", components: "admission-controller", how: ignored, bool: true, def: "false", why: "hvpa always reloads a changed certificate"},
	{name: "register-webhook", components: "admission-controller", how: ignored, bool: true, def: "true", why: "the chart creates the webhook configurations (hvpa keeps their caBundle)"},
	{name: "register-by-url", components: "admission-controller", how: ignored, bool: true, def: "false", why: "the chart creates the webhook configurations"},
	{name: "webhook-address", components: "admission-controller", how: ignored, def: "", why: "the chart creates the webhook configurations"},
	{name: "webhook-port", components: "admission-controller", how: differs, why: "upstream's --webhook-port is the port of a by-URL registration (the chart registers hvpa's webhooks); hvpa's --webhook-port is the listening port, upstream's --port: drop upstream's --webhook-port from the args"},
	{name: "webhook-service", components: "admission-controller", how: ignored, def: "vpa-webhook", why: "the chart's Service; hvpa's certificate names --webhook-service-name"},
	{name: "webhook-timeout-seconds", components: "admission-controller", how: ignored, def: "30", why: "the chart's admissionController.webhooks.{pods,validation}.timeoutSeconds"},
	{name: "webhook-labels", components: "admission-controller", how: ignored, def: "", why: "the chart's admissionController.webhooks.{pods,validation}.timeoutSeconds"},
	{name: "webhook-failure-policy-fail", components: "admission-controller", how: ignored, bool: true, def: "false", why: "the pod webhook fails open; the chart's admissionController.webhooks.{pods,validation}.failurePolicy sets it"},
	{name: "status-lease-name", components: "admission-controller", how: same, why: "the name part of --admission-lease"},
	{name: "status-lease-namespace", components: "admission-controller", how: same, why: "the namespace part of --admission-lease"},
	{name: "status-lease-update-interval", components: "admission-controller", how: ignored, def: "10s", why: "hvpa renews its Lease at a fixed rate below --admission-lease-max-age"},
	{name: "max-allowed-cpu-boost", components: "admission-controller", how: same, why: "caps a startup-boosted CPU request"},
}

// klogFlags are klog's flags, which upstream's binaries take: accepted, with no effect (hvpa logs with zap:
// --zap-log-level, --zap-encoder, ...), except --v.
var klogFlags = []string{"vmodule", "logtostderr", "alsologtostderr", "stderrthreshold", "log-dir", "log-file", "log-file-max-size",
	"one-output", "skip-headers", "skip-log-headers", "add-dir-header", "log-backtrace-at", "log-flush-frequency"}

// upstreamOnly are the flags registered for upstream's names that hvpa has no flag of its own for.
type upstreamOnly struct {
	values                                  map[string]*string
	password, bearerToken                   string
	useAdmissionStatus                      bool
	updaterLeaseName, updaterLeaseNamespace string
	admissionLeaseName, admissionLeaseNS    string
}

// anyValue is a flag that takes any value (ignored and refused flags); its string is what was given.
type anyValue struct {
	v      *string
	isBool bool
}

func (a anyValue) String() string     { return *a.v }
func (a anyValue) Set(s string) error { *a.v = s; return nil }
func (a anyValue) Type() string {
	if a.isBool {
		return "bool"
	}
	return "string"
}

// registerUpstream registers upstream's flags that hvpa has no flag of its own for (hidden: they are listed in
// docs/migrating-from-vpa.md) and the aliases of the others.
func registerUpstream(f *pflag.FlagSet, o *runOptions) {
	u := &o.upstream
	u.values = map[string]*string{}
	hidden := func(name string) {
		if err := f.MarkHidden(name); err != nil {
			panic(err) // registered just before: a programming error
		}
	}
	for _, uf := range upstreamFlags {
		if uf.how != ignored && uf.how != refused {
			continue
		}
		v := uf.def
		u.values[uf.name] = &v
		fl := f.VarPF(anyValue{&v, uf.bool}, uf.name, "", "upstream VPA's flag: "+uf.why)
		if uf.bool {
			fl.NoOptDefVal = "true"
		}
		hidden(uf.name)
	}
	for _, name := range klogFlags {
		v := ""
		u.values[name] = &v
		f.Var(anyValue{&v, false}, name, "klog's flag: hvpa logs with zap (--zap-* flags)")
		hidden(name)
	}
	f.StringVar(&u.password, "password", "", "basic-auth password for Prometheus (upstream VPA's flag; --prometheus-password-file keeps it out of the pod spec)")
	f.StringVar(&u.bearerToken, "prometheus-bearer-token", "", "bearer token for Prometheus (upstream VPA's flag; --prometheus-bearer-token-file keeps it out of the pod spec)")
	f.BoolVar(&u.useAdmissionStatus, "use-admission-controller-status", true, "upstream VPA's flag: false is --admission-lease=-")
	f.StringVar(&u.updaterLeaseName, "admission-controller-status-lease-name", "", "upstream VPA updater's flag: the name part of --admission-lease")
	f.StringVar(&u.updaterLeaseNamespace, "admission-controller-status-lease-namespace", "", "upstream VPA updater's flag: the namespace part of --admission-lease")
	f.StringVar(&u.admissionLeaseName, "status-lease-name", "", "upstream VPA admission controller's flag: the name part of --admission-lease")
	f.StringVar(&u.admissionLeaseNS, "status-lease-namespace", "", "upstream VPA admission controller's flag: the namespace part of --admission-lease")
	for _, name := range []string{"password", "prometheus-bearer-token", "use-admission-controller-status", "admission-controller-status-lease-name",
		"admission-controller-status-lease-namespace", "status-lease-name", "status-lease-namespace"} {
		hidden(name)
	}
	f.SetNormalizeFunc(upstreamAliases)
}

// apply checks the upstream flags set and carries them into hvpa's options; it returns a warning per
// accepted flag without effect.
func (u *upstreamOnly) apply(f *pflag.FlagSet, o *runOptions) ([]string, error) {
	var warnings []string
	for _, uf := range upstreamFlags {
		if (uf.how != ignored && uf.how != refused) || !f.Changed(uf.name) {
			continue
		}
		v := *u.values[uf.name]
		switch uf.how {
		case refused:
			if !sameValue(v, uf.def) {
				return nil, fmt.Errorf("--%s=%s: not supported by hvpa (%s)", uf.name, v, uf.why)
			}
		case ignored:
			warnings = append(warnings, fmt.Sprintf("--%s has no effect in hvpa: %s", uf.name, uf.why))
		}
	}
	for _, name := range klogFlags {
		if f.Changed(name) {
			warnings = append(warnings, fmt.Sprintf("--%s has no effect in hvpa: it logs with zap (--zap-log-level, --zap-encoder; --v sets the level)", name))
		}
	}
	if !u.useAdmissionStatus {
		o.admissionLease = "-"
	}
	for _, l := range []struct{ ns, name, flags string }{
		{u.updaterLeaseNamespace, u.updaterLeaseName, "--admission-controller-status-lease-namespace/-name"},
		{u.admissionLeaseNS, u.admissionLeaseName, "--status-lease-namespace/-name"},
	} {
		if (l.ns == "" && l.name == "") || !u.useAdmissionStatus {
			continue
		}
		if f.Changed("admission-lease") {
			return nil, fmt.Errorf("%s and --admission-lease name the same Lease: set one", l.flags)
		}
		ns, name := cmp.Or(l.ns, o.webhookNamespace), cmp.Or(l.name, "hvpa-admission")
		if lease := ns + "/" + name; o.admissionLease != "" && o.admissionLease != lease {
			return nil, fmt.Errorf("--admission-controller-status-lease-* and --status-lease-* name different Leases (%s, %s): the updater must check the Lease the webhook renews", o.admissionLease, lease)
		} else {
			o.admissionLease = lease
		}
	}
	o.promClient.password, o.promClient.bearerToken = u.password, u.bearerToken
	return warnings, nil
}

// verbosity is klog's --v on zap: level -N logs what klog's V(N) would.
type verbosity struct{ opts *zap.Options }

func (v verbosity) String() string { return "0" }
func (v verbosity) Type() string   { return "int" }
func (v verbosity) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("%q: klog verbosity is a whole number >= 0", s)
	}
	v.opts.Level = zapcore.Level(-n)
	return nil
}

// fromUpstream carries upstream's flags into the options and logs a warning for each one without effect.
func (o *runOptions) fromUpstream(f *pflag.FlagSet) error {
	warnings, err := o.upstream.apply(f, o)
	for _, w := range warnings {
		ctrl.Log.WithName("flags").Info("warning: " + w)
	}
	return err
}

// cpuQuantity is a CPU quantity flag (upstream's --max-allowed-cpu-boost), in millicores (0: unset).
type cpuQuantity struct{ milli *float64 }

func (c cpuQuantity) String() string {
	if *c.milli == 0 {
		return ""
	}
	return resource.NewMilliQuantity(int64(*c.milli), resource.DecimalSI).String()
}
func (c cpuQuantity) Type() string { return "quantity" }
func (c cpuQuantity) Set(s string) error {
	if s == "" {
		*c.milli = 0
		return nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Sign() < 0 {
		return fmt.Errorf("%q is no CPU quantity: use one such as 4 or 3500m", s)
	}
	*c.milli = float64(q.MilliValue())
	return nil
}

// maxAllowed is a quantity flag of upstream's --container-recommendation-max-allowed-cpu (cores) or -memory
// (bytes); 0: unset.
type maxAllowed struct {
	v   *float64
	cpu bool
}

func (m maxAllowed) String() string {
	switch {
	case *m.v == 0:
		return ""
	case m.cpu:
		return resource.NewMilliQuantity(int64(*m.v*1000), resource.DecimalSI).String()
	}
	return resource.NewQuantity(int64(*m.v), resource.BinarySI).String()
}
func (m maxAllowed) Type() string { return "quantity" }
func (m maxAllowed) Set(s string) error {
	if s == "" {
		*m.v = 0
		return nil
	}
	q, err := resource.ParseQuantity(s)
	if err != nil || q.Sign() <= 0 {
		if m.cpu {
			return fmt.Errorf("%q is no CPU quantity above 0: use one such as 2 or 3500m", s)
		}
		return fmt.Errorf("%q is no memory quantity above 0: use one such as 8Gi", s)
	}
	*m.v = q.AsApproximateFloat64()
	return nil
}

// sameValue compares flag values, durations by what they mean (24h is 24h0m0s).
func sameValue(a, b string) bool {
	da, errA := time.ParseDuration(a)
	db, errB := time.ParseDuration(b)
	if errA == nil && errB == nil {
		return da == db
	}
	return a == b
}

// upstreamAliases maps upstream VPA's flag names where hvpa's differ onto hvpa's (upstreamFlags), and klog's
// underscores onto dashes, so that an upstream args list runs unchanged.
func upstreamAliases(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	name = strings.ReplaceAll(name, "_", "-")
	if to, ok := aliases[name]; ok {
		return pflag.NormalizedName(to)
	}
	return pflag.NormalizedName(name)
}

var aliases = func() map[string]string {
	m := map[string]string{}
	for _, uf := range upstreamFlags {
		if uf.how == alias {
			m[uf.name] = uf.hvpa
		}
	}
	return m
}()
