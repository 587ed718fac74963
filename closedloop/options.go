package closedloop

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"time"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Options configure a closed-loop run.
type Options struct {
	// Interval between Hvpa decisions (default 1m).
	Interval time.Duration
	// Runs to make on the same demand (default: Models as hvpa runs).
	Runs []Run
	// Models of the Hvpa's embedded recommender when Runs is empty (default: ModelTotal).
	Models []Model
	// Config of the recommender model (default recommender.Defaults()).
	Config *recommender.Config
	// HvpaFor returns the Hvpa that scales a workload; nil: the workload is not simulated. Every policy
	// simulates the workloads an Hvpa names; the hpa policies read the metrics of its HPA template.
	HvpaFor func(namespace, workload string) *hvpav1alpha1.Hvpa
	// LowConfidenceDays: below this much history the Hvpa has LowConfidence (default 1).
	LowConfidenceDays float64
	// Rows, when set, gets one row per trace timestamp and container (RowsHeader), for the first run.
	Rows io.Writer
	// SeriesStep, when positive, keeps a point per workload every step for a report.
	SeriesStep time.Duration
	// Actuation is how changes reach the pods (zero fields: DefaultActuation's).
	Actuation Actuation
	// HPA configures the HPA of the hpa and hpa+vpa policies and the HPA controller of every policy.
	HPA HPAConfig
	// VPA configures the VPA of the vpa and hpa+vpa policies.
	VPA VPAConfig
}

// Actuation is the one model of how every policy's changes reach the pods.
type Actuation struct {
	// Step is the simulation step and the HPA's sync period (15s): every step the demand of the trace row in
	// force is split over the serving pods.
	Step time.Duration
	// MetricResolution is the metrics pipeline's window (15s, metrics-server's --metric-resolution in its
	// released manifests; unset with another Step, the first multiple of the step from 15s): the
	// autoscalers read the usage of the last closed window of this length, a multiple of Step. The
	// recommenders are fed each trace row's usage (their one-minute loop's sample).
	MetricResolution time.Duration
	// StartupDelay: a new pod costs its requests at once and serves after this delay (60s).
	StartupDelay time.Duration
	// RestartDelay: an OOM-killed container serves again after this delay, doubled for each further kill
	// within ten minutes of running, at most five minutes (the kubelet's CrashLoopBackOff; 10s, rounded up to
	// the step).
	RestartDelay time.Duration
	// UpdaterInterval is the period of the recommender and updater loops (1m): an in-place resize decided at
	// t applies at t + UpdaterInterval.
	UpdaterInterval time.Duration
	// ResizeKeepsBackoff: an in-place resize leaves a container's CrashLoopBackOff as it is, as kubelets did
	// before kubernetes/kubernetes#125757 (2024). By default (false) a resize that changes a container's
	// resources starts its back-off anew, as the kubelet does since that change (since #131681, v1.34, the
	// back-off is keyed by the container's resources): a resized container waiting in back-off restarts with
	// its new resources when the resize applies (the kubelet's sync of the pod for the resize), and its next
	// kill waits the first delay again. Not modelled: a kubelet that leaves the pod-level memory limit of an
	// OOM-killed pod unraised (#138760, reported in 2026), whose pods then crash-loop as under this option.
	ResizeKeepsBackoff bool
	// Instant is the ideal actuation the Hvpa decision's own properties are tested under: new pods serve at
	// once, resizes apply when decided and a killed container serves again at the next step. The
	// autoscalers still read the last metrics window.
	Instant bool
}

// DefaultActuation returns the defaults.
func DefaultActuation() Actuation {
	return Actuation{Step: 15 * time.Second, MetricResolution: 15 * time.Second, StartupDelay: time.Minute, RestartDelay: 10 * time.Second, UpdaterInterval: time.Minute}
}

// HPAConfig are the HPA controller's settings and the baselines' HPA bounds.
type HPAConfig struct {
	// MinReplicas and MaxReplicas bound the HPA of the hpa and hpa+vpa policies (1 and 1000); the Hvpa's HPA
	// keeps its template's.
	MinReplicas, MaxReplicas int32
	// Tolerance (0.1), DownscaleStabilization (5m, the window of a scale-down rule that sets none) and
	// CPUInitializationPeriod (5m) are the kube-controller-manager's defaults.
	Tolerance               float64
	DownscaleStabilization  time.Duration
	CPUInitializationPeriod time.Duration
	// NoBehavior: the hpa and hpa+vpa policies' HPA has no behavior field (as kubectl autoscale makes it),
	// which the controller scales on its older path (hpaModel.legacy); by default it has `behavior: {}`,
	// the API's default rules.
	NoBehavior bool
}

// DefaultHPA returns the defaults.
func DefaultHPA() HPAConfig {
	return HPAConfig{MinReplicas: 1, MaxReplicas: 1000, Tolerance: scaling.HPATolerance, DownscaleStabilization: 5 * time.Minute, CPUInitializationPeriod: 5 * time.Minute}
}

// VPAConfig are the VPA object and updater settings of the vpa and hpa+vpa policies, upstream's defaults
// unless said otherwise.
type VPAConfig struct {
	// Replicas of the vpa policy (0: the pods of the trace's first timestamp).
	Replicas int32
	// UpdateMode of the VPA objects: InPlaceOrRecreate (default) or Recreate.
	UpdateMode vpav1.UpdateMode
	// MinReplicas: the updater leaves a workload with fewer live pods alone. Upstream's --min-replicas is 2,
	// which never updates a single-replica workload; the simulated VPA objects set updatePolicy.minReplicas: 1
	// (upstream's advice for such workloads), so the default here is 1.
	MinReplicas int32
	// EvictionTolerance (0.5), UpdateThreshold (0.1, --pod-update-threshold), PodLifetimeThreshold (12h,
	// --in-recommendation-bounds-eviction-lifetime-threshold) and EvictAfterOOM (10m) are the updater's.
	EvictionTolerance    float64
	UpdateThreshold      float64
	PodLifetimeThreshold time.Duration
	EvictAfterOOM        time.Duration
}

// DefaultVPA returns the defaults.
func DefaultVPA() VPAConfig {
	return VPAConfig{UpdateMode: vpav1.UpdateModeInPlaceOrRecreate, MinReplicas: 1, EvictionTolerance: 0.5, UpdateThreshold: 0.1,
		PodLifetimeThreshold: 12 * time.Hour, EvictAfterOOM: 10 * time.Minute}
}

// withDefaults fills the zero fields of the options and checks them.
func (o Options) withDefaults() (Options, error) {
	if o.Interval == 0 {
		o.Interval = time.Minute
	}
	if len(o.Runs) == 0 {
		models := o.Models
		if len(models) == 0 {
			models = []Model{ModelTotal}
		}
		o.Runs = Runs([]Policy{PolicyHvpa}, models, nil)
	}
	if o.LowConfidenceDays == 0 {
		o.LowConfidenceDays = 1
	}
	o.Actuation = fill(o.Actuation, DefaultActuation())
	o.HPA = fillHPA(o.HPA, DefaultHPA())
	o.VPA = fillVPA(o.VPA, DefaultVPA())
	return o, o.validate()
}

func fill(a, d Actuation) Actuation {
	a.Step = cmp.Or(a.Step, d.Step)
	if a.MetricResolution == 0 { // 15s, or the first multiple of the step from it (d.Step is never 0)
		a.MetricResolution = (d.MetricResolution + a.Step - 1) / a.Step * a.Step
	}
	a.StartupDelay = cmp.Or(a.StartupDelay, d.StartupDelay)
	a.RestartDelay = cmp.Or(a.RestartDelay, d.RestartDelay)
	a.UpdaterInterval = cmp.Or(a.UpdaterInterval, d.UpdaterInterval)
	return a
}

func fillHPA(h, d HPAConfig) HPAConfig {
	h.MinReplicas = cmp.Or(h.MinReplicas, d.MinReplicas)
	h.MaxReplicas = cmp.Or(h.MaxReplicas, d.MaxReplicas)
	h.Tolerance = cmp.Or(h.Tolerance, d.Tolerance)
	h.DownscaleStabilization = cmp.Or(h.DownscaleStabilization, d.DownscaleStabilization)
	h.CPUInitializationPeriod = cmp.Or(h.CPUInitializationPeriod, d.CPUInitializationPeriod)
	return h
}

func fillVPA(v, d VPAConfig) VPAConfig {
	v.UpdateMode = cmp.Or(v.UpdateMode, d.UpdateMode)
	v.MinReplicas = cmp.Or(v.MinReplicas, d.MinReplicas)
	v.EvictionTolerance = cmp.Or(v.EvictionTolerance, d.EvictionTolerance)
	v.UpdateThreshold = cmp.Or(v.UpdateThreshold, d.UpdateThreshold)
	v.PodLifetimeThreshold = cmp.Or(v.PodLifetimeThreshold, d.PodLifetimeThreshold)
	v.EvictAfterOOM = cmp.Or(v.EvictAfterOOM, d.EvictAfterOOM)
	return v
}

// validate names the first option out of range and its flag.
func (o Options) validate() error {
	wholeSeconds := func(flag string, d time.Duration) error {
		if d < time.Second || d%time.Second != 0 {
			return fmt.Errorf("--%s %s: must be a positive number of whole seconds", flag, d)
		}
		return nil
	}
	a := o.Actuation
	if err := errors.Join(wholeSeconds("interval", o.Interval), wholeSeconds("hpa-sync-period", a.Step), wholeSeconds("startup-delay", a.StartupDelay),
		wholeSeconds("restart-delay", a.RestartDelay), wholeSeconds("updater-interval", a.UpdaterInterval)); err != nil {
		return err
	}
	switch {
	case a.MetricResolution%a.Step != 0 || a.MetricResolution < 0:
		return fmt.Errorf("--metric-resolution %s: must be a positive multiple of --hpa-sync-period (%s), the simulation step", a.MetricResolution, a.Step)
	case o.HvpaFor == nil:
		return fmt.Errorf("closed loop: an Hvpa is needed for the workloads (--hvpa FILE)")
	case o.HPA.MinReplicas < 1 || o.HPA.MaxReplicas < o.HPA.MinReplicas:
		return fmt.Errorf("--hpa-min-replicas %d and --hpa-max-replicas %d: need 1 <= min <= max", o.HPA.MinReplicas, o.HPA.MaxReplicas)
	case o.HPA.Tolerance < 0 || o.HPA.Tolerance >= 1:
		return fmt.Errorf("HPA tolerance %g: must be in [0, 1)", o.HPA.Tolerance)
	case o.VPA.Replicas < 0 || o.VPA.MinReplicas < 1:
		return fmt.Errorf("--replicas %d and --vpa-min-replicas %d: the first must not be negative, the second at least 1", o.VPA.Replicas, o.VPA.MinReplicas)
	case o.VPA.UpdateMode != vpav1.UpdateModeInPlaceOrRecreate && o.VPA.UpdateMode != vpav1.UpdateModeRecreate:
		return fmt.Errorf("--vpa-update-mode %q: use InPlaceOrRecreate or Recreate", o.VPA.UpdateMode)
	case o.VPA.EvictionTolerance < 0 || o.VPA.EvictionTolerance > 1 || o.VPA.UpdateThreshold < 0:
		return fmt.Errorf("VPA eviction tolerance %g must be in [0, 1] and update threshold %g not negative", o.VPA.EvictionTolerance, o.VPA.UpdateThreshold)
	}
	return nil
}
