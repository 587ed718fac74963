package updater_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/controllers/updater"
	"github.com/hvpa-dev/hvpa/internal/features"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
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
	o.RetryBackoff, o.RetryBackoffMax = time.Second, 4*time.Second
	o.AdmissionLease = testadmission.AdmissionLease
	return o
}

// startUpdater runs an updater until the spec ends.
func startUpdater(o updater.Options) {
	ctx, cancel := context.WithCancel(context.Background())
	DeferCleanup(cancel)
	u := updater.New(mgrC, k8s, events, clock.RealClock{}, gates, o, updater.NewMetrics(nil))
	mc, err := metricsclient.NewForConfig(cluster.Cfg)
	Expect(err).NotTo(HaveOccurred())
	u.Usage = updater.MetricsUsage{Client: mc} // as the product wires it
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
			}
			return len(pods) == 2
		}, framework.Timeout, framework.Interval).Should(BeTrue())
		// the updater may not patch pods (only pods/resize): the annotation stays, and the resize that ended the
		// boost is what says it is over (metadata.generation past 1), so the pods are not sent back again
		for _, p := range livePods(ns, "web") {
			Expect(p.Annotations).To(HaveKey(vpav1.AnnotationStartupBoost))
			Expect(p.Generation).To(BeNumerically(">", 1))
		}
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
				if e.InvolvedObject.UID == p.UID && e.Reason == updater.EventInPlaceResizedByVPA {
					resized = true
					Expect(e.FirstTimestamp.Time).To(BeTemporally(">=", ready.Add(2*time.Second)), "pod %s resized back before its boost was over", p.Name)
				}
			}
			Expect(resized).To(BeTrue(), "pod %s has no InPlaceResizedByVPA event", p.Name)
		}
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(ContainElement(And(ContainSubstring("Pod/"), ContainSubstring(updater.EventInPlaceResizedByVPA), ContainSubstring("startup boost over"))))

	})

	It("startupBoost: without the CPUStartupBoost gate a pod's boost annotation is its author's, and is not followed", func() {
		Expect(gates.SetFromMap(map[string]bool{string(features.CPUStartupBoost): true})).To(Succeed())
		DeferCleanup(func() {
			Expect(gates.SetFromMap(map[string]bool{string(features.CPUStartupBoost): false})).To(Succeed())
		})
		ns := framework.NewNamespace(k8s, "forged")
		// created before its VPA, so the webhook leaves the pod and its author's annotation as they are
		d := wrappers.MakeDeployment(ns, "web").Replicas(1).PodAnnotation(vpav1.AnnotationStartupBoost, `{"app":{"cpuRequest":"50m","cpuLimit":"100m"}}`).
			PodLabel(playedkubelet.AnswerLabel, "accept").Container(wrappers.MakeContainer("app").Resources(rl("300m", "100Mi"), rl("600m", "200Mi")).Obj()).Obj()
		Expect(k8s.Create(ctx, d)).To(Succeed())
		Eventually(func() int { return len(livePods(ns, "web")) }, framework.Timeout, framework.Interval).Should(Equal(1))
		Expect(livePods(ns, "web")[0].Annotations).To(HaveKey(vpav1.AnnotationStartupBoost))
		// a VPA with a startup boost (accepted while the gate is on), recommending what the pod has
		v := vpa(ns, "web", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", "100Mi"), rl("250m", "50Mi"), rl("350m", "150Mi"))
		v.Spec.StartupBoost = &vpav1.StartupBoost{CPU: &vpav1.GenericStartupBoost{Type: vpav1.StartupBoostFactor, Factor: ptr.To[int32](3), DurationSeconds: ptr.To[int32](1)}}
		Expect(k8s.Update(ctx, v)).To(Succeed())
		Eventually(func() bool {
			var got vpav1.VerticalPodAutoscaler
			return mgrC.Get(ctx, client.ObjectKeyFromObject(v), &got) == nil && got.Spec.StartupBoost != nil
		}, framework.Timeout, framework.Interval).Should(BeTrue())
		Expect(gates.SetFromMap(map[string]bool{string(features.CPUStartupBoost): false})).To(Succeed())
		startUpdater(testOptions())
		Consistently(func() string { return livePods(ns, "web")[0].Spec.Containers[0].Resources.Requests.Cpu().String() },
			3*time.Second, framework.Interval).Should(Equal("300m"), "resized to the annotation's 50m")
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
		Eventually(func() []string { stream = eventStream(ns); return stream }, framework.Timeout, framework.Interval).Should(ContainElement(And(
			ContainSubstring("Pod/"), ContainSubstring(updater.EventEvictedByVPA), ContainSubstring("in place of a resize that could not be made"), ContainSubstring("ResizeInfeasible"))))
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
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(ContainElement(And(ContainSubstring("Pod/to-guaranteed"), ContainSubstring("Evicted"), ContainSubstring("QoS class would change from Burstable to Guaranteed"))))

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
		o.AdmissionLease = types.NamespacedName{Namespace: testadmission.AdmissionNamespace, Name: "stale-" + ns}
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

	It("does not evict while the API server sends the replacements to no sizing webhook, though the webhook's Lease is fresh", func() {
		ns := framework.NewNamespace(k8s, "unsized")
		withoutPodWebhook()
		deployment(ns, "web", 2, "accept", rl("100m", ""), nil)
		vpa(ns, "web", vpav1.UpdateModeRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		startUpdater(testOptions())
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(
			ContainElement(ContainSubstring(updater.ReasonReplacementUnsized + ": ")))
		Consistently(func() []string { return eventStream(ns) }, 2*time.Second, framework.Interval).ShouldNot(
			ContainElement(ContainSubstring(" " + updater.EventEvictedByVPA + ":")))
	})

	It("detects an eviction loop: a replacement that comes back unsized is not evicted again", func() {
		ns := framework.NewNamespace(k8s, "loop")
		// pods created now are not sized: the pod webhook is taken out of the API server, and the updater does
		// not check the webhook (--admission-lease -: unsized replacements accepted), so it evicts
		withoutPodWebhook()
		deployment(ns, "web", 2, "accept", rl("100m", ""), nil)
		vpa(ns, "web", vpav1.UpdateModeRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		o := testOptions()
		o.AdmissionLease = types.NamespacedName{}
		o.LoopRecords = types.NamespacedName{Namespace: ns, Name: "updater-loops"} // the records survive the updater (its ConfigMap)
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
				if strings.Contains(e, " Pod/") && strings.Contains(e, " "+updater.EventEvictedByVPA+":") {
					n++
				}
			}
			return n
		}
		Expect(evictions()).To(BeNumerically(">", 0), "evictions made")
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

// withoutPodWebhook takes the pod webhook out of the API server until the spec ends: pods created meanwhile
// are not sized, while the webhook's Lease stays fresh (as with a misconfigured webhook).
func withoutPodWebhook() {
	GinkgoHelper()
	ctx := context.Background()
	var mwc admissionregistrationv1.MutatingWebhookConfiguration
	Expect(k8s.Get(ctx, client.ObjectKey{Name: "hvpa"}, &mwc)).To(Succeed())
	Expect(k8s.Delete(ctx, &mwc)).To(Succeed())
	DeferCleanup(func() {
		mwc.ResourceVersion, mwc.UID = "", ""
		Expect(k8s.Create(ctx, &mwc)).To(Succeed())
	})
}

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

var _ = Describe("Updater refusals and events", func() {
	ctx := context.Background()

	It("evicts for a change again after the workload moved on to another and back (F, G, F within the loop window)", func() {
		ns := framework.NewNamespace(k8s, "back")
		deployment(ns, "web", 2, "accept", rl("100m", ""), nil)
		v := vpa(ns, "web", vpav1.UpdateModeRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		startUpdater(testOptions())
		at := func(cpu string) func() bool {
			return func() bool { pods := livePods(ns, "web"); return len(pods) == 2 && hasRequests(cpu, "")(pods) }
		}
		recommend := func(target, lower, upper string) {
			Eventually(func() error {
				if err := k8s.Get(ctx, client.ObjectKeyFromObject(v), v); err != nil {
					return err
				}
				v.Status.Recommendation.ContainerRecommendations = []vpav1.RecommendedContainerResources{
					wrappers.ContainerRecommendation("app", rl(target, ""), rl(lower, ""), rl(upper, ""))}
				return k8s.Status().Update(ctx, v)
			}, framework.Timeout, framework.Interval).Should(Succeed())
		}
		Eventually(at("300m"), framework.Timeout, framework.Interval).Should(BeTrue(), "F applied")
		recommend("600m", "550m", "650m")
		Eventually(at("600m"), framework.Timeout, framework.Interval).Should(BeTrue(), "G applied")
		// the pods now hold G, which the workload was evicted for after F: the webhook sized them for it, they
		// are no replacements that came back without F, so they are evicted for F like any other pod
		recommend("300m", "250m", "350m")
		Eventually(at("300m"), framework.Timeout, framework.Interval).Should(BeTrue(), "F applied again")
		Expect(eventStream(ns)).NotTo(ContainElement(ContainSubstring(updater.EventLoopDetected)))
	})

	It("InPlaceOrRecreate on one replica: an Infeasible resize is not a trap; a lower target is asked as soon as the recommendation falls", func() {
		ns := framework.NewNamespace(k8s, "trapped")
		deployment(ns, "web", 1, "infeasible", rl("100m", ""), rl("200m", ""))
		before := uids(livePods(ns, "web"))
		v := vpa(ns, "web", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		o := testOptions()
		o.RetryBackoff = time.Hour // nothing but a lower target may be tried within the spec
		startUpdater(o)
		// the one pod may not be evicted (minReplicas 2): the refusal is reported with upstream's reason
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(ContainElement(And(
			ContainSubstring("Pod/"), ContainSubstring(updater.EventInPlaceResizeSkipped+": "+updater.ReasonInfeasible))))
		Expect(livePods(ns, "web")[0].Spec.Containers[0].Resources.Requests.Cpu().String()).To(Equal("300m"))

		By("the recommendation falls below the refused target: resized to it at once, not evicted")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(v), v)).To(Succeed())
		r := &v.Status.Recommendation.ContainerRecommendations[0]
		r.Target, r.LowerBound, r.UpperBound, r.UncappedTarget = rl("200m", ""), rl("150m", ""), rl("250m", ""), rl("200m", "")
		Expect(k8s.Status().Update(ctx, v)).To(Succeed())
		Eventually(func() string { return livePods(ns, "web")[0].Spec.Containers[0].Resources.Requests.Cpu().String() },
			framework.Timeout, framework.Interval).Should(Equal("200m"))
		Expect(uids(livePods(ns, "web"))).To(Equal(before))
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(ContainElement(And(ContainSubstring(updater.EventInPlaceResizedByVPA), ContainSubstring("lower than the one refused"))))
	})

	It("never lowers a memory limit to or below the memory the container uses (metrics.k8s.io)", func() {
		ns := framework.NewNamespace(k8s, "memory")
		deployment(ns, "web", 2, "accept", rl("100m", "400Mi"), rl("200m", "800Mi"))
		use := func(bytes int64) {
			for _, p := range livePods(ns, "web") {
				cluster.Metrics.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 100, MemoryBytes: bytes})
			}
		}
		use(500 << 20)
		before := uids(livePods(ns, "web"))
		// the target halves memory: the limit would go from 800Mi to 400Mi, below the 500Mi in use
		vpa(ns, "web", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", "200Mi"), rl("250m", "150Mi"), rl("350m", "250Mi"))
		startUpdater(testOptions())
		memory := func() []string {
			var out []string
			for _, p := range livePods(ns, "web") {
				r := p.Spec.Containers[0].Resources
				out = append(out, r.Requests.Cpu().String()+" "+r.Requests.Memory().String()+"/"+r.Limits.Memory().String())
			}
			return out
		}
		Eventually(memory, framework.Timeout, framework.Interval).Should(Equal([]string{"300m 400Mi/800Mi", "300m 400Mi/800Mi"}), "cpu resized, memory kept")
		Consistently(memory, 2*time.Second, framework.Interval).Should(Equal([]string{"300m 400Mi/800Mi", "300m 400Mi/800Mi"}))
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(ContainElement(ContainSubstring("memory kept at its limit 800Mi (usage 500Mi")))

		By("the usage falls: memory is lowered too")
		use(100 << 20)
		Eventually(memory, framework.Timeout, framework.Interval).Should(Equal([]string{"300m 200Mi/400Mi", "300m 200Mi/400Mi"}))
		Expect(uids(livePods(ns, "web"))).To(Equal(before))
	})

	It("a resize refused by policy falls back to eviction only where a dry run of the replacement is admitted", func() {
		ns := framework.NewNamespace(k8s, "policy")
		// pods of both workloads exist before the policies
		deployment(ns, "lenient", 2, "accept", rl("100m", ""), rl("200m", ""))
		deployment(ns, "strict", 2, "accept", rl("100m", ""), rl("200m", ""))
		lenient, strict := uids(livePods(ns, "lenient")), uids(livePods(ns, "strict"))
		// no resize in the namespace (as Gatekeeper or Kyverno would refuse one); no strict pod asking more than
		// 200m cpu may be created
		policy(ns, "no-resize", []string{"UPDATE"}, "pods/resize", nil, "false", "resizes are not allowed in this namespace")
		policy(ns, "max-cpu", []string{"CREATE"}, "pods", map[string]string{"app": "strict"},
			"object.spec.containers.all(c, !has(c.resources.requests) || !('cpu' in c.resources.requests) || quantity(c.resources.requests['cpu']).compareTo(quantity('200m')) <= 0)",
			"strict pods ask at most 200m cpu")
		Eventually(func() error { // the API server has the policies: a dry-run resize is refused
			p := livePods(ns, "lenient")[0]
			return k8s.SubResource("resize").Patch(ctx, &p, client.RawPatch(types.StrategicMergePatchType,
				[]byte(`{"spec":{"containers":[{"name":"app","resources":{"requests":{"cpu":"110m"}}}]}}`)), client.DryRunAll)
		}, framework.Timeout, framework.Interval).Should(MatchError(ContainSubstring("resizes are not allowed")))
		Eventually(func() error { // and the other: a strict pod asking 300m is refused (the policies load apart)
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "strict-probe-", Labels: map[string]string{"app": "strict"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played", Resources: corev1.ResourceRequirements{Requests: rl("300m", "")}}}}}
			return k8s.Create(ctx, p, client.DryRunAll)
		}, framework.Timeout, framework.Interval).Should(MatchError(ContainSubstring("strict pods ask at most 200m cpu")))
		vpa(ns, "lenient", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		vpa(ns, "strict", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		startUpdater(testOptions())

		By("lenient: the resize is refused, the replacement would be admitted: evicted, recreated at the target")
		Eventually(func() bool {
			pods := livePods(ns, "lenient")
			return len(pods) == 2 && hasRequests("300m", "")(pods) && !containsAny(uids(pods), lenient)
		}, framework.Timeout, framework.Interval).Should(BeTrue())
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(ContainElement(And(ContainSubstring("Pod/lenient"), ContainSubstring(updater.EventEvictedByVPA),
			ContainSubstring("the API refused the resize"), ContainSubstring("resizes are not allowed in this namespace"))))

		By("strict: the replacement would be refused too: not evicted, reported")
		Eventually(func() []string { return eventStream(ns) }, framework.Timeout, framework.Interval).Should(ContainElement(And(
			ContainSubstring("Pod/strict"), ContainSubstring(updater.EventUpdateSkipped+": "+updater.ReasonReplacementRefused),
			ContainSubstring("strict pods ask at most 200m cpu"))))
		Consistently(func() []types.UID { return uids(livePods(ns, "strict")) }, 3*time.Second, framework.Interval).Should(Equal(strict))
		Expect(hasRequests("100m", "")(livePods(ns, "strict"))).To(BeTrue())
	})

	It("sends upstream's event reasons about a VPA's pods and hvpa's own about an Hvpa's", func() {
		ns := framework.NewNamespace(k8s, "events")
		for _, app := range []string{"vpa-resized", "vpa-evicted", "hvpa-resized", "hvpa-evicted"} {
			deployment(ns, app, 2, "accept", rl("100m", ""), rl("200m", ""))
		}
		deployment(ns, "vpa-infeasible", 1, "infeasible", rl("100m", ""), rl("200m", ""))
		vpa(ns, "vpa-resized", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		vpa(ns, "vpa-evicted", vpav1.UpdateModeRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		vpa(ns, "vpa-infeasible", vpav1.UpdateModeInPlaceOrRecreate, rl("300m", ""), rl("250m", ""), rl("350m", ""))
		hvpa(ns, "hvpa-resized", vpav1.UpdateModeInPlaceOrRecreate, "300m")
		hvpa(ns, "hvpa-evicted", vpav1.UpdateModeRecreate, "300m")
		startUpdater(testOptions())
		want := []string{
			"Pod/vpa-resized " + updater.EventInPlaceResizedByVPA, "VerticalPodAutoscaler/vpa-resized " + updater.EventResizedInPlace,
			"Pod/vpa-evicted " + updater.EventEvictedByVPA, "VerticalPodAutoscaler/vpa-evicted " + updater.EventEvictedPod,
			"Pod/vpa-infeasible " + updater.EventInPlaceResizeSkipped,
			"Pod/hvpa-resized " + updater.EventResizedInPlace, "Hvpa/hvpa-resized " + updater.EventResizedInPlace,
			"Pod/hvpa-evicted " + updater.EventEvicted, "Hvpa/hvpa-evicted " + updater.EventEvicted,
		}
		var got []string
		Eventually(func() []string {
			got = reasonsByObject(ns)
			return got
		}, framework.Timeout, framework.Interval).Should(ContainElements(want))
		// upstream's reasons only about VPAs, hvpa's eviction reason only about Hvpas
		for _, r := range got {
			vpaEvent := strings.HasPrefix(r, "Pod/vpa-") || strings.HasPrefix(r, "VerticalPodAutoscaler/")
			Expect(vpaEvent && strings.HasSuffix(r, " "+updater.EventEvicted)).To(BeFalse(), r)
			Expect(!vpaEvent && (strings.HasSuffix(r, "ByVPA") || strings.HasSuffix(r, updater.EventEvictedPod) || strings.HasSuffix(r, updater.EventInPlaceResizeSkipped))).To(BeFalse(), r)
		}
		AddReportEntry("event reasons by object", strings.Join(got, "\n"))
	})
})

// reasonsByObject is the updater's events of the namespace as "Kind/<workload> Reason", a pod named by its
// app label, sorted and without repeats.
func reasonsByObject(ns string) []string {
	var l corev1.EventList
	Expect(k8s.List(context.Background(), &l, client.InNamespace(ns))).To(Succeed())
	seen := map[string]bool{}
	for _, e := range l.Items {
		if e.Source.Component != "hvpa-updater" {
			continue
		}
		name := e.InvolvedObject.Name
		if e.InvolvedObject.Kind == "Pod" { // <deployment>-<replicaset hash>-<pod suffix>
			if i := strings.LastIndex(name, "-"); i > 0 {
				name = name[:i]
			}
			if i := strings.LastIndex(name, "-"); i > 0 {
				name = name[:i]
			}
		}
		seen[e.InvolvedObject.Kind+"/"+name+" "+e.Reason] = true
	}
	out := slices.Sorted(maps.Keys(seen))
	return out
}

// hvpa creates an Hvpa on Deployment <name> in updateMode mode and plays its controller's output: selector
// app=<name>, 2 replicas of container app at cpu.
func hvpa(ns, name string, mode vpav1.UpdateMode, cpu string) {
	ctx := context.Background()
	h := wrappers.MakeHvpa(ns, name).HPA(false, 0, 3).Interval(3, "2", "4Gi").Obj()
	h.Spec.VPA = &hvpav1alpha1.VpaSpec{Template: hvpav1alpha1.VpaTemplate{UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: &mode}}}
	Expect(k8s.Create(ctx, h)).To(Succeed())
	h.Status = wrappers.MakeHvpa(ns, name).Selector("app="+name).Desired(2, hvpav1alpha1.ContainerResources{Name: "app", Requests: rl(cpu, "")}).Obj().Status
	Expect(k8s.Status().Update(ctx, h)).To(Succeed())
	Eventually(func() bool {
		var got hvpav1alpha1.Hvpa
		return mgrC.Get(ctx, client.ObjectKeyFromObject(h), &got) == nil && got.Status.Desired != nil
	}, framework.Timeout, framework.Interval).Should(BeTrue())
}

// policy makes a ValidatingAdmissionPolicy, bound with action Deny to namespace ns, that refuses operations
// on resource (e.g. pods, pods/resize) of the objects matching labels (nil: all) unless expression holds.
func policy(ns, name string, operations []string, resource string, labels map[string]string, expression, message string) {
	ctx := context.Background()
	name += "-" + ns
	p := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ObjectSelector: &metav1.LabelSelector{MatchLabels: labels},
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
					Operations: toOperations(operations),
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{resource}}}}}},
			Validations: []admissionregistrationv1.Validation{{Expression: expression, Message: message}}}}
	Expect(k8s.Create(ctx, p)).To(Succeed())
	DeferCleanup(func() { Expect(k8s.Delete(ctx, p)).To(Succeed()) })
	b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}}}}
	Expect(k8s.Create(ctx, b)).To(Succeed())
	DeferCleanup(func() { Expect(k8s.Delete(ctx, b)).To(Succeed()) })
}

func toOperations(ops []string) []admissionregistrationv1.OperationType {
	var out []admissionregistrationv1.OperationType
	for _, o := range ops {
		out = append(out, admissionregistrationv1.OperationType(o))
	}
	return out
}
