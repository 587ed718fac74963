package hvpa

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

func TestHvpasOfPod(t *testing.T) {
	h := func(ns, name, sel string) *hvpav1alpha1.Hvpa {
		return &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: hvpav1alpha1.HvpaStatus{Selector: sel}}
	}
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(h("a", "web", "app=web"), h("a", "api", "app=api"),
		h("a", "unresolved", ""), h("b", "web", "app=web")).Build()
	r := &Reconciler{Client: c}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web-1", Labels: map[string]string{"app": "web"}}}
	want := []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: "a", Name: "web"}}}
	if d := cmp.Diff(want, r.hvpasOfPod(context.Background(), pod)); d != "" {
		t.Errorf("requests (-want +got):\n%s", d)
	}
}

func TestPodChanged(t *testing.T) {
	running := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app"}}}}
	pending := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}
	restarted := running.DeepCopy()
	restarted.Status.ContainerStatuses[0].RestartCount = 1
	relabelled := running.DeepCopy()
	relabelled.Labels = map[string]string{"x": "y"}
	cases := map[string]struct {
		before, after *corev1.Pod
		want          bool
	}{
		"started":         {pending, running, true},
		"restarted (OOM)": {running, restarted, true},
		"metadata only":   {running, relabelled, false},
		"nothing changed": {running, running.DeepCopy(), false},
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
