package hvpa

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// TestInPlaceCondition: InPlaceUnavailable appears on an Hvpa that resizes in place (the default
// InPlaceOrRecreate, or InPlace) while the cluster serves no pods/resize, and goes when it does.
func TestInPlaceCondition(t *testing.T) {
	now := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	withMode := func(m *vpav1.UpdateMode) *hvpav1alpha1.Hvpa {
		h := &hvpav1alpha1.Hvpa{}
		if m != nil {
			h.Spec.VPA = &hvpav1alpha1.VpaSpec{Template: hvpav1alpha1.VpaTemplate{UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: m}}}
		}
		return h
	}
	r := &Reconciler{NoInPlaceResize: true, KubernetesVersion: "v1.32.4"}
	for _, tc := range []struct {
		name string
		mode *vpav1.UpdateMode
		want string // "": no condition
	}{
		{"the default InPlaceOrRecreate", nil, "pods are evicted instead"},
		{"InPlace", ptr.To(vpav1.UpdateModeInPlace), "pods are left as they are"},
		{"Recreate", ptr.To(vpav1.UpdateModeRecreate), ""},
	} {
		h := withMode(tc.mode)
		r.inPlaceCondition(h, now)
		c := meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionInPlaceUnavailable)
		switch {
		case tc.want == "" && c != nil:
			t.Errorf("%s: condition %+v, want none", tc.name, c)
		case tc.want != "" && (c == nil || c.Status != "True" || c.Reason != hvpav1alpha1.ReasonNoResizeSubresource):
			t.Errorf("%s: condition %+v, want True %s", tc.name, c, hvpav1alpha1.ReasonNoResizeSubresource)
		case tc.want != "" && !strings.Contains(c.Message, "Kubernetes v1.32.4) serves no pods/resize: "+tc.want):
			t.Errorf("%s: message %q", tc.name, c.Message)
		}
	}
	h := withMode(nil)
	r.inPlaceCondition(h, now)
	(&Reconciler{}).inPlaceCondition(h, now)
	if meta.FindStatusCondition(h.Status.Conditions, hvpav1alpha1.ConditionInPlaceUnavailable) != nil {
		t.Error("the condition stays on a cluster that serves pods/resize")
	}
}

// TestPodsFollowIntent: a scale-in waits for pods being resized (State.PodsResizing) only when the updater
// resizes them: not in updateMode Off or Initial, nor InPlace on a cluster without pods/resize (found in
// review: every scale-in of such an Hvpa whose pods ran other values than its intent was held for good,
// ResizeFirst). Read by observe from a running pod at 100m under an intent of 200m.
func TestPodsFollowIntent(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	pod := wrappers.MakePod("ns", "web-1").Label("app", "web").Phase(corev1.PodRunning).
		Container(wrappers.MakeContainer("app").Image("x").Resources(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}, nil).Obj()).Obj()
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(pod).Build()
	target := workload.Target{GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Namespace: "ns", Name: "web", Selector: labels.SelectorFromSet(labels.Set{"app": "web"})}
	for _, tc := range []struct {
		mode     *vpav1.UpdateMode
		noInPl   bool
		gate     bool // InPlace
		resizing bool
	}{
		{nil, false, false, true}, {nil, true, false, true}, // InPlaceOrRecreate evicts instead
		{ptr.To(vpav1.UpdateModeRecreate), false, false, true}, {ptr.To(vpav1.UpdateModeAuto), false, false, true},
		{ptr.To(vpav1.UpdateModeInPlace), false, true, true}, {ptr.To(vpav1.UpdateModeInPlace), true, true, false},
		// the updater acts on InPlace with the gate on only (an object keeps InPlace with the gate off)
		{ptr.To(vpav1.UpdateModeInPlace), false, false, false},
		{ptr.To(vpav1.UpdateModeOff), false, false, false}, {ptr.To(vpav1.UpdateModeInitial), false, false, false},
	} {
		h := wrappers.MakeHvpa("ns", "web").Desired(2, hvpav1alpha1.ContainerResources{Name: "app",
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}).Obj()
		if tc.mode != nil {
			h.Spec.VPA = &hvpav1alpha1.VpaSpec{Template: hvpav1alpha1.VpaTemplate{UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: tc.mode}}}
		}
		g := features.New()
		if err := g.SetFromMap(map[string]bool{string(features.InPlace): tc.gate}); err != nil {
			t.Fatal(err)
		}
		r := &Reconciler{Client: c, NoInPlaceResize: tc.noInPl, Gates: g}
		st, _, err := r.observe(context.Background(), h, target, &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 2}}, scaling.Horizontal{}, nil, now)
		if err != nil {
			t.Fatal(err)
		}
		if st.PodsResizing != tc.resizing {
			t.Errorf("updateMode %v, no pods/resize %v, gate InPlace %v: pods resizing %v, want %v", ptr.Deref(tc.mode, ""), tc.noInPl, tc.gate, st.PodsResizing, tc.resizing)
		}
	}
}

// TestObserveFollowsTheNewestPod: during a rollout that adds a container, the containers decided for are the
// newest pod's (the new revision's), not those of whichever pod sorts first by name (found in review: the
// intent followed the old revision, then changed again when the rollout ended).
func TestObserveFollowsTheNewestPod(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	ctr := func(name string) corev1.Container {
		return wrappers.MakeContainer(name).Image("x").Resources(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}, nil).Obj()
	}
	old := wrappers.MakePod("ns", "web-a").Label("app", "web").Phase(corev1.PodRunning).Container(ctr("app")).Obj()
	old.CreationTimestamp = metav1.NewTime(now.Add(-time.Hour))
	newer := wrappers.MakePod("ns", "web-b").Label("app", "web").Phase(corev1.PodRunning).Container(ctr("app"), ctr("proxy")).Obj()
	newer.CreationTimestamp = metav1.NewTime(now.Add(-time.Minute))
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(old, newer).Build()
	target := workload.Target{GVK: appsv1.SchemeGroupVersion.WithKind("Deployment"), Namespace: "ns", Name: "web", Selector: labels.SelectorFromSet(labels.Set{"app": "web"})}
	r := &Reconciler{Client: c}
	st, _, err := r.observe(context.Background(), wrappers.MakeHvpa("ns", "web").Obj(), target, &autoscalingv1.Scale{Spec: autoscalingv1.ScaleSpec{Replicas: 2}}, scaling.Horizontal{}, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range st.Containers {
		names = append(names, k.Name)
	}
	if len(names) != 2 || names[1] != "proxy" {
		t.Errorf("containers %v, want the newest pod's app and proxy", names)
	}
}
