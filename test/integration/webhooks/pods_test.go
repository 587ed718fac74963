package webhooks_test

import (
	"context"
	"net"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/wrappers"
	"github.com/hvpa-dev/hvpa/webhooks"
	"github.com/hvpa-dev/hvpa/webhooks/pod"
)

// rl is a cpu and memory ResourceList (an empty string leaves one out).
var rl = wrappers.Resources

// container is a played container with the given requests and limits.
func container(name string, req, lim corev1.ResourceList) corev1.Container {
	return wrappers.MakeContainer(name).Resources(req, lim).Obj()
}

func deployment(ns, name string, containers ...corev1.Container) *appsv1.Deployment {
	return wrappers.MakeDeployment(ns, name).Container(containers...).Obj()
}

func vpaFor(ns, name, target string, mode vpav1.UpdateMode, policies ...vpav1.ContainerResourcePolicy) *vpav1.VerticalPodAutoscaler {
	return wrappers.MakeVPA(ns, name).Target("Deployment", target).Mode(mode).ContainerPolicy(policies...).Obj()
}

// badVPA is refused by the validation webhook only (the schema cannot compare minAllowed with maxAllowed).
func badVPA(name string) *vpav1.VerticalPodAutoscaler {
	return vpaFor("default", name, "web", vpav1.UpdateModeOff, vpav1.ContainerResourcePolicy{ContainerName: "app",
		MinAllowed: rl("2", ""), MaxAllowed: rl("1", "")})
}

// recommend plays the recommender's output: it writes the VPA's status (the recommender suites test how
// it is computed) and waits until the webhook's cache has it.
func recommend(v *vpav1.VerticalPodAutoscaler, recs ...vpav1.RecommendedContainerResources) {
	ctx := context.Background()
	v.Status.Recommendation = &vpav1.RecommendedPodResources{ContainerRecommendations: recs}
	Expect(k8s.Status().Update(ctx, v)).To(Succeed())
	Eventually(func() bool {
		var got vpav1.VerticalPodAutoscaler
		return cached.Get(ctx, client.ObjectKeyFromObject(v), &got) == nil && got.Status.Recommendation != nil
	}, framework.Timeout, framework.Interval).Should(BeTrue())
}

func target(name, cpu, mem string) vpav1.RecommendedContainerResources {
	return vpav1.RecommendedContainerResources{ContainerName: name, Target: rl(cpu, mem)}
}

// podOf waits for the first pod of a Deployment (the ReplicaSet controller creates it).
func podOf(ns, app string) *corev1.Pod {
	var p *corev1.Pod
	Eventually(func() int {
		var pods corev1.PodList
		Expect(k8s.List(context.Background(), &pods, client.InNamespace(ns), client.MatchingLabels{"app": app})).To(Succeed())
		if len(pods.Items) > 0 {
			p = &pods.Items[0]
		}
		return len(pods.Items)
	}, framework.Timeout, framework.Interval).Should(BeNumerically(">", 0))
	return p
}

func resourcesOf(p *corev1.Pod, name string) corev1.ResourceRequirements {
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return c.Resources
		}
	}
	Fail("no container " + name)
	return corev1.ResourceRequirements{}
}

func expectResources(got corev1.ResourceRequirements, req, lim corev1.ResourceList) {
	GinkgoHelper()
	Expect(got.Requests).To(HaveLen(len(req)))
	for k, v := range req {
		q := got.Requests[k]
		Expect(q.Cmp(v)).To(BeZero(), "request %s: got %s, want %s", k, &q, &v)
	}
	Expect(got.Limits).To(HaveLen(len(lim)))
	for k, v := range lim {
		q := got.Limits[k]
		Expect(q.Cmp(v)).To(BeZero(), "limit %s: got %s, want %s", k, &q, &v)
	}
}

var _ = Describe("Pod sizing", func() {
	ctx := context.Background()

	It("gives a Deployment's new pod the VPA's target requests and proportional limits, and says so", func() {
		ns := framework.NewNamespace(k8s, "proportional")
		v := vpaFor(ns, "web", "web", vpav1.UpdateModeRecreate)
		Expect(k8s.Create(ctx, v)).To(Succeed())
		recommend(v, target("app", "250m", "200Mi"))
		Expect(k8s.Create(ctx, deployment(ns, "web", container("app", rl("100m", "100Mi"), rl("200m", "300Mi")), container("log", rl("10m", ""), nil)))).To(Succeed())
		p := podOf(ns, "web")
		expectResources(resourcesOf(p, "app"), rl("250m", "200Mi"), rl("500m", "600Mi"))
		expectResources(resourcesOf(p, "log"), rl("10m", ""), nil)
		Expect(p.Annotations).To(HaveKeyWithValue(pod.AnnotationSizedBy, "VerticalPodAutoscaler/web"))
		Expect(p.Annotations).To(HaveKeyWithValue(vpav1.AnnotationSizedResources,
			"app: cpu request 100m -> 250m, cpu limit 200m -> 500m, memory request 100Mi -> 200Mi, memory limit 300Mi -> 600Mi"))
	})

	It("keeps limits with controlledValues RequestsOnly", func() {
		ns := framework.NewNamespace(k8s, "requests-only")
		v := vpaFor(ns, "web", "web", vpav1.UpdateModeInitial, vpav1.ContainerResourcePolicy{ContainerName: "*", ControlledValues: ptr.To(vpav1.ContainerControlledValuesRequestsOnly)})
		Expect(k8s.Create(ctx, v)).To(Succeed())
		recommend(v, target("app", "250m", "200Mi"))
		Expect(k8s.Create(ctx, deployment(ns, "web", container("app", rl("100m", "100Mi"), rl("1", "1Gi"))))).To(Succeed())
		expectResources(resourcesOf(podOf(ns, "web"), "app"), rl("250m", "200Mi"), rl("1", "1Gi"))
	})

	It("sets limits by requestToLimitRatio Factor 2 and Quantity 200Mi with the gate on, and refuses the field with the gate off", func() {
		ns := framework.NewNamespace(k8s, "ratio")
		policy := vpav1.ContainerResourcePolicy{ContainerName: "app", ControlledValues: ptr.To(vpav1.ContainerControlledValuesRequestsAndLimits),
			RequestToLimitRatio: &vpav1.RequestToLimitRatio{
				CPU:    &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioFactor, Factor: ptr.To(2.0)},
				Memory: &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioQuantity, Quantity: ptr.To(resource.MustParse("200Mi"))}}}

		Expect(gates.SetFromMap(map[string]bool{"RequestToLimitRatio": false})).To(Succeed())
		err := k8s.Create(ctx, vpaFor(ns, "web", "web", vpav1.UpdateModeInitial, policy))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(And(ContainSubstring("RequestToLimitRatio"), ContainSubstring("requestToLimitRatio")))

		Expect(gates.SetFromMap(map[string]bool{"RequestToLimitRatio": true})).To(Succeed())
		DeferCleanup(func() { Expect(gates.SetFromMap(map[string]bool{"RequestToLimitRatio": false})).To(Succeed()) })
		v := vpaFor(ns, "web", "web", vpav1.UpdateModeInitial, policy)
		Expect(k8s.Create(ctx, v)).To(Succeed())
		recommend(v, target("app", "300m", "300Mi"))
		Expect(k8s.Create(ctx, deployment(ns, "web", container("app", rl("100m", "100Mi"), rl("1", "1Gi"))))).To(Succeed())
		p := podOf(ns, "web")
		expectResources(resourcesOf(p, "app"), rl("300m", "300Mi"), rl("600m", "500Mi"))
		Expect(p.Annotations[pod.AnnotationNotes]).To(And(ContainSubstring("cpu limit = request x 2 (requestToLimitRatio)"),
			ContainSubstring("memory limit = request + 200Mi (requestToLimitRatio)")))
	})

	It("respects a LimitRange max by moving request and limit together (the AEP-8515 example)", func() {
		ns := framework.NewNamespace(k8s, "limitrange")
		Expect(k8s.Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "max"},
			Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: rl("600m", "")}}}})).To(Succeed())
		v := vpaFor(ns, "web", "web", vpav1.UpdateModeInitial)
		Expect(k8s.Create(ctx, v)).To(Succeed())
		recommend(v, target("app", "200m", ""))
		Eventually(func() int {
			var l corev1.LimitRangeList
			_ = cached.List(ctx, &l, client.InNamespace(ns))
			return len(l.Items)
		}, framework.Timeout, framework.Interval).Should(Equal(1))
		// ratio 1:4 in the template; the API server's LimitRanger then admits the sized pod
		Expect(k8s.Create(ctx, deployment(ns, "web", container("app", rl("100m", ""), rl("400m", ""))))).To(Succeed())
		p := podOf(ns, "web")
		expectResources(resourcesOf(p, "app"), rl("150m", ""), rl("600m", ""))
		Expect(p.Annotations[pod.AnnotationNotes]).To(ContainSubstring("cpu request and limit lowered together to fit the LimitRange container max 600m"))
	})

	// podLimitRange creates a LimitRange of type Pod in ns and waits until the webhook's cache has it.
	podLimitRange := func(ns string, item corev1.LimitRangeItem) {
		GinkgoHelper()
		item.Type = corev1.LimitTypePod
		Expect(k8s.Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pod"},
			Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{item}}})).To(Succeed())
		Eventually(func() int {
			var l corev1.LimitRangeList
			_ = cached.List(ctx, &l, client.InNamespace(ns))
			return len(l.Items)
		}, framework.Timeout, framework.Interval).Should(Equal(1))
	}
	// refusedAsSized shows that the API server's LimitRanger is on and refuses the pod the webhook would
	// make without the pod bounds: the Deployment's pod with the app container at what, created (dry run) with
	// no owner, so that the webhook leaves it as it is.
	refusedAsSized := func(d *appsv1.Deployment, app corev1.ResourceList, want string) {
		GinkgoHelper()
		p := wrappers.MakePod(d.Namespace, "as-sized").Obj()
		p.Spec = *d.Spec.Template.Spec.DeepCopy()
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: app, Limits: app}
		err := k8s.Create(ctx, p, client.DryRunAll)
		Expect(err).To(HaveOccurred(), "the LimitRanger admits the pod sized without the pod bounds")
		Expect(err.Error()).To(ContainSubstring(want))
	}
	// sizedPodOf waits for the Deployment's first pod; while there is none it shows why the ReplicaSet
	// cannot create one (the API server's refusal).
	sizedPodOf := func(ns, app string) *corev1.Pod {
		GinkgoHelper()
		var p *corev1.Pod
		Eventually(func(g Gomega) {
			var pods corev1.PodList
			g.Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app})).To(Succeed())
			var why []string
			var rss appsv1.ReplicaSetList
			g.Expect(k8s.List(ctx, &rss, client.InNamespace(ns))).To(Succeed())
			for _, rs := range rss.Items {
				for _, c := range rs.Status.Conditions {
					why = append(why, c.Message)
				}
			}
			g.Expect(pods.Items).NotTo(BeEmpty(), "no pod; the ReplicaSet says: %v", why)
			p = &pods.Items[0]
		}, framework.Timeout, framework.Interval).Should(Succeed())
		return p
	}

	It("fits a LimitRange pod max counting the sidecars and init containers, which the API server's LimitRanger would refuse otherwise", func() {
		ns := framework.NewNamespace(k8s, "pod-max")
		podLimitRange(ns, corev1.LimitRangeItem{Max: rl("1", "")})
		v := vpaFor(ns, "web", "web", vpav1.UpdateModeInitial)
		Expect(k8s.Create(ctx, v)).To(Succeed())
		recommend(v, target("app", "800m", ""))
		// the init container runs before the sidecar starts (900m alone); the sidecar runs beside the app
		d := wrappers.MakeDeployment(ns, "web").Container(container("app", rl("100m", ""), rl("100m", ""))).
			InitContainer(container("migrate", rl("900m", ""), rl("900m", "")),
				wrappers.MakeContainer("proxy").Resources(rl("300m", ""), rl("300m", "")).Sidecar().Obj()).Obj()
		refusedAsSized(d, rl("800m", ""), "maximum cpu usage per Pod is 1")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		p := sizedPodOf(ns, "web")
		expectResources(resourcesOf(p, "app"), rl("700m", ""), rl("700m", ""))
		expectResources(p.Spec.InitContainers[0].Resources, rl("900m", ""), rl("900m", ""))
		expectResources(p.Spec.InitContainers[1].Resources, rl("300m", ""), rl("300m", ""))
		Expect(p.Annotations[pod.AnnotationNotes]).To(ContainSubstring("cpu of the scaled containers lowered by 0.875 to fit the LimitRange pod max 1"))
	})

	It("sizes a native sidecar (a restartable init container) from its own recommendation beside the app container", func() {
		ns := framework.NewNamespace(k8s, "sidecar")
		v := vpaFor(ns, "web", "web", vpav1.UpdateModeInitial)
		Expect(k8s.Create(ctx, v)).To(Succeed())
		recommend(v, target("app", "800m", "512Mi"), target("proxy", "250m", "96Mi"))
		d := wrappers.MakeDeployment(ns, "web").Container(container("app", rl("100m", "128Mi"), nil)).
			InitContainer(container("migrate", rl("50m", "32Mi"), nil),
				wrappers.MakeContainer("proxy").Resources(rl("100m", "64Mi"), rl("200m", "128Mi")).Sidecar().Obj()).Obj()
		Expect(k8s.Create(ctx, d)).To(Succeed())
		p := sizedPodOf(ns, "web")
		expectResources(resourcesOf(p, "app"), rl("800m", "512Mi"), nil)
		expectResources(p.Spec.InitContainers[1].Resources, rl("250m", "96Mi"), rl("500m", "192Mi"))
		expectResources(p.Spec.InitContainers[0].Resources, rl("50m", "32Mi"), nil)
		Expect(p.Annotations[vpav1.AnnotationSizedResources]).To(ContainSubstring("proxy: cpu request 100m -> 250m"))
	})

	It("raises a pod to its LimitRange pod min, which the API server's LimitRanger would refuse otherwise", func() {
		ns := framework.NewNamespace(k8s, "pod-min")
		podLimitRange(ns, corev1.LimitRangeItem{Min: rl("1500m", "")})
		v := vpaFor(ns, "web", "web", vpav1.UpdateModeInitial)
		Expect(k8s.Create(ctx, v)).To(Succeed())
		recommend(v, target("app", "200m", ""))
		d := wrappers.MakeDeployment(ns, "web").Container(container("app", rl("1500m", ""), rl("1500m", ""))).
			InitContainer(wrappers.MakeContainer("proxy").Resources(rl("300m", ""), rl("300m", "")).Sidecar().Obj()).Obj()
		refusedAsSized(d, rl("200m", ""), "minimum cpu usage per Pod is 1500m")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		p := sizedPodOf(ns, "web")
		expectResources(resourcesOf(p, "app"), rl("1200m", ""), rl("1200m", ""))
		Expect(p.Annotations[pod.AnnotationNotes]).To(ContainSubstring("cpu requests of the scaled containers raised by 6.000 to the LimitRange pod min 1500m"))
	})

	It("gives an Hvpa's pods its status.desired and leaves pods of other workloads alone", func() {
		ns := framework.NewNamespace(k8s, "hvpa")
		h := wrappers.MakeHvpa(ns, "web").HPA(false, 0, 3).Interval(3, "2", "4Gi").Obj()
		Expect(k8s.Create(ctx, h)).To(Succeed())
		// plays the Hvpa controller's output (its own suite tests the decision)
		h.Status = wrappers.MakeHvpa(ns, "web").Selector("app=web").
			Desired(1, hvpav1alpha1.ContainerResources{Name: "app", Requests: rl("700m", "1Gi")}).Obj().Status
		Expect(k8s.Status().Update(ctx, h)).To(Succeed())
		Eventually(func() bool {
			var got hvpav1alpha1.Hvpa
			return cached.Get(ctx, client.ObjectKeyFromObject(h), &got) == nil && got.Status.Desired != nil
		}, framework.Timeout, framework.Interval).Should(BeTrue())

		Expect(k8s.Create(ctx, deployment(ns, "web", container("app", rl("100m", "100Mi"), nil)))).To(Succeed())
		Expect(k8s.Create(ctx, deployment(ns, "other", container("app", rl("100m", "100Mi"), nil)))).To(Succeed())
		p := podOf(ns, "web")
		expectResources(resourcesOf(p, "app"), rl("700m", "1Gi"), nil)
		Expect(p.Annotations).To(HaveKeyWithValue(pod.AnnotationSizedBy, "Hvpa/web"))
		other := podOf(ns, "other")
		expectResources(resourcesOf(other, "app"), rl("100m", "100Mi"), nil)
		Expect(other.Annotations).NotTo(HaveKey(pod.AnnotationSizedBy))
	})

	It("admits pods unsized when the webhook server is down or hangs (failurePolicy Ignore, within the framework.Timeout)", func() {
		ns := framework.NewNamespace(k8s, "down")
		// a listener that accepts connections and never answers: a hung webhook server
		hung, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(hung.Close)
		go func() {
			for {
				c, err := hung.Accept()
				if err != nil {
					return
				}
				DeferCleanup(c.Close)
			}
		}()
		for name, p := range map[string]int{"hvpa-stopped": framework.FreePort(), "hvpa-hung": hung.Addr().(*net.TCPAddr).Port} {
			mutating, _ := webhooks.Configurations(name, urlConfig(p), webhooks.DefaultTimeoutSeconds, nil)
			mutating.Webhooks[0].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
			Expect(k8s.Create(ctx, mutating)).To(Succeed())
			DeferCleanup(func() { Expect(k8s.Delete(ctx, mutating)).To(Succeed()) })
		}
		start := time.Now()
		p := wrappers.MakePod(ns, "plain").Container(container("app", rl("100m", ""), nil)).Obj()
		Expect(k8s.Create(ctx, p)).To(Succeed())
		took := time.Since(start)
		AddReportEntry("pod creation with one stopped and one hung webhook", took.String())
		Expect(took).To(BeNumerically("<", time.Duration(webhooks.DefaultTimeoutSeconds+5)*time.Second),
			"the API server gives up on the hung webhook after its framework.Timeout (%ds)", webhooks.DefaultTimeoutSeconds)
		expectResources(p.Spec.Containers[0].Resources, rl("100m", ""), nil)
	})
})
