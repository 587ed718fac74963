package recommender_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/usage"
)

// seededHistory is a checkpoint's status holding samples CPU samples from days ago until a minute ago.
func seededHistory(samples int, days float64) vpav1.VerticalPodAutoscalerCheckpointStatus {
	now := played0.Now()
	return recommenderctrl.CheckpointStatus(recommender.AggregateCheckpoint{
		CPU:         recommender.HistogramCheckpoint{Reference: now, BucketWeights: map[int]uint32{40: 10000}, TotalWeight: 50},
		Memory:      recommender.HistogramCheckpoint{Reference: now, BucketWeights: map[int]uint32{60: 10000}, TotalWeight: 5},
		FirstSample: now.Add(-time.Duration(days * 24 * float64(time.Hour))), LastSample: now.Add(-time.Minute), TotalSamples: samples}, now)
}

// seedVPACheckpoint writes a VerticalPodAutoscalerCheckpoint of this recommender for a VPA's container (an
// Hvpa's, as earlier versions kept them, with hvpa).
func seedVPACheckpoint(ctx context.Context, ns, owner, container string, status vpav1.VerticalPodAutoscalerCheckpointStatus, hvpa bool) {
	GinkgoHelper()
	name, labels := recommenderctrl.CheckpointName(owner, container), map[string]string{recommenderctrl.WriterLabel: "default"}
	if hvpa {
		name = "hvpa-" + name
		labels[recommenderctrl.OwnerKindLabel], labels[recommenderctrl.HistoryLabel] = "Hvpa", recommenderctrl.HistoryWorkloadTotal
	}
	cp := &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: owner, ContainerName: container}}
	cp.Status = status // created with its status: the CRD has no status subresource, as upstream's
	Expect(k8s.Create(ctx, cp)).To(Succeed())
}

func seedHvpaCheckpoint(ctx context.Context, ns, owner, container string, status vpav1.VerticalPodAutoscalerCheckpointStatus) {
	GinkgoHelper()
	seedHvpaCheckpointRecurring(ctx, ns, owner, container, hvpav1alpha1.HvpaCheckpointStatus{VerticalPodAutoscalerCheckpointStatus: status})
}

// seedHvpaCheckpointRecurring writes an HvpaCheckpoint of this recommender holding what the anticipation of
// recurring bursts reads too (the workload's CPU load of its last minutes, its bursts, the burst ahead last).
func seedHvpaCheckpointRecurring(ctx context.Context, ns, owner, container string, status hvpav1alpha1.HvpaCheckpointStatus) {
	GinkgoHelper()
	cp := &hvpav1alpha1.HvpaCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: recommenderctrl.CheckpointName(owner, container),
		Labels: map[string]string{recommenderctrl.WriterLabel: "default"}}, Spec: hvpav1alpha1.HvpaCheckpointSpec{HvpaName: owner, ContainerName: container}}
	cp.Status = status // created with its status: the CRD has no status subresource, as upstream's
	Expect(k8s.Create(ctx, cp)).To(Succeed())
}

// hourlyBursts is what a recommender checkpoints of a burst of 2000m that started at start's time of each of
// the last 3 hours: the runs of the 4 minutes it was ahead of.
func hourlyBursts(start time.Time) []hvpav1alpha1.CPUBurst {
	var bursts []hvpav1alpha1.CPUBurst
	for k := 3; k >= 1; k-- {
		at := start.Add(time.Duration(-60*k) * time.Minute)
		bursts = append(bursts, hvpav1alpha1.CPUBurst{Start: metav1.NewTime(at.Add(-4 * time.Minute)), Minutes: 4, PeakMilliCores: 2000})
	}
	return bursts
}

// samplesOf is the totalSamplesCount stored in a checkpoint (-1: none stored).
func samplesOf(ctx context.Context, cp client.Object) int {
	GinkgoHelper()
	if err := k8s.Get(ctx, client.ObjectKeyFromObject(cp), cp); apierrors.IsNotFound(err) {
		return -1
	} else {
		Expect(err).NotTo(HaveOccurred())
	}
	switch c := cp.(type) {
	case *vpav1.VerticalPodAutoscalerCheckpoint:
		return c.Status.TotalSamplesCount
	case *hvpav1alpha1.HvpaCheckpoint:
		return c.Status.TotalSamplesCount
	}
	return -1
}

func vpaCheckpoint(ns, name string) *vpav1.VerticalPodAutoscalerCheckpoint {
	return &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func hvpaCheckpoint(ns, name string) *hvpav1alpha1.HvpaCheckpoint {
	return &hvpav1alpha1.HvpaCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// workloadWithHvpa is a Deployment of pods running the app container at 300m and 400Mi, and its Hvpa
// (spec.vpa.deploy).
func workloadWithHvpa(ctx context.Context, ns, name string, pods int) *hvpav1alpha1.Hvpa {
	GinkgoHelper()
	deployment(ctx, ns, name, "app")
	for _, p := range runPods(ctx, ns, name, pods, nil, "app") {
		played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 300, MemoryBytes: 400 * mi})
	}
	h := &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: hvpav1alpha1.HvpaSpec{
		TargetRef:        autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name},
		VPA:              &hvpav1alpha1.VpaSpec{Deploy: true},
		ScalingIntervals: []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](4)}}}}
	Expect(k8s.Create(ctx, h)).To(Succeed())
	return h
}

// workloadWithVPA is a Deployment of one pod running the app container at cpu millicores, and its VPA (Off).
func workloadWithVPA(ctx context.Context, ns, name string, cpu int64) []*corev1.Pod {
	GinkgoHelper()
	deployment(ctx, ns, name, "app")
	pods := runPods(ctx, ns, name, 1, nil, "app")
	played.Set(ns, pods[0].Name, "app", playedkubelet.Usage{CPUMilli: cpu, MemoryBytes: 300 * mi})
	Expect(k8s.Create(ctx, vpaFor(ns, name, name, vpav1.UpdateModeOff))).To(Succeed())
	return pods
}

var _ = Describe("loading the usage history at start", func() {
	ctx := context.Background()

	It("loses no checkpoint history when the HvpaCheckpoint CRD is missing at start and added later", func() {
		ns := framework.NewNamespace(k8s, "start")
		workloadWithVPA(ctx, ns, "web", 250)
		h := workloadWithHvpa(ctx, ns, "wl", 2)
		seedVPACheckpoint(ctx, ns, "web", "app", seededHistory(5000, 5), false)
		seedVPACheckpoint(ctx, ns, "wl", "app", seededHistory(3000, 4), true) // kept by an earlier version

		By("a helm upgrade that leaves the HvpaCheckpoint CRD out")
		crdFile := filepath.Join("..", "..", "charts", "hvpa", "crds", "autoscaling.k8s.io_hvpacheckpoints.yaml")
		crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: "hvpacheckpoints.autoscaling.k8s.io"}}
		Expect(k8s.Delete(ctx, crd)).To(Succeed())
		restore := func() {
			_, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{Paths: []string{crdFile}, Scheme: testenv.Scheme()})
			Expect(err).NotTo(HaveOccurred())
			Eventually(func() error { return k8s.List(ctx, &hvpav1alpha1.HvpaCheckpointList{}) }).Should(Succeed())
		}
		DeferCleanup(func() { // every other spec needs it
			if k8s.List(ctx, &hvpav1alpha1.HvpaCheckpointList{}) != nil {
				restore()
			}
		})
		Eventually(func() error { return k8s.List(ctx, &hvpav1alpha1.HvpaCheckpointList{}) }, time.Minute).ShouldNot(Succeed())

		r := newRecommender(nil, nil)
		runs(r, 3)
		Expect(samplesOf(ctx, vpaCheckpoint(ns, "web-app"))).To(Equal(5003), "the VPA's history loaded on its own, and grew by a sample a run")
		Expect(samplesOf(ctx, vpaCheckpoint(ns, "hvpa-wl-app"))).To(Equal(3000), "the Hvpa's history is neither lost nor written while its kind cannot be")
		v := getVPA(ctx, ns, "web")
		Expect(condition(v, vpav1.FetchingHistory)).To(BeNil(), "the VPAs' history has loaded")
		Expect(condition(v, vpav1.LowConfidence).Status).To(Equal(corev1.ConditionFalse), "5 days of history: %s", condition(v, vpav1.LowConfidence).Message)
		_, ok := r.HvpaRecommendation(client.ObjectKeyFromObject(h))
		Expect(ok).To(BeFalse(), "an embedded recommendation before the Hvpa's history loaded")

		By("the CRD added again: the Hvpa's history is loaded, moved and goes on")
		restore()
		runs(r, 2)
		Expect(samplesOf(ctx, hvpaCheckpoint(ns, "wl-app"))).To(BeNumerically(">", 3000), "the Hvpa's history carried over")
		Expect(samplesOf(ctx, vpaCheckpoint(ns, "hvpa-wl-app"))).To(Equal(-1), "moved, then deleted")
		Expect(samplesOf(ctx, vpaCheckpoint(ns, "web-app"))).To(Equal(5005))
		rec, ok := r.HvpaRecommendation(client.ObjectKeyFromObject(h))
		Expect(ok).To(BeTrue())
		Expect(rec.Confidence).To(BeNumerically(">=", 1), "the Hvpa's recommendation rests on its 4 days of history")
		// the last run's usage, summed over the 2 pods, dated by its samples (the played metrics' minute; the
		// Hvpa's HPA input checks that date against the pods' readiness)
		Expect(rec.Usage.CPUMilli).To(Equal(int64(600)))
		Expect(rec.UsageAt).To(BeTemporally("==", played0.last()))
	})

	It("loads each kind on its own, retries a failed list, keeps the recommendation in status and says so (FetchingHistory) meanwhile", func() {
		ns := framework.NewNamespace(k8s, "start")
		pods := workloadWithVPA(ctx, ns, "web", 250)
		h := workloadWithHvpa(ctx, ns, "wl", 1)
		runs(newRecommender(nil, nil), 2) // the previous leader's recommendation
		before := containerRec(getVPA(ctx, ns, "web"), "app").DeepCopy()
		Expect(before).NotTo(BeNil())
		Expect(k8s.DeleteAllOf(ctx, &vpav1.VerticalPodAutoscalerCheckpoint{}, client.InNamespace(ns))).To(Succeed())
		Expect(k8s.DeleteAllOf(ctx, &hvpav1alpha1.HvpaCheckpoint{}, client.InNamespace(ns))).To(Succeed())
		seedVPACheckpoint(ctx, ns, "web", "app", seededHistory(5000, 5), false)
		seedHvpaCheckpoint(ctx, ns, "wl", "app", seededHistory(3000, 4))
		played.Set(ns, pods[0].Name, "app", playedkubelet.Usage{CPUMilli: 2500, MemoryBytes: 3000 * mi}) // ten times the usage

		By("the list of VerticalPodAutoscalerCheckpoints fails at start")
		var failing atomic.Bool
		failing.Store(true)
		direct, err := client.NewWithWatch(cfg, client.Options{Scheme: testenv.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		flaky := interceptor.NewClient(direct, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*vpav1.VerticalPodAutoscalerCheckpointList); ok && failing.Load() {
				return errors.New("etcdserver: request timed out")
			}
			return c.List(ctx, list, opts...)
		}})
		opts := recommenderctrl.DefaultOptions()
		opts.CheckpointGCInterval, opts.CheckpointPeriod = time.Hour, 0
		r, err := recommenderctrl.NewRecommender(flaky, usage.MetricsAPI{Client: mclient}, nil, recorder, played0, recommender.Defaults(), opts, nil)
		Expect(err).NotTo(HaveOccurred())
		runs(r, 2)
		v := getVPA(ctx, ns, "web")
		fetching := condition(v, vpav1.FetchingHistory)
		Expect(fetching).NotTo(BeNil())
		Expect(fetching.Status).To(Equal(corev1.ConditionTrue))
		Expect(fetching.Reason).To(Equal(vpav1.ReasonHistoryNotLoaded))
		Expect(fetching.Message).To(ContainSubstring("etcdserver: request timed out"))
		Expect(containerRec(v, "app").Target).To(Equal(before.Target), "the recommendation in status is kept while the history has not loaded")
		Expect(samplesOf(ctx, vpaCheckpoint(ns, "web-app"))).To(Equal(5000), "a checkpoint that has not loaded is not written")
		Expect(samplesOf(ctx, hvpaCheckpoint(ns, "wl-app"))).To(Equal(3002), "the HvpaCheckpoints loaded on their own")
		_, ok := r.HvpaRecommendation(client.ObjectKeyFromObject(h))
		Expect(ok).To(BeTrue())

		By("the list succeeds at a later run")
		failing.Store(false)
		runs(r, 1)
		v = getVPA(ctx, ns, "web")
		Expect(condition(v, vpav1.FetchingHistory)).To(BeNil(), "removed once the history loaded")
		Expect(samplesOf(ctx, vpaCheckpoint(ns, "web-app"))).To(Equal(5003), "loaded: the runs' samples added to its history")
		Expect(containerRec(v, "app").Target.Cpu().MilliValue()).NotTo(Equal(before.Target.Cpu().MilliValue()), "recommended from the history and the new usage")
	})

	It("anticipates an Hvpa's recurring burst from the first run after a restart, from its checkpoint's bursts, and writes them back", func() {
		ns := framework.NewNamespace(k8s, "start")
		h := workloadWithHvpa(ctx, ns, "wl", 1) // one pod at 300m, no base per replica: a load of 300m
		// what the previous leader checkpointed of the workload's CPU load: a burst of 2000m starting 2 minutes
		// after the next run's time of each of the last 3 hours (each the run of the 4 minutes it was ahead
		// of), and its last minutes at 250m
		next := played0.last().Add(time.Minute) // the next run's samples
		bursts := hourlyBursts(next.Add(2 * time.Minute))
		minutes := &hvpav1alpha1.CPUMinutes{Start: metav1.NewTime(next.Add(-5 * time.Minute)), MilliCores: []int32{250, 250, 250, 250}}
		seedHvpaCheckpointRecurring(ctx, ns, "wl", "app", hvpav1alpha1.HvpaCheckpointStatus{VerticalPodAutoscalerCheckpointStatus: seededHistory(3000, 4),
			CPUMinutes: minutes, CPUBursts: bursts})
		r := newRecommender(nil, nil)
		runs(r, 1)
		rec, ok := r.HvpaRecommendation(client.ObjectKeyFromObject(h))
		Expect(ok).To(BeTrue())
		Expect(rec.Load).To(HaveLen(1))
		Expect(rec.Load[0].Recent).NotTo(BeEmpty())
		Expect(rec.Load[0].Recent[len(rec.Load[0].Recent)-1].At).To(BeTemporally("==", next), "the run's sample is the one the bursts were seeded for")
		Expect(rec.Load[0].RecurringCPU).To(BeNumerically("==", 2000), "the burst 2 minutes ahead, from the restored bursts")
		Expect(rec.Load[0].RecurringEvery).To(Equal(time.Hour))

		cp := hvpaCheckpoint(ns, "wl-app")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cp), cp)).To(Succeed())
		Expect(cp.Status.CPUBursts).To(Equal(bursts), "the bursts written back with the history")
		stored := cp.Status.CPUMinutes
		Expect(stored).NotTo(BeNil(), "the last minutes written back")
		Expect(stored.Start.Time).To(BeTemporally("==", next.Add(-5*time.Minute)))
		Expect(stored.MilliCores).To(Equal([]int32{250, 250, 250, 250, -1, 300}), "the restored minutes, one without a sample, and the run's own")
	})

	It("restores a recurring burst under way at a restart from its checkpoint's burst ahead, and writes it back", func() {
		ns := framework.NewNamespace(k8s, "start")
		h := workloadWithHvpa(ctx, ns, "wl", 1) // one pod at 300m
		// the previous leader saw the burst of 6 minutes ago ahead from 10 to 7 minutes ago (after 250m), and
		// wrote its checkpoint 2 minutes ago, in the burst; nobody sampled the minute since
		next := played0.last().Add(time.Minute)
		ahead := &hvpav1alpha1.CPUBurstAhead{From: metav1.NewTime(next.Add(-10 * time.Minute)), To: metav1.NewTime(next.Add(-7 * time.Minute)),
			LevelMilliCores: 2000, BeforeMilliCores: ptr.To[int32](250)}
		seedHvpaCheckpointRecurring(ctx, ns, "wl", "app", hvpav1alpha1.HvpaCheckpointStatus{VerticalPodAutoscalerCheckpointStatus: seededHistory(3000, 4),
			CPUMinutes: &hvpav1alpha1.CPUMinutes{Start: metav1.NewTime(next.Add(-6 * time.Minute)), MilliCores: []int32{2000, 2000, 2000, 2000, 2000}},
			CPUBursts:  hourlyBursts(next.Add(-6 * time.Minute)), CPUBurstAhead: ahead})
		r := newRecommender(nil, nil)
		runs(r, 1)
		rec, ok := r.HvpaRecommendation(client.ObjectKeyFromObject(h))
		Expect(ok).To(BeTrue())
		Expect(rec.Load).To(HaveLen(1))
		Expect(rec.Load[0].RecurringFrom).To(BeTemporally("==", ahead.From.Time), "the burst under way, from the checkpoint")
		Expect(rec.Load[0].RecurringEnded.IsZero()).To(BeTrue(), "one minute back from the burst is no end")
		Expect(rec.Load[0].RecurringBefore).To(BeNumerically("==", 250))
		cp := hvpaCheckpoint(ns, "wl-app")
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(cp), cp)).To(Succeed())
		Expect(cp.Status.CPUBurstAhead).NotTo(BeNil(), "the burst ahead written back")
		Expect(cp.Status.CPUBurstAhead.From.Time).To(BeTemporally("==", ahead.From.Time))
		Expect(cp.Status.CPUBurstAhead.To.Time).To(BeTemporally("==", ahead.To.Time))
		Expect(cp.Status.CPUBurstAhead.LevelMilliCores).To(BeNumerically("==", 2000))
		Expect(cp.Status.CPUBurstAhead.BeforeMilliCores).To(HaveValue(BeNumerically("==", 250)))

		runs(r, 2) // three minutes at 300m: the burst has ended, at the first of them, or as early as the minute nobody sampled
		rec, _ = r.HvpaRecommendation(client.ObjectKeyFromObject(h))
		Expect(rec.Load[0].RecurringFrom).To(BeTemporally("==", ahead.From.Time))
		Expect(rec.Load[0].RecurringEnded).To(BeTemporally("==", next))
		Expect(rec.Load[0].RecurringEndedEarliest).To(BeTemporally("==", next.Add(-time.Minute)))
	})

	It("with --storage=prometheus, keeps a checkpoint holding more history than Prometheus has, and loads the Hvpas' workload totals", func() {
		ns := framework.NewNamespace(k8s, "start")
		pods := workloadWithVPA(ctx, ns, "web", 250)
		h := workloadWithHvpa(ctx, ns, "wl", 1)
		seedVPACheckpoint(ctx, ns, "web", "app", seededHistory(5000, 5), false)
		seedHvpaCheckpoint(ctx, ns, "wl", "app", seededHistory(3000, 4))
		// a Prometheus that has kept two hours of the pod's usage
		end := played0.Now().Truncate(time.Hour)
		hist := usage.ContainerHistory{Namespace: ns, Pod: pods[0].Name, Container: "app", Labels: pods[0].Labels, Step: time.Hour}
		for _, at := range []time.Time{end.Add(-2 * time.Hour), end.Add(-time.Hour)} {
			hist.CPU = append(hist.CPU, usage.HistorySample{Time: at, Value: 0.25})
			hist.Memory = append(hist.Memory, usage.HistorySample{Time: at, Value: 300 * float64(mi)})
		}
		r := newRecommender(func(o *recommenderctrl.Options) { o.Storage = recommenderctrl.StoragePrometheus }, fixedHistory{hist})
		runs(r, 3)
		Expect(samplesOf(ctx, vpaCheckpoint(ns, "web-app"))).To(Equal(5000), "5 days of history replaced by Prometheus' two hours")
		Expect(samplesOf(ctx, hvpaCheckpoint(ns, "wl-app"))).To(Equal(3003), "the Hvpa's workload total, which Prometheus does not hold, loaded from its checkpoint")
		Expect(condition(getVPA(ctx, ns, "web"), vpav1.FetchingHistory)).To(BeNil())
		rec, ok := r.HvpaRecommendation(client.ObjectKeyFromObject(h))
		Expect(ok).To(BeTrue())
		Expect(rec.Confidence).To(BeNumerically(">=", 1))
	})
})

// fixedHistory is a Prometheus history of the containers given.
type fixedHistory struct{ h usage.ContainerHistory }

func (f fixedHistory) History(context.Context) ([]usage.ContainerHistory, error) {
	return []usage.ContainerHistory{f.h}, nil
}
