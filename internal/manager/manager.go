// Package manager adds hvpa's components to a controller-runtime manager: the one wiring `hvpa run`, the
// demo and the integration suites share.
package manager

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	hvpactrl "github.com/hvpa-dev/hvpa/controllers/hvpa"
	vpactrl "github.com/hvpa-dev/hvpa/controllers/vpa"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/metrics"
)

// Components that can run.
const (
	Recommender = "recommender"
	Hvpa        = "hvpa"
)

// Available lists the components of this version.
var Available = []string{Recommender, Hvpa}

// Options choose and configure the components.
type Options struct {
	Components  []string
	Recommender vpactrl.Options
	// Model is the recommender's model configuration (recommender.Defaults() unless set).
	Model *recommender.Config
	// History is the Prometheus history provider, for Recommender.Storage prometheus.
	History metrics.HistoryProvider
	// HvpaSync is how often every Hvpa is decided again without a change to it.
	HvpaSync time.Duration
	// Registry receives the components' metrics (nil: not registered).
	Registry prometheus.Registerer
}

// CheckComponents refuses components this version does not have.
func CheckComponents(components []string) error {
	for _, c := range components {
		ok := false
		for _, a := range Available {
			ok = ok || c == a
		}
		if !ok {
			return fmt.Errorf("--components: %q is not available in this version; available: %s, %s", c, Recommender, Hvpa)
		}
	}
	return nil
}

// Add adds the chosen components to mgr. The Hvpa controller takes its embedded recommendations from the
// recommender when both run in the process.
func Add(mgr ctrl.Manager, cfg *rest.Config, o Options) error {
	if err := CheckComponents(o.Components); err != nil {
		return err
	}
	want := map[string]bool{}
	for _, c := range o.Components {
		want[c] = true
	}
	var rec *vpactrl.Recommender
	if want[Recommender] {
		mc, err := metricsclient.NewForConfig(cfg)
		if err != nil {
			return err
		}
		model := recommender.Defaults()
		if o.Model != nil {
			model = *o.Model
		}
		rec, err = vpactrl.NewRecommender(mgr.GetClient(), metrics.MetricsAPI{Client: mc}, o.History, mgr.GetEventRecorder("hvpa-recommender"),
			clock.RealClock{}, model, o.Recommender, vpactrl.NewMetrics(o.Registry))
		if err != nil {
			return err
		}
		if err := mgr.Add(rec); err != nil {
			return err
		}
	}
	if want[Hvpa] {
		var recs hvpactrl.RecommendationSource
		if rec != nil {
			recs = rec
		}
		//nolint:staticcheck // core/v1 events keep every scaling's before -> after message
		r := hvpactrl.NewReconciler(mgr.GetClient(), recs, mgr.GetEventRecorderFor("hvpa-controller"), clock.RealClock{}, o.HvpaSync,
			hvpactrl.NewMetrics(o.Registry))
		r.Reader = mgr.GetAPIReader()
		if err := r.SetupWithManager(mgr); err != nil {
			return err
		}
	}
	return nil
}
