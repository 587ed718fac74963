package hvpa

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// TestHvpasOfPod: a pod event maps to the Hvpas whose selector selects the pod, found through the
// IndexHvpaPodLabel index (the fake client, like the cache, refuses a List on an index it does not have):
// selectors by label value, by a set of values, and without any value (Exists, NotIn: IndexAnyPod).
func TestHvpasOfPod(t *testing.T) {
	h := func(ns, name, sel string) *hvpav1alpha1.Hvpa {
		return &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: hvpav1alpha1.HvpaStatus{Selector: sel}}
	}
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithIndex(&hvpav1alpha1.Hvpa{}, IndexHvpaPodLabel, HvpaPodLabels).
		WithObjects(h("a", "web", "app=web"), h("a", "api", "app=api"), h("a", "unresolved", ""), h("b", "web", "app=web"),
			h("a", "tiered", "tier=fe,app in (web,api)"), h("a", "any-app", "app"), h("a", "not-db", "app!=db"), h("a", "canary", "app=web,track=canary"),
			h("a", "bad", "app=(")).Build()
	r := &Reconciler{Client: c}
	req := func(names ...string) []reconcile.Request {
		var out []reconcile.Request
		for _, n := range names {
			out = append(out, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "a", Name: n}})
		}
		return out
	}
	for name, tc := range map[string]struct {
		labels map[string]string
		want   []reconcile.Request
	}{
		"app=web":               {map[string]string{"app": "web"}, req("any-app", "not-db", "web")},
		"app=web, a frontend":   {map[string]string{"app": "web", "tier": "fe", "x": "y"}, req("any-app", "not-db", "tiered", "web")},
		"app=api, a frontend":   {map[string]string{"app": "api", "tier": "fe"}, req("any-app", "api", "not-db", "tiered")},
		"the canary of app=web": {map[string]string{"app": "web", "track": "canary"}, req("any-app", "canary", "not-db", "web")},
		"app=db":                {map[string]string{"app": "db"}, req("any-app")},
		"no labels":             {nil, req("not-db")},
	} {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p", Labels: tc.labels}}
			got := r.hvpasOfPod(context.Background(), pod)
			sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("requests (-want +got):\n%s", d)
			}
		})
	}
}

// FuzzHvpaPodLabels: the index misses no Hvpa: whenever a selector selects a pod, the pod has one of the
// selector's index values as a label, or the value is IndexAnyPod.
func FuzzHvpaPodLabels(f *testing.F) {
	for _, s := range []string{"app=web", "app in (web,api),tier=fe", "app", "!app", "app!=db", "app notin (a),x=y", "a=b,c=d", "x>3", ""} {
		f.Add(s, "app", "web", "tier", "fe")
	}
	f.Fuzz(func(t *testing.T, selector, k1, v1, k2, v2 string) {
		sel, err := labels.Parse(selector)
		if err != nil {
			return
		}
		pod := labels.Set{k1: v1, k2: v2}
		if !sel.Matches(pod) || selector == "" {
			return
		}
		keys := HvpaPodLabels(&hvpav1alpha1.Hvpa{Status: hvpav1alpha1.HvpaStatus{Selector: selector}})
		for _, k := range keys {
			if k == IndexAnyPod {
				return
			}
			if key, value, _ := strings.Cut(k, "="); pod.Has(key) && pod.Get(key) == value {
				return
			}
		}
		t.Fatalf("selector %q selects %v, but its index values %q name none of its labels", selector, pod, keys)
	})
}

func TestPodChanged(t *testing.T) {
	running := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app"}}}}
	pending := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}
	restarted := running.DeepCopy()
	restarted.Status.ContainerStatuses[0].RestartCount = 1
	relabelled := running.DeepCopy()
	relabelled.Labels = map[string]string{"x": "y"}
	ready := running.DeepCopy()
	ready.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	unready := ready.DeepCopy()
	unready.Status.Conditions[0].Status = corev1.ConditionFalse
	cases := map[string]struct {
		before, after *corev1.Pod
		want          bool
	}{
		"started":                      {pending, running, true},
		"restarted (OOM)":              {running, restarted, true},
		"metadata only":                {running, relabelled, false},
		"became ready":                 {running, ready, true},
		"no longer ready":              {ready, unready, true},
		"not ready, then no condition": {unready, running, false},
		"nothing changed":              {running, running.DeepCopy(), false},
	}
	for name, tc := range cases {
		if got := podChanged.Update(event.UpdateEvent{ObjectOld: tc.before, ObjectNew: tc.after}); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	if !podChanged.Create(event.CreateEvent{Object: running}) || !podChanged.Delete(event.DeleteEvent{Object: running}) {
		t.Error("creations and deletions must pass")
	}
}

// TestReadsWithoutCopies: what the controller only reads on every pod event and every reconcile (the
// namespace's Hvpas, VPAs and HPAs) comes from the cache without a deep copy of each object
// (client.UnsafeDisableDeepCopy): before issue 31 each pod event copied every Hvpa of its namespace, status
// and all.
func TestReadsWithoutCopies(t *testing.T) {
	hv := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web"}, Status: hvpav1alpha1.HvpaStatus{Selector: "app=web"}}
	hv.Spec.TargetRef.APIVersion, hv.Spec.TargetRef.Kind, hv.Spec.TargetRef.Name = "apps/v1", "Deployment", "web"
	lists, copied := 0, []string{}
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithIndex(&hvpav1alpha1.Hvpa{}, IndexHvpaPodLabel, HvpaPodLabels).WithObjects(hv).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lists++
			if o := (&client.ListOptions{}).ApplyOptions(opts); o.UnsafeDisableDeepCopy == nil || !*o.UnsafeDisableDeepCopy {
				copied = append(copied, fmt.Sprintf("%T", list))
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	r := &Reconciler{Client: c}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p", Labels: map[string]string{"app": "web"}}}
	if got := r.hvpasOfPod(context.Background(), pod); len(got) != 1 {
		t.Fatalf("pod mapped to %v", got)
	}
	target := workload.Target{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespace: "a", Name: "web"}
	if why, err := r.notServing(context.Background(), hv, target); err != nil || why != "" {
		t.Fatalf("notServing: %q, %v", why, err)
	}
	if lists < 3 || len(copied) > 0 {
		t.Errorf("%d lists, these with a deep copy of every object: %v", lists, copied)
	}
}

// TestNotServingAcrossTargetRefSpellings: an older VPA or Hvpa whose targetRef names the same Deployment
// without an apiVersion, or by extensions/v1beta1, serves it (upstream's VPA matches these kinds by kind and
// name): before, only an identical apiVersion's group was compared, and both autoscalers acted.
func TestNotServingAcrossTargetRefSpellings(t *testing.T) {
	older := metav1.NewTime(time.Unix(1000, 0))
	target := workload.Target{GVK: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, Namespace: "a", Name: "web"}
	for _, tc := range []struct {
		name, apiVersion, kind string
		serves                 bool // the other autoscaler serves the workload, so this Hvpa does not act
	}{
		{"no apiVersion", "", "Deployment", true},
		{"extensions/v1beta1", "extensions/v1beta1", "Deployment", true},
		{"apps/v1beta2", "apps/v1beta2", "Deployment", true},
		{"apps/v1", "apps/v1", "Deployment", true},
		{"a Deployment kind of another group", "example.com/v1", "Deployment", false},
		{"another kind", "apps/v1", "StatefulSet", false},
	} {
		for _, other := range []string{"VerticalPodAutoscaler", "Hvpa"} {
			hv := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web", CreationTimestamp: metav1.NewTime(time.Unix(2000, 0))}}
			hv.Spec.TargetRef.APIVersion, hv.Spec.TargetRef.Kind, hv.Spec.TargetRef.Name = "apps/v1", "Deployment", "web"
			var obj client.Object
			if other == "Hvpa" {
				o := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "first", CreationTimestamp: older}}
				o.Spec.TargetRef.APIVersion, o.Spec.TargetRef.Kind, o.Spec.TargetRef.Name = tc.apiVersion, tc.kind, "web"
				obj = o
			} else {
				obj = &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "first", CreationTimestamp: older},
					Spec: vpav1.VerticalPodAutoscalerSpec{TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: tc.apiVersion, Kind: tc.kind, Name: "web"}}}
			}
			r := &Reconciler{Client: fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(hv, obj).Build()}
			why, err := r.notServing(context.Background(), hv, target)
			if err != nil {
				t.Fatalf("%s %s: %v", other, tc.name, err)
			}
			if (why != "") != tc.serves {
				t.Errorf("%s targeting %s %s/web: notServing %q, want the other to serve: %v", other, tc.name, tc.kind, why, tc.serves)
			}
		}
	}
}

// TestHvpasOfOtherAutoscalers: an HPA that scales an Hvpa's workload directly, or a VPA of that workload, wakes
// that Hvpa (whether it acts depends on them: notServing), not the Hvpas of other workloads; an HPA targeting
// an Hvpa wakes it. Before, only the latter was watched, and the others waited for the next sync.
func TestHvpasOfOtherAutoscalers(t *testing.T) {
	mk := func(name, apiVersion, kind, target string) *hvpav1alpha1.Hvpa {
		h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name}}
		h.Spec.TargetRef.APIVersion, h.Spec.TargetRef.Kind, h.Spec.TargetRef.Name = apiVersion, kind, target
		return h
	}
	r := &Reconciler{Client: fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(
		mk("web", "apps/v1", "Deployment", "web"), mk("db", "apps/v1", "StatefulSet", "db"), mk("old", "", "Deployment", "web")).Build()}
	names := func(reqs []reconcile.Request) []string {
		var out []string
		for _, q := range reqs {
			out = append(out, q.Namespace+"/"+q.Name)
		}
		sort.Strings(out)
		return out
	}
	hpa := func(apiVersion, kind, name string) *autoscalingv2.HorizontalPodAutoscaler {
		return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "h"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: name}}}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		got  []reconcile.Request
		want []string
	}{
		{"an HPA on the Deployment", r.hvpasOfHPA(ctx, hpa("apps/v1", "Deployment", "web")), []string{"a/old", "a/web"}},
		{"an HPA on the Hvpa", r.hvpasOfHPA(ctx, hpa(hvpav1alpha1.GroupVersion.String(), hvpav1alpha1.KindHvpa, "db")), []string{"a/db"}},
		{"an HPA on another workload", r.hvpasOfHPA(ctx, hpa("apps/v1", "Deployment", "other")), nil},
		{"a VPA of the StatefulSet", r.hvpasOfVPA(ctx, &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "v"},
			Spec: vpav1.VerticalPodAutoscalerSpec{TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db"}}}), []string{"a/db"}},
		{"a VPA of the Deployment without an apiVersion", r.hvpasOfVPA(ctx, &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "v"},
			Spec: vpav1.VerticalPodAutoscalerSpec{TargetRef: &autoscalingv1.CrossVersionObjectReference{Kind: "Deployment", Name: "web"}}}), []string{"a/old", "a/web"}},
	} {
		if got := names(tc.got); !slices.Equal(got, tc.want) {
			t.Errorf("%s: wakes %v, want %v", tc.name, got, tc.want)
		}
	}
	// an HPA status update wakes only for an HPA targeting an Hvpa; a spec change of any does
	onHvpa, direct := hpa(hvpav1alpha1.GroupVersion.String(), hvpav1alpha1.KindHvpa, "db"), hpa("apps/v1", "Deployment", "web")
	if !hpaChanged.Update(event.UpdateEvent{ObjectOld: onHvpa, ObjectNew: onHvpa}) || hpaChanged.Update(event.UpdateEvent{ObjectOld: direct, ObjectNew: direct}) {
		t.Error("status updates: want those of an HPA on an Hvpa only")
	}
	moved := direct.DeepCopy()
	moved.Generation = 2
	if !hpaChanged.Update(event.UpdateEvent{ObjectOld: direct, ObjectNew: moved}) {
		t.Error("a spec change of a direct HPA: want it passed")
	}
}
