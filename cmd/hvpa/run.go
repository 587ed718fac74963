package main

import (
	"context"
	"errors"
	goflag "flag"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/featuregate"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/internal/kubeversion"
	"github.com/hvpa-dev/hvpa/internal/metricsauth"
	"github.com/hvpa-dev/hvpa/recommender/adaptive"
	"github.com/hvpa-dev/hvpa/usage"
	"github.com/hvpa-dev/hvpa/webhooks"
	"github.com/hvpa-dev/hvpa/webhooks/certs"
)

type runOptions struct {
	kubeconfig        string
	components        []string
	metricsAddr       string
	metricsSecure     bool
	metricsPerObject  bool
	metricsCertDir    string
	probeAddr         string
	leaderElect       bool
	leaderElectionNS  string
	leaderElectionID  string
	leaseDuration     time.Duration
	renewDeadline     time.Duration
	retryPeriod       time.Duration
	recommender       recommenderctrl.Options
	hvpaSync          time.Duration
	kubeAPIQPS        float64
	kubeAPIBurst      float64
	profiling         bool
	hvpaLowConfidence float64
	prometheus        usage.PrometheusConfig
	promClient        promClientFlags
	gates             featuregate.MutableFeatureGate
	webhookHost       string
	webhookPort       int
	webhookTLS        webhooks.TLSConfig
	webhookNamespace  string
	webhookConfigName string
	certs             certs.Options
	certIPs           []net.IP
	updater           updater.Options
	model             modelFlags
	upstream          upstreamOnly
	admissionLease    string
	maxCPUBoost       float64
	shutdownTimeout   time.Duration
}

func newRunCommand() *cobra.Command {
	cmd, _ := newRunCommandOptions()
	return cmd
}

// newRunCommandOptions returns the run command and the options its flags set.
func newRunCommandOptions() (*cobra.Command, *runOptions) {
	o := &runOptions{recommender: recommenderctrl.DefaultOptions(), prometheus: usage.DefaultPrometheusConfig(), gates: features.New(), certs: certs.DefaultOptions(),
		updater: updater.DefaultOptions()}
	zapOpts := zap.Options{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the hvpa manager (the chosen components in one process)",
		Long: `Run the hvpa manager: the components chosen with --components in one process, with leader election for
every component that writes, health (/healthz) and readiness (/readyz) probes, and Prometheus metrics.

Components in this version: ` + strings.Join(app.Available, ", ") + `.
  recommender  writes recommendations into VerticalPodAutoscaler status from metrics.k8s.io usage and OOM
               kills; keeps history in VerticalPodAutoscalerCheckpoints (or reads it from Prometheus); computes
               the embedded recommendation of Hvpas (spec.vpa.deploy).
  hvpa         the Hvpa controller: owns the HPA on the Hvpa's scale subresource, decides replicas and the
               per-pod intent (status.desired), and scales the target. Run it with the recommender for
               embedded recommendations.
  admission    the admission webhooks, on every replica (no leader election): sizes new pods from their
               VerticalPodAutoscaler's recommendation or their Hvpa's status.desired, and validates
               VerticalPodAutoscaler and Hvpa objects. By default it keeps its own serving certificate in a
               Secret and the caBundle of the webhook configurations named by --webhook-config-name current
               (--cert-mode=external for cert-manager or a mounted Secret in --cert-dir).
  updater      brings running pods to their VerticalPodAutoscaler's recommendation or their Hvpa's
               status.desired: in place through pods/resize (InPlaceOrRecreate, InPlace), else by eviction
               through the Eviction API (Recreate, Auto), within PodDisruptionBudgets, --eviction-tolerance,
               --min-replicas and a rate limit; never evicts while the admission Lease is stale.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
			return run(cmd.Context(), cmd, *o)
		},
	}
	f := cmd.Flags()
	logFlags := goflag.NewFlagSet("log", goflag.ContinueOnError)
	zapOpts.BindFlags(logFlags) // --zap-log-level, --zap-devel, --zap-encoder, ...
	f.AddGoFlagSet(logFlags)
	f.Var(verbosity{&zapOpts}, "v", "klog's verbosity (upstream VPA's flag): N logs at zap's level -N, as --zap-log-level=N")
	managerFlags(f, o)
	recommenderFlags(f, o)
	prometheusFlags(f, o)
	webhookFlags(f, o)
	updaterFlags(f, o)
	o.model.register(f)
	registerUpstream(f, o)
	return cmd, o
}

// managerFlags registers the flags of the process: API server access, components, metrics and probes, leader election.
func managerFlags(f *pflag.FlagSet, o *runOptions) {
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, or $KUBECONFIG)")
	f.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 200, "queries per second to the API server, with --kubeconfig or without (upstream VPA's name; its default 5 is a floor here: a thousand VPAs created together get their first recommendation within seconds, and API Priority and Fairness protects the server)")
	f.Float64Var(&o.kubeAPIBurst, "kube-api-burst", 300, "burst of queries to the API server (a whole number; upstream VPA's name)")
	f.BoolVar(&o.profiling, "profiling", false, "serve Go's pprof profiles under /debug/pprof/ on the metrics address")
	f.StringSliceVar(&o.components, "components", app.Available, "components to run: "+strings.Join(app.Available, ", "))
	f.DurationVar(&o.shutdownTimeout, "graceful-shutdown-timeout", 30*time.Second, "on SIGTERM, how long the components get to stop before the process exits")
	f.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint (0 disables it)")
	f.BoolVar(&o.metricsSecure, "metrics-secure", true, "serve /metrics (and --profiling's pprof) over HTTPS to clients the API server authenticates (TokenReview) and authorizes to get the URL (SubjectAccessReview, e.g. nonResourceURLs /metrics); false: plain HTTP to anyone who reaches the port")
	f.BoolVar(&o.metricsPerObject, "metrics-per-object", true, "export series per VerticalPodAutoscaler and Hvpa (targets, usage, replicas, intents); false: none of those gauges, and the per-Hvpa counters add up over all Hvpas, for clusters with many objects")
	f.StringVar(&o.metricsCertDir, "metrics-cert-dir", "", "folder with tls.crt and tls.key for the HTTPS metrics endpoint, reloaded when they change (default: a self-signed certificate)")
	f.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	f.BoolVar(&o.leaderElect, "leader-elect", true, "elect a leader (a Lease) so that only one replica writes")
	f.StringVar(&o.leaderElectionNS, "leader-election-namespace", "", "namespace of the leader election Lease (default: the pod's namespace)")
	f.DurationVar(&o.leaseDuration, "leader-elect-lease-duration", 15*time.Second, "how long standby replicas wait after the leader's last renewal before taking the Lease (a killed leader cannot hand it over)")
	f.DurationVar(&o.renewDeadline, "leader-elect-renew-deadline", 10*time.Second, "how long the leader retries renewing its Lease before it stops leading (below the lease duration)")
	f.DurationVar(&o.retryPeriod, "leader-elect-retry-period", 2*time.Second, "how often replicas try to take or renew the Lease (below the renew deadline)")
	f.StringVar(&o.leaderElectionID, "leader-election-id", "", "name of the leader election Lease (default: hvpa- and the components, e.g. hvpa-controller-recommender, so that processes running different components never share a Lease)")
}

// recommenderFlags registers the flags of the recommender and the Hvpa controller.
func recommenderFlags(f *pflag.FlagSet, o *runOptions) {
	r := &o.recommender
	f.DurationVar(&r.Interval, "recommender-interval", r.Interval, "time between recommender runs")
	f.DurationVar(&o.hvpaSync, "hvpa-sync-period", 30*time.Second, "how often every Hvpa is decided again without a change to it")
	f.Float64Var(&o.hvpaLowConfidence, "hvpa-low-confidence-days", 1, "an Hvpa whose embedded recommendation has less history than this (days) has the LowConfidence condition, and scale-downs from it (replicas and per-pod) are held")
	f.StringVar(&r.DefaultModel, "default-model", "upstream", "model of the VerticalPodAutoscalers without the recommender.hvpa.dev/model annotation: upstream (upstream VPA's numbers) or adaptive (an ensemble scored on the recent past, docs/simulate.md; opt-in, in memory: its scores restart with the process)")
	f.StringVar(&r.Name, "recommender-name", r.Name, "serve the VerticalPodAutoscalers whose spec.recommenders names this (\"default\" also serves those naming none)")
	f.StringSliceVar(&r.Namespaces, "namespaces", nil, "serve only the VerticalPodAutoscalers of these namespaces (default: all)")
	f.StringSliceVar(&r.ExcludeNamespaces, "exclude-namespaces", nil, "skip the VerticalPodAutoscalers of these namespaces")
	f.BoolVar(&r.MemorySaver, "memory-saver", false, "track only pods that some VerticalPodAutoscaler selects")
	f.StringVar(&r.Storage, "storage", r.Storage, "where usage history survives restarts: checkpoint (VerticalPodAutoscalerCheckpoint objects) or prometheus (read at start; checkpoints are written too, and used when Prometheus cannot be read)")
	f.DurationVar(&r.CheckpointBudget, "checkpoints-timeout", r.CheckpointBudget, "time budget per run for writing checkpoints (the oldest are written first)")
	f.IntVar(&r.UpdateWorkers, "update-worker-count", r.UpdateWorkers, "status patches and checkpoint writes a run sends at once (raise --kube-api-qps and --kube-api-burst with it)")
	f.DurationVar(&r.CheckpointGCInterval, "checkpoints-gc-interval", r.CheckpointGCInterval, "how often orphaned checkpoints are deleted")
	f.DurationVar(&r.CheckpointPeriod, "checkpoint-period", r.CheckpointPeriod, "each checkpoint is written at most once per period, round-robin over the runs (a restart loses at most this much history; 0: every checkpoint at every run)")
	f.Float64Var(&r.StatusDeadBand, "recommendation-dead-band", r.StatusDeadBand, "a VPA's status is patched when a target or condition changes, or a lower or upper bound moves by more than this fraction (0: any change)")
	f.DurationVar(&r.YoungStatusDelay, "young-status-delay", r.YoungStatusDelay, "while the history of a VPA in updateMode Off or Initial is young (below one day of confidence), a recommendation whose targets stay within the dead band and whose bounds only narrow is written this long after the VPA's last status write (spread per VPA from half to one and a half times it) instead of at once; targets past the band, widening bounds, conditions and first recommendations are written at once (0: no delay)")
	f.Var(maxAllowed{&r.MaxAllowedCPU, true}, "container-recommendation-max-allowed-cpu", "the highest CPU a VerticalPodAutoscaler's container is recommended, e.g. 2, where its containerPolicies set no maxAllowed cpu (upstream VPA's flag; default: none)")
	f.BoolVar(&r.IntegerCPU, "cpu-integer-post-processor-enabled", r.IntegerCPU, "recommend whole cores of CPU for the containers a VerticalPodAutoscaler annotates vpa-post-processor.kubernetes.io/<container>_integerCPU: \"true\" (upstream VPA's flag and annotation)")
	f.Var(maxAllowed{&r.MaxAllowedMemory, false}, "container-recommendation-max-allowed-memory", "the highest memory a VerticalPodAutoscaler's container is recommended, e.g. 8Gi, where its containerPolicies set no maxAllowed memory (upstream VPA's flag; default: none)")
}

// webhookFlags registers the flags of the feature gates, the admission webhook server and its certificate.
func webhookFlags(f *pflag.FlagSet, o *runOptions) {
	o.gates.AddFlag(f)
	f.StringVar(&o.webhookHost, "webhook-host", "", "address the admission webhook server listens on (default: all)")
	f.IntVar(&o.webhookPort, "webhook-port", 9443, "port of the admission webhook server")
	f.StringVar(&o.webhookTLS.MinVersion, "min-tls-version", "tls1_2", "lowest TLS version the webhook and HTTPS metrics servers accept: tls1_2 or tls1_3")
	f.StringSliceVar(&o.webhookTLS.CipherSuites, "tls-cipher-suites", nil, "TLS 1.2 cipher suites the webhook and HTTPS metrics servers accept, by Go's names (default: Go's)")
	f.StringVar(&o.webhookTLS.ClientCAFile, "webhook-client-ca-file", "", "CA (PEM) that signs the API server's client certificate for webhooks (its admission configuration's kubeConfigFile): a client presenting another certificate is refused (read at start)")
	f.BoolVar(&o.webhookTLS.RequireClientCert, "webhook-require-client-cert", false, "with --webhook-client-ca-file: refuse every client without such a certificate, so that only the API server reaches the webhook")
	f.BoolVar(&o.webhookTLS.HTTP2, "enable-http2", false, "serve HTTP/2 on the webhook and HTTPS metrics servers too (off: HTTP/2 rapid reset, CVE-2023-44487)")
	c := &o.certs
	f.StringVar((*string)(&c.Mode), "cert-mode", string(c.Mode), "who provides the webhook's serving certificate: self-managed (a CA and certificate kept in a Secret, rotated before expiry) or external (files in --cert-dir, e.g. from cert-manager)")
	f.StringVar(&c.CertDir, "cert-dir", c.CertDir, "folder of the webhook's serving certificate (tls.crt, tls.key); reloaded when the files change")
	defaultNS := os.Getenv("POD_NAMESPACE")
	if defaultNS == "" {
		defaultNS = "hvpa-system"
	}
	f.StringVar(&o.webhookNamespace, "webhook-namespace", defaultNS, "namespace of the webhook Service and certificate Secret (default: $POD_NAMESPACE, else hvpa-system)")
	f.StringVar(&c.ServiceName, "webhook-service-name", "hvpa-webhook", "name of the webhook Service (the serving certificate is for its DNS names)")
	f.StringVar(&c.SecretName, "webhook-secret-name", "hvpa-webhook-certs", "name of the Secret holding the self-managed CA and serving certificate")
	f.StringVar(&o.webhookConfigName, "webhook-config-name", "hvpa", "name of the Mutating- and ValidatingWebhookConfiguration whose caBundle is kept current")
	f.StringSliceVar(&c.ExtraDNSNames, "webhook-cert-dns-names", nil, "more DNS names for the serving certificate")
	f.IPSliceVar(&o.certIPs, "webhook-cert-ips", nil, "IP addresses for the serving certificate")
	f.Var(cpuQuantity{&o.maxCPUBoost}, "max-allowed-cpu-boost", "the highest CPU request a startup boost gives a container, e.g. 4 (upstream VPA's flag; default: no cap)")
	f.StringVar(&o.admissionLease, "admission-lease", "", "Lease (namespace/name) the admission webhook renews while serving and the updater checks before evicting (default: <webhook-namespace>/hvpa-admission; \"-\" for none)")
}

// updaterFlags registers the flags of the updater.
func updaterFlags(f *pflag.FlagSet, o *runOptions) {
	u := &o.updater
	f.DurationVar(&u.Interval, "updater-interval", u.Interval, "time between update loops")
	f.Float64Var(&u.UpdateThreshold, "pod-update-threshold", u.UpdateThreshold, "a pod older than --pod-min-age is updated when its change reaches this: per resource the relative difference between the pod's summed requests and their targets, added over cpu and memory (upstream's rule)")
	f.DurationVar(&u.MinPodAge, "pod-min-age", u.MinPodAge, "age before a within-bounds difference above --pod-update-threshold is acted on")
	f.DurationVar(&u.OOMWindow, "oom-window", u.OOMWindow, "a container OOM-killed within this time of starting, less than this time ago, makes its pod a candidate")
	f.BoolVar(&u.InPlaceSkipDisruptionBudget, "in-place-skip-disruption-budget", u.InPlaceSkipDisruptionBudget, "an in-place resize that restarts no container takes no share of --eviction-tolerance and needs no --min-replicas (upstream VPA's flag; its default is false)")
	f.Float64Var(&u.EvictionTolerance, "eviction-tolerance", u.EvictionTolerance, "fraction of a workload's replicas that may be disrupted per loop (at least one)")
	f.Int32Var(&u.MinReplicas, "min-replicas", u.MinReplicas, "no evictions while a workload has fewer live pods (updatePolicy.minReplicas overrides)")
	f.Float64Var(&u.EvictionRateLimit, "eviction-rate-limit", u.EvictionRateLimit, "evictions per second across the cluster, and in-place resizes of VPAs' pods in a bucket of their own (0: unlimited); an update waits for its turn within the loop, as upstream's")
	f.IntVar(&u.EvictionBurst, "eviction-rate-burst", u.EvictionBurst, "burst of the eviction rate limit")
	f.DurationVar(&u.DeferredTimeout, "in-place-deferred-timeout", u.DeferredTimeout, "a resize the kubelet defers longer than this falls back to eviction (InPlaceOrRecreate)")
	f.DurationVar(&u.InProgressTimeout, "in-place-in-progress-timeout", u.InProgressTimeout, "a resize in progress longer than this falls back to eviction (InPlaceOrRecreate)")
	f.DurationVar(&u.LoopWindow, "update-loop-window", u.LoopWindow, "a pod resized twice for the same change within this time, and moved away from it by something else each time, is not touched again for it")
	f.Var(namespacedNameFlag{&u.LoopRecords}, "update-loop-records", "namespace/name of a ConfigMap where the updater keeps its loop-detection records (resizes and evictions within --update-loop-window), so that a restart or a new leader does not repeat a change that did not help (default: in memory only)")
	f.DurationVar(&u.AdmissionLeaseMaxAge, "admission-lease-max-age", u.AdmissionLeaseMaxAge, "the updater evicts only while the admission Lease was renewed within this time")
}

// restConfig is the API server client configuration from --kubeconfig (else in-cluster or $KUBECONFIG) with the
// client rate limit of --kube-api-qps and --kube-api-burst: the same either way (client-go's default with a
// kubeconfig file is 5 queries per second).
func restConfig(kubeconfig string, qps, burst float64) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = ctrl.GetConfig()
	}
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = float32(qps), int(burst)
	return cfg, nil
}

// profilingHandlers are Go's pprof endpoints for the metrics server (--profiling).
func profilingHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}

// Scheme knows every type the manager reads or writes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, vpav1.AddToScheme, hvpav1alpha1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}

func run(ctx context.Context, cmd *cobra.Command, o runOptions) error {
	if err := o.fromUpstream(cmd.Flags()); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	cfg, cluster, err := o.connect()
	if err != nil {
		return err
	}
	wantAdmission := slices.Contains(o.components, app.Admission)
	o.certs.SecretNamespace, o.certs.ServiceNamespace, o.certs.IPAddresses = o.webhookNamespace, o.webhookNamespace, o.certIPs
	o.certs.MutatingWebhookConfigurations = []string{o.webhookConfigName}
	o.certs.ValidatingWebhookConfigurations = []string{o.webhookConfigName}
	if wantAdmission {
		if err := o.certs.Validate(); err != nil {
			return fmt.Errorf("webhook certificate flags: %w", err)
		}
	}
	lease, err := o.lease()
	if err != nil {
		return err
	}
	mgrOpts, err := o.managerOptions()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, mgrOpts)
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	var history usage.HistoryProvider
	if o.recommender.Storage == recommenderctrl.StoragePrometheus {
		if history, err = prometheusHistory(o); err != nil {
			return err
		}
	}
	model, err := o.model.model()
	if err != nil {
		return err
	}
	mo := app.Options{Components: o.components, Recommender: o.recommender, History: history, Model: model,
		HvpaSync: o.hvpaSync, HvpaLowConfidenceDays: o.hvpaLowConfidence, MaxCPUBoost: o.maxCPUBoost, Registry: crmetrics.Registry, DropPerObjectMetrics: !o.metricsPerObject, Gates: o.gates, Updater: o.updater, AdmissionLease: lease,
		Cluster: cluster}
	if wantAdmission {
		mo.Certs = &o.certs
	}
	if err := app.Add(ctx, mgr, cfg, mo); err != nil {
		return err
	}
	_, _ = fmt.Fprintf(cmd.ErrOrStderr(), "hvpa: starting %s\n", strings.Join(o.components, ", ")) // a line for the operator: the manager runs whether or not stderr takes it
	return mgr.Start(ctx)
}

// connect is the REST configuration of the kubeconfig and what the cluster it names offers (checkCluster).
func (o *runOptions) connect() (*rest.Config, *kubeversion.Support, error) {
	cfg, err := restConfig(o.kubeconfig, o.kubeAPIQPS, o.kubeAPIBurst)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cluster, err := checkCluster(cfg)
	return cfg, cluster, err
}

// checkCluster reads the cluster's Kubernetes version and whether it serves pods/resize, logs what that means
// for hvpa, and refuses a version older than the oldest supported one.
func checkCluster(cfg *rest.Config) (*kubeversion.Support, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	s, err := kubeversion.Discover(dc)
	if err != nil {
		return nil, err
	}
	if !s.Supported {
		return nil, errors.New(s.Message())
	}
	ctrl.Log.WithName("kubernetes").Info(s.Message(), "version", s.Version, "inPlaceResize", s.InPlaceResize)
	return &s, nil
}

// validate refuses flag values the components cannot run with, naming the flag and what it needs.
func (o *runOptions) validate() error {
	if err := app.CheckComponents(o.components); err != nil {
		return err
	}
	if err := o.validateRanges(); err != nil {
		return err
	}
	if _, err := o.model.model(); err != nil {
		return err
	}
	if err := o.validateRecommender(); err != nil {
		return err
	}
	if o.kubeAPIQPS <= 0 || o.kubeAPIQPS > math.MaxFloat32 {
		return fmt.Errorf("--kube-api-qps %g: must be a positive rate (queries per second)", o.kubeAPIQPS)
	}
	if o.kubeAPIBurst < 1 || o.kubeAPIBurst != math.Trunc(o.kubeAPIBurst) || o.kubeAPIBurst > math.MaxInt32 {
		return fmt.Errorf("--kube-api-burst %g: must be a whole number of at least 1", o.kubeAPIBurst)
	}
	if len(o.components) == 0 {
		return fmt.Errorf("--components is empty: name at least one of %s", strings.Join(app.Available, ", "))
	}
	if o.retryPeriod <= 0 || o.renewDeadline <= o.retryPeriod || o.leaseDuration <= o.renewDeadline {
		return fmt.Errorf("--leader-elect-lease-duration %s, --leader-elect-renew-deadline %s, --leader-elect-retry-period %s: each must be positive and below the one before it",
			o.leaseDuration, o.renewDeadline, o.retryPeriod)
	}
	if o.updater.Interval <= 0 || o.updater.EvictionTolerance < 0 || o.updater.EvictionTolerance > 1 || o.updater.UpdateThreshold < 0 {
		return fmt.Errorf("updater flags: --updater-interval must be positive (%s), --eviction-tolerance within 0..1 (%g), --pod-update-threshold not negative (%g)",
			o.updater.Interval, o.updater.EvictionTolerance, o.updater.UpdateThreshold)
	}
	_, err := o.lease()
	return err
}

// validateRecommender refuses the recommender's and the Hvpa controller's flag values they cannot run with.
func (o *runOptions) validateRecommender() error {
	if o.recommender.Interval <= 0 {
		return fmt.Errorf("--recommender-interval %s: must be positive", o.recommender.Interval)
	}
	if _, err := adaptive.ParseModel(o.recommender.DefaultModel); err != nil {
		return fmt.Errorf("--default-model: %w", err)
	}
	if o.prometheus.Timeout <= 0 {
		return fmt.Errorf("--prometheus-timeout %s: must be positive, e.g. 1m", o.prometheus.Timeout)
	}
	if err := o.recommender.Validate(); err != nil {
		return err
	}
	if o.recommender.CheckpointPeriod < 0 {
		return fmt.Errorf("--checkpoint-period %s: must be 0 (every run) or positive", o.recommender.CheckpointPeriod)
	}
	if o.recommender.YoungStatusDelay < 0 {
		return fmt.Errorf("--young-status-delay %s: must be 0 (no delay) or positive, e.g. 15m", o.recommender.YoungStatusDelay)
	}
	if b := o.recommender.StatusDeadBand; b < 0 || b >= 1 || math.IsNaN(b) {
		return fmt.Errorf("--recommendation-dead-band %g: must be a fraction in [0, 1), e.g. 0.1", b)
	}
	if o.hvpaLowConfidence <= 0 || o.hvpaLowConfidence > 365 {
		return fmt.Errorf("--hvpa-low-confidence-days %g: must be above 0 and at most 365 (a fraction such as 0.25 is 6 hours)", o.hvpaLowConfidence)
	}
	if o.hvpaSync <= 0 {
		return fmt.Errorf("--hvpa-sync-period %s: must be positive", o.hvpaSync)
	}
	return nil
}

// lease is the admission Lease from --admission-lease: by default hvpa-admission in the webhook's
// namespace; none (the zero name) for -.
func (o *runOptions) lease() (types.NamespacedName, error) {
	lease := o.admissionLease
	switch lease {
	case "":
		lease = o.webhookNamespace + "/hvpa-admission"
	case "-":
		lease = ""
	}
	if lease == "" {
		return types.NamespacedName{}, nil
	}
	n, err := parseNamespacedName(lease)
	if err != nil {
		return n, fmt.Errorf("--admission-lease %q: %w, or - for none", lease, err)
	}
	return n, nil
}

// parseNamespacedName reads "namespace/name".
func parseNamespacedName(s string) (types.NamespacedName, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return types.NamespacedName{}, errors.New("must be namespace/name")
	}
	return types.NamespacedName{Namespace: ns, Name: name}, nil
}

// namespacedNameFlag is a flag holding "namespace/name" (empty: none), checked as it is parsed.
type namespacedNameFlag struct{ n *types.NamespacedName }

func (f namespacedNameFlag) String() string {
	if f.n == nil || f.n.Name == "" {
		return ""
	}
	return f.n.String()
}
func (f namespacedNameFlag) Type() string { return "namespace/name" }
func (f namespacedNameFlag) Set(s string) error {
	if s == "" {
		*f.n = types.NamespacedName{}
		return nil
	}
	n, err := parseNamespacedName(s)
	if err != nil {
		return err
	}
	*f.n = n
	return nil
}

// managerOptions are the manager's options from the flags: metrics and webhook serving, probes, leader
// election (for the components that write), the product's client and cache.
func (o *runOptions) managerOptions() (ctrl.Options, error) {
	// the webhooks serve on every replica: a process running only them needs no leader
	needsLeader := slices.ContainsFunc(o.components, func(c string) bool { return c != app.Admission })
	leaderID := o.leaderElectionID
	if leaderID == "" {
		var names []string
		for _, c := range o.components {
			if c == app.Hvpa {
				c = "controller" // not hvpa-hvpa
			}
			names = append(names, c)
		}
		slices.Sort(names)
		leaderID = "hvpa-" + strings.Join(slices.Compact(names), "-")
	}
	tlsOpts, err := o.webhookTLS.Options()
	if err != nil {
		return ctrl.Options{}, err
	}
	metricsOpts := metricsserver.Options{BindAddress: o.metricsAddr}
	if o.metricsSecure {
		// per-namespace names, usage and targets are readable only by whom the API server lets get the URL
		metricsOpts.SecureServing, metricsOpts.CertDir, metricsOpts.TLSOpts = true, o.metricsCertDir, tlsOpts
		metricsOpts.FilterProvider = metricsauth.FilterProvider
	}
	if o.profiling {
		metricsOpts.ExtraHandlers = profilingHandlers()
	}
	whOpts := o.certs.WebhookServerOptions()
	whTLS, err := o.webhookTLS.WebhookOptions()
	if err != nil {
		return ctrl.Options{}, err
	}
	whOpts.Host, whOpts.Port, whOpts.TLSOpts = o.webhookHost, o.webhookPort, whTLS
	return ctrl.Options{
		WebhookServer:                 webhook.NewServer(whOpts),
		Scheme:                        Scheme(),
		Metrics:                       metricsOpts,
		HealthProbeBindAddress:        o.probeAddr,
		LeaderElection:                o.leaderElect && needsLeader,
		LeaderElectionID:              leaderID,
		LeaderElectionReleaseOnCancel: true, // a stopping leader hands over at once, not after its lease runs out
		LeaderElectionNamespace:       o.leaderElectionNS,
		LeaseDuration:                 ptrDuration(o.leaseDuration),
		RenewDeadline:                 ptrDuration(o.renewDeadline),
		RetryPeriod:                   ptrDuration(o.retryPeriod),
		GracefulShutdownTimeout:       ptrDuration(o.shutdownTimeout),
		Client:                        app.ClientOptions(),
		Cache:                         app.CacheOptions(),
	}, nil
}

func ptrDuration(d time.Duration) *time.Duration { return &d }
