package scaling

import (
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

func hpaOn(name, apiVersion, kind, target string, created time.Time, metrics ...autoscalingv2.MetricSpec) autoscalingv2.HorizontalPodAutoscaler {
	return autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: apiVersion, Kind: kind, Name: target},
			MaxReplicas: 10, Metrics: metrics}}
}

func cpuUtilization(pct int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(pct)}}}
}

func TestHorizontalOf(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	web := func(deploy bool, replicas *int32) *hvpav1alpha1.Hvpa {
		h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: types.UID("web-uid")}, Spec: hvpav1alpha1.HvpaSpec{Replicas: replicas}}
		if deploy {
			h.Spec.HPA = &hvpav1alpha1.HpaSpec{Deploy: true, Template: hvpav1alpha1.HpaTemplate{MaxReplicas: 5}}
		} else {
			h.Spec.HPA = &hvpav1alpha1.HpaSpec{}
		}
		return h
	}
	owned := hpaOn("web", "autoscaling.k8s.io/v1alpha1", "Hvpa", "web", t0)
	owned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "autoscaling.k8s.io/v1alpha1", Kind: "Hvpa", Name: "web", UID: "web-uid", Controller: ptr.To(true)}}
	user := hpaOn("users", "autoscaling.k8s.io/v1alpha1", "Hvpa", "web", t0.Add(time.Hour))
	keda := hpaOn("keda-hpa-web", "autoscaling.k8s.io/v1", "Hvpa", "web", t0.Add(2*time.Hour)) // any version of the group
	others := []autoscalingv2.HorizontalPodAutoscaler{
		hpaOn("deploy", "apps/v1", "Deployment", "web", t0),                  // the workload, not the Hvpa
		hpaOn("other-hvpa", "autoscaling.k8s.io/v1alpha1", "Hvpa", "db", t0), // another Hvpa
		hpaOn("foreign", "example.com/v1", "Hvpa", "web", t0),                // another group's kind of that name
	}
	cases := map[string]struct {
		h          *hvpav1alpha1.Hvpa
		owned      *autoscalingv2.HorizontalPodAutoscaler
		hpas       []autoscalingv2.HorizontalPodAutoscaler
		own        *int32
		kind       HorizontalKind
		hpa        string
		ignored    string
		descriptor string
	}{
		"deployed: its HPA, the others named": {web(true, ptr.To[int32](2)), &owned, append([]autoscalingv2.HorizontalPodAutoscaler{owned, user}, others...), nil,
			HorizontalDeployed, "web", "users", "deployed by this Hvpa"},
		"deployed, not created yet": {web(true, ptr.To[int32](2)), nil, nil, nil, HorizontalDeployed, "", "", "deployed by this Hvpa"},
		"a user's HPA on the Hvpa": {web(false, ptr.To[int32](2)), nil, append([]autoscalingv2.HorizontalPodAutoscaler{user}, others...), ptr.To[int32](2),
			HorizontalHPA, "users", "", "targets this Hvpa"},
		"two HPAs: the oldest counts": {web(false, ptr.To[int32](2)), nil, []autoscalingv2.HorizontalPodAutoscaler{keda, user}, nil,
			HorizontalHPA, "users", "keda-hpa-web", "keep one HPA per Hvpa"},
		"the owned HPA left over after deploy is turned off is no input": {web(false, ptr.To[int32](2)), nil, []autoscalingv2.HorizontalPodAutoscaler{owned}, ptr.To[int32](2),
			HorizontalNone, "", "", ""},
		"kubectl scale, no HPA: a floor":                                 {web(false, ptr.To[int32](4)), nil, others, ptr.To[int32](2), HorizontalScale, "", "", "a replica floor"},
		"spec.replicas written in the manifest, never by the controller": {web(false, ptr.To[int32](4)), nil, nil, nil, HorizontalScale, "", "", "a replica floor"},
		"spec.replicas as the controller wrote it":                       {web(false, ptr.To[int32](2)), nil, others, ptr.To[int32](2), HorizontalNone, "", "", ""},
		"no spec.replicas":                                               {web(false, nil), nil, nil, nil, HorizontalNone, "", "", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			src := HorizontalOf(tc.h, tc.owned, tc.hpas, tc.own)
			if src.Kind != tc.kind {
				t.Fatalf("kind %d, want %d", src.Kind, tc.kind)
			}
			got := ""
			if src.HPA != nil {
				got = src.HPA.Name
			}
			if got != tc.hpa {
				t.Errorf("HPA %q, want %q", got, tc.hpa)
			}
			if strings.Join(src.Others, ",") != tc.ignored {
				t.Errorf("others %v, want %q", src.Others, tc.ignored)
			}
			if d := src.Describe(tc.h); !strings.Contains(d, tc.descriptor) || (tc.descriptor == "") != (d == "") {
				t.Errorf("source %q, want it to say %q", d, tc.descriptor)
			}
		})
	}
}

func TestHorizontalReleased(t *testing.T) {
	h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: hvpav1alpha1.HvpaSpec{Replicas: ptr.To[int32](6)}}
	user := hpaOn("users", "autoscaling.k8s.io/v1alpha1", "Hvpa", "web", time.Time{})
	byHPA := Horizontal{Kind: HorizontalHPA, HPA: &user}.Describe(h)
	for _, tc := range []struct {
		name     string
		recorded string
		now      Horizontal
		want     bool
	}{
		{"the HPA that wrote it is gone", byHPA, Horizontal{Kind: HorizontalScale}, true},
		{"the deployed HPA was turned off", Horizontal{Kind: HorizontalDeployed}.Describe(h), Horizontal{Kind: HorizontalNone}, true},
		{"the HPA still writes it", byHPA, Horizontal{Kind: HorizontalHPA, HPA: &user}, false},
		{"kubectl scale wrote it before", Horizontal{Kind: HorizontalScale}.Describe(h), Horizontal{Kind: HorizontalScale}, false},
		{"nothing recorded", "", Horizontal{Kind: HorizontalScale}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := h.DeepCopy()
			if tc.recorded != "" {
				h.Status.HPA = &hvpav1alpha1.HpaStatus{Source: tc.recorded}
			}
			if got := tc.now.Released(h); got != tc.want {
				t.Errorf("Released = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDecideExternalHorizontal: spec.replicas from another HPA counts as the deployed HPA's would, by that HPA's
// metrics; with no HPA it is a replica floor.
func TestDecideExternalHorizontal(t *testing.T) {
	h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: hvpav1alpha1.HvpaSpec{
		TargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
		Replicas:  ptr.To[int32](5), HPA: &hvpav1alpha1.HpaSpec{},
		ScalingIntervals: []hvpav1alpha1.ScalingInterval{
			{MaxReplicas: ptr.To[int32](2), MaxResources: &hvpav1alpha1.ScaledResources{CPU: ptr.To(resource.MustParse("1"))}},
			{MaxReplicas: ptr.To[int32](6), MaxResources: &hvpav1alpha1.ScaledResources{CPU: ptr.To(resource.MustParse("2"))}},
		}}}
	base := func() (*Spec, State) {
		spec, errs := FromHvpa(h)
		if len(errs) > 0 {
			t.Fatalf("hpa: {deploy: false} without a template: %v", errs)
		}
		return spec, State{Replicas: 2, Containers: []Container{{Name: "app", Requests: V(500, -1)}}}
	}
	users := hpaOn("users", "autoscaling.k8s.io/v1alpha1", "Hvpa", "web", time.Time{}, cpuUtilization(80))
	averageValue := hpaOn("users", "autoscaling.k8s.io/v1alpha1", "Hvpa", "web", time.Time{}, autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType})
	for _, tc := range []struct {
		name         string
		src          Horizontal
		wantReplicas int32
		wantCPU      float64
		wantFloor    int32
	}{
		// 5 x 500m = 2.5 cores: above the first interval's 2 x 1 core, so the second interval's 6 replicas
		{"a user's Utilization HPA makes a total", Horizontal{Kind: HorizontalHPA, HPA: &users}, 6, 500, 0},
		// "5 pods of any size": exactly 5
		{"a user's HPA on another metric is a floor", Horizontal{Kind: HorizontalHPA, HPA: &averageValue}, 5, 500, 5},
		{"kubectl scale is a floor", Horizontal{Kind: HorizontalScale}, 5, 500, 5},
		{"nobody asks: nothing changes", Horizontal{Kind: HorizontalNone}, 2, 500, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, st := base()
			spec.FollowHorizontal(tc.src)
			st.HPA = HPAInputOf(h, tc.src, HPAPods{Replicas: st.Replicas, Ready: st.Replicas}, st.Containers, nil)
			d, err := Decide(spec, st)
			if err != nil {
				t.Fatal(err)
			}
			if d.Replicas != tc.wantReplicas || d.HPAFloor != tc.wantFloor {
				t.Errorf("replicas %d (floor %d), want %d (floor %d)", d.Replicas, d.HPAFloor, tc.wantReplicas, tc.wantFloor)
			}
			if len(d.Containers) != 1 {
				t.Fatalf("containers %+v", d.Containers)
			}
			if cpu, _ := d.Containers[0].Requests.Get(CPU); cpu != tc.wantCPU {
				t.Errorf("cpu %v, want %v", cpu, tc.wantCPU)
			}
		})
	}
}
