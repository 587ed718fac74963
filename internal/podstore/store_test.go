package podstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/hvpa-dev/hvpa/internal/podstore"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// TestStoreOnTheAPIServer: the store lists and watches pods of a real kube-apiserver: every namespace or
// one (its index), status changes (an OOM kill, an in-place resize) and deletions arrive.
func TestStoreOnTheAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local control plane; runs in `make test`, not under -short")
	}
	env, cfg, k8s, err := testenv.StartWithClient()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	var namespaces []string
	for _, prefix := range []string{"a", "b"} {
		ns, err := testenv.NewNamespace(ctx, k8s, prefix)
		if err != nil {
			t.Fatal(err)
		}
		namespaces = append(namespaces, ns)
	}
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}
	pod := func(ns, name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "x"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{wrappers.MakeContainer("app").Resources(req, nil).Obj()}}}
	}
	first := pod(namespaces[0], "p1")
	for _, p := range []*corev1.Pod{first, pod(namespaces[0], "p2"), pod(namespaces[1], "p3")} {
		if err := k8s.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}

	store, err := podstore.NewStore(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = store.Start(ctx) }()
	names := func(ns string) []string {
		pods, err := store.List(ctx, ns)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	// List waits for the first list
	if got := names(""); !slices.Equal(got, []string{"p1", "p2", "p3"}) {
		t.Fatalf("every namespace: %v", got)
	}
	if got := names(namespaces[1]); !slices.Equal(got, []string{"p3"}) {
		t.Fatalf("namespace %s: %v", namespaces[1], got)
	}

	// an OOM kill and an in-place resize reach the store through the watch
	first.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}},
		Resources:            &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}}}}}
	if err := k8s.Status().Update(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := k8s.Delete(ctx, pod(namespaces[0], "p2")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pods, err := store.List(ctx, namespaces[0])
		if err != nil {
			t.Fatal(err)
		}
		if len(pods) == 1 && pods[0].Phase == corev1.PodRunning {
			p := pods[0]
			if cpu, mem := p.Requests("app"); cpu != 100 || mem != 256<<20 || len(p.Containers[0].OOMKills) != 1 {
				t.Fatalf("after the status update: requests %v m / %v bytes, kills %v; want 100 m / 256Mi, one kill", cpu, mem, p.Containers[0].OOMKills)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store did not see the update and the deletion within 30 s: %d pods in %s", len(pods), namespaces[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
