package updater_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/testadmission"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// rl is a cpu and memory ResourceList (an empty string leaves one out).
var rl = wrappers.Resources

// deployment runs replicas pods of one container "app" and waits until they are live; answer is how the
// played kubelet answers their resizes.
func deployment(ns, name string, replicas int32, answer string, req, lim corev1.ResourceList) *appsv1.Deployment {
	d := framework.CreateAnswering(k8s, ns, name, replicas, answer, req, lim)
	Eventually(func() int { return len(livePods(ns, name)) }, framework.Timeout, framework.Interval).Should(Equal(int(replicas)))
	return d
}

func livePods(ns, app string) []corev1.Pod { return framework.LivePods(k8s, ns, app) }

func uids(pods []corev1.Pod) []types.UID {
	var out []types.UID
	for _, p := range pods {
		out = append(out, p.UID)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// vpa creates a VPA for a Deployment and plays the recommender's output (target and bounds, cpu only or
// cpu and memory), waiting until the updater's cache has it.
func vpa(ns, name string, mode vpav1.UpdateMode, target, lower, upper corev1.ResourceList, policies ...vpav1.ContainerResourcePolicy) *vpav1.VerticalPodAutoscaler {
	ctx := context.Background()
	v := wrappers.MakeVPA(ns, name).Mode(mode).ContainerPolicy(policies...).Obj()
	Expect(k8s.Create(ctx, v)).To(Succeed())
	v.Status.Recommendation = &vpav1.RecommendedPodResources{ContainerRecommendations: []vpav1.RecommendedContainerResources{
		wrappers.ContainerRecommendation("app", target, lower, upper)}}
	Expect(k8s.Status().Update(ctx, v)).To(Succeed())
	Eventually(func() bool {
		var got vpav1.VerticalPodAutoscaler
		return mgrC.Get(ctx, client.ObjectKeyFromObject(v), &got) == nil && got.Status.Recommendation != nil
	}, framework.Timeout, framework.Interval).Should(BeTrue())
	return v
}

// testOptions are the updater's options in the suite: short loops and timeouts, the suite's admission Lease.
func testOptions() updater.Options {
	o := updater.DefaultOptions()
	o.Interval = 300 * time.Millisecond
	o.DeferredTimeout = 2 * time.Second
	o.AdmissionLease = leaseName
	return o
}

// startUpdater runs an updater until the spec ends.
func startUpdater(o updater.Options) {
	ctx, cancel := context.WithCancel(context.Background())
	DeferCleanup(cancel)
	u := updater.New(mgrC, k8s, events, clock.RealClock{}, gates, o, updater.NewMetrics(nil))
	go func() {
		defer GinkgoRecover()
		Expect(u.Start(ctx)).To(Succeed())
	}()
}

// eventStream is the namespace's events in order, "object reason: message".
func eventStream(ns string) []string {
	var l corev1.EventList
	Expect(k8s.List(context.Background(), &l, client.InNamespace(ns))).To(Succeed())
	sort.SliceStable(l.Items, func(i, j int) bool { return l.Items[i].FirstTimestamp.Before(&l.Items[j].FirstTimestamp) })
	var out []string
	for _, e := range l.Items {
		if e.Source.Component != "hvpa-updater" {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s/%s %s: %s", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message))
	}
	return out
}

func hasRequests(cpu, mem string) func([]corev1.Pod) bool {
	want := rl(cpu, mem)
	return func(pods []corev1.Pod) bool {
		for _, p := range pods {
			for k, v := range want {
				q := p.Spec.Containers[0].Resources.Requests[k]
				if q.Cmp(v) != 0 {
					return false
				}
			}
		}
		return len(pods) > 0
	}
}

var _ = Describe("Updater", func() {
	ctx := context.Background()

	It("InPlaceOrRecreate: converges by in-place resizes the kubelet accepts, without a restart", func() {
		ns := framework.NewNamespace(k8s, "inplace")
		deployment(ns, "web", 2, "accept", rl("100m", "100Mi"), rl("200m", "200Mi"))
		before := uids(livePods(ns, "web"))
		vpa(ns, "web", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", "100Mi"), rl("250m", "50Mi"), rl("350m", "150Mi"))
		startUpdater(testOptions())
		Eventually(func() bool {
			pods := livePods(ns, "web")
			if !hasRequests("300m", "100Mi")(pods) {
				return false
			}
			for _, p := range pods {
				st := p.Status.ContainerStatuses[0]
				lim := p.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]
				if st.Resources == nil || st.Resources.Requests.Cpu().Cmp(resource.MustParse("300m")) != 0 || lim.Cmp(resource.MustParse("600m")) != 0 || st.RestartCount != 0 {
					return false
				}
			}
			return true
		}, framework.Timeout, framework.Interval).Should(BeTrue())
		Expect(uids(livePods(ns, "web"))).To(Equal(before), "the same pods, resized: no eviction")
		var stream []string
		Eventually(func() []string { stream = eventStream(ns); return stream }, framework.Timeout, framework.Interval).Should(ContainElement(ContainSubstring("ResizedInPlace")))
		AddReportEntry("InPlaceOrRecreate event stream", strings.Join(stream, "\n"))
		GinkgoWriter.Println(strings.Join(stream, "\n"))
	})

	It("startupBoost: pods start with boosted CPU at admission and go back in place once Ready for the boost's duration", func() {
		Expect(gates.SetFromMap(map[string]bool{string(features.CPUStartupBoost): true})).To(Succeed())
		DeferCleanup(func() {
			Expect(gates.SetFromMap(map[string]bool{string(features.CPUStartupBoost): false})).To(Succeed())
		})
		ns := framework.NewNamespace(k8s, "boost")
		v := vpa(ns, "web", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", "100Mi"), rl("250m", "50Mi"), rl("350m", "150Mi"))
		v.Spec.StartupBoost = &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostFactor, Factor: ptr.To[int32](3), DurationSeconds: ptr.To[int32](3)}}
		Expect(k8s.Update(ctx, v)).To(Succeed())
		Eventually(func() bool {
			var got vpav1.VerticalPodAutoscaler
			return mgrC.Get(ctx, client.ObjectKeyFromObject(v), &got) == nil && got.Spec.StartupBoost != nil
		}, framework.Timeout, framework.Interval).Should(BeTrue())

		deployment(ns, "web", 2, "accept", rl("100m", "100Mi"), rl("200m", "200Mi"))
		boosted := livePods(ns, "web")
		for _, p := range boosted {
			c := p.Spec.Containers[0]
			Expect(c.Resources.Requests.Cpu().String()).To(Equal("900m"), "admission: the 300m recommendation x 3")
			Expect(c.Resources.Limits.Cpu().String()).To(Equal("1800m"), "the limit keeps its 2:1 ratio")
			Expect(p.Annotations).To(HaveKeyWithValue(vpav1.AnnotationStartupBoost, `{"app":{"cpuRequest":"300m","cpuLimit":"600m"}}`))
		}
		startUpdater(testOptions())
		Eventually(func() bool {
			pods := livePods(ns, "web")
			for _, p := range pods {
				c, st := p.Spec.Containers[0], p.Status.ContainerStatuses[0]
				if c.Resources.Requests.Cpu().String() != "300m" || c.Resources.Limits.Cpu().String() != "600m" || st.RestartCount != 0 ||
					st.Resources == nil || st.Resources.Requests.Cpu().String() != "300m" {
					return false
				}
				if _, still := p.Annotations[vpav1.AnnotationStartupBoost]; still {
					return false
				}
			}
			return len(pods) == 2
		}, framework.Timeout, framework.Interval).Should(BeTrue())
		Expect(uids(livePods(ns, "web"))).To(Equal(uids(boosted)), "the same pods, resized in place")
		// not before each pod had been Ready for the 3s boost (timestamps have whole seconds)
		var l corev1.EventList
		Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
		for _, p := range boosted {
			var ready time.Time
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady {
					ready = c.LastTransitionTime.Time
				}
			}
			resized := false
			for _, e := range l.Items {
				if e.InvolvedObject.UID == p.UID && e.Reason == updater.EventResizedInPlace {
					resized = true
					Expect(e.FirstTimestamp.Time).To(BeTemporally(">=", ready.Add(2*time.Second)), "pod %s resized back before its boost was over", p.Name)
				}
			}
			Expect(resized).To(BeTrue(), "pod %s has no ResizedInPlace event", p.Name)
		}
		Expect(eventStream(ns)).To(ContainElement(And(ContainSubstring("ResizedInPlace"), ContainSubstring("startup boost over"))))
	})

	It("InPlaceOrRecreate: an Infeasible resize falls back to eviction, and the replacement is sized at admission", func() {
		ns := framework.NewNamespace(k8s, "infeasible")
		deployment(ns, "web", 2, "infeasible", rl("100m", ""), rl("200m", ""))
		before := uids(livePods(ns, "web"))
		vpa(ns, "web", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		startUpdater(testOptions())
		Eventually(func() bool {
			pods := livePods(ns, "web")
			return len(pods) == 2 && hasRequests("300m", "")(pods) && !containsAny(uids(pods), before)
		}, framework.Timeout, framework.Interval).Should(BeTrue())
		var stream []string
		Eventually(func() []string { stream = eventStream(ns); return stream }, framework.Timeout, framework.Interval).Should(ContainElement(And(ContainSubstring("ResizeFallbackEviction"), ContainSubstring("ResizeInfeasible"))))
		AddReportEntry("InPlaceOrRecreate with an Infeasible resize: event stream", strings.Join(stream, "\n"))
		GinkgoWriter.Println(strings.Join(stream, "\n"))
	})

	It("InPlaceOrRecreate: a resize deferred past the framework.Timeout falls back to eviction", func() {
		ns := framework.NewNamespace(k8s, "deferred")
		deployment(ns, "web", 2, "deferred", rl("100m", ""), rl("200m", ""))
		before := uids(livePods(ns, "web"))
		vpa(ns, "web", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		start := time.Now()
		startUpdater(testOptions())
		Eventually(func() bool {
			pods := livePods(ns, "web")
			return len(pods) == 2 && hasRequests("300m", "")(pods) && !containsAny(uids(pods), before)
		}, framework.Timeout, framework.Interval).Should(BeTrue())
		Expect(time.Since(start)).To(BeNumerically(">", testOptions().DeferredTimeout-time.Second), "not before the deferral timed out (lastTransitionTime has a precision of one second)")
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(ContainElement(ContainSubstring("ResizeDeferredTooLong")))
	})

	It("requestToLimitRatio: a QoS-changing change evicts, a QoS-preserving one resizes in place (the AEP-8515 cases)", func() {
		Expect(gates.SetFromMap(map[string]bool{"RequestToLimitRatio": true})).To(Succeed())
		DeferCleanup(func() { Expect(gates.SetFromMap(map[string]bool{"RequestToLimitRatio": false})).To(Succeed()) })
		ns := framework.NewNamespace(k8s, "qos")
		factor := func(f float64) *vpav1.ResourceRequestToLimitRatio {
			return &vpav1.ResourceRequestToLimitRatio{Type: vpav1.RequestToLimitRatioFactor, Factor: &f}
		}
		deployment(ns, "to-guaranteed", 2, "accept", rl("100m", "100Mi"), rl("200m", "200Mi"))
		deployment(ns, "stays-burstable", 2, "accept", rl("100m", "100Mi"), rl("200m", "200Mi"))
		changing, keeping := uids(livePods(ns, "to-guaranteed")), uids(livePods(ns, "stays-burstable"))
		vpa(ns, "to-guaranteed", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", "150Mi"), rl("250m", "120Mi"), rl("350m", "180Mi"),
			vpav1.ContainerResourcePolicy{ContainerName: "app", RequestToLimitRatio: &vpav1.RequestToLimitRatio{CPU: factor(1), Memory: factor(1)}})
		vpa(ns, "stays-burstable", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", "150Mi"), rl("250m", "120Mi"), rl("350m", "180Mi"),
			vpav1.ContainerResourcePolicy{ContainerName: "app", RequestToLimitRatio: &vpav1.RequestToLimitRatio{CPU: factor(3)}})
		startUpdater(testOptions())
		Eventually(func() bool {
			pods := livePods(ns, "to-guaranteed")
			if len(pods) != 2 || containsAny(uids(pods), changing) || !hasRequests("300m", "150Mi")(pods) {
				return false
			}
			for _, p := range pods {
				if p.Status.QOSClass != corev1.PodQOSGuaranteed {
					return false
				}
			}
			return true
		}, framework.Timeout, framework.Interval).Should(BeTrue(), "recreated as Guaranteed")
		Eventually(func() bool {
			pods := livePods(ns, "stays-burstable")
			return hasRequests("300m", "150Mi")(pods) && pods[0].Spec.Containers[0].Resources.Limits.Cpu().Cmp(resource.MustParse("900m")) == 0
		}, framework.Timeout, framework.Interval).Should(BeTrue(), "resized in place to cpu 300m/900m")
		Expect(uids(livePods(ns, "stays-burstable"))).To(Equal(keeping))
		Expect(eventStream(ns)).To(ContainElement(And(ContainSubstring("Pod/to-guaranteed"), ContainSubstring("Evicted"), ContainSubstring("QoS class would change from Burstable to Guaranteed"))))

		By("the gate turned off: the next resize gives limits at the workload's 1:2 ratio, not the 1:3 the running pods carry")
		Expect(gates.SetFromMap(map[string]bool{"RequestToLimitRatio": false})).To(Succeed())
		v := &vpav1.VerticalPodAutoscaler{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stays-burstable"}, v)).To(Succeed())
		r := &v.Status.Recommendation.ContainerRecommendations[0]
		r.Target, r.LowerBound, r.UpperBound, r.UncappedTarget = rl("400m", "150Mi"), rl("350m", "120Mi"), rl("450m", "180Mi"), rl("400m", "150Mi")
		Expect(k8s.Status().Update(ctx, v)).To(Succeed())
		Eventually(func() bool {
			pods := livePods(ns, "stays-burstable")
			if len(pods) != 2 || !hasRequests("400m", "150Mi")(pods) {
				return false
			}
			for _, p := range pods {
				if p.Spec.Containers[0].Resources.Limits.Cpu().Cmp(resource.MustParse("800m")) != 0 {
					return false
				}
			}
			return true
		}, framework.Timeout, framework.Interval).Should(BeTrue(), "resized in place to cpu 400m/800m")
		Expect(uids(livePods(ns, "stays-burstable"))).To(Equal(keeping))
	})

	It("never disrupts more than one pod at a time under a PodDisruptionBudget with maxUnavailable 1", func() {
		ns := framework.NewNamespace(k8s, "pdb")
		Expect(k8s.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})).To(Succeed())
		deployment(ns, "web", 4, "accept", rl("100m", ""), nil)
		before := uids(livePods(ns, "web"))
		var worst atomic.Int32
		watchCtx, stopWatch := context.WithCancel(ctx)
		DeferCleanup(stopWatch)
		go func() {
			for watchCtx.Err() == nil {
				var l corev1.PodList
				if k8s.List(watchCtx, &l, client.InNamespace(ns), client.MatchingLabels{"app": "web"}) == nil {
					if d := int32(4 - len(livePods(ns, "web"))); d > worst.Load() {
						worst.Store(d)
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		vpa(ns, "web", vpav1.UpdateModeRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		startUpdater(testOptions())
		Eventually(func() bool {
			pods := livePods(ns, "web")
			return len(pods) == 4 && hasRequests("300m", "")(pods) && !containsAny(uids(pods), before)
		}, framework.Timeout, framework.Interval).Should(BeTrue())
		stopWatch()
		AddReportEntry("PDB: most pods disrupted at once", worst.Load())
		Expect(worst.Load()).To(BeNumerically("<=", 1))
	})

	It("does not evict while the admission Lease is stale", func() {
		ns := framework.NewNamespace(k8s, "stale-lease")
		renewed := metav1.NewMicroTime(time.Now().Add(-10 * time.Minute))
		Expect(k8s.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: testadmission.AdmissionNamespace, Name: "stale-" + ns},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("gone"), RenewTime: &renewed}})).To(Succeed())
		deployment(ns, "web", 2, "accept", rl("100m", ""), nil)
		before := uids(livePods(ns, "web"))
		vpa(ns, "web", vpav1.UpdateModeRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		o := testOptions()
		o.AdmissionLease = testadmission.AdmissionNamespace + "/stale-" + ns
		startUpdater(o)
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(ContainElement(ContainSubstring("AdmissionNotServing")))
		Consistently(func() []types.UID { return uids(livePods(ns, "web")) }, 2*time.Second, framework.Interval).Should(Equal(before))
	})

	It("leaves a single-replica workload alone unless its minReplicas is 1", func() {
		ns := framework.NewNamespace(k8s, "single")
		deployment(ns, "web", 1, "accept", rl("100m", ""), nil)
		before := uids(livePods(ns, "web"))
		v := vpa(ns, "web", vpav1.UpdateModeRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		startUpdater(testOptions())
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(ContainElement(ContainSubstring(updater.ReasonMinReplicas)))
		Consistently(func() []types.UID { return uids(livePods(ns, "web")) }, 2*time.Second, framework.Interval).Should(Equal(before))

		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(v), v)).To(Succeed())
		v.Spec.UpdatePolicy.MinReplicas = ptr.To[int32](1)
		Expect(k8s.Update(ctx, v)).To(Succeed())
		Eventually(func() bool {
			pods := livePods(ns, "web")
			return len(pods) == 1 && hasRequests("300m", "")(pods) && !containsAny(uids(pods), before)
		}, framework.Timeout, framework.Interval).Should(BeTrue())
	})

	It("detects an eviction loop: a replacement that comes back unsized is not evicted again", func() {
		ns := framework.NewNamespace(k8s, "loop")
		// pods created now are not sized: the pod webhook is taken out of the API server (the Lease stays
		// fresh, as with a misconfigured webhook)
		var mwc admissionregistrationv1.MutatingWebhookConfiguration
		Expect(k8s.Get(ctx, client.ObjectKey{Name: "hvpa"}, &mwc)).To(Succeed())
		Expect(k8s.Delete(ctx, &mwc)).To(Succeed())
		DeferCleanup(func() {
			mwc.ResourceVersion, mwc.UID = "", ""
			Expect(k8s.Create(ctx, &mwc)).To(Succeed())
		})
		deployment(ns, "web", 2, "accept", rl("100m", ""), nil)
		vpa(ns, "web", vpav1.UpdateModeRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		o := testOptions()
		o.LoopRecords = ns + "/updater-loops" // the records survive the updater (its ConfigMap)
		first, stopFirst := context.WithCancel(context.Background())
		// every eviction finds its pod among the known pods of a record already in the ConfigMap (written
		// ahead: a crash right after the eviction must not lose it)
		var unrecorded, seen atomic.Int32
		spy := evictionSpy{Client: mgrC, before: func(pod client.Object) {
			seen.Add(1)
			cm := &corev1.ConfigMap{}
			if k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "updater-loops"}, cm) != nil || !strings.Contains(cm.Data["records.json"], string(pod.GetUID())) {
				unrecorded.Add(1)
			}
		}}
		u := updater.New(spy, k8s, events, clock.RealClock{}, gates, o, updater.NewMetrics(nil))
		done := make(chan error, 1)
		go func() { done <- u.Start(first) }()
		DeferCleanup(stopFirst)
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(ContainElement(ContainSubstring(updater.EventLoopDetected)))
		evictions := func() int {
			n := 0
			for _, e := range eventStream(ns) {
				if strings.Contains(e, "Pod/") && strings.Contains(e, " Evicted:") {
					n++
				}
			}
			return n
		}
		Consistently(evictions, 3*time.Second, framework.Interval).Should(BeNumerically("<=", 2), "each original pod evicted once at most, no replacement evicted")
		Expect(seen.Load()).To(BeNumerically(">", 0), "evictions made")
		Expect(unrecorded.Load()).To(BeZero(), "evictions made before their loop record was in the ConfigMap")

		By("a restarted updater (a new process, or a new leader) remembers the evictions from its ConfigMap")
		stopFirst()
		Eventually(done, framework.Timeout).Should(Receive(BeNil()))
		cm := &corev1.ConfigMap{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "updater-loops"}, cm)).To(Succeed())
		Expect(cm.Data["records.json"]).To(ContainSubstring(`"evicted"`))
		before := evictions()
		startUpdater(o)
		Consistently(evictions, 3*time.Second, framework.Interval).Should(Equal(before), "the replacements are not evicted again after the restart")
	})
})

func containsAny(have, any []types.UID) bool {
	for _, h := range have {
		for _, a := range any {
			if h == a {
				return true
			}
		}
	}
	return false
}

// evictionSpy is a client whose pods/eviction creates call before first.
type evictionSpy struct {
	client.Client
	before func(pod client.Object)
}

func (s evictionSpy) SubResource(sub string) client.SubResourceClient {
	r := s.Client.SubResource(sub)
	if sub != "eviction" {
		return r
	}
	return evictionSpySub{SubResourceClient: r, before: s.before}
}

type evictionSpySub struct {
	client.SubResourceClient
	before func(pod client.Object)
}

func (s evictionSpySub) Create(ctx context.Context, obj client.Object, sub client.Object, opts ...client.SubResourceCreateOption) error {
	s.before(obj)
	return s.SubResourceClient.Create(ctx, obj, sub, opts...)
}
