package pod

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stypes "k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// rl is a cpu and memory ResourceList (an empty string leaves one out).
var rl = wrappers.Resources

// world is a namespace with a Deployment "web" (its ReplicaSet "web-1") and whatever a case adds.
func world(objs ...client.Object) []client.Object {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "dep-uid"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", UID: "rs-uid",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "dep-uid", Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	return append([]client.Object{dep, rs}, objs...)
}

func webPod(containers ...corev1.Container) *corev1.Pod {
	return wrappers.MakePod("ns", "").GenerateName("web-1-").Label("app", "web").ControlledBy("ReplicaSet", "web-1", "rs-uid").Container(containers...).Obj()
}

func ctr(name string, req, lim corev1.ResourceList) corev1.Container {
	return wrappers.MakeContainer(name).Image("x").Resources(req, lim).Obj()
}

func vpa(name string, created time.Time, mode vpav1.UpdateMode, recs ...vpav1.RecommendedContainerResources) *vpav1.VerticalPodAutoscaler {
	return wrappers.MakeVPA("ns", name).Target("Deployment", "web").UID(k8stypes.UID("uid-vpa-" + name)).Created(created).
		Mode(mode).Recommendation(recs...).Obj()
}

func rec(name, cpu, mem string) vpav1.RecommendedContainerResources {
	return vpav1.RecommendedContainerResources{ContainerName: name, Target: rl(cpu, mem)}
}

func newTestHandler(t testing.TB, ratioGate bool, objs ...client.Object) *Handler {
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).Build()
	g := features.New()
	if err := g.SetFromMap(map[string]bool{string(features.RequestToLimitRatio): ratioGate}); err != nil {
		t.Fatal(err)
	}
	return NewHandler(c, c, g, NewMetrics(nil), clocktesting.NewFakeClock(t0))
}

func request(t testing.TB, p *corev1.Pod) admission.Request {
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Namespace: "ns",
		Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Object: runtime.RawExtension{Raw: raw}}}
}

// admit runs the handler and applies its patch, returning the pod as the API server would store it.
func admit(t testing.TB, h *Handler, p *corev1.Pod) (*corev1.Pod, admission.Response) {
	req := request(t, p)
	resp := h.Handle(context.Background(), req)
	if !resp.Allowed {
		t.Fatalf("pod denied: %v", resp.Result)
	}
	if len(resp.Patches) == 0 {
		return p, resp
	}
	raw, err := json.Marshal(resp.Patches)
	if err != nil {
		t.Fatal(err)
	}
	out, err := applyPatch(req.Object.Raw, raw)
	if err != nil {
		t.Fatal(err)
	}
	got := &corev1.Pod{}
	if err := json.Unmarshal(out, got); err != nil {
		t.Fatal(err)
	}
	return got, resp
}

type resources struct{ Requests, Limits corev1.ResourceList }

func sizes(p *corev1.Pod) map[string]resources {
	out := map[string]resources{}
	for _, c := range p.Spec.Containers {
		out[c.Name] = resources{c.Resources.Requests, c.Resources.Limits}
	}
	return out
}

func TestHandler(t *testing.T) {
	factor2 := &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{{ContainerName: "app",
		RequestToLimitRatio: &vpav1.RequestToLimitRatio{CPU: &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioFactor, Factor: ptr.To(2.0)}}}}}
	withPolicy := func(v *vpav1.VerticalPodAutoscaler, p *vpav1.PodResourcePolicy) *vpav1.VerticalPodAutoscaler {
		v.Spec.ResourcePolicy = p
		return v
	}
	hvpa := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", CreationTimestamp: metav1.NewTime(t0)},
		Spec: hvpav1alpha1.HvpaSpec{TargetRef: autoscalingv2Ref(), ScalingIntervals: []hvpav1alpha1.ScalingInterval{{}}},
		Status: hvpav1alpha1.HvpaStatus{Selector: "app=web", Desired: &hvpav1alpha1.DesiredState{Replicas: 2,
			Containers: []hvpav1alpha1.ContainerResources{{Name: "app", Requests: rl("700m", "1Gi")}}}}}
	lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "lr"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
		{Type: corev1.LimitTypeContainer, Max: rl("600m", "")}}}}
	cases := map[string]struct {
		objs        []client.Object
		gate        bool
		pod         *corev1.Pod
		want        map[string]resources
		outcome     string
		annotations map[string]string
	}{
		"target requests and proportional limits": {
			objs: []client.Object{vpa("web", t0, vpav1.UpdateModeRecreate, rec("app", "250m", "200Mi"))},
			pod:  webPod(ctr("app", rl("100m", "100Mi"), rl("200m", "300Mi")), ctr("sidecar", rl("10m", ""), nil)),
			want: map[string]resources{"app": {rl("250m", "200Mi"), rl("500m", "600Mi")}, "sidecar": {rl("10m", ""), nil}}, outcome: OutcomeSized,
			annotations: map[string]string{AnnotationSizedBy: "VerticalPodAutoscaler/web",
				vpav1.AnnotationSizedResources: "app: cpu request 100m -> 250m, cpu limit 200m -> 500m, memory request 100Mi -> 200Mi, memory limit 300Mi -> 600Mi",
				AnnotationNotes:                "app: cpu limit keeps the original limit/request ratio, memory limit keeps the original limit/request ratio"}},
		"mode Off leaves the pod": {
			objs: []client.Object{vpa("web", t0, vpav1.UpdateModeOff, rec("app", "250m", "200Mi"))},
			pod:  webPod(ctr("app", rl("100m", ""), nil)), want: map[string]resources{"app": {rl("100m", ""), nil}}, outcome: OutcomeOff},
		"no recommendation leaves the pod": {
			objs: []client.Object{vpa("web", t0, vpav1.UpdateModeInitial)},
			pod:  webPod(ctr("app", rl("100m", ""), nil)), want: map[string]resources{"app": {rl("100m", ""), nil}}, outcome: OutcomeNoRecommend},
		"a pod of another workload is untouched": {
			objs: []client.Object{vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "250m", ""))},
			pod: func() *corev1.Pod {
				p := webPod(ctr("app", rl("100m", ""), nil))
				p.OwnerReferences = nil
				return p
			}(), want: map[string]resources{"app": {rl("100m", ""), nil}}, outcome: OutcomeUntargeted},
		"the oldest of two VPAs wins, visibly": {
			objs: []client.Object{vpa("newer", t0.Add(time.Hour), vpav1.UpdateModeInitial, rec("app", "900m", "")), vpa("older", t0, vpav1.UpdateModeInitial, rec("app", "300m", ""))},
			pod:  webPod(ctr("app", rl("100m", ""), nil)), want: map[string]resources{"app": {rl("300m", ""), nil}}, outcome: OutcomeSized,
			annotations: map[string]string{AnnotationSizedBy: "VerticalPodAutoscaler/older", vpav1.AnnotationSizedResources: "app: cpu request 100m -> 300m",
				AnnotationAlsoMatched: "VerticalPodAutoscaler/newer (the oldest, VerticalPodAutoscaler/older, sizes the pod)"}},
		"requestToLimitRatio Factor 2 with the gate on": {gate: true,
			objs: []client.Object{withPolicy(vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "250m", "")), factor2)},
			pod:  webPod(ctr("app", rl("100m", ""), rl("1", ""))), want: map[string]resources{"app": {rl("250m", ""), rl("500m", "")}}, outcome: OutcomeSized},
		"requestToLimitRatio is ignored with the gate off": {
			objs: []client.Object{withPolicy(vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "250m", "")), factor2)},
			pod:  webPod(ctr("app", rl("100m", ""), rl("1", ""))), want: map[string]resources{"app": {rl("250m", ""), rl("2500m", "")}}, outcome: OutcomeSized},
		"a LimitRange max moves request and limit together": {
			objs: []client.Object{vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "200m", "")), lr},
			pod:  webPod(ctr("app", rl("100m", ""), rl("400m", ""))), want: map[string]resources{"app": {rl("150m", ""), rl("600m", "")}}, outcome: OutcomeSized,
			annotations: map[string]string{AnnotationSizedBy: "VerticalPodAutoscaler/web", vpav1.AnnotationSizedResources: "app: cpu request 100m -> 150m, cpu limit 400m -> 600m",
				AnnotationNotes: "app: cpu request and limit lowered together to fit the LimitRange container max 600m"}},
		"an Hvpa's status.desired": {
			objs: []client.Object{hvpa},
			pod:  webPod(ctr("app", rl("100m", "100Mi"), nil)), want: map[string]resources{"app": {rl("700m", "1Gi"), nil}}, outcome: OutcomeSized},
		"an older observer VPA (updateMode Off) does not stop the Hvpa, and is no conflict": {
			objs: []client.Object{vpa("goldilocks-web", t0.Add(-time.Hour), vpav1.UpdateModeOff, rec("app", "250m", "200Mi")), hvpa},
			pod:  webPod(ctr("app", rl("100m", "100Mi"), nil)), want: map[string]resources{"app": {rl("700m", "1Gi"), nil}}, outcome: OutcomeSized,
			annotations: map[string]string{AnnotationSizedBy: "Hvpa/web", vpav1.AnnotationSizedResources: "app: cpu request 100m -> 700m, memory request 100Mi -> 1Gi"}},
		"an older VPA another recommender serves does not stop the Hvpa": {
			objs: []client.Object{func() *vpav1.VerticalPodAutoscaler {
				v := vpa("upstream-web", t0.Add(-time.Hour), vpav1.UpdateModeInitial, rec("app", "250m", "200Mi"))
				v.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "upstream"}}
				return v
			}(), hvpa},
			pod: webPod(ctr("app", rl("100m", "100Mi"), nil)), want: map[string]resources{"app": {rl("700m", "1Gi"), nil}}, outcome: OutcomeSized},
		"an Hvpa that does not act (ConfigUnsupported) sizes nothing": {
			objs: []client.Object{func() *hvpav1alpha1.Hvpa {
				u := hvpa.DeepCopy()
				u.Status.Conditions = []metav1.Condition{{Type: hvpav1alpha1.ConditionConfigUnsupported, Status: metav1.ConditionTrue, Reason: "MultipleAutoscalers", LastTransitionTime: metav1.NewTime(t0)}}
				return u
			}()},
			pod: webPod(ctr("app", rl("100m", "100Mi"), nil)), want: map[string]resources{"app": {rl("100m", "100Mi"), nil}}, outcome: OutcomeUntargeted},
		"a pod with pod-level resources is left as it is": {
			objs: []client.Object{vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "250m", ""))},
			pod: func() *corev1.Pod {
				p := webPod(ctr("app", rl("100m", ""), nil))
				p.Spec.Resources = &corev1.ResourceRequirements{Limits: rl("1", "")}
				return p
			}(), want: map[string]resources{"app": {rl("100m", ""), nil}}, outcome: OutcomePodResources},
		"already sized: admitted unchanged": {
			objs: []client.Object{vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "250m", ""))},
			pod:  webPod(ctr("app", rl("250m", ""), nil)), want: map[string]resources{"app": {rl("250m", ""), nil}}, outcome: OutcomeUnchanged},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newTestHandler(t, tc.gate, world(tc.objs...)...)
			got, _ := admit(t, h, tc.pod)
			if d := cmp.Diff(tc.want, sizes(got), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); d != "" {
				t.Errorf("resources (-want +got):\n%s", d)
			}
			if n := testutilCount(h.Metrics, tc.outcome); n != 1 {
				t.Errorf("outcome %q counted %v times, want 1", tc.outcome, n)
			}
			for k, v := range tc.annotations {
				if got.Annotations[k] != v {
					t.Errorf("annotation %s = %q, want %q", k, got.Annotations[k], v)
				}
			}
		})
	}
}

// TestHandlerPodLimitRange: the pod's LimitRange bounds count its init containers and sidecars as the API
// server's LimitRanger does: a sidecar adds to the app containers, an init container runs with the sidecars
// started before it; a pod min raises the sized container. Neither kind is ever sized.
func TestHandlerPodLimitRange(t *testing.T) {
	podLR := func(minCPU, maxCPU string) *corev1.LimitRange {
		item := corev1.LimitRangeItem{Type: corev1.LimitTypePod, Min: rl(minCPU, ""), Max: rl(maxCPU, "")}
		return &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pod"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{item}}}
	}
	withInit := func(p *corev1.Pod, c ...corev1.Container) *corev1.Pod {
		p.Spec.InitContainers = c
		return p
	}
	migrate := ctr("migrate", rl("900m", ""), rl("900m", ""))
	proxy := wrappers.MakeContainer("proxy").Image("x").Resources(rl("300m", ""), rl("300m", "")).Sidecar().Obj()
	cases := map[string]struct {
		lr    *corev1.LimitRange
		pod   *corev1.Pod
		want  corev1.ResourceList // the app container's request and limit
		notes string
	}{
		"pod max: the sidecar counts, the init container started before it runs alone": {lr: podLR("", "1"),
			pod: withInit(webPod(ctr("app", rl("100m", ""), rl("100m", ""))), migrate, proxy), want: rl("700m", ""),
			notes: "app: cpu of the scaled containers lowered by 0.875 to fit the LimitRange pod max 1, cpu limit keeps the original limit/request ratio"},
		"pod min: the sized container rises to it with the sidecar": {lr: podLR("1500m", ""),
			pod: withInit(webPod(ctr("app", rl("100m", ""), rl("100m", ""))), proxy), want: rl("1200m", ""),
			notes: "app: cpu requests of the scaled containers raised by 1.500 to the LimitRange pod min 1500m, cpu limit keeps the original limit/request ratio"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := newTestHandler(t, false, world(vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "800m", "")), tc.lr)...)
			got, _ := admit(t, h, tc.pod)
			eq := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
			if d := cmp.Diff(map[string]resources{"app": {tc.want, tc.want}}, sizes(got), eq); d != "" {
				t.Errorf("resources (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.pod.Spec.InitContainers, got.Spec.InitContainers, eq); d != "" {
				t.Errorf("init containers changed (-before +after):\n%s", d)
			}
			if got.Annotations[AnnotationNotes] != tc.notes {
				t.Errorf("notes %q, want %q", got.Annotations[AnnotationNotes], tc.notes)
			}
		})
	}
}

func TestHandlerIgnoresOtherOperations(t *testing.T) {
	h := newTestHandler(t, false, world(vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "250m", "")))...)
	req := request(t, webPod(ctr("app", rl("100m", ""), nil)))
	req.Operation = admissionv1.Update
	if resp := h.Handle(context.Background(), req); !resp.Allowed || len(resp.Patches) != 0 {
		t.Errorf("an UPDATE was patched or denied: %+v", resp)
	}
}

func autoscalingv2Ref() autoscalingv2.CrossVersionObjectReference {
	return autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
}

func applyPatch(doc, patch []byte) ([]byte, error) {
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, err
	}
	return p.Apply(doc)
}

func testutilCount(m *Metrics, outcome string) float64 {
	return testutil.ToFloat64(m.Admissions.WithLabelValues(resourcePods, outcome))
}

// TestStartupBoost: with CPUStartupBoost on (and admitted twice: the same), a VPA's startup boost applies on top of the sizing (also in
// updateMode Off and before any recommendation, on the pod's own request), a container policy's boost or mode
// Off wins over the object's, and the annotation says what each container goes back to: only the webhook writes
// it (one the pod comes with is removed).
func TestStartupBoost(t *testing.T) {
	factor3 := &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostFactor, Factor: ptr.To[int32](3), DurationSeconds: ptr.To[int32](10)}}
	plus := &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostQuantity, Quantity: ptr.To(resource.MustParse("1"))}}
	withBoost := func(v *vpav1.VerticalPodAutoscaler, b *vpav1.StartupBoost, policies ...vpav1.ContainerResourcePolicy) *vpav1.VerticalPodAutoscaler {
		v.Spec.StartupBoost = b
		if len(policies) > 0 {
			v.Spec.ResourcePolicy = &vpav1.PodResourcePolicy{ContainerPolicies: policies}
		}
		return v
	}
	off := vpav1.ContainerScalingModeOff
	for name, tc := range map[string]struct {
		vpa       *vpav1.VerticalPodAutoscaler
		gate      bool
		maxCPU    float64
		want      map[string]resources
		unboosted string // the annotation, "" for none
	}{
		"factor 3 on the recommendation, the limit keeps its ratio": {
			vpa: withBoost(vpa("v", t0, vpav1.UpdateModeRecreate, rec("app", "300m", "")), factor3), gate: true,
			want:      map[string]resources{"app": {rl("900m", "100Mi"), rl("1800m", "")}},
			unboosted: `{"app":{"cpuRequest":"300m","cpuLimit":"600m"}}`,
		},
		"--max-allowed-cpu-boost caps the boost, the limit keeps its ratio": {
			vpa: withBoost(vpa("v", t0, vpav1.UpdateModeRecreate, rec("app", "300m", "")), factor3), gate: true, maxCPU: 500,
			want:      map[string]resources{"app": {rl("500m", "100Mi"), rl("1000m", "")}},
			unboosted: `{"app":{"cpuRequest":"300m","cpuLimit":"600m"}}`,
		},
		"gate off: sized, not boosted": {
			vpa:  withBoost(vpa("v", t0, vpav1.UpdateModeRecreate, rec("app", "300m", "")), factor3),
			want: map[string]resources{"app": {rl("300m", "100Mi"), rl("600m", "")}},
		},
		"updateMode Off: the pod's own request boosted": {
			vpa: withBoost(vpa("v", t0, vpav1.UpdateModeOff, rec("app", "300m", "")), plus), gate: true,
			want:      map[string]resources{"app": {rl("1100m", "100Mi"), rl("2200m", "")}},
			unboosted: `{"app":{"cpuRequest":"100m","cpuLimit":"200m"}}`,
		},
		"no recommendation yet: the pod's own request boosted": {
			vpa: withBoost(vpa("v", t0, vpav1.UpdateModeRecreate), factor3), gate: true,
			want:      map[string]resources{"app": {rl("300m", "100Mi"), rl("600m", "")}},
			unboosted: `{"app":{"cpuRequest":"100m","cpuLimit":"200m"}}`,
		},
		"RequestsOnly: the limit stays and caps the boost 1m below it (the QoS class stays)": {
			vpa: withBoost(vpa("v", t0, vpav1.UpdateModeRecreate), factor3, vpav1.ContainerResourcePolicy{ContainerName: "app",
				ControlledValues: ptr.To(vpav1.ContainerControlledValuesRequestsOnly)}),
			gate:      true,
			want:      map[string]resources{"app": {rl("199m", "100Mi"), rl("200m", "")}},
			unboosted: `{"app":{"cpuRequest":"100m","cpuLimit":"200m"}}`,
		},
		"container policy mode Off: not boosted": {
			vpa:  withBoost(vpa("v", t0, vpav1.UpdateModeRecreate), factor3, vpav1.ContainerResourcePolicy{ContainerName: "app", Mode: &off}),
			gate: true,
			want: map[string]resources{"app": {rl("100m", "100Mi"), rl("200m", "")}},
		},
		"a container policy's boost wins": {
			vpa:       withBoost(vpa("v", t0, vpav1.UpdateModeRecreate), factor3, vpav1.ContainerResourcePolicy{ContainerName: "*", StartupBoost: plus}),
			gate:      true,
			want:      map[string]resources{"app": {rl("1100m", "100Mi"), rl("2200m", "")}},
			unboosted: `{"app":{"cpuRequest":"100m","cpuLimit":"200m"}}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newTestHandler(t, false, world(tc.vpa)...)
			h.MaxCPUBoost = tc.maxCPU
			if err := h.Gates.(interface{ SetFromMap(map[string]bool) error }).SetFromMap(map[string]bool{string(features.CPUStartupBoost): tc.gate}); err != nil {
				t.Fatal(err)
			}
			// the pod comes with an annotation of its author's, which would have the updater give it 64 CPUs
			p := webPod(ctr("app", rl("100m", "100Mi"), rl("200m", "")))
			p.Annotations = map[string]string{vpav1.AnnotationStartupBoost: `{"app":{"cpuRequest":"64"}}`}
			got, _ := admit(t, h, p)
			if d := cmp.Diff(tc.want, sizes(got)); d != "" {
				t.Errorf("resources (-want +got):\n%s", d)
			}
			if a := got.Annotations[vpav1.AnnotationStartupBoost]; a != tc.unboosted {
				t.Errorf("annotation %q, want %q", a, tc.unboosted)
			}
			// admitted again (reinvocationPolicy IfNeeded, after a later webhook changed the pod): as it was,
			// not boosted twice
			again, _ := admit(t, h, got)
			if d := cmp.Diff(tc.want, sizes(again)); d != "" {
				t.Errorf("admitted again: resources (-want +got):\n%s", d)
			}
			if a := again.Annotations[vpav1.AnnotationStartupBoost]; a != tc.unboosted {
				t.Errorf("admitted again: annotation %q, want %q", a, tc.unboosted)
			}
		})
	}
}

// TestHandlerSizesSidecars: a native sidecar (a restartable init container) under a VPA is sized like an app
// container from its own recommendation and container policy; an init container that runs to completion is
// not, even with a recommendation.
func TestHandlerSizesSidecars(t *testing.T) {
	proxy := wrappers.MakeContainer("proxy").Image("x").Resources(rl("100m", "64Mi"), rl("200m", "128Mi")).Sidecar().Obj()
	migrate := ctr("migrate", rl("50m", "32Mi"), nil)
	pod := webPod(ctr("app", rl("100m", "128Mi"), nil))
	pod.Spec.InitContainers = []corev1.Container{migrate, proxy}
	eq := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

	v := vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "800m", "512Mi"), rec("proxy", "300m", "96Mi"), rec("migrate", "1", "1Gi"))
	got, _ := admit(t, newTestHandler(t, false, world(v)...), pod)
	if d := cmp.Diff(map[string]resources{"app": {rl("800m", "512Mi"), nil}}, sizes(got), eq); d != "" {
		t.Errorf("app (-want +got):\n%s", d)
	}
	if d := cmp.Diff(resources{rl("300m", "96Mi"), rl("600m", "192Mi")}, resources{got.Spec.InitContainers[1].Resources.Requests, got.Spec.InitContainers[1].Resources.Limits}, eq); d != "" {
		t.Errorf("sidecar sized from its recommendation, limits at its ratio (-want +got):\n%s", d)
	}
	if d := cmp.Diff(migrate, got.Spec.InitContainers[0], eq); d != "" {
		t.Errorf("init container changed (-before +after):\n%s", d)
	}
	if a := got.Annotations[vpav1.AnnotationSizedResources]; !strings.Contains(a, "proxy: cpu request 100m -> 300m") {
		t.Errorf("resources annotation %q does not say the sidecar changed", a)
	}

	// the sidecar's own container policy: Off keeps it as it is, the app container is still sized
	v.Spec.ResourcePolicy = &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{{ContainerName: "proxy", Mode: ptr.To(vpav1.ContainerScalingModeOff)}}}
	got, _ = admit(t, newTestHandler(t, false, world(v)...), pod)
	if d := cmp.Diff(proxy, got.Spec.InitContainers[1], eq); d != "" {
		t.Errorf("sidecar under mode Off changed (-before +after):\n%s", d)
	}
	if d := cmp.Diff(map[string]resources{"app": {rl("800m", "512Mi"), nil}}, sizes(got), eq); d != "" {
		t.Errorf("app (-want +got):\n%s", d)
	}
}

// TestHandlerReadsHvpasWithoutCopies: the webhook lists the namespace's Hvpas from the cache without a deep
// copy of each (client.UnsafeDisableDeepCopy; it only reads them): before issue 31 every pod admission copied
// every Hvpa of the namespace, status and all (BenchmarkAdmitWith200Hvpas: 282 MB per admission with 200
// Hvpas of 1,000 effective intervals).
func TestHandlerReadsHvpasWithoutCopies(t *testing.T) {
	hvpa := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", CreationTimestamp: metav1.NewTime(t0)},
		Spec: hvpav1alpha1.HvpaSpec{TargetRef: autoscalingv2Ref(), ScalingIntervals: []hvpav1alpha1.ScalingInterval{{}}},
		Status: hvpav1alpha1.HvpaStatus{Selector: "app=web", Desired: &hvpav1alpha1.DesiredState{Replicas: 2,
			Containers: []hvpav1alpha1.ContainerResources{{Name: "app", Requests: rl("700m", "1Gi")}}}}}
	lists, copied := 0, 0
	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(world(hvpa)...).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*hvpav1alpha1.HvpaList); ok {
				lists++
				if o := (&client.ListOptions{}).ApplyOptions(opts); o.UnsafeDisableDeepCopy == nil || !*o.UnsafeDisableDeepCopy {
					copied++
				}
			}
			return c.List(ctx, list, opts...)
		}}).Build()
	h := NewHandler(c, c, features.New(), NewMetrics(nil), clocktesting.NewFakeClock(t0))
	got, _ := admit(t, h, webPod(ctr("app", rl("100m", "100Mi"), nil)))
	if got.Spec.Containers[0].Resources.Requests.Cpu().String() != "700m" {
		t.Fatalf("not sized from the Hvpa: %v", got.Spec.Containers[0].Resources)
	}
	if lists == 0 || copied != 0 {
		t.Errorf("%d Hvpa lists, %d of them with a deep copy of every Hvpa", lists, copied)
	}
}

// panicky is a client whose reads panic (a bug anywhere under the handler).
type panicky struct{ client.Client }

func (panicky) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	panic("a bug")
}

func (panicky) List(context.Context, client.ObjectList, ...client.ListOption) error { panic("a bug") }

// TestHandlerFailsOpen checks that a pod the handler cannot decode, or a panic while sizing one, admits the pod
// unchanged (an answer that denies is not covered by failurePolicy Ignore) and counts as an error.
func TestHandlerFailsOpen(t *testing.T) {
	h := newTestHandler(t, false, world(vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "250m", "")))...)
	req := request(t, webPod(ctr("app", rl("100m", ""), nil)))
	req.Object.Raw = []byte(`{"spec": {"containers": "not a list"}}`)
	if resp := h.Handle(context.Background(), req); !resp.Allowed || len(resp.Patches) != 0 {
		t.Errorf("a pod that cannot be decoded: allowed %v, %d patches; want admitted unchanged (%v)", resp.Allowed, len(resp.Patches), resp.Result)
	}
	if got := testutilCount(h.Metrics, OutcomeError); got != 1 {
		t.Errorf("errors counted %v, want 1", got)
	}

	c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).Build()
	h = NewHandler(panicky{c}, panicky{c}, features.New(), NewMetrics(nil), clocktesting.NewFakeClock(t0))
	resp := h.Handle(context.Background(), request(t, webPod(ctr("app", rl("100m", ""), nil))))
	if !resp.Allowed || len(resp.Patches) != 0 {
		t.Errorf("a panic while sizing: allowed %v, %d patches; want admitted unchanged (%v)", resp.Allowed, len(resp.Patches), resp.Result)
	}
	if got := testutilCount(h.Metrics, OutcomeError); got != 1 {
		t.Errorf("errors counted %v, want 1", got)
	}
}

// TestHandlerTargetRefWithoutAPIVersion: a VPA whose targetRef names a well-known kind without apiVersion (it
// is optional; upstream matches these kinds by kind and name), or with a group no longer served, sizes its
// pods.
func TestHandlerTargetRefWithoutAPIVersion(t *testing.T) {
	for _, apiVersion := range []string{"", "extensions/v1beta1"} {
		v := vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "250m", "300Mi"))
		v.Spec.TargetRef.APIVersion = apiVersion
		h := newTestHandler(t, false, world(v)...)
		got, _ := admit(t, h, webPod(ctr("app", rl("100m", "100Mi"), nil)))
		if s := sizes(got)["app"]; !s.Requests.Cpu().Equal(resource.MustParse("250m")) || !s.Requests.Memory().Equal(resource.MustParse("300Mi")) {
			t.Errorf("targetRef apiVersion %q: requests %v, want 250m and 300Mi", apiVersion, s.Requests)
		}
	}
}

// TestHandlerSkipsAnIdleObserver: when only observers match, a VPA in updateMode Off (without a startup boost)
// does not keep a younger one that sizes (another recommender's, in Initial) from sizing the pod, as upstream's
// webhook skips Off VPAs; with only Off VPAs the pod is left as it is.
func TestHandlerSkipsAnIdleObserver(t *testing.T) {
	off := vpa("old-off", t0, vpav1.UpdateModeOff, rec("app", "900m", "900Mi"))
	other := vpa("new-other", t0.Add(time.Second), vpav1.UpdateModeInitial, rec("app", "500m", "300Mi"))
	other.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "upstream"}}
	for _, objs := range [][]client.Object{{off, other}, {other, off}} {
		h := newTestHandler(t, false, world(objs...)...)
		got, _ := admit(t, h, webPod(ctr("app", rl("100m", "100Mi"), nil)))
		if s := sizes(got)["app"]; !s.Requests.Cpu().Equal(resource.MustParse("500m")) || !s.Requests.Memory().Equal(resource.MustParse("300Mi")) {
			t.Errorf("an older Off VPA beside another recommender's Initial one: requests %v, want the Initial one's 500m and 300Mi", s.Requests)
		}
	}
	h := newTestHandler(t, false, world(off)...)
	got, _ := admit(t, h, webPod(ctr("app", rl("100m", "100Mi"), nil)))
	if s := sizes(got)["app"]; !s.Requests.Cpu().Equal(resource.MustParse("100m")) {
		t.Errorf("only an Off VPA: requests %v, want the pod's own", s.Requests)
	}
}

// TestHandlerDeploymentOfAnOperator: a VPA on a Deployment that an operator's custom resource without a scale
// subresource controls sizes its pods (upstream's top-most well-known or scalable controller is the
// Deployment); found in review: the pods were admitted unsized and the VPA refused (ParentControllerTarget).
func TestHandlerDeploymentOfAnOperator(t *testing.T) {
	objs := world(vpa("web", t0, vpav1.UpdateModeInitial, rec("app", "250m", "300Mi")))
	for _, o := range objs {
		if d, ok := o.(*appsv1.Deployment); ok {
			d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Foo", Name: "foo", UID: "foo-uid", Controller: ptr.To(true)}}
		}
	}
	base := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(objs...).Build()
	c := interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if obj.GetObjectKind().GroupVersionKind().Kind == "Foo" { // the operator's resource: served, without a scale subresource
				obj.(*metav1.PartialObjectMetadata).ObjectMeta = metav1.ObjectMeta{Namespace: "ns", Name: "foo", UID: "foo-uid"}
				return nil
			}
			return c.Get(ctx, key, obj, opts...)
		},
		SubResourceGet: func(ctx context.Context, c client.Client, sub string, obj, into client.Object, opts ...client.SubResourceGetOption) error {
			return apierrors.NewNotFound(schema.GroupResource{Group: "example.com", Resource: "foos/scale"}, obj.GetName())
		}})
	h := NewHandler(c, c, features.New(), NewMetrics(nil), clocktesting.NewFakeClock(t0))
	got, _ := admit(t, h, webPod(ctr("app", rl("100m", "100Mi"), nil)))
	if s := sizes(got)["app"]; !s.Requests.Cpu().Equal(resource.MustParse("250m")) || !s.Requests.Memory().Equal(resource.MustParse("300Mi")) {
		t.Errorf("requests %v, want the VPA's 250m and 300Mi", s.Requests)
	}
}
