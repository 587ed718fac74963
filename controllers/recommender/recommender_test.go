package recommender_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/hvpa-dev/hvpa/apis/autoscaling/decodeerr"
	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
	"github.com/hvpa-dev/hvpa/usage"
)

const mi = int64(1 << 20)

// minuteClock makes every metrics read one minute later than the previous one (played time).
type minuteClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *minuteClock) next() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Minute)
	return c.t
}

// last is the played time of the latest metrics read: the next read's samples are a minute later.
func (c *minuteClock) last() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

var played0 = &minuteClock{t: time.Now().Truncate(time.Minute)}

// Now is the played time of the latest metrics read, or the wall clock when that is later: the recommenders'
// clock in this suite (a sample is never dated after the recommender's now, which refuses samples from its
// future).
func (c *minuteClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return latest(c.t, time.Now())
}

func (c *minuteClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func deployment(ctx context.Context, ns, name string, containers ...string) {
	d := wrappers.MakeDeployment(ns, name)
	for _, c := range containers {
		d.Container(wrappers.MakeContainer(c).Obj())
	}
	Expect(k8s.Create(ctx, d.Obj())).To(Succeed())
}

// runPods runs n pods of a Deployment (labels app=name) on the played kubelet, with the given requests.
func runPods(ctx context.Context, ns, name string, n int, requests corev1.ResourceList, containers ...string) []*corev1.Pod {
	var out []*corev1.Pod
	for i := 0; i < n; i++ {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", name, i), Labels: map[string]string{"app": name, "pod-template-hash": "1"}}}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "played", Resources: corev1.ResourceRequirements{Requests: requests}})
		}
		Expect(kubelet.Run(ctx, p)).To(Succeed())
		out = append(out, p)
	}
	return out
}

func vpaFor(ns, name, target string, mode vpav1.UpdateMode) *vpav1.VerticalPodAutoscaler {
	return wrappers.MakeVPA(ns, name).Target("Deployment", target).Mode(mode).Obj()
}

func newRecommender(mutate func(*recommenderctrl.Options), history usage.HistoryProvider) *recommenderctrl.Recommender {
	opts := recommenderctrl.DefaultOptions()
	opts.CheckpointGCInterval = time.Hour
	opts.CheckpointPeriod = 0 // the specs read the checkpoints of the last run; the rotation is tested in writes_test.go
	if mutate != nil {
		mutate(&opts)
	}
	r, err := recommenderctrl.NewRecommender(k8s, usage.MetricsAPI{Client: mclient}, history, recorder, played0, recommender.Defaults(), opts, nil)
	Expect(err).NotTo(HaveOccurred())
	return r
}

func runs(r *recommenderctrl.Recommender, n int) {
	GinkgoHelper()
	for i := 0; i < n; i++ {
		Expect(r.RunOnce(context.Background())).To(Succeed())
	}
}

func getVPA(ctx context.Context, ns, name string) *vpav1.VerticalPodAutoscaler {
	GinkgoHelper()
	v := &vpav1.VerticalPodAutoscaler{}
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, v)).To(Succeed())
	return v
}

func condition(v *vpav1.VerticalPodAutoscaler, t vpav1.VerticalPodAutoscalerConditionType) *vpav1.VerticalPodAutoscalerCondition {
	for i := range v.Status.Conditions {
		if v.Status.Conditions[i].Type == t {
			return &v.Status.Conditions[i]
		}
	}
	return nil
}

func containerRec(v *vpav1.VerticalPodAutoscaler, name string) *vpav1.RecommendedContainerResources {
	if v.Status.Recommendation == nil {
		return nil
	}
	for i := range v.Status.Recommendation.ContainerRecommendations {
		if v.Status.Recommendation.ContainerRecommendations[i].ContainerName == name {
			return &v.Status.Recommendation.ContainerRecommendations[i]
		}
	}
	return nil
}

// expected feeds the same samples into a local model: the numbers the recommender must write.
func expected(samples int, pods int, cpuMilli, memBytes int64, containers int, pol recommender.Policy) recommender.Recommendation {
	m, _ := recommender.NewModel(recommender.Defaults())
	a := m.NewAggregate()
	t := time.Now()
	for p := 0; p < pods; p++ {
		c := m.NewContainer(a)
		for i := 0; i < samples; i++ {
			ts := t.Add(time.Duration(i) * time.Minute)
			m.AddCPU(c, ts, float64(cpuMilli)/1000)
			m.AddMemory(c, ts, float64(memBytes))
		}
	}
	r, _ := m.Recommend(a, containers, pol)
	return r
}

func eventsFor(ctx context.Context, ns, regarding string) []eventsv1.Event {
	var l eventsv1.EventList
	Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
	var out []eventsv1.Event
	for _, e := range l.Items {
		if e.Regarding.Name == regarding {
			out = append(out, e)
		}
	}
	return out
}

var _ = BeforeEach(func() {
	played.Now = played0.next
	played.Clear()
})

var _ = Describe("the recommender", func() {
	ctx := context.Background()

	It("recommends for a VPA on a Deployment from the metrics API, with conditions, and shows in kubectl", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "web", "app")
		pods := runPods(ctx, ns, "web", 2, corev1.ResourceList{"cpu": resource.MustParse("100m"), "memory": resource.MustParse("128Mi")}, "app")
		for _, p := range pods {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 250, MemoryBytes: 300 * mi})
		}
		Expect(k8s.Create(ctx, vpaFor(ns, "web", "web", vpav1.UpdateModeOff))).To(Succeed())
		r := newRecommender(nil, nil)
		reads := played.Reads()
		runs(r, 3)
		Expect(played.Reads()-reads).To(Equal(3), "one metrics.k8s.io list call per run")

		v := getVPA(ctx, ns, "web")
		rec := containerRec(v, "app")
		Expect(rec).NotTo(BeNil(), "status %+v", v.Status)
		want := expected(3, 2, 250, 300*mi, 1, recommender.DefaultPolicy())
		Expect(rec.Target.Cpu().MilliValue()).To(Equal(want.Target.CPUMilli))
		Expect(rec.Target.Memory().Value()).To(Equal(want.Target.MemoryBytes))
		Expect(rec.Target.Cpu().String()).To(Equal("296m"), "250m: bucket end 258.4m, truncated, x1.15 = 296m (upstream arithmetic)")
		Expect(rec.UncappedTarget).To(Equal(rec.Target))
		Expect(rec.UpperBound.Cpu().MilliValue()).To(BeNumerically(">", rec.Target.Cpu().MilliValue()))

		Expect(condition(v, vpav1.RecommendationProvided).Status).To(Equal(corev1.ConditionTrue))
		Expect(condition(v, vpav1.NoPodsMatched).Status).To(Equal(corev1.ConditionFalse))
		Expect(condition(v, vpav1.ConfigUnsupported).Status).To(Equal(corev1.ConditionFalse))
		low := condition(v, vpav1.LowConfidence)
		Expect(low.Status).To(Equal(corev1.ConditionTrue))
		Expect(low.Message).To(ContainSubstring("confidence 0.0 days"))

		played.Clear() // no new samples: nothing changes, so nothing is written
		rv := v.ResourceVersion
		runs(r, 2)
		Expect(getVPA(ctx, ns, "web").ResourceVersion).To(Equal(rv), "status is patched only when it changes")

		By("saying which spec generation the status and each condition were decided for")
		Expect(v.Status.ObservedGeneration).To(HaveValue(Equal(v.Generation)))
		for _, c := range v.Status.Conditions {
			Expect(c.ObservedGeneration).To(Equal(v.Generation), "condition %s", c.Type)
		}
		v.Spec.ResourcePolicy = &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{{ContainerName: "app", MinAllowed: corev1.ResourceList{"cpu": resource.MustParse("10m")}}}}
		Expect(k8s.Update(ctx, v)).To(Succeed())
		runs(r, 1)
		v = getVPA(ctx, ns, "web")
		Expect(v.Generation).To(BeNumerically(">", 1))
		Expect(v.Status.ObservedGeneration).To(HaveValue(Equal(v.Generation)), "a spec change is observed at the next run")
		Expect(condition(v, vpav1.RecommendationProvided).ObservedGeneration).To(Equal(v.Generation))

		for _, args := range [][]string{{"get", "vpa", "-n", ns}, {"describe", "vpa", "-n", ns, "web"}} {
			out, err := testenv.Kubectl(env, args...)
			Expect(err).NotTo(HaveOccurred())
			GinkgoWriter.Printf("$ kubectl %s\n%s\n", strings.Join(args, " "), out)
			if args[0] == "get" {
				Expect(string(out)).To(MatchRegexp(`web\s+Off\s+296m\s+\d+\s+True`))
			} else {
				Expect(string(out)).To(And(ContainSubstring("RecommendationProvided"), ContainSubstring("Uncapped Target:"), ContainSubstring("296m")))
			}
		}

		By("writing checkpoints that a new recommender restores after a restart")
		var cps vpav1.VerticalPodAutoscalerCheckpointList
		Expect(k8s.List(ctx, &cps, client.InNamespace(ns))).To(Succeed())
		Expect(cps.Items).To(HaveLen(1))
		Expect(cps.Items[0].Name).To(Equal("web-app"))
		Expect(cps.Items[0].Status.TotalSamplesCount).To(Equal(6))
		Expect(cps.Items[0].Status.CPUHistogram.BucketWeights).NotTo(BeEmpty())

		Expect(cps.Items[0].Labels).To(HaveKeyWithValue(recommenderctrl.WriterLabel, "default"))
		orphan := &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ghost-app", Labels: map[string]string{recommenderctrl.WriterLabel: "default"}},
			Spec: vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: "ghost", ContainerName: "app"}}
		Expect(k8s.Create(ctx, orphan)).To(Succeed())
		// an orphan another recommender wrote (upstream's has no label): not this recommender's to delete
		foreign := &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "upstream-app"},
			Spec: vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: "upstream", ContainerName: "app"}}
		Expect(k8s.Create(ctx, foreign)).To(Succeed())
		before := containerRec(getVPA(ctx, ns, "web"), "app").DeepCopy()
		withinBucket := func(a, b int64) bool { return float64(max(a, b)) <= float64(min(a, b))*1.051+1 }
		restarted := newRecommender(func(o *recommenderctrl.Options) { o.CheckpointGCInterval = 0 }, nil)
		runs(restarted, 1) // no usage yet: the CPU history comes from the checkpoint alone
		after := containerRec(getVPA(ctx, ns, "web"), "app")
		Expect(after).NotTo(BeNil())
		Expect(withinBucket(after.Target.Cpu().MilliValue(), before.Target.Cpu().MilliValue())).To(BeTrue(), "cpu %v vs %v", after.Target.Cpu(), before.Target.Cpu())
		// the memory peaks were all in the still-open window, which checkpoints leave out (no double counting):
		// they come back with the pods' next samples
		for _, p := range pods {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 250, MemoryBytes: 300 * mi})
		}
		runs(restarted, 1)
		after = containerRec(getVPA(ctx, ns, "web"), "app")
		Expect(withinBucket(after.Target.Cpu().MilliValue(), before.Target.Cpu().MilliValue())).To(BeTrue(), "cpu %v vs %v", after.Target.Cpu(), before.Target.Cpu())
		Expect(withinBucket(after.Target.Memory().Value(), before.Target.Memory().Value())).To(BeTrue(), "memory %v vs %v", after.Target.Memory(), before.Target.Memory())
		// the history (sample count and span) survived: bounds no wider than before the restart, where a fresh
		// recommender would have no upper bound at all after one run
		Expect(after.UpperBound.Cpu().MilliValue()).To(BeNumerically("<=", before.UpperBound.Cpu().MilliValue()))
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(orphan), &vpav1.VerticalPodAutoscalerCheckpoint{})).NotTo(Succeed(), "the orphaned checkpoint must be deleted")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(foreign), &vpav1.VerticalPodAutoscalerCheckpoint{})).To(Succeed(), "another recommender's checkpoint was deleted")
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-app"}, &vpav1.VerticalPodAutoscalerCheckpoint{})).To(Succeed())

		By("replacing a checkpoint's whole status at each write, without reading it first: a bucket the model does not hold is gone")
		cp := &vpav1.VerticalPodAutoscalerCheckpoint{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-app"}, cp)).To(Succeed())
		const stale = 170 // far above any usage of this spec
		Expect(cp.Status.CPUHistogram.BucketWeights).NotTo(HaveKey(stale))
		cp.Status.CPUHistogram.BucketWeights[stale] = 10000
		Expect(k8s.Update(ctx, cp)).To(Succeed())
		runs(restarted, 1)
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-app"}, cp)).To(Succeed())
		Expect(cp.Status.CPUHistogram.BucketWeights).NotTo(HaveKey(stale))
		Expect(cp.Status.CPUHistogram.BucketWeights).NotTo(BeEmpty())
	})

	It("recommends whole cores for a container annotated for upstream's integer-CPU post processor, with the flag on", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "web", "app", "sidecar")
		for _, p := range runPods(ctx, ns, "web", 2, corev1.ResourceList{"cpu": resource.MustParse("100m"), "memory": resource.MustParse("128Mi")}, "app", "sidecar") {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 250, MemoryBytes: 300 * mi})
			played.Set(ns, p.Name, "sidecar", playedkubelet.Usage{CPUMilli: 250, MemoryBytes: 300 * mi})
		}
		v := vpaFor(ns, "web", "web", vpav1.UpdateModeOff)
		v.Annotations = map[string]string{vpav1.IntegerCPUAnnotation("app"): "true"}
		Expect(k8s.Create(ctx, v)).To(Succeed())
		runs(newRecommender(func(o *recommenderctrl.Options) { o.IntegerCPU = true }, nil), 3)
		v = getVPA(ctx, ns, "web")
		app, sidecar := containerRec(v, "app"), containerRec(v, "sidecar")
		Expect(app).NotTo(BeNil(), "status %+v", v.Status)
		Expect(sidecar).NotTo(BeNil(), "status %+v", v.Status)
		Expect([]string{app.Target.Cpu().String(), app.LowerBound.Cpu().String(), app.UncappedTarget.Cpu().String()}).To(Equal([]string{"1", "1", "1"}),
			"296m, its lower bound and uncapped target rounded up to whole cores")
		Expect(app.UpperBound.Cpu().MilliValue() % 1000).To(BeZero())
		Expect(sidecar.Target.Cpu().String()).To(Equal("296m"), "the container not annotated")

		runs(newRecommender(nil, nil), 3) // the flag off (its default): the annotation does nothing, as upstream's
		Expect(containerRec(getVPA(ctx, ns, "web"), "app").Target.Cpu().String()).To(Equal("296m"))
	})

	It("counts a Job's finished pods as matched and pending pods not, as upstream's recommender does", func() {
		ns := framework.NewNamespace(k8s, "rec")
		job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "app", Image: "played"}}}}}}
		Expect(k8s.Create(ctx, job)).To(Succeed()) // the API server sets its selector and the template's labels
		for i := range 2 {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("nightly-%d", i), Labels: job.Spec.Template.Labels},
				Spec: *job.Spec.Template.Spec.DeepCopy()}
			Expect(kubelet.Run(ctx, p)).To(Succeed())
			p.Status.Phase = corev1.PodSucceeded
			Expect(k8s.Status().Update(ctx, p)).To(Succeed())
		}
		deployment(ctx, ns, "waiting", "app")
		Expect(k8s.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "waiting-0", Labels: map[string]string{"app": "waiting"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played"}}}})).To(Succeed()) // never scheduled: Pending
		jobVPA := wrappers.MakeVPA(ns, "nightly").Mode(vpav1.UpdateModeOff).Obj()
		jobVPA.Spec.TargetRef = &autoscalingv1.CrossVersionObjectReference{APIVersion: "batch/v1", Kind: "Job", Name: "nightly"}
		Expect(k8s.Create(ctx, jobVPA)).To(Succeed())
		Expect(k8s.Create(ctx, vpaFor(ns, "waiting", "waiting", vpav1.UpdateModeOff))).To(Succeed())
		runs(newRecommender(nil, nil), 1)

		c := condition(getVPA(ctx, ns, "nightly"), vpav1.NoPodsMatched)
		Expect(c).NotTo(BeNil())
		Expect([]string{string(c.Status), c.Message}).To(Equal([]string{"False", "2 pods running or finished"}), "the Job's completed pods match its VPA")
		Expect(eventsFor(ctx, ns, "nightly")).To(BeEmpty(), "no NoPodsMatched warning between a Job's runs")
		c = condition(getVPA(ctx, ns, "waiting"), vpav1.NoPodsMatched)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(corev1.ConditionTrue), "a pending pod does not match: %s", c.Message)
	})

	It("keeps a deleted pod's last memory peak in the checkpoint, as upstream's writer does (only running pods' open windows are left out)", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "web", "app")
		pods := runPods(ctx, ns, "web", 2, corev1.ResourceList{"cpu": resource.MustParse("100m"), "memory": resource.MustParse("128Mi")}, "app")
		played.Set(ns, pods[0].Name, "app", playedkubelet.Usage{CPUMilli: 250, MemoryBytes: 900 * mi})
		played.Set(ns, pods[1].Name, "app", playedkubelet.Usage{CPUMilli: 250, MemoryBytes: 300 * mi})
		Expect(k8s.Create(ctx, vpaFor(ns, "web", "web", vpav1.UpdateModeOff))).To(Succeed())
		r := newRecommender(nil, nil)
		runs(r, 2)
		By("deleting the pod that used 900Mi: a rollout, say")
		Expect(k8s.Delete(ctx, pods[0], client.GracePeriodSeconds(0))).To(Succeed())
		played.Clear()
		played.Set(ns, pods[1].Name, "app", playedkubelet.Usage{CPUMilli: 250, MemoryBytes: 300 * mi})
		memoryTarget := func() int64 { // of the checkpoint's history alone, as a restarted recommender reads it
			cp := &vpav1.VerticalPodAutoscalerCheckpoint{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-app"}, cp)).To(Succeed())
			m, _ := recommender.NewModel(recommender.Defaults())
			a, err := m.LoadAggregate(recommender.AggregateCheckpoint{
				Memory:      recommender.HistogramCheckpoint{Reference: cp.Status.MemoryHistogram.ReferenceTimestamp.Time, BucketWeights: cp.Status.MemoryHistogram.BucketWeights, TotalWeight: cp.Status.MemoryHistogram.TotalWeight},
				FirstSample: cp.Status.FirstSampleStart.Time, LastSample: cp.Status.LastSampleStart.Time, TotalSamples: cp.Status.TotalSamplesCount}, played0.Now())
			Expect(err).NotTo(HaveOccurred())
			return int64(a.Memory.Percentile(0.9))
		}
		Eventually(func() int64 {
			runs(r, 1)
			return memoryTarget()
		}, framework.LongTimeout, framework.Interval).Should(BeNumerically(">=", 900*mi), "the deleted pod's window (900Mi) is in the checkpoint; the running pod's open one (300Mi) is not")
	})

	It("writes every checkpoint's status where an earlier hvpa's CRD has a status subresource, and in one request once the CRD matches upstream's", func() {
		ns := framework.NewNamespace(k8s, "rec")
		const crd = "verticalpodautoscalercheckpoints.autoscaling.k8s.io"
		restore, err := testenv.WithStatusSubresource(ctx, k8s, crd)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(restore()).To(Succeed()) })
		statusServed(ctx, ns, false)

		deployment(ctx, ns, "web", "app")
		for _, p := range runPods(ctx, ns, "web", 2, corev1.ResourceList{"cpu": resource.MustParse("100m"), "memory": resource.MustParse("128Mi")}, "app") {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 250, MemoryBytes: 300 * mi})
		}
		Expect(k8s.Create(ctx, vpaFor(ns, "web", "web", vpav1.UpdateModeOff))).To(Succeed())
		r := newRecommender(func(o *recommenderctrl.Options) { o.Namespaces = []string{ns} }, nil)
		samples := func() int {
			cp := &vpav1.VerticalPodAutoscalerCheckpoint{}
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-app"}, cp)).To(Succeed())
			return cp.Status.TotalSamplesCount
		}
		runs(r, 1)
		Expect(samples()).To(Equal(2), "created, then its status patched through the subresource")
		runs(r, 1)
		Expect(samples()).To(Equal(4))

		By("the CRD upgraded to upstream's shape (no status subresource) while the recommender runs")
		Expect(restore()).To(Succeed())
		statusServed(ctx, ns, true)
		runs(r, 1)
		Expect(samples()).To(Equal(6), "the status written in the object from the first write after the upgrade")
	})

	It("models an Hvpa's whole workload: load above the base summed over the pods, kept through a restart by its checkpoint", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "wl", "app")
		pods := runPods(ctx, ns, "wl", 2, corev1.ResourceList{"cpu": resource.MustParse("500m"), "memory": resource.MustParse("1Gi")}, "app")
		for _, p := range pods {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 300, MemoryBytes: 400 * mi})
		}
		base := resource.MustParse("100m")
		h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl"}, Spec: hvpav1alpha1.HvpaSpec{
			TargetRef:               autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "wl"},
			VPA:                     &hvpav1alpha1.VpaSpec{Deploy: true},
			BaseResourcesPerReplica: &hvpav1alpha1.ResourceChangeParams{CPU: &hvpav1alpha1.ChangeParams{Value: &base}},
			ScalingIntervals:        []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](4)}}}}
		Expect(k8s.Create(ctx, h)).To(Succeed())
		r := newRecommender(nil, nil)
		runs(r, 3)
		key := client.ObjectKeyFromObject(h)
		rec, ok := r.HvpaRecommendation(key)
		Expect(ok).To(BeTrue())
		Expect(rec.Load).To(HaveLen(1))
		withinBucket := func(a, b int64) bool { return float64(max(a, b)) <= float64(min(a, b))*1.051+1 }
		// L = 2 pods x (300m - 100m base) = 400m, x1.15 margin, at its histogram bucket's end; memory has no base
		load := rec.Load[0].Target
		Expect(withinBucket(load.CPUMilli, 460)).To(BeTrue(), "cpu load %dm, want about 460m", load.CPUMilli)
		Expect(withinBucket(load.MemoryBytes, 920*mi)).To(BeTrue(), "memory load %d, want about 920Mi", load.MemoryBytes)
		Expect(rec.Pods).To(Equal(2))
		Expect(rec.Confidence).To(BeNumerically("<", 1))

		By("writing the workload total as the Hvpa's checkpoint, a kind upstream's garbage collection never lists")
		cp := &hvpav1alpha1.HvpaCheckpoint{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "wl-app"}, cp)).To(Succeed())
		Expect(cp.Spec).To(Equal(hvpav1alpha1.HvpaCheckpointSpec{HvpaName: "wl", ContainerName: "app"}))
		Expect(cp.Status.TotalSamplesCount).To(Equal(3), "one sample of the whole workload per run, not one per pod")
		var vpaCheckpoints vpav1.VerticalPodAutoscalerCheckpointList
		Expect(k8s.List(ctx, &vpaCheckpoints, client.InNamespace(ns))).To(Succeed())
		Expect(vpaCheckpoints.Items).To(BeEmpty(), "no VerticalPodAutoscalerCheckpoint for an Hvpa")

		By("restarting: the same total from the checkpoint alone")
		played.Clear()
		restarted := newRecommender(nil, nil)
		runs(restarted, 1)
		after, ok := restarted.HvpaRecommendation(key)
		Expect(ok).To(BeTrue())
		Expect(after.Load[0].Target.CPUMilli).To(Equal(load.CPUMilli))
		for _, p := range pods { // the memory peak of the open window comes back with the next samples
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 300, MemoryBytes: 400 * mi})
		}
		runs(restarted, 1)
		after, _ = restarted.HvpaRecommendation(key)
		Expect(after.Load[0].Target.CPUMilli).To(Equal(load.CPUMilli))
		Expect(after.Load[0].Target.MemoryBytes).To(Equal(load.MemoryBytes))

		By("an OOM kill of one pod raises the memory total to at least replicas x its bump")
		Expect(kubelet.OOMKill(ctx, pods[0], "app", time.Now())).To(Succeed())
		runs(restarted, 1)
		after, _ = restarted.HvpaRecommendation(key)
		// bump = max(1Gi request + 100Mi, 1Gi x 1.2) = 1.2Gi per pod, 2 pods, no memory base; x1.15 margin
		Expect(withinBucket(after.Load[0].Target.MemoryBytes, 2*(6*(1<<30)/5)*115/100)).To(BeTrue(), "memory load %d", after.Load[0].Target.MemoryBytes)
	})

	It("bumps an Hvpa's memory total after an OOM kill of a small container by the minimum bump (100Mi above the request)", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "small", "app")
		pods := runPods(ctx, ns, "small", 2, corev1.ResourceList{"cpu": resource.MustParse("50m"), "memory": resource.MustParse("128Mi")}, "app")
		for _, p := range pods {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 20, MemoryBytes: 10 * mi})
		}
		h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "small"}, Spec: hvpav1alpha1.HvpaSpec{
			TargetRef:        autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "small"},
			VPA:              &hvpav1alpha1.VpaSpec{Deploy: true},
			ScalingIntervals: []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](4)}}}}
		Expect(k8s.Create(ctx, h)).To(Succeed())
		r := newRecommender(nil, nil)
		runs(r, 2)
		Expect(kubelet.OOMKill(ctx, pods[0], "app", time.Now())).To(Succeed())
		runs(r, 1)
		rec, ok := r.HvpaRecommendation(client.ObjectKeyFromObject(h))
		Expect(ok).To(BeTrue())
		// bump = max(128Mi + 100Mi, 1.2 x 128Mi = 153.6Mi) = 228Mi per pod, 2 pods: 456Mi, x1.15 margin, at its
		// histogram bucket's end (the ratio alone would make 307Mi)
		got, want := rec.Load[0].Target.MemoryBytes, 2*228*mi*115/100
		Expect(got >= want && float64(got) <= float64(want)*1.1).To(BeTrue(), "memory load %dMi, want %dMi within its bucket", got/mi, want/mi)
	})

	It("never writes a status decided from a stale read, and keeps the conditions other writers set", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "web", "app")
		pods := runPods(ctx, ns, "web", 1, nil, "app")
		played.Set(ns, pods[0].Name, "app", playedkubelet.Usage{CPUMilli: 250, MemoryBytes: 300 * mi})
		Expect(k8s.Create(ctx, vpaFor(ns, "web", "web", vpav1.UpdateModeOff))).To(Succeed())
		stale := getVPA(ctx, ns, "web") // as a lagging cache would still hold it: no status yet

		runs(newRecommender(nil, nil), 1)
		Expect(containerRec(getVPA(ctx, ns, "web"), "app")).NotTo(BeNil())
		By("another writer adds a condition of its own")
		v := getVPA(ctx, ns, "web")
		v.Status.Conditions = append(v.Status.Conditions, vpav1.VerticalPodAutoscalerCondition{Type: "ExternalAudit", Status: corev1.ConditionTrue,
			Reason: "Audited", LastTransitionTime: metav1.Now()})
		Expect(k8s.Status().Update(ctx, v)).To(Succeed())
		hasAudit := func() bool {
			for _, c := range getVPA(ctx, ns, "web").Status.Conditions {
				if c.Type == "ExternalAudit" {
					return true
				}
			}
			return false
		}

		By("a recommender that reads the stale copy: its patch is refused, the other writer's condition stays")
		direct, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		staleReader := interceptor.NewClient(direct, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if err := c.List(ctx, list, opts...); err != nil {
				return err
			}
			if l, ok := list.(*vpav1.VerticalPodAutoscalerList); ok {
				for i := range l.Items {
					if l.Items[i].UID == stale.UID {
						l.Items[i] = *stale.DeepCopy()
					}
				}
			}
			return nil
		}})
		lagging, err := recommenderctrl.NewRecommender(staleReader, usage.MetricsAPI{Client: mclient}, nil, recorder, played0, recommender.Defaults(),
			recommenderctrl.DefaultOptions(), nil)
		Expect(err).NotTo(HaveOccurred())
		runs(lagging, 1)
		Expect(hasAudit()).To(BeTrue(), "a status decided from a stale read overwrote another writer's condition")

		By("a fresh read: the recommendation moves with the usage, written with the other writer's condition kept")
		played.Set(ns, pods[0].Name, "app", playedkubelet.Usage{CPUMilli: 2500, MemoryBytes: 3000 * mi})
		before := containerRec(getVPA(ctx, ns, "web"), "app").Target.Cpu().MilliValue()
		fresh := newRecommender(nil, nil)
		runs(fresh, 2)
		Expect(containerRec(getVPA(ctx, ns, "web"), "app").Target.Cpu().MilliValue()).To(BeNumerically(">", before))
		Expect(hasAudit()).To(BeTrue())
	})

	It("moves an Hvpa's history an earlier version kept in a VerticalPodAutoscalerCheckpoint into an HvpaCheckpoint", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "old", "app")
		for _, p := range runPods(ctx, ns, "old", 1, nil, "app") {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 300, MemoryBytes: 400 * mi})
		}
		Expect(k8s.Create(ctx, &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "old"}, Spec: hvpav1alpha1.HvpaSpec{
			TargetRef:        autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "old"},
			VPA:              &hvpav1alpha1.VpaSpec{Deploy: true},
			ScalingIntervals: []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](4)}}}})).To(Succeed())
		now := time.Now()
		legacy := &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hvpa-old-app",
			Labels: map[string]string{recommenderctrl.WriterLabel: "default", recommenderctrl.OwnerKindLabel: "Hvpa", recommenderctrl.HistoryLabel: recommenderctrl.HistoryWorkloadTotal}},
			Spec: vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: "old", ContainerName: "app"}}
		Expect(k8s.Create(ctx, legacy)).To(Succeed())
		legacy.Status = recommenderctrl.CheckpointStatus(recommender.AggregateCheckpoint{
			CPU:         recommender.HistogramCheckpoint{Reference: now, BucketWeights: map[int]uint32{40: 10000}, TotalWeight: 500},
			Memory:      recommender.HistogramCheckpoint{Reference: now, BucketWeights: map[int]uint32{60: 10000}, TotalWeight: 500},
			FirstSample: now.Add(-48 * time.Hour), LastSample: now.Add(-time.Minute), TotalSamples: 500}, now)
		Expect(k8s.Update(ctx, legacy)).To(Succeed())

		r := newRecommender(nil, nil)
		runs(r, 2)
		cp := &hvpav1alpha1.HvpaCheckpoint{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "old-app"}, cp)).To(Succeed())
		Expect(cp.Status.TotalSamplesCount).To(BeNumerically(">", 500), "the history carried over, and the runs' samples added")
		Expect(cp.Status.FirstSampleStart.Time).To(BeTemporally("~", now.Add(-48*time.Hour), time.Second))
		err := k8s.Get(ctx, client.ObjectKeyFromObject(legacy), &vpav1.VerticalPodAutoscalerCheckpoint{})
		Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the VerticalPodAutoscalerCheckpoint is deleted once moved: %v", err)
	})

	It("serves the upstream documentation examples as upstream documents them", func() {
		data, err := os.ReadFile("../../apis/autoscaling/testdata/upstream-vpa-examples.yaml")
		Expect(err).NotTo(HaveOccurred())
		examples := map[string]*vpav1.VerticalPodAutoscaler{}
		dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			v := &vpav1.VerticalPodAutoscaler{}
			if err := dec.Decode(v); err != nil {
				break
			}
			examples[v.Name] = v
		}
		type check func(v *vpav1.VerticalPodAutoscaler)
		cases := map[string]struct {
			containers []string
			usage      playedkubelet.Usage
			check      check
		}{
			"my-app-vpa-off": {[]string{"app"}, playedkubelet.Usage{CPUMilli: 400, MemoryBytes: 200 * mi}, func(v *vpav1.VerticalPodAutoscaler) {
				Expect(containerRec(v, "app")).NotTo(BeNil(), "Off still recommends")
			}},
			"my-app-vpa-requests-only": {[]string{"app"}, playedkubelet.Usage{CPUMilli: 400, MemoryBytes: 200 * mi}, func(v *vpav1.VerticalPodAutoscaler) {
				Expect(containerRec(v, "app")).NotTo(BeNil(), "RequestsOnly recommends requests as usual")
			}},
			"hamster-vpa": {[]string{"hamster"}, playedkubelet.Usage{CPUMilli: 2000, MemoryBytes: 30 * mi}, func(v *vpav1.VerticalPodAutoscaler) {
				rec := containerRec(v, "hamster")
				Expect(rec).NotTo(BeNil())
				Expect(rec.Target.Cpu().String()).To(Equal("1"), "capped to maxAllowed cpu 1")
				Expect(rec.UncappedTarget.Cpu().MilliValue()).To(BeNumerically(">", 2000), "uncappedTarget is not capped")
				Expect(rec.Target.Memory().Value()).To(Equal(int64(262144000)), "the pod minimum, within min/maxAllowed")
			}},
			"my-app-vpa-sidecar-off": {[]string{"app", "istio-proxy"}, playedkubelet.Usage{CPUMilli: 400, MemoryBytes: 200 * mi}, func(v *vpav1.VerticalPodAutoscaler) {
				Expect(containerRec(v, "istio-proxy")).To(BeNil(), "a container in mode Off gets no recommendation")
				rec := containerRec(v, "app")
				Expect(rec).NotTo(BeNil())
				Expect(rec.Target).To(HaveKey(corev1.ResourceCPU))
				Expect(rec.Target).NotTo(HaveKey(corev1.ResourceMemory), "controlledResources: [cpu]")
			}},
		}
		r := newRecommender(nil, nil)
		namespaces := map[string]string{}
		for name, tc := range cases {
			ns := framework.NewNamespace(k8s, "rec")
			namespaces[name] = ns
			v := examples[name].DeepCopy()
			v.Namespace = ns
			target := v.Spec.TargetRef.Name
			deployment(ctx, ns, target, tc.containers...)
			for _, p := range runPods(ctx, ns, target, 1, nil, tc.containers...) {
				for _, c := range tc.containers {
					played.Set(ns, p.Name, c, tc.usage)
				}
			}
			Expect(k8s.Create(ctx, v)).To(Succeed())
		}
		runs(r, 2)
		for name, tc := range cases {
			By(name)
			tc.check(getVPA(ctx, namespaces[name], name))
		}
	})

	It("records a kubelet eviction under memory pressure like an OOM", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "cache", "redis")
		pods := runPods(ctx, ns, "cache", 1, corev1.ResourceList{"memory": resource.MustParse("256Mi")}, "redis")
		played.Set(ns, pods[0].Name, "redis", playedkubelet.Usage{CPUMilli: 50, MemoryBytes: 200 * mi})
		Expect(k8s.Create(ctx, vpaFor(ns, "cache", "cache", vpav1.UpdateModeOff))).To(Succeed())
		r := newRecommender(nil, nil)
		runs(r, 2)
		before := containerRec(getVPA(ctx, ns, "cache"), "redis").Target.Memory().Value()
		msg := "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. Container redis was using 900Mi, request is 256Mi, has larger consumption of memory."
		By("an Evicted event alone, which anyone who may create Events can write, changes nothing")
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cache-0.evicted"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pods[0].Name, UID: pods[0].UID},
			Reason:         "Evicted", Type: corev1.EventTypeWarning, LastTimestamp: metav1.Now(), Source: corev1.EventSource{Component: "kubelet"},
			Message: strings.Replace(msg, "request is 256Mi", "request is 900Gi", 1)}
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		runs(r, 1)
		Expect(containerRec(getVPA(ctx, ns, "cache"), "redis").Target.Memory().Value()).To(Equal(before), "a forged event moved the target")

		By("the kubelet's eviction: the pod Failed with reason Evicted and the message in its own status")
		p := pods[0]
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		p.Status.Phase, p.Status.Reason, p.Status.Message = corev1.PodFailed, "Evicted", msg
		Expect(k8s.Status().Update(ctx, p)).To(Succeed())
		runs(r, 1)
		after := containerRec(getVPA(ctx, ns, "cache"), "redis").Target.Memory().Value()
		// used = max(request 256Mi, window peak 200Mi) -> needed 356Mi; x1.15 within a bucket
		Expect(after).To(BeNumerically(">", before), "before %d after %d", before, after)
		Expect(after).To(BeNumerically(">=", 356*mi*115/100*95/100))
	})

	It("raises the memory target after an OOM kill by the bump-up rule", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "batch", "worker")
		pods := runPods(ctx, ns, "batch", 1, corev1.ResourceList{"memory": resource.MustParse("512Mi")}, "worker")
		played.Set(ns, pods[0].Name, "worker", playedkubelet.Usage{CPUMilli: 100, MemoryBytes: 100 * mi})
		Expect(k8s.Create(ctx, vpaFor(ns, "batch", "batch", vpav1.UpdateModeInitial))).To(Succeed())
		r := newRecommender(nil, nil)
		runs(r, 2)
		before := containerRec(getVPA(ctx, ns, "batch"), "worker").Target.Memory().Value()
		Expect(kubelet.OOMKill(ctx, pods[0], "worker", time.Now())).To(Succeed())
		runs(r, 1)
		after := containerRec(getVPA(ctx, ns, "batch"), "worker").Target.Memory().Value()
		// needed = max(512Mi + 100Mi, 1.2 x 512Mi) = 614.4Mi; the target is at least that x 1.15
		needed := 6 * 512 * mi / 5 // 614.4Mi
		Expect(after).To(BeNumerically(">=", needed*115/100*95/100), "before %d after %d (within a bucket of needed x 1.15)", before, after)
		Expect(after).To(BeNumerically(">", before))
		runs(r, 1)
		Expect(containerRec(getVPA(ctx, ns, "batch"), "worker").Target.Memory().Value()).To(Equal(after), "the same OOM is recorded once")
	})

	It("does not record again after a restart an OOM kill its checkpoint's writer recorded, as upstream's recommender never does; a later one it records", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "batch", "worker")
		pods := runPods(ctx, ns, "batch", 1, corev1.ResourceList{"memory": resource.MustParse("512Mi")}, "worker")
		played.Set(ns, pods[0].Name, "worker", playedkubelet.Usage{CPUMilli: 100, MemoryBytes: 100 * mi})
		Expect(k8s.Create(ctx, vpaFor(ns, "batch", "batch", vpav1.UpdateModeInitial))).To(Succeed())
		only := func(o *recommenderctrl.Options) { o.Namespaces, o.MemorySaver = []string{ns}, true } // the kills of this spec's pods alone
		r := newRecommender(only, nil)
		runs(r, 2)
		Expect(kubelet.OOMKill(ctx, pods[0], "worker", played0.Now())).To(Succeed())
		runs(r, 3) // records the kill and writes the checkpoint more than two runs after it
		Expect(testutil.ToFloat64(r.Metrics.OOMs)).To(Equal(1.0))

		restarted := newRecommender(only, nil)
		runs(restarted, 2)
		Expect(testutil.ToFloat64(restarted.Metrics.OOMs)).To(BeZero(), "the kill before the checkpoint it loaded is recorded again")
		Expect(kubelet.OOMKill(ctx, pods[0], "worker", played0.Now().Add(time.Minute))).To(Succeed())
		runs(restarted, 1)
		Expect(testutil.ToFloat64(restarted.Metrics.OOMs)).To(Equal(1.0), "a kill after the checkpoint is recorded")
	})

	It("recommends memory for a container OOM-killed before its first CPU sample (the bump), and no CPU", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "starter", "app")
		pods := runPods(ctx, ns, "starter", 1, corev1.ResourceList{"memory": resource.MustParse("128Mi")}, "app")
		Expect(k8s.Create(ctx, vpaFor(ns, "starter", "starter", vpav1.UpdateModeInitial))).To(Succeed())
		r := newRecommender(nil, nil)
		runs(r, 1)
		Expect(containerRec(getVPA(ctx, ns, "starter"), "app")).To(BeNil(), "no usage and no OOM kill yet: nothing to recommend from")
		By("the container is OOM-killed at start, before the metrics API reports any usage of it")
		Expect(kubelet.OOMKill(ctx, pods[0], "app", time.Now())).To(Succeed())
		runs(r, 1)
		v := getVPA(ctx, ns, "starter")
		rec := containerRec(v, "app")
		Expect(rec).NotTo(BeNil(), "no recommendation after an OOM kill before the first CPU sample")
		Expect(rec.Target).NotTo(HaveKey(corev1.ResourceCPU), "a CPU target without a CPU sample")
		// bump = max(128Mi + 100Mi, 1.2 x 128Mi) = 228Mi, x1.15 margin, at its histogram bucket's end
		got, want := rec.Target.Memory().Value(), 228*mi*115/100
		Expect(got >= want && float64(got) <= float64(want)*1.1).To(BeTrue(), "memory target %dMi, want %dMi within its bucket", got/mi, want/mi)
		Expect(condition(v, vpav1.LowConfidence).Status).To(Equal(corev1.ConditionTrue))
	})

	It("bumps memory after an OOM kill by the container policy's oomBumpUpRatio and oomMinBumpUp (upstream's per-container fields, with the PerVPAConfig gate)", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "batch", "worker", "sidecar")
		res := corev1.ResourceList{"memory": resource.MustParse("512Mi")}
		pods := runPods(ctx, ns, "batch", 1, res, "worker", "sidecar")
		for _, c := range []string{"worker", "sidecar"} {
			played.Set(ns, pods[0].Name, c, playedkubelet.Usage{CPUMilli: 100, MemoryBytes: 100 * mi})
		}
		v := vpaFor(ns, "batch", "batch", vpav1.UpdateModeInitial)
		ratio, minBump := resource.MustParse("3"), resource.MustParse("0")
		v.Spec.ResourcePolicy = &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{
			{ContainerName: "worker", OOMBumpUpRatio: &ratio, OOMMinBumpUp: &minBump},
		}}
		Expect(k8s.Create(ctx, v)).To(Succeed())
		r := newRecommender(func(o *recommenderctrl.Options) { o.PerVPAConfig = true }, nil)
		gateOff := newRecommender(nil, nil) // the gate PerVPAConfig off: the fields are ignored, as upstream's recommender does
		runs(r, 2)
		runs(gateOff, 2)
		Expect(kubelet.OOMKill(ctx, pods[0], "worker", played0.Now())).To(Succeed())
		Expect(kubelet.OOMKill(ctx, pods[0], "sidecar", played0.Now())).To(Succeed())
		withinBucket := func(v, want int64) bool { return v >= want*95/100 && v <= want*106/100 }
		runs(gateOff, 1)
		off := containerRec(getVPA(ctx, ns, "batch"), "worker").Target.Memory().Value()
		Expect(withinBucket(off, 6*512*mi/5*115/100)).To(BeTrue(), "worker with the gate off: %dMi, want the flags' rule", off/mi)
		runs(r, 1)
		got := getVPA(ctx, ns, "batch")
		// worker: needed = max(512Mi + 0, 3 x 512Mi) = 1536Mi; sidecar keeps the flags' rule: 614.4Mi; both x 1.15
		worker, sidecar := containerRec(got, "worker").Target.Memory().Value(), containerRec(got, "sidecar").Target.Memory().Value()
		Expect(withinBucket(worker, 1536*mi*115/100)).To(BeTrue(), "worker %dMi", worker/mi)
		Expect(withinBucket(sidecar, 6*512*mi/5*115/100)).To(BeTrue(), "sidecar %dMi", sidecar/mi)

		By("refusing a policy value out of range, naming the field")
		bad := resource.MustParse("0.5")
		v = getVPA(ctx, ns, "batch")
		v.Spec.ResourcePolicy.ContainerPolicies[0].OOMBumpUpRatio = &bad
		Expect(k8s.Update(ctx, v)).To(Succeed())
		runs(r, 1)
		c := condition(getVPA(ctx, ns, "batch"), vpav1.ConfigUnsupported)
		Expect(c.Status).To(Equal(corev1.ConditionTrue))
		Expect(c.Message).To(ContainSubstring("spec.resourcePolicy.containerPolicies[containerName=worker].oomBumpUpRatio 500m: must be in [1, 10]"))
	})

	It("reports bad objects with a condition and an event, and keeps serving the others", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "good", "app")
		deployment(ctx, ns, "shared", "app")
		deployment(ctx, ns, "lonely", "app")
		for _, p := range runPods(ctx, ns, "good", 1, nil, "app") {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 100, MemoryBytes: 100 * mi})
		}
		unknown := vpaFor(ns, "unknown-kind", "x", vpav1.UpdateModeOff)
		unknown.Spec.TargetRef = &autoscalingv1.CrossVersionObjectReference{APIVersion: "example.com/v1", Kind: "Foo", Name: "x"}
		missing := vpaFor(ns, "missing", "does-not-exist", vpav1.UpdateModeOff)
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "good-rs",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "good", UID: "uid-good", Controller: ptr.To(true)}}},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "good"}},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "good"}}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played"}}}}}}
		Expect(k8s.Create(ctx, rs)).To(Succeed())
		parent := vpaFor(ns, "on-replicaset", "good-rs", vpav1.UpdateModeOff)
		parent.Spec.TargetRef.Kind = "ReplicaSet"
		for _, v := range []*vpav1.VerticalPodAutoscaler{vpaFor(ns, "good", "good", vpav1.UpdateModeOff), unknown, missing, parent,
			vpaFor(ns, "lonely", "lonely", vpav1.UpdateModeOff), vpaFor(ns, "first", "shared", vpav1.UpdateModeInitial), vpaFor(ns, "second", "shared", vpav1.UpdateModeInitial)} {
			Expect(k8s.Create(ctx, v)).To(Succeed())
		}
		// override annotations that cannot be served: each says why, and neither touches "good" (same target)
		infinite := vpaFor(ns, "infinite-ratio", "good", vpav1.UpdateModeOff)
		infinite.Annotations = map[string]string{recommender.AnnotationOOMBumpUpRatio: "Inf"}
		typo := vpaFor(ns, "typo", "good", vpav1.UpdateModeOff)
		typo.Annotations = map[string]string{recommender.AnnotationPrefix + "oom-bumpup-ratio": "2"}
		Expect(k8s.Create(ctx, infinite)).To(Succeed())
		Expect(k8s.Create(ctx, typo)).To(Succeed())
		r := newRecommender(nil, nil)
		runs(r, 2)

		Expect(containerRec(getVPA(ctx, ns, "good"), "app")).NotTo(BeNil(), "a good VPA next to bad ones gets its recommendation")
		for name, reason := range map[string]string{"unknown-kind": "UnknownTargetKind", "missing": "TargetNotFound", "on-replicaset": "ParentControllerTarget",
			"second": "MultipleAutoscalers"} {
			v := getVPA(ctx, ns, name)
			c := condition(v, vpav1.ConfigUnsupported)
			Expect(c).NotTo(BeNil(), name)
			Expect(c.Status).To(Equal(corev1.ConditionTrue), name)
			Expect(c.Reason).To(Equal(reason), name)
			Expect(v.Status.Recommendation).To(BeNil(), name)
			Eventually(func() []eventsv1.Event { return eventsFor(ctx, ns, name) }, 10*time.Second).ShouldNot(BeEmpty(), "a Warning event for %s", name)
		}
		// of two VPAs on one workload the oldest serves it (by name at the same age): "first"
		Expect(condition(getVPA(ctx, ns, "second"), vpav1.ConfigUnsupported).Message).To(ContainSubstring("the oldest, VerticalPodAutoscaler first, serves it"))
		Expect(condition(getVPA(ctx, ns, "first"), vpav1.ConfigUnsupported).Status).To(Equal(corev1.ConditionFalse), "the VPA that serves the workload")
		Expect(condition(getVPA(ctx, ns, "on-replicaset"), vpav1.ConfigUnsupported).Message).To(ContainSubstring("Deployment good"))
		for name, msg := range map[string]string{
			"infinite-ratio": `annotation recommender.hvpa.dev/oom-bump-up-ratio: "Inf" is not a number in [1, 10] (e.g. 1.5)`,
			"typo":           "annotation recommender.hvpa.dev/oom-bumpup-ratio is not an override; known: ",
		} {
			c := condition(getVPA(ctx, ns, name), vpav1.ConfigUnsupported)
			Expect(c).NotTo(BeNil(), name)
			Expect([]string{string(c.Status), c.Reason}).To(Equal([]string{"True", "InvalidOverride"}), name)
			Expect(c.Message).To(HavePrefix(msg), name)
		}
		lonely := condition(getVPA(ctx, ns, "lonely"), vpav1.NoPodsMatched)
		Expect(lonely).NotTo(BeNil())
		Expect(lonely.Status).To(Equal(corev1.ConditionTrue))
		Expect(eventsFor(ctx, ns, "unknown-kind")).To(HaveLen(1), "the warning is not repeated every run")
	})

	It("serves every other VPA when one stored before the CRD's rules does not decode", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "good", "app")
		for _, p := range runPods(ctx, ns, "good", 1, nil, "app") {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 100, MemoryBytes: 100 * mi})
		}
		Expect(k8s.Create(ctx, vpaFor(ns, "good", "good", vpav1.UpdateModeOff))).To(Succeed())

		By("storing a VPA with a quantity no decoder reads, as the API server accepted it before the CRD's CEL rules")
		restore, err := testenv.WithoutCELRules(ctx, k8s, "verticalpodautoscalers.autoscaling.k8s.io")
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(restore)
		stale := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler",
			"metadata": map[string]any{"namespace": ns, "name": "stale"},
			"spec": map[string]any{"targetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "good"},
				"resourcePolicy": map[string]any{"containerPolicies": []any{map[string]any{"containerName": "app", "minAllowed": map[string]any{"cpu": "1e1.5"}}}}}}}
		Eventually(func() error { return k8s.Create(ctx, stale.DeepCopy()) }, 10*time.Second, 100*time.Millisecond).Should(Succeed())
		Expect(restore()).To(Succeed())
		Eventually(func() error {
			again := stale.DeepCopy()
			again.SetName("stale-again")
			return k8s.Create(ctx, again)
		}, 10*time.Second, 100*time.Millisecond).ShouldNot(Succeed(), "the CRD's rules refuse such a VPA again")

		By("the recommender reads the list, serves the good VPA and reports the stale one, with the field and the fix")
		r := newRecommender(nil, nil)
		runs(r, 2)
		Expect(containerRec(getVPA(ctx, ns, "good"), "app")).NotTo(BeNil())
		raw := &unstructured.Unstructured{}
		raw.SetGroupVersionKind(vpav1.GroupVersion.WithKind("VerticalPodAutoscaler"))
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stale"}, raw)).To(Succeed())
		conds, _, _ := unstructured.NestedSlice(raw.Object, "status", "conditions")
		var unsupported map[string]any
		for _, c := range conds {
			if c.(map[string]any)["type"] == string(vpav1.ConfigUnsupported) {
				unsupported = c.(map[string]any)
			}
		}
		Expect(unsupported).To(HaveKeyWithValue("status", "True"))
		Expect(unsupported).To(HaveKeyWithValue("reason", decodeerr.Reason))
		Expect(unsupported["message"]).To(ContainSubstring(`spec.resourcePolicy.containerPolicies[0].minAllowed.cpu: "1e1.5" is not a quantity`))
		policies, _, _ := unstructured.NestedSlice(raw.Object, "spec", "resourcePolicy", "containerPolicies")
		Expect(policies).To(HaveLen(1))
		Expect(policies[0].(map[string]any)["minAllowed"]).To(HaveKeyWithValue("cpu", "1e1.5"), "the user's spec is kept as it is")

		By("written once: a run that finds it unchanged writes nothing for it")
		rv := raw.GetResourceVersion()
		runs(r, 1)
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "stale"}, raw)).To(Succeed())
		Expect(raw.GetResourceVersion()).To(Equal(rv))
	})

	It("keeps the recommendation and says so while the metrics API is down", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "web", "app")
		for _, p := range runPods(ctx, ns, "web", 2, nil, "app") {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 250, MemoryBytes: 300 * mi})
		}
		Expect(k8s.Create(ctx, vpaFor(ns, "web", "web", vpav1.UpdateModeOff))).To(Succeed())
		src := &failingUsage{Source: usage.MetricsAPI{Client: mclient}}
		opts := recommenderctrl.DefaultOptions()
		opts.CheckpointPeriod = 0
		r, err := recommenderctrl.NewRecommender(k8s, src, nil, recorder, played0, recommender.Defaults(), opts, nil)
		Expect(err).NotTo(HaveOccurred())
		runs(r, 2)
		before := containerRec(getVPA(ctx, ns, "web"), "app").DeepCopy()
		Expect(before).NotTo(BeNil())

		src.err = errors.New(`the server is currently unable to handle the request (get pods.metrics.k8s.io)`)
		runs(r, 2)
		v := getVPA(ctx, ns, "web")
		Expect(containerRec(v, "app").Target).To(Equal(before.Target), "the recommendation is kept")
		c := condition(v, vpav1.UsageUnavailable)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(corev1.ConditionTrue))
		Expect(c.Reason).To(Equal("MetricsAPIUnavailable"))
		Expect(c.Message).To(ContainSubstring("unable to handle the request"))
		Expect(condition(v, vpav1.RecommendationProvided).Status).To(Equal(corev1.ConditionTrue))

		src.err = nil
		runs(r, 1)
		Expect(condition(getVPA(ctx, ns, "web"), vpav1.UsageUnavailable)).To(BeNil(), "removed once usage is read again")
	})

	It("runs as a loop (manager.Runnable) until stopped", func() {
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "loop", "app")
		for _, p := range runPods(ctx, ns, "loop", 1, nil, "app") {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 100, MemoryBytes: 100 * mi})
		}
		Expect(k8s.Create(ctx, vpaFor(ns, "loop", "loop", vpav1.UpdateModeOff))).To(Succeed())
		r := newRecommender(func(o *recommenderctrl.Options) { o.Interval = 200 * time.Millisecond }, nil)
		Expect(r.NeedLeaderElection()).To(BeTrue())
		lctx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- r.Start(lctx) }()
		Eventually(func() *vpav1.RecommendedContainerResources { return containerRec(getVPA(ctx, ns, "loop"), "app") }, 10*time.Second).ShouldNot(BeNil())
		cancel()
		Eventually(done, 5*time.Second).Should(Receive(BeNil()))
	})
})

var _ = Describe("the recommender's scope", func() {
	ctx := context.Background()

	It("honours spec.recommenders, namespace filters and --memory-saver", func() {
		ns, other := framework.NewNamespace(k8s, "rec"), framework.NewNamespace(k8s, "rec")
		for _, n := range []string{ns, other} {
			deployment(ctx, n, "web", "app")
			deployment(ctx, n, "untracked", "app")
			for _, d := range []string{"web", "untracked"} {
				for _, p := range runPods(ctx, n, d, 1, nil, "app") {
					played.Set(n, p.Name, "app", playedkubelet.Usage{CPUMilli: 100, MemoryBytes: 100 * mi})
				}
			}
			Expect(k8s.Create(ctx, vpaFor(n, "web", "web", vpav1.UpdateModeOff))).To(Succeed())
		}
		custom := vpaFor(ns, "custom", "untracked", vpav1.UpdateModeOff)
		custom.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "performance"}}
		Expect(k8s.Create(ctx, custom)).To(Succeed())

		r := newRecommender(func(o *recommenderctrl.Options) { o.Namespaces = []string{ns}; o.MemorySaver = true }, nil)
		runs(r, 2)
		Expect(containerRec(getVPA(ctx, ns, "web"), "app")).NotTo(BeNil())
		Expect(getVPA(ctx, other, "web").Status.Recommendation).To(BeNil(), "a namespace outside --namespaces is not served")
		Expect(getVPA(ctx, ns, "custom").Status.Conditions).To(BeEmpty(), "a VPA naming another recommender is left to it")
		// memory saver: only pods some served VPA selects are tracked (web in ns), not untracked's or other's
		Expect(testutil.ToFloat64(r.Metrics.Aggregates)).To(Equal(1.0))
		// the per-object gauges: web's target and the usage of its one pod
		Expect(testutil.ToFloat64(r.Metrics.TargetCPU.WithLabelValues(ns, "VerticalPodAutoscaler", "web", "app"))).To(BeNumerically(">", 0))
		Expect(testutil.ToFloat64(r.Metrics.UsageMemory.WithLabelValues(ns, "VerticalPodAutoscaler", "web", "app"))).To(Equal(float64(100 * mi)))
		// ... or some Hvpa's target selects
		deployment(ctx, ns, "scaled", "app")
		for _, p := range runPods(ctx, ns, "scaled", 1, nil, "app") {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 100, MemoryBytes: 100 * mi})
		}
		h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "scaled"}, Spec: hvpav1alpha1.HvpaSpec{
			TargetRef:        autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "scaled"},
			ScalingIntervals: []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](3)}}}}
		Expect(k8s.Create(ctx, h)).To(Succeed())
		runs(r, 1)
		Expect(testutil.ToFloat64(r.Metrics.Aggregates)).To(Equal(2.0))

		perf := newRecommender(func(o *recommenderctrl.Options) { o.Name = "performance"; o.ExcludeNamespaces = []string{other} }, nil)
		runs(perf, 2)
		Expect(containerRec(getVPA(ctx, ns, "custom"), "app")).NotTo(BeNil(), "the recommender named performance serves it")
		Expect(getVPA(ctx, other, "web").Status.Recommendation).To(BeNil(), "excluded namespace")
		Expect(testutil.ToFloat64(perf.Metrics.Aggregates)).To(BeNumerically(">=", 5), "without --memory-saver every running pod is tracked")
	})

	It("takes its own conditions off a VPA handed to another recommender, as upstream's would never clear them", func() {
		ns, r := servedOnce(ctx)
		types := func() []vpav1.VerticalPodAutoscalerConditionType {
			var out []vpav1.VerticalPodAutoscalerConditionType
			for _, c := range getVPA(ctx, ns, "web").Status.Conditions {
				out = append(out, c.Type)
			}
			return out
		}
		Expect(types()).To(ContainElements(vpav1.LowConfidence, vpav1.RecommendationProvided))

		v := getVPA(ctx, ns, "web")
		v.Spec.Recommenders = []vpav1.VerticalPodAutoscalerRecommenderSelector{{Name: "upstream"}}
		Expect(k8s.Update(ctx, v)).To(Succeed())
		Eventually(func() []vpav1.VerticalPodAutoscalerRecommenderSelector {
			return getVPA(ctx, ns, "web").Spec.Recommenders
		}).ShouldNot(BeEmpty())
		runs(r, 1)
		Expect(types()).NotTo(ContainElement(vpav1.LowConfidence), "hvpa's LowConfidence stays for good under upstream's recommender")
		Expect(types()).To(ContainElement(vpav1.RecommendationProvided), "the conditions upstream's recommender writes are left to it")
		Expect(containerRec(getVPA(ctx, ns, "web"), "app")).NotTo(BeNil(), "the recommendation stays until the new recommender writes its own")

		By("taking them off again when a status written back from an older read restores them, within the hand-off window")
		v = getVPA(ctx, ns, "web")
		v.Status.Conditions = append(v.Status.Conditions, vpav1.VerticalPodAutoscalerCondition{Type: vpav1.LowConfidence, Status: corev1.ConditionTrue, Reason: "LowConfidence"})
		Expect(k8s.Status().Update(ctx, v)).To(Succeed())
		runs(r, 1)
		Expect(types()).NotTo(ContainElement(vpav1.LowConfidence))
	})

	It("clears a ConfigDeprecated condition an older recommender left, as upstream's does on every run", func() {
		ns, r := servedOnce(ctx)
		v := getVPA(ctx, ns, "web")
		v.Status.Conditions = append(v.Status.Conditions, vpav1.VerticalPodAutoscalerCondition{Type: vpav1.ConfigDeprecated, Status: corev1.ConditionTrue,
			Reason: "Deprecated", Message: "written by an older recommender", LastTransitionTime: metav1.Now()})
		Expect(k8s.Status().Update(ctx, v)).To(Succeed())
		Eventually(func() *vpav1.VerticalPodAutoscalerCondition {
			return condition(getVPA(ctx, ns, "web"), vpav1.ConfigDeprecated)
		}).NotTo(BeNil())
		runs(r, 1)
		Expect(condition(getVPA(ctx, ns, "web"), vpav1.ConfigDeprecated)).To(BeNil())
	})
})

// servedOnce is a namespace with Deployment web (one pod using 100m and 100Mi) and its VPA web (Off), and a
// recommender that has served it once.
func servedOnce(ctx context.Context) (string, *recommenderctrl.Recommender) {
	GinkgoHelper()
	ns := framework.NewNamespace(k8s, "rec")
	deployment(ctx, ns, "web", "app")
	for _, p := range runPods(ctx, ns, "web", 1, nil, "app") {
		played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 100, MemoryBytes: 100 * mi})
	}
	Expect(k8s.Create(ctx, vpaFor(ns, "web", "web", vpav1.UpdateModeOff))).To(Succeed())
	r := newRecommender(nil, nil)
	runs(r, 1)
	return ns, r
}

type failingHistory struct{}

func (failingHistory) History(context.Context) ([]usage.ContainerHistory, error) {
	return nil, fmt.Errorf("prometheus query: connection refused")
}

var _ = Describe("the recommender with Prometheus down", func() {
	It("goes on from live usage when the history cannot be read", func() {
		ctx := context.Background()
		ns := framework.NewNamespace(k8s, "rec")
		deployment(ctx, ns, "live", "app")
		for _, p := range runPods(ctx, ns, "live", 1, nil, "app") {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 200, MemoryBytes: 100 * mi})
		}
		Expect(k8s.Create(ctx, vpaFor(ns, "live", "live", vpav1.UpdateModeOff))).To(Succeed())
		r := newRecommender(func(o *recommenderctrl.Options) { o.Storage = recommenderctrl.StoragePrometheus }, failingHistory{})
		runs(r, 2) // RunOnce succeeds: the failed bootstrap is logged, not returned
		Expect(containerRec(getVPA(ctx, ns, "live"), "app")).NotTo(BeNil())
	})
})

// failingUsage is a usage source that fails with err while it is set (the metrics API down).
type failingUsage struct {
	usage.Source
	err error
}

func (f *failingUsage) ContainerUsage(ctx context.Context) ([]usage.ContainerUsage, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.Source.ContainerUsage(ctx)
}

// statusServed waits until the API server serves the VerticalPodAutoscalerCheckpoint CRD as changed: a
// checkpoint created with a status keeps it (inObject: no status subresource) or loses it.
func statusServed(ctx context.Context, ns string, inObject bool) {
	GinkgoHelper()
	Eventually(func() (bool, error) {
		probe := &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "probe-"},
			Spec: vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: "probe", ContainerName: "app"}, Status: vpav1.VerticalPodAutoscalerCheckpointStatus{TotalSamplesCount: 1}}
		if err := k8s.Create(ctx, probe); err != nil {
			return false, err
		}
		defer func() { _ = k8s.Delete(ctx, probe) }()
		return (probe.Status.TotalSamplesCount == 1) == inObject, nil
	}, framework.LongTimeout, framework.Interval).Should(BeTrue(), "the API server serves the checkpoint CRD as changed")
}
