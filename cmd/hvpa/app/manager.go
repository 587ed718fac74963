// Package app adds hvpa's components to a controller-runtime manager: the one wiring `hvpa run`, the
// demo and the integration suites share.
package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	hvpactrl "github.com/hvpa-dev/hvpa/controllers/hvpa"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/internal/admissionlease"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/internal/heartbeat"
	"github.com/hvpa-dev/hvpa/internal/kubeversion"
	"github.com/hvpa-dev/hvpa/internal/podstore"
	"github.com/hvpa-dev/hvpa/internal/version"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/usage"
	"github.com/hvpa-dev/hvpa/webhooks"
	"github.com/hvpa-dev/hvpa/webhooks/certs"
	"github.com/hvpa-dev/hvpa/webhooks/pod"
)

// Components that can run.
const (
	Recommender = "recommender"
	Hvpa        = "hvpa"
	Admission   = "admission"
	Updater     = "updater"
)

// Available lists the components of this version.
var Available = []string{Recommender, Hvpa, Admission, Updater}

// Options choose and configure the components.
type Options struct {
	Components  []string
	Recommender recommenderctrl.Options
	// Model is the recommender's model configuration (recommender.Defaults() unless set).
	Model *recommender.Config
	// History is the Prometheus history provider, for Recommender.Storage prometheus.
	History usage.HistoryProvider
	// HvpaSync is how often every Hvpa is decided again without a change to it.
	HvpaSync time.Duration
	// HvpaLowConfidenceDays: below this much history an Hvpa's embedded recommendation has LowConfidence and
	// scale-downs from it (replicas and per-pod) are held (0: 1 day).
	HvpaLowConfidenceDays float64
	// HvpaTracking overrides the Hvpas' load-following total's parameters (nil: scaling.DefaultTracking; the demo
	// shortens its windows, as it shortens the recommender's half-life).
	HvpaTracking *scaling.Tracking
	// Registry receives the components' metrics and hvpa_build_info (nil: not registered).
	Registry prometheus.Registerer
	// DropPerObjectMetrics: no series per VerticalPodAutoscaler or Hvpa (--metrics-per-object=false), for
	// clusters with many objects.
	DropPerObjectMetrics bool
	// Gates are the feature gates (nil: every gate at its default).
	Gates featuregate.FeatureGate
	// Updater configures the updater.
	Updater updater.Options
	// AdmissionLease is the Lease the admission webhook renews while serving and the updater checks before
	// evicting (zero: no Lease).
	AdmissionLease types.NamespacedName
	// MaxCPUBoost caps a startup-boosted CPU request (millicores; 0: no cap): --max-allowed-cpu-boost.
	MaxCPUBoost float64
	// Certs configure the admission webhook's serving certificate (nil: the files in the webhook server's
	// CertDir are provided by someone else and not checked).
	Certs *certs.Options
	// Cluster is what the cluster offers (kubeversion.Discover at start; nil: not checked, in-place resize taken
	// as served).
	Cluster *kubeversion.Support
}

// CheckComponents refuses components this version does not have.
func CheckComponents(components []string) error {
	for _, c := range components {
		ok := false
		for _, a := range Available {
			ok = ok || c == a
		}
		if !ok {
			return fmt.Errorf("--components: %q is not available in this version; available: %s", c, strings.Join(Available, ", "))
		}
	}
	return nil
}

// Add adds the chosen components to mgr. The Hvpa controller takes its embedded recommendations from the
// recommender when both run in the process. With the admission component and Certs, the serving certificate
// is made ready (ctx bounds that) before Add returns, since the webhook server needs it to start.
func Add(ctx context.Context, mgr ctrl.Manager, cfg *rest.Config, o Options) error {
	if err := CheckComponents(o.Components); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, c := range o.Components {
		want[c] = true
	}
	if o.Gates == nil {
		o.Gates = features.New()
	}
	version.NewMetrics(o.Registry)
	if want[Admission] {
		if err := addAdmission(ctx, mgr, cfg, o); err != nil {
			return err
		}
	}
	// live reads what the cache has not seen yet, and the kinds it does not hold (unstructured targets)
	live, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	if want[Updater] {
		if err := addUpdater(mgr, cfg, live, o); err != nil {
			return err
		}
	}
	var rec *recommenderctrl.Recommender
	if want[Recommender] {
		if rec, err = addRecommender(mgr, cfg, live, o); err != nil {
			return err
		}
	}
	if want[Hvpa] {
		if err := addHvpa(mgr, live, rec, o); err != nil {
			return err
		}
	}
	return nil
}

// addUpdater adds the updater and its liveness check.
func addUpdater(mgr ctrl.Manager, cfg *rest.Config, live client.Client, o Options) error {
	uo := o.Updater
	uo.AdmissionLease, uo.RecommenderName = o.AdmissionLease, o.Recommender.Name
	uo.NoInPlaceResize = o.Cluster != nil && !o.Cluster.InPlaceResize
	//nolint:staticcheck // core/v1 events: the pod's event stream shows every resize and eviction with its reason
	u := updater.New(mgr.GetClient(), live, mgr.GetEventRecorderFor("hvpa-updater"), clock.RealClock{}, o.Gates, uo, updater.NewMetrics(o.Registry))
	mc, err := metricsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	u.Usage = updater.MetricsUsage{Client: mc}
	if err := updaterLiveness(mgr, u, clock.RealClock{}); err != nil {
		return err
	}
	return mgr.Add(u)
}

// updaterLiveness gives the updater a heartbeat, beaten as each update loop starts, and checks it on /healthz
// ("updater-loop"): it fails once no loop has started for heartbeat.StallAfter(--updater-interval), three
// intervals and five minutes (a loop stuck in an API call that never returns), so that the kubelet restarts
// the process.
func updaterLiveness(mgr healthChecks, u *updater.Updater, clk clock.PassiveClock) error {
	u.Heartbeat = heartbeat.New("update loop started", heartbeat.StallAfter(u.Options.Interval), clk)
	return mgr.AddHealthzCheck("updater-loop", u.Heartbeat.Check)
}

// hvpaLiveness adds the Hvpa controller's liveness probes (hvpactrl.Liveness, one every --hvpa-sync-period
// through its work queue) and checks them on /healthz ("hvpa-controller").
func hvpaLiveness(mgr healthChecks, r *hvpactrl.Reconciler, period time.Duration, clk clock.WithTicker) error {
	r.Liveness = hvpactrl.NewLiveness(period, clk)
	if err := mgr.Add(r.Liveness); err != nil {
		return err
	}
	return mgr.AddHealthzCheck("hvpa-controller", r.Liveness.Check)
}

// healthChecks is the part of a manager the liveness wiring uses.
type healthChecks interface {
	Add(manager.Runnable) error
	AddHealthzCheck(name string, check healthz.Checker) error
}

// addRecommender adds the recommender loop, its pod store and its liveness check.
func addRecommender(mgr ctrl.Manager, cfg *rest.Config, live client.Client, o Options) (*recommenderctrl.Recommender, error) {
	// usage in protobuf (as metrics-server serves it; JSON from servers that do not): at 10,000 pods the list
	// decodes with a fraction of JSON's memory and time
	mcfg := rest.CopyConfig(cfg)
	mcfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	mc, err := metricsclient.NewForConfig(mcfg)
	if err != nil {
		return nil, err
	}
	model := recommender.Defaults()
	if o.Model != nil {
		model = *o.Model
	}
	m := recommenderctrl.NewMetrics(o.Registry)
	m.PerObject = !o.DropPerObjectMetrics
	ropts := o.Recommender
	ropts.PerVPAConfig = o.Gates.Enabled(features.PerVPAConfig)
	if c := o.Cluster; c != nil {
		ropts.NoInPlaceResize, ropts.KubernetesVersion = !c.InPlaceResize, c.Version
	}
	rec, err := recommenderctrl.NewRecommender(mgr.GetClient(), usage.MetricsAPI{Client: mc}, o.History, mgr.GetEventRecorder("hvpa-recommender"),
		clock.RealClock{}, model, ropts, m)
	if err != nil {
		return nil, err
	}
	rec.Targets, rec.Informers = workload.NewResolver(mgr.GetClient(), live), mgr.GetCache()
	// pods in a store of their own that keeps only what the loop reads (about 400 bytes a pod, not the
	// cache's 3 KB); the Hvpa controller and the updater, where they run, read the manager's cache
	pods, err := podstore.NewStore(cfg)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(pods); err != nil {
		return nil, err
	}
	rec.Pods = pods
	if err := mgr.AddHealthzCheck("recommender-loop", rec.LoopHealthy); err != nil {
		return nil, err
	}
	return rec, mgr.Add(rec)
}

// addHvpa adds the Hvpa controller; it takes its embedded recommendations from rec when the recommender runs
// in the process.
func addHvpa(mgr ctrl.Manager, live client.Client, rec *recommenderctrl.Recommender, o Options) error {
	var recs hvpactrl.RecommendationSource
	if rec != nil {
		recs = rec
	}
	m := hvpactrl.NewMetrics(o.Registry)
	m.PerObject = !o.DropPerObjectMetrics
	//nolint:staticcheck // core/v1 events keep every scaling's before -> after message
	r := hvpactrl.NewReconciler(mgr.GetClient(), recs, mgr.GetEventRecorderFor("hvpa-controller"), clock.RealClock{}, o.HvpaSync, m)
	r.Gates, r.RecommenderName = o.Gates, o.Recommender.Name
	r.Targets = workload.NewResolver(mgr.GetClient(), live)
	r.LowConfidenceDays, r.Tracking = o.HvpaLowConfidenceDays, o.HvpaTracking
	if c := o.Cluster; c != nil {
		r.NoInPlaceResize, r.KubernetesVersion = !c.InPlaceResize, c.Version
	}
	// the embedded recommendation is stale after 3 recommender intervals + 5 minutes; override annotations are
	// judged on the recommender's model
	r.RecommenderInterval = o.Recommender.Interval
	model := recommender.Defaults()
	if o.Model != nil {
		model = *o.Model
	}
	r.Model = &model
	if err := hvpaLiveness(mgr, r, o.HvpaSync, clock.RealClock{}); err != nil {
		return err
	}
	return r.SetupWithManager(mgr)
}

// addAdmission adds the webhooks (served by every replica) and, with Certs, the certificate rotator.
func addAdmission(ctx context.Context, mgr ctrl.Manager, cfg *rest.Config, o Options) error {
	live, err := client.New(cfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return err
	}
	if o.Certs != nil {
		rot, err := certs.NewRotator(live, clock.RealClock{}, *o.Certs)
		if err != nil {
			return err
		}
		if err := rot.Ensure(ctx); err != nil {
			if rot.ReadyCheck(nil) != nil {
				return fmt.Errorf("webhook certificates: %w", err)
			}
			// the files from an earlier sync still serve; the rotator retries every interval
			ctrl.Log.WithName("webhook-certificates").Error(err, "sync failed; serving the certificate on disk")
		}
		if err := mgr.Add(rot); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("webhook-certificate", rot.ReadyCheck); err != nil {
			return err
		}
	}
	if err := mgr.AddReadyzCheck("webhook-server", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return err
	}
	if l := o.AdmissionLease; l.Name != "" {
		hb := &admissionlease.Heartbeat{Client: live, Namespace: l.Namespace, Name: l.Name, Interval: 10 * time.Second,
			Serving: mgr.GetWebhookServer().StartedChecker(), Clock: clock.RealClock{}}
		if err := mgr.Add(hb); err != nil {
			return err
		}
	}
	return webhooks.Register(mgr, webhooks.Options{Gates: o.Gates, Metrics: pod.NewMetrics(o.Registry), Live: live,
		RecommenderName: o.Recommender.Name, MaxCPUBoost: o.MaxCPUBoost})
}
