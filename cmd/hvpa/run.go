package main

import (
	"context"
	goflag "flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	vpactrl "github.com/hvpa-dev/hvpa/controllers/vpa"
	"github.com/hvpa-dev/hvpa/internal/manager"
	"github.com/hvpa-dev/hvpa/recommender/metrics"
)

type runOptions struct {
	kubeconfig          string
	components          []string
	metricsAddr         string
	probeAddr           string
	leaderElect         bool
	leaderElectionNS    string
	leaderElectionID    string
	recommender         vpactrl.Options
	hvpaSync            time.Duration
	prometheus          metrics.PrometheusConfig
	prometheusTokenFile string
	prometheusPassFile  string
}

func newRunCommand() *cobra.Command {
	o := runOptions{recommender: vpactrl.DefaultOptions(), prometheus: metrics.DefaultPrometheusConfig()}
	zapOpts := zap.Options{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the hvpa manager (the chosen components in one process)",
		Long: `Run the hvpa manager: the components chosen with --components in one process, with leader election for
every component that writes, health (/healthz) and readiness (/readyz) probes, and Prometheus metrics.

Components in this version: ` + strings.Join(manager.Available, ", ") + `.
  recommender  writes recommendations into VerticalPodAutoscaler status from metrics.k8s.io usage and OOM
               kills; keeps history in VerticalPodAutoscalerCheckpoints (or reads it from Prometheus); computes
               the embedded recommendation of Hvpas (spec.vpa.deploy).
  hvpa         the Hvpa controller: owns the HPA on the Hvpa's scale subresource, decides replicas and the
               per-pod intent (status.desired), and scales the target. Run it with the recommender for
               embedded recommendations.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
			return run(cmd.Context(), cmd, o)
		},
	}
	f := cmd.Flags()
	logFlags := goflag.NewFlagSet("log", goflag.ContinueOnError)
	zapOpts.BindFlags(logFlags) // --zap-log-level, --zap-devel, --zap-encoder, ...
	f.AddGoFlagSet(logFlags)
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: in-cluster, or $KUBECONFIG)")
	f.StringSliceVar(&o.components, "components", []string{"recommender", "hvpa"}, "components to run: "+strings.Join(manager.Available, ", "))
	f.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus metrics endpoint (0 disables it)")
	f.StringVar(&o.probeAddr, "health-probe-bind-address", ":8081", "address of the /healthz and /readyz endpoints")
	f.BoolVar(&o.leaderElect, "leader-elect", true, "elect a leader (a Lease) so that only one replica writes")
	f.StringVar(&o.leaderElectionNS, "leader-election-namespace", "", "namespace of the leader election Lease (default: the pod's namespace)")
	f.StringVar(&o.leaderElectionID, "leader-election-id", "hvpa-manager", "name of the leader election Lease")
	r := &o.recommender
	f.DurationVar(&r.Interval, "recommender-interval", r.Interval, "time between recommender runs")
	f.DurationVar(&o.hvpaSync, "hvpa-sync-period", 30*time.Second, "how often every Hvpa is decided again without a change to it")
	f.StringVar(&r.Name, "recommender-name", r.Name, "serve the VerticalPodAutoscalers whose spec.recommenders names this (\"default\" also serves those naming none)")
	f.StringSliceVar(&r.Namespaces, "namespaces", nil, "serve only the VerticalPodAutoscalers of these namespaces (default: all)")
	f.StringSliceVar(&r.ExcludeNamespaces, "exclude-namespaces", nil, "skip the VerticalPodAutoscalers of these namespaces")
	f.BoolVar(&r.MemorySaver, "memory-saver", false, "track only pods that some VerticalPodAutoscaler selects")
	f.StringVar(&r.Storage, "storage", r.Storage, "where usage history survives restarts: checkpoint (VerticalPodAutoscalerCheckpoint objects) or prometheus (read at start)")
	f.DurationVar(&r.CheckpointBudget, "checkpoints-timeout", r.CheckpointBudget, "time budget per run for writing checkpoints (the oldest are written first)")
	f.DurationVar(&r.CheckpointGCInterval, "checkpoints-gc-interval", r.CheckpointGCInterval, "how often orphaned checkpoints are deleted")
	p := &o.prometheus
	f.StringVar(&p.Address, "prometheus-address", "", "Prometheus HTTP API address, for --storage=prometheus")
	f.DurationVar(&p.HistoryLength, "history-length", p.HistoryLength, "how much usage history to read from Prometheus")
	f.DurationVar(&p.Resolution, "history-resolution", p.Resolution, "step of the Prometheus range queries")
	f.StringVar(&p.CPUQuery, "prometheus-cpu-query", p.CPUQuery, "query giving CPU usage in cores per container ($RESOLUTION is replaced by --history-resolution)")
	f.StringVar(&p.MemoryQuery, "prometheus-memory-query", p.MemoryQuery, "query giving the memory working set in bytes per container")
	f.StringVar(&p.PodLabelsQuery, "prometheus-pod-labels-query", p.PodLabelsQuery, "query giving one series per pod carrying its labels (empty: none)")
	f.StringVar(&p.PodLabelPrefix, "prometheus-pod-label-prefix", p.PodLabelPrefix, "prefix of pod labels in the pod-labels series")
	f.StringVar(&p.NamespaceLabel, "prometheus-namespace-label", p.NamespaceLabel, "label holding the namespace")
	f.StringVar(&p.PodLabel, "prometheus-pod-label", p.PodLabel, "label holding the pod name")
	f.StringVar(&p.ContainerLabel, "prometheus-container-label", p.ContainerLabel, "label holding the container name")
	f.StringVar(&o.prometheusTokenFile, "prometheus-bearer-token-file", "", "file holding a bearer token for Prometheus")
	f.StringVar(&p.Username, "prometheus-username", "", "basic-auth user for Prometheus")
	f.StringVar(&o.prometheusPassFile, "prometheus-password-file", "", "file holding the basic-auth password for Prometheus")
	return cmd
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return ctrl.GetConfig()
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
	if err := manager.CheckComponents(o.components); err != nil {
		return err
	}
	if o.recommender.Interval <= 0 {
		return fmt.Errorf("--recommender-interval %s: must be positive", o.recommender.Interval)
	}
	cfg, err := restConfig(o.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  Scheme(),
		Metrics:                 metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress:  o.probeAddr,
		LeaderElection:          o.leaderElect,
		LeaderElectionID:        o.leaderElectionID,
		LeaderElectionNamespace: o.leaderElectionNS,
		LeaseDuration:           ptrDuration(15 * time.Second),
		Client:                  client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Event{}}}},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("ping", healthz.Ping); err != nil {
		return err
	}
	var history metrics.HistoryProvider
	if o.recommender.Storage == vpactrl.StoragePrometheus {
		if history, err = prometheusHistory(o); err != nil {
			return err
		}
	}
	if err := manager.Add(mgr, cfg, manager.Options{Components: o.components, Recommender: o.recommender, History: history,
		HvpaSync: o.hvpaSync, Registry: crmetrics.Registry}); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "hvpa: starting %s\n", strings.Join(o.components, ", "))
	return mgr.Start(ctx)
}

// prometheusHistory builds the Prometheus history provider from the flags (token and password from files).
func prometheusHistory(o runOptions) (metrics.HistoryProvider, error) {
	p := o.prometheus
	if o.prometheusTokenFile != "" {
		b, err := os.ReadFile(o.prometheusTokenFile)
		if err != nil {
			return nil, fmt.Errorf("--prometheus-bearer-token-file: %w", err)
		}
		p.BearerToken = strings.TrimSpace(string(b))
	}
	if o.prometheusPassFile != "" {
		b, err := os.ReadFile(o.prometheusPassFile)
		if err != nil {
			return nil, fmt.Errorf("--prometheus-password-file: %w", err)
		}
		p.Password = strings.TrimSpace(string(b))
	}
	return metrics.NewPrometheus(p, time.Now)
}

func ptrDuration(d time.Duration) *time.Duration { return &d }
