package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/test/wrappers"
	"github.com/hvpa-dev/hvpa/webhooks/pod"
)

// latencyNode is the Node the latency pods are bound to at creation: it does not exist, so that no played
// kubelet runs them and the recommender does not count them (they stay Pending until deleted).
const latencyNode = "bench-latency-node"

// latencyCase is the client-side round trip of pod creations in one setting.
type latencyCase struct {
	name  string
	took  []time.Duration // sorted
	sized int             // pods the webhook sized (autoscaling.hvpa.dev/sized-by)
}

// measureWebhook times cfg.creates pod CREATEs (each deleted right after) in three settings: pods of the first
// Deployment, whose VPA is switched to updateMode Initial so that the webhook sizes them; bare pods in a
// namespace without any VPA (the webhook is called and finds nothing to do); and the first setting again with
// the MutatingWebhookConfiguration removed (the webhook is not called).
//
// With cfg.burstRate, each of the first and last settings also takes a burst: cfg.burstRate pod CREATEs a
// second for cfg.burstFor, sent as they come due whatever the answers (cfg.burstHvpas Hvpas present besides the
// VPAs), timed the same way; the first setting's burst counts the pods admitted unsized.
func measureWebhook(ctx context.Context, out *report, restCfg *rest.Config, c client.Client, cfg config, adms []*hvpaProcess) ([]latencyCase, []burstCase, error) {
	out.Printf("-- webhook latency: %d pod creations per case\n", cfg.creates)
	ns, name := namespaceOf(cfg, 0), appName(0)
	owned, err := ownedPod(ctx, c, ns, name)
	if err != nil {
		return nil, nil, err
	}
	var bursts []burstCase
	burst := func(name string) error {
		b, err := burstIfAsked(ctx, out, restCfg, c, cfg, name, owned, len(bursts) == 0, adms)
		if err == nil && b != nil {
			bursts = append(bursts, *b)
		}
		return err
	}
	if err := switchToInitial(ctx, c, ns, name); err != nil {
		return nil, nil, err
	}
	if err := untilSized(ctx, c, owned, true); err != nil {
		return nil, nil, err
	}
	withVPA, err := timeCreates(ctx, c, cfg.creates, "webhook sizes the pod (its Deployment's VPA, updateMode Initial)", "vpa", owned)
	if err != nil {
		return nil, nil, err
	}
	out.Printf("   %s\n", withVPA.line())
	if err := burst(fmt.Sprintf("burst, webhook sizes the pods (%d replicas)", len(adms))); err != nil {
		return nil, nil, err
	}

	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench-novpa"}}); err != nil {
		return nil, nil, err
	}
	bare := func() *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "bench-novpa"}, Spec: corev1.PodSpec{NodeName: latencyNode,
			Containers: []corev1.Container{wrappers.MakeContainer("app").Requests("100m", "128Mi").Obj()}}}
	}
	noVPA, err := timeCreates(ctx, c, cfg.creates, "webhook called, no VPA in the namespace", "bare", bare)
	if err != nil {
		return nil, nil, err
	}
	out.Printf("   %s\n", noVPA.line())

	if err := c.Delete(ctx, &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: webhookConfig}}); err != nil {
		return nil, nil, fmt.Errorf("removing the MutatingWebhookConfiguration: %w", err)
	}
	if err := untilSized(ctx, c, owned, false); err != nil {
		return nil, nil, err
	}
	none, err := timeCreates(ctx, c, cfg.creates, "no webhook configuration (same pods as the first case)", "plain", owned)
	if err != nil {
		return nil, nil, err
	}
	out.Printf("   %s\n", none.line())
	if err := burst("burst, no webhook configuration"); err != nil {
		return nil, nil, err
	}
	return []latencyCase{withVPA, noVPA, none}, bursts, anyExited(adms)
}

// anyExited is the first admission process's exit, as an error; nil while all run.
func anyExited(adms []*hvpaProcess) error {
	for _, a := range adms {
		if err := a.exited(); err != nil {
			return err
		}
	}
	return nil
}

// switchToInitial sets the VPA's updateMode to Initial, so that the webhook sizes its pods.
func switchToInitial(ctx context.Context, c client.Client, ns, name string) error {
	v := &vpav1.VerticalPodAutoscaler{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, v); err != nil {
		return err
	}
	initial := v.DeepCopy()
	initial.Spec.UpdatePolicy.UpdateMode = ptr.To(vpav1.UpdateModeInitial)
	if err := c.Patch(ctx, initial, client.MergeFrom(v)); err != nil {
		return fmt.Errorf("switching VPA %s/%s to updateMode Initial: %w", ns, name, err)
	}
	return nil
}

// burstIfAsked runs a burst (runBurst) when cfg asks for one, first creating the Hvpas when first, and
// prints it, with the webhook's own handling time over it (read from the admission processes' metrics); nil
// without one.
func burstIfAsked(ctx context.Context, out *report, restCfg *rest.Config, c client.Client, cfg config, name string, newPod func() *corev1.Pod, first bool,
	adms []*hvpaProcess) (*burstCase, error) {
	if cfg.burstRate <= 0 {
		return nil, nil
	}
	if first {
		if err := createHvpas(ctx, c, cfg.burstHvpas); err != nil {
			return nil, err
		}
	}
	var urls []string
	for _, a := range adms {
		urls = append(urls, a.watch.metricsURL)
	}
	before, err := scrapeHandlerHist(urls)
	if err != nil {
		return nil, err
	}
	b, err := runBurst(ctx, restCfg, cfg, name, newPod)
	if err != nil {
		return nil, err
	}
	after, err := scrapeHandlerHist(urls)
	if err != nil {
		return nil, err
	}
	out.Printf("   %s\n", b.line())
	if h := after.minus(before); h.total() > 0 {
		b.handler = &h
		out.Printf("     %s\n", h.line())
	}
	return &b, nil
}

// ownedPod returns a maker of pods like those of the Deployment's ReplicaSet (its template and controller
// reference, so that the webhook finds the Deployment's VPA), bound to latencyNode.
func ownedPod(ctx context.Context, c client.Client, ns, name string) (func() *corev1.Pod, error) {
	var sets appsv1.ReplicaSetList
	if err := c.List(ctx, &sets, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	for _, rs := range sets.Items {
		ref := metav1.GetControllerOf(&rs)
		if ref == nil || ref.Kind != "Deployment" || ref.Name != name {
			continue
		}
		return func() *corev1.Pod {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Labels: rs.Spec.Template.Labels,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(&rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
				Spec: *rs.Spec.Template.Spec.DeepCopy()}
			p.Spec.NodeName = latencyNode
			return p
		}, nil
	}
	return nil, fmt.Errorf("no ReplicaSet of Deployment %s/%s", ns, name)
}

// untilSized creates probe pods (deleted at once) until the webhook sizes them (want) or no longer does: the
// API server and the webhook's cache see changes a moment after they are made.
func untilSized(ctx context.Context, c client.Client, newPod func() *corev1.Pod, want bool) error {
	deadline := time.Now().Add(time.Minute)
	for i := 0; ; i++ {
		p := newPod()
		p.Name = fmt.Sprintf("probe-%d-%d", time.Now().UnixNano(), i)
		if _, err := createDelete(ctx, c, p); err != nil {
			return err
		}
		if sized(p) == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pods still sized=%v by the webhook after a minute (want %v)", sized(p), want)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func sized(p *corev1.Pod) bool { return p.Annotations[pod.AnnotationSizedBy] != "" }

// createDelete creates the pod (p becomes what the API server stored), deletes it at once, and returns how long
// the CREATE took, seen from the client.
func createDelete(ctx context.Context, c client.Client, p *corev1.Pod) (time.Duration, error) {
	start := time.Now()
	if err := c.Create(ctx, p); err != nil {
		return 0, fmt.Errorf("creating pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	took := time.Since(start)
	if err := c.Delete(ctx, p.DeepCopy(), client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("deleting pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return took, nil
}

// timeCreates creates n pods one after another (after 20 untimed ones), each deleted right after, and times
// each CREATE.
func timeCreates(ctx context.Context, c client.Client, n int, name, prefix string, newPod func() *corev1.Pod) (latencyCase, error) {
	lc := latencyCase{name: name}
	for i := -20; i < n; i++ {
		p := newPod()
		p.Name = fmt.Sprintf("%s-%d", prefix, i+20)
		took, err := createDelete(ctx, c, p)
		if err != nil {
			return lc, err
		}
		if i < 0 {
			continue
		}
		lc.took = append(lc.took, took)
		if sized(p) {
			lc.sized++
		}
	}
	slices.Sort(lc.took)
	return lc, nil
}

// line is the case's one-line summary.
func (lc latencyCase) line() string {
	return fmt.Sprintf("%-60s p50 %-8s p99 %-8s (sized %d of %d)", lc.name, ms(percentile(lc.took, 0.5)), ms(percentile(lc.took, 0.99)), lc.sized, len(lc.took))
}
