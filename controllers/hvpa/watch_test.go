package hvpa

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
