package webhooks

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/webhooks/pod"
	"github.com/hvpa-dev/hvpa/webhooks/validation"
)

// The paths the webhook server serves.
const (
	PodPath  = "/mutate-v1-pod"
	VPAPath  = "/validate-autoscaling-k8s-io-v1-verticalpodautoscaler"
	HvpaPath = "/validate-autoscaling-k8s-io-v1alpha1-hvpa"
)

// DefaultTimeoutSeconds is the API server's wait for an answer: short, so that a webhook that is down
// delays a pod creation by at most this (failurePolicy Ignore then admits it unsized).
const DefaultTimeoutSeconds = 3

// Options configure the webhooks.
type Options struct {
	Gates   featuregate.FeatureGate
	Metrics *pod.Metrics
	// Live is an uncached client for reads the cache may not answer yet (may be nil: the manager's client).
	Live  client.Client
	Clock clock.PassiveClock
	// RecommenderName is the name hvpa's recommender serves ("": "default"); see pod.Handler.
	RecommenderName string
	// MaxCPUBoost caps a startup-boosted CPU request (millicores; 0: no cap); see pod.Handler.
	MaxCPUBoost float64
}

// Register adds the three webhooks to the manager's webhook server, and a runnable that fills the cache
// the pod webhook reads before the first request needs it.
func Register(mgr ctrl.Manager, o Options) error {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Live == nil {
		o.Live = mgr.GetClient()
	}
	srv := mgr.GetWebhookServer()
	podHandler := pod.NewHandler(mgr.GetClient(), o.Live, o.Gates, o.Metrics, o.Clock)
	podHandler.RecommenderName, podHandler.MaxCPUBoost = o.RecommenderName, o.MaxCPUBoost
	srv.Register(PodPath, &admission.Webhook{Handler: podHandler})
	vpaHook := admission.WithValidator[*vpav1.VerticalPodAutoscaler](mgr.GetScheme(), validation.VPAValidator(o.Gates))
	vpaHook.Handler = instrumented{resource: "verticalpodautoscalers", next: vpaHook.Handler, m: o.Metrics, clk: o.Clock}
	srv.Register(VPAPath, vpaHook)
	hvpaHook := admission.WithValidator[*hvpav1alpha1.Hvpa](mgr.GetScheme(), validation.HvpaValidator(o.Gates))
	hvpaHook.Handler = instrumented{resource: "hvpas", next: hvpaHook.Handler, m: o.Metrics, clk: o.Clock}
	srv.Register(HvpaPath, hvpaHook)
	w := &warmup{c: mgr.GetClient()}
	if err := mgr.AddReadyzCheck("webhook-cache", w.ready); err != nil {
		return err
	}
	return mgr.Add(w)
}

// instrumented records the latency and outcome of a validation webhook.
type instrumented struct {
	resource string
	next     admission.Handler
	m        *pod.Metrics
	clk      clock.PassiveClock
}

func (i instrumented) Handle(ctx context.Context, req admission.Request) admission.Response {
	start := i.clk.Now()
	resp := i.next.Handle(ctx, req)
	outcome := pod.OutcomeAllowed
	switch {
	case !resp.Allowed:
		outcome = pod.OutcomeRejected
	case len(resp.Warnings) > 0:
		outcome = pod.OutcomeWarned
	}
	i.m.Observe(i.resource, outcome, i.clk.Since(start))
	return resp
}

// warmup lists what the pod webhook reads, so that the informers exist and are synced before the first
// pod arrives (a lazily started informer would make that first admission wait for a full list); the
// replica reports ready only after that (the webhook-cache readiness check).
type warmup struct {
	c      client.Client
	synced atomic.Bool
}

var _ manager.LeaderElectionRunnable = &warmup{}

func (*warmup) NeedLeaderElection() bool { return false }

func (w *warmup) ready(*http.Request) error {
	if !w.synced.Load() {
		return errors.New("the pod webhook's cache is not synced yet")
	}
	return nil
}

func (w *warmup) Start(ctx context.Context) error {
	// what the pod webhook reads: VPAs, Hvpas, LimitRanges, and the targets of the well-known kinds (typed)
	lists := []client.ObjectList{&vpav1.VerticalPodAutoscalerList{}, &hvpav1alpha1.HvpaList{}, &corev1.LimitRangeList{},
		&appsv1.DeploymentList{}, &appsv1.StatefulSetList{}, &appsv1.DaemonSetList{}}
	// the owners a pod's controller chain usually passes through (metadata only)
	for _, gvk := range []schema.GroupVersionKind{{Group: "apps", Version: "v1", Kind: "ReplicaSetList"}, {Group: "apps", Version: "v1", Kind: "DeploymentList"},
		{Group: "apps", Version: "v1", Kind: "StatefulSetList"}, {Group: "apps", Version: "v1", Kind: "DaemonSetList"}, {Group: "batch", Version: "v1", Kind: "JobList"}} {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(gvk)
		lists = append(lists, l)
	}
	for _, l := range lists {
		for {
			err := w.c.List(ctx, l, client.Limit(1))
			if err == nil || ctx.Err() != nil {
				break
			}
			logf.FromContext(ctx).Info("webhook cache warm-up: retrying", "error", err.Error())
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}
	w.synced.Store(true)
	<-ctx.Done()
	return nil
}

// DefaultExcludedNamespaces are the namespaces whose pods the pod webhook is never called for, besides
// hvpa's own: the control plane's pods must start whatever the webhook does.
var DefaultExcludedNamespaces = []string{metav1.NamespaceSystem}

// notIn selects every namespace but these (by the kubernetes.io/metadata.name label every namespace has);
// nil selects all.
func notIn(namespaces []string) *metav1.LabelSelector {
	if len(namespaces) == 0 {
		return nil
	}
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpNotIn, Values: namespaces}}}
}

// Configurations returns the webhook configurations to install: the pod mutation and the object validation,
// each with failurePolicy Ignore and a timeout of timeoutSeconds; clientConfig gives each path's client
// configuration (a Service, or a URL). The caBundle is left for the certificate rotator (or cert-manager).
// The pod webhook is not called for pods of excludedNamespaces (DefaultExcludedNamespaces and hvpa's own).
func Configurations(name string, clientConfig func(path string) admissionregistrationv1.WebhookClientConfig, timeoutSeconds int32, excludedNamespaces []string) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	ignore := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	equivalent := admissionregistrationv1.Equivalent
	ifNeeded := admissionregistrationv1.IfNeededReinvocationPolicy
	rule := func(group, version, resource string, ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		return []admissionregistrationv1.RuleWithOperations{{Operations: ops, Rule: admissionregistrationv1.Rule{
			APIGroups: []string{group}, APIVersions: []string{version}, Resources: []string{resource}, Scope: ptr.To(admissionregistrationv1.NamespacedScope)}}}
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "pods.autoscaling.hvpa.dev", ClientConfig: clientConfig(PodPath),
			Rules:         rule("", "v1", "pods", admissionregistrationv1.Create),
			FailurePolicy: &ignore, SideEffects: &none, MatchPolicy: &equivalent, TimeoutSeconds: &timeoutSeconds,
			AdmissionReviewVersions: []string{"v1"}, ReinvocationPolicy: &ifNeeded, NamespaceSelector: notIn(excludedNamespaces),
		}},
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name: "verticalpodautoscalers.autoscaling.hvpa.dev", ClientConfig: clientConfig(VPAPath),
			Rules:         rule(vpav1.GroupVersion.Group, vpav1.GroupVersion.Version, "verticalpodautoscalers", admissionregistrationv1.Create, admissionregistrationv1.Update),
			FailurePolicy: &ignore, SideEffects: &none, MatchPolicy: &equivalent, TimeoutSeconds: &timeoutSeconds, AdmissionReviewVersions: []string{"v1"},
		}, {
			Name: "hvpas.autoscaling.hvpa.dev", ClientConfig: clientConfig(HvpaPath),
			Rules:         rule(hvpav1alpha1.GroupVersion.Group, hvpav1alpha1.GroupVersion.Version, "hvpas", admissionregistrationv1.Create, admissionregistrationv1.Update),
			FailurePolicy: &ignore, SideEffects: &none, MatchPolicy: &equivalent, TimeoutSeconds: &timeoutSeconds, AdmissionReviewVersions: []string{"v1"},
		}},
	}
	return mutating, validating
}
