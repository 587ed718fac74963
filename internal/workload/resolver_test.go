package workload

import (
	"context"
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func deployment(name string, replicas *int32) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, ResourceVersion: "7"},
		Spec:   appsv1.DeploymentSpec{Replicas: replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}},
		Status: appsv1.DeploymentStatus{Replicas: 2}}
}

// liveCounter is a live client that counts its reads.
func liveCounter(t *testing.T, objs ...client.Object) (client.Client, *int) {
	t.Helper()
	n := 0
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			n++
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	return c, &n
}

var webRef = &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}

// TestResolverReadsWellKnownKindsFromTheCache: a Deployment the cache holds is resolved (selector, scale)
// without a live read; one the cache has not seen yet is read live.
func TestResolverReadsWellKnownKindsFromTheCache(t *testing.T) {
	cached := fake.NewClientBuilder().WithObjects(deployment("web", ptr.To[int32](3))).Build()
	live, reads := liveCounter(t, deployment("web", ptr.To[int32](3)), deployment("new", nil))
	r := NewResolver(cached, live)
	ctx := context.Background()

	tg, err := r.Resolve(ctx, "ns", webRef)
	if err != nil {
		t.Fatal(err)
	}
	if got := tg.Selector.String(); got != "app=web" {
		t.Errorf("selector %q, want app=web", got)
	}
	s, err := r.Scale(ctx, tg.GVK, "ns", "web")
	if err != nil {
		t.Fatal(err)
	}
	if s.Spec.Replicas != 3 || s.Status.Replicas != 2 || s.Status.Selector != "app=web" || s.ResourceVersion == "" {
		t.Errorf("scale from the cache %+v", s)
	}
	if *reads != 0 {
		t.Errorf("%d live reads for a target the cache holds, want 0", *reads)
	}

	tg, err = r.Resolve(ctx, "ns", &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "new"})
	if err != nil || tg.Selector.String() != "app=new" {
		t.Fatalf("a target only the API server has: %v, %v", tg, err)
	}
	if s, err := r.Scale(ctx, tg.GVK, "ns", "new"); err != nil || s.Spec.Replicas != 1 {
		t.Errorf("spec.replicas unset is 1, as the scale subresource says: %+v, %v", s, err)
	}
	if *reads != 2 {
		t.Errorf("%d live reads, want 2 (the target the cache had not seen, twice)", *reads)
	}

	var te *TargetError
	if _, err := r.Resolve(ctx, "ns", &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "gone"}); !errors.As(err, &te) || te.Reason != "TargetNotFound" {
		t.Errorf("a missing target: %v, want TargetNotFound", err)
	}
}

// blockingReader never syncs: every read waits for its context (an informer that cannot list).
type blockingReader struct{ client.Reader }

func (blockingReader) Get(ctx context.Context, _ client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestResolverFallsBackWhenTheCacheNeverSyncs: a kind whose informer does not sync within CacheWait is read
// live, at once from then on, instead of stalling every loop.
func TestResolverFallsBackWhenTheCacheNeverSyncs(t *testing.T) {
	live, reads := liveCounter(t, deployment("web", nil))
	r := NewResolver(blockingReader{}, live)
	r.CacheWait = 50 * time.Millisecond
	ctx := context.Background()
	for i := range 3 {
		start := time.Now()
		if _, err := r.Resolve(ctx, "ns", webRef); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); i > 0 && waited >= r.CacheWait {
			t.Errorf("read %d waited %s for a cache known not to sync", i, waited)
		}
	}
	if *reads != 3 {
		t.Errorf("%d live reads, want 3", *reads)
	}
}

// TestResolverRefusesControlledAndEmpty: the typed path refuses what the unstructured one refuses.
func TestResolverRefusesControlledAndEmpty(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "u", Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "all"}, Spec: corev1.ReplicationControllerSpec{Selector: map[string]string{}}}
	cached := fake.NewClientBuilder().WithObjects(rs, rc).Build()
	r := NewResolver(cached, cached)
	for ref, reason := range map[autoscalingv1.CrossVersionObjectReference]string{
		{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1"}:     "ParentControllerTarget",
		{APIVersion: "v1", Kind: "ReplicationController", Name: "all"}: "InvalidSelector",
	} {
		var te *TargetError
		if _, err := r.Resolve(context.Background(), "ns", &ref); !errors.As(err, &te) || te.Reason != reason {
			t.Errorf("%s: %v, want %s", ref.Kind, err, reason)
		}
	}
}

// TestResolverSharesOnlyWhatItReads: Resolve and Scale only read the cached workload (its selector, replicas
// and owner references), so they ask the cache for it without a deep copy (client.UnsafeDisableDeepCopy: at
// 10,000 VPAs a Deployment's copy per VPA per run was a tenth of the recommender's run); PodTemplate returns
// a part of the object, which its caller may change, so it asks for a copy.
func TestResolverSharesOnlyWhatItReads(t *testing.T) {
	shared := map[bool]int{}
	cached := fake.NewClientBuilder().WithObjects(deployment("web", ptr.To[int32](3))).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			o := (&client.GetOptions{}).ApplyOptions(opts)
			shared[o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy]++
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	live, _ := liveCounter(t)
	r := NewResolver(cached, live)
	ctx := context.Background()
	tg, err := r.Resolve(ctx, "ns", webRef)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Scale(ctx, tg.GVK, "ns", "web"); err != nil {
		t.Fatal(err)
	}
	if shared[true] != 2 || shared[false] != 0 {
		t.Errorf("Resolve and Scale: %d shared reads, %d copies; want 2 shared", shared[true], shared[false])
	}
	if _, err := r.PodTemplate(ctx, tg.GVK, "ns", "web"); err != nil {
		t.Fatal(err)
	}
	if shared[false] != 1 {
		t.Errorf("PodTemplate: %d copies, want 1 (it returns a part of the object)", shared[false])
	}
}

// TestResolverTakesWellKnownKindsByKind: a targetRef to a well-known kind without apiVersion, or with a group
// or version no longer served, names the served kind (upstream's VPA matches these by kind and name), and so
// does the Ref made from it; a kind of that name in another group stays that group's.
func TestResolverTakesWellKnownKindsByKind(t *testing.T) {
	cached := fake.NewClientBuilder().WithObjects(deployment("web", ptr.To[int32](3))).Build()
	live, _ := liveCounter(t, deployment("web", ptr.To[int32](3)))
	r := NewResolver(cached, live)
	for _, apiVersion := range []string{"", "apps/v1", "apps/v1beta2", "extensions/v1beta1"} {
		tg, err := r.Resolve(context.Background(), "ns", &autoscalingv1.CrossVersionObjectReference{APIVersion: apiVersion, Kind: "Deployment", Name: "web"})
		if err != nil || tg.GVK != appsv1.SchemeGroupVersion.WithKind("Deployment") || tg.Selector.String() != "app=web" {
			t.Errorf("apiVersion %q: %+v, %v; want apps/v1 Deployment web, app=web", apiVersion, tg, err)
		}
		if got := RefOf(apiVersion, "Deployment", "web"); got != (Ref{Group: "apps", Kind: "Deployment", Name: "web"}) {
			t.Errorf("RefOf(%q, Deployment, web) = %v, want Deployment.apps/web", apiVersion, got)
		}
	}
	for _, tc := range []struct{ apiVersion, kind, group string }{
		{"", "CronJob", "batch"}, {"batch/v1beta1", "CronJob", "batch"}, {"", "Job", "batch"}, {"", "ReplicationController", ""},
		{"", "StatefulSet", "apps"}, {"extensions/v1beta1", "DaemonSet", "apps"},
		{"example.com/v1", "Deployment", "example.com"}, {"", "Foo", ""}, {"extensions/v1beta1", "Ingress", "extensions"},
	} {
		if got := RefOf(tc.apiVersion, tc.kind, "x"); got.Group != tc.group {
			t.Errorf("RefOf(%q, %s) group %q, want %q", tc.apiVersion, tc.kind, got.Group, tc.group)
		}
	}
}

// TestPodTemplateOfAnyKind: AnyPodTemplate reads the template of a kind hvpa does not know (an Argo Rollout)
// live from its spec.template, each part that converts (a container that does not is left out, the others
// kept); a kind without spec.template has none; a well-known kind is read from the cache. PodTemplate reads
// the well-known kinds only.
func TestPodTemplateOfAnyKind(t *testing.T) {
	rollout := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
		"metadata": map[string]any{"namespace": "ns", "name": "web"},
		"spec": map[string]any{"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
			"spec": map[string]any{
				"containers": []any{
					map[string]any{"name": "app", "resources": map[string]any{"requests": map[string]any{"cpu": "250m"}}},
					map[string]any{"name": "broken", "ports": "not a list"},
				},
				"initContainers": []any{map[string]any{"name": "init"}},
				"tolerations":    []any{map[string]any{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}},
				"nodeSelector":   map[string]any{"pool": "batch"},
				"affinity": map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
					"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "zone", "operator": "In", "values": []any{"a"}}}}}}}},
			}}}}}
	noTemplate := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"namespace": "ns", "name": "w"}, "spec": map[string]any{"replicas": int64(2)}}}
	live := fake.NewClientBuilder().WithObjects(rollout, noTemplate).Build()
	cached := fake.NewClientBuilder().WithObjects(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dep"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "cached"}}}}}}).Build()
	r := NewResolver(cached, live)
	ctx := context.Background()

	if tmpl, err := r.PodTemplate(ctx, rollout.GroupVersionKind(), "ns", "web"); err != nil || tmpl != nil {
		t.Errorf("PodTemplate of a Rollout: %+v, %v; want none (well-known kinds only)", tmpl, err)
	}
	tmpl, err := r.AnyPodTemplate(ctx, rollout.GroupVersionKind(), "ns", "web")
	if err != nil || tmpl == nil {
		t.Fatalf("Rollout: template %v, error %v", tmpl, err)
	}
	s := tmpl.Spec
	if len(s.Containers) != 1 || s.Containers[0].Name != "app" || s.Containers[0].Resources.Requests.Cpu().String() != "250m" {
		t.Errorf("containers %+v, want app with 250m (broken left out)", s.Containers)
	}
	if len(s.InitContainers) != 1 || len(s.Tolerations) != 1 || s.Tolerations[0].Key != "dedicated" || s.NodeSelector["pool"] != "batch" || tmpl.Labels["app"] != "web" {
		t.Errorf("template %+v: init containers, toleration, nodeSelector or labels lost", tmpl)
	}
	if s.Affinity == nil || s.Affinity.NodeAffinity == nil || s.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Errorf("required node affinity lost: %+v", s.Affinity)
	}
	if tmpl, err := r.AnyPodTemplate(ctx, noTemplate.GroupVersionKind(), "ns", "w"); err != nil || tmpl != nil {
		t.Errorf("a kind without spec.template: %+v, %v; want none", tmpl, err)
	}
	if tmpl, err := r.AnyPodTemplate(ctx, appsv1.SchemeGroupVersion.WithKind("Deployment"), "ns", "dep"); err != nil || tmpl == nil || tmpl.Spec.Containers[0].Name != "cached" {
		t.Errorf("Deployment: %+v, %v; want the cached one's", tmpl, err)
	}
}
