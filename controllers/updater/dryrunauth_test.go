package updater

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// rbacForbidden is kube-apiserver's answer to a request its authorizer refuses (RBAC: no rule grants it).
func rbacForbidden() error {
	return apierrors.NewForbidden(podsGR, "", errors.New(`User "system:serviceaccount:hvpa-system:hvpa-updater" cannot create resource "pods" in API group "" in the namespace "shop"`))
}

// TestEvictWithoutDryRunPermission: when the API server refuses the dry run of a replacement because the
// updater itself may not create pods (RBAC without the chart's grant, e.g. an install that left it out),
// the pod is not evicted: the eviction could lose it, as nothing checked that its replacement would be
// admitted. The skip says so (ReplacementNotChecked, the fix named: grant create pods), it is retried with
// backoff, counted as replacement_unchecked, and the share of the budget is freed. The updater tells that
// 403 from one of admission (a policy refusing the replacement: ReplacementWouldBeRefused) by asking the
// authorizer (SelfSubjectAccessReview); a review that fails leaves the 403 a refusal of the replacement.
func TestEvictWithoutDryRunPermission(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "u1"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
	cases := map[string]struct {
		review     func(*authorizationv1.SelfSubjectAccessReview) error // answers the updater's review
		dryRun     error
		reason     string
		outcome    string
		wantReview bool
	}{
		"RBAC refuses the updater create pods": {func(r *authorizationv1.SelfSubjectAccessReview) error { r.Status.Allowed = false; return nil },
			rbacForbidden(), ReasonReplacementUnchecked, "replacement_unchecked", true},
		"a policy refuses the replacement (the updater may create pods)": {func(r *authorizationv1.SelfSubjectAccessReview) error { r.Status.Allowed = true; return nil },
			apierrors.NewForbidden(podsGR, "", errors.New(`admission webhook "policy.example" denied the request: no`)), ReasonReplacementRefused, "replacement_refused", true},
		"the review fails: the 403 stays a refusal": {func(*authorizationv1.SelfSubjectAccessReview) error { return apierrors.NewServiceUnavailable("down") },
			rbacForbidden(), ReasonReplacementRefused, "replacement_refused", true},
		"refused as invalid (422): no review": {nil,
			apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "", nil), ReasonReplacementRefused, "replacement_refused", false},
		"admitted: evicted, no review": {nil, nil, "", "evicted", false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var reviews []authorizationv1.ResourceAttributes
			evictions := 0
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(pod.DeepCopy()).
				WithIndex(&corev1.Pod{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).
				WithInterceptorFuncs(interceptor.Funcs{
					Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
						switch o := obj.(type) {
						case *corev1.Pod:
							if o.Name != "" || o.GenerateName != "web-1-" || len((&client.CreateOptions{}).ApplyOptions(opts).DryRun) == 0 {
								t.Errorf("a pod created other than as the dry run of web-1's replacement: %s/%s%s %v", o.Namespace, o.GenerateName, o.Name, opts)
							}
							return tc.dryRun
						case *authorizationv1.SelfSubjectAccessReview:
							reviews = append(reviews, *o.Spec.ResourceAttributes)
							return tc.review(o)
						}
						return c.Create(ctx, obj, opts...)
					},
					SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
						evictions++
						return c.SubResource(sub).Create(ctx, obj, subObj, opts...)
					},
				}).Build()
			rec := record.NewFakeRecorder(10)
			u := New(c, c, rec, clocktesting.NewFakeClock(now), nil, DefaultOptions(), NewMetrics(nil))
			budget := 0 // this eviction took the workload's last share
			s := served{ctl: Controller{Kind: "Hvpa", Namespace: "shop", Name: "web"}, obj: pod, budget: &budget, known: map[types.UID]bool{}}
			a := &Action{Kind: Evict, Fingerprint: "f", Message: "app cpu request 100m -> 500m",
				Sized: []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(500, -1)}}}
			u.evict(context.Background(), s, pod, a, true, "", now)

			if got := testutil.ToFloat64(u.Metrics.Evictions.WithLabelValues(tc.outcome)); got != 1 {
				t.Errorf("evictions{outcome=%q} = %v, want 1", tc.outcome, got)
			}
			reviewed := len(reviews) > 0
			if reviewed != tc.wantReview || reviewed && reviews[0] != (authorizationv1.ResourceAttributes{Namespace: "shop", Verb: "create", Resource: "pods"}) {
				t.Errorf("reviews %+v, want one for create pods in shop: %v", reviews, tc.wantReview)
			}
			if tc.dryRun == nil {
				if evictions != 1 || a.Kind != Evict {
					t.Errorf("%d evictions, %s: %s; want the pod evicted", evictions, a.Kind, a.Message)
				}
				return
			}
			if evictions != 0 || a.Kind != Skip || a.Reason != tc.reason || !a.Backoff {
				t.Errorf("%d evictions; %s/%s backoff %v, want no eviction and a skip %s with backoff: %s", evictions, a.Kind, a.Reason, a.Backoff, tc.reason, a.Message)
			}
			if budget != 1 {
				t.Errorf("budget %d after the skip, want the share freed (1)", budget)
			}
			if _, ok := u.refused[pod.UID]; !ok {
				t.Error("no backoff recorded for the pod")
			}
			select {
			case e := <-rec.Events:
				if !strings.HasPrefix(e, "Warning UpdateSkipped "+tc.reason+": ") ||
					tc.reason == ReasonReplacementUnchecked && !strings.Contains(e, "grant the updater create pods") {
					t.Errorf("event %q", e)
				}
			case <-time.After(time.Second):
				t.Error("no event")
			}
		})
	}
}

// TestRefusedReplacementFreesOnlyATakenShare: an eviction whose replacement's dry run is refused frees the
// share of the disruption budget it took, and only that: the eviction of a pod in an OOM crash loop took
// none (limitEvictions exempts it), so the workload's budget stays as it was (before, each such refusal
// raised it by one, and a later eviction of a ready pod went beyond --eviction-tolerance).
func TestRefusedReplacementFreesOnlyATakenShare(t *testing.T) {
	for name, looping := range map[string]bool{"a ready pod": false, "a pod in an OOM crash loop": true} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "u1"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
		c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(pod.DeepCopy()).
			WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if _, ok := obj.(*corev1.Pod); ok {
						return apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "", nil) // the replacement would be refused
					}
					return c.Create(ctx, obj, opts...)
				},
			}).Build()
		u := New(c, c, record.NewFakeRecorder(10), clocktesting.NewFakeClock(now), nil, DefaultOptions(), NewMetrics(nil))
		budget := 0
		s := served{ctl: Controller{Kind: "VerticalPodAutoscaler", Namespace: "shop", Name: "web"}, obj: pod, budget: &budget, known: map[types.UID]bool{}}
		a := &Action{Kind: Evict, Fingerprint: "f", Pod: &Pod{Name: "web-1", UID: "u1", Running: true, Live: !looping, OOMKilledEarly: looping},
			Sized: []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(500, -1)}}}
		u.evict(context.Background(), s, pod, a, true, "", now)
		if want := map[bool]int{false: 1, true: 0}[looping]; a.Kind != Skip || budget != want {
			t.Errorf("%s: %s, budget %d after the refused replacement, want a skip and %d", name, a.Kind, budget, want)
		}
	}
}

// TestEvictOnlyWhenTheReplacementIsSized: with the admission Lease checked (evicted pods must come back
// sized), an eviction goes ahead only when the dry run of the replacement came back marked by a sizing
// webhook, hvpa's (sized-by) or upstream's (vpaUpdates); admitted unmarked (the webhook is not called in the
// namespace, as the chart's excludedNamespaces, or failed open) the pod is not evicted: ReplacementNotSized,
// with backoff, counted as replacement_unsized. The marks the pod itself carries from its own admission do not
// count (found in review: kube-system's pods were evicted by a webhook that never saw their replacements).
func TestEvictOnlyWhenTheReplacementIsSized(t *testing.T) {
	for name, tc := range map[string]struct {
		mark    map[string]string // what the dry run's webhook writes
		evicted bool
	}{
		"hvpa's webhook":                       {map[string]string{vpav1.AnnotationSizedBy: "Hvpa/web"}, true},
		"upstream's webhook":                   {map[string]string{vpav1.AnnotationUpstreamUpdates: "Pod resources updated by web: container 0: "}, true},
		"no webhook: the pod's own marks only": {nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "web-1", UID: "u1",
				Annotations: map[string]string{vpav1.AnnotationSizedBy: "Hvpa/web", vpav1.AnnotationUpstreamUpdates: "Pod resources updated by web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
			evictions := 0
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(pod.DeepCopy()).
				WithIndex(&corev1.Pod{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).
				WithInterceptorFuncs(interceptor.Funcs{
					Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
						if o, ok := obj.(*corev1.Pod); ok && len((&client.CreateOptions{}).ApplyOptions(opts).DryRun) > 0 {
							for k, v := range tc.mark {
								o.Annotations[k] = v
							}
							return nil
						}
						return c.Create(ctx, obj, opts...)
					},
					SubResourceCreate: func(ctx context.Context, c client.Client, sub string, obj, subObj client.Object, opts ...client.SubResourceCreateOption) error {
						evictions++
						return c.SubResource(sub).Create(ctx, obj, subObj, opts...)
					},
				}).Build()
			o := DefaultOptions()
			o.AdmissionLease = types.NamespacedName{Namespace: "hvpa", Name: "hvpa-admission"}
			u := New(c, c, record.NewFakeRecorder(10), clocktesting.NewFakeClock(now), nil, o, NewMetrics(nil))
			budget := 0
			s := served{ctl: Controller{Kind: "Hvpa", Namespace: "kube-system", Name: "web"}, obj: pod, budget: &budget, known: map[types.UID]bool{}}
			a := &Action{Kind: Evict, Fingerprint: "f", Message: "app cpu request 100m -> 500m",
				Sized: []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(500, -1)}}}
			u.evict(context.Background(), s, pod, a, true, "", now)
			if tc.evicted {
				if evictions != 1 || a.Kind != Evict {
					t.Errorf("%d evictions, %s/%s: %s; want the pod evicted", evictions, a.Kind, a.Reason, a.Message)
				}
				return
			}
			if evictions != 0 || a.Kind != Skip || a.Reason != ReasonReplacementUnsized || !a.Backoff {
				t.Errorf("%d evictions; %s/%s backoff %v: %s; want a skip ReplacementNotSized with backoff", evictions, a.Kind, a.Reason, a.Backoff, a.Message)
			}
			if got := testutil.ToFloat64(u.Metrics.Evictions.WithLabelValues("replacement_unsized")); got != 1 {
				t.Errorf("evictions{outcome=replacement_unsized} = %v, want 1", got)
			}
		})
	}
}
