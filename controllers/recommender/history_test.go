package recommender_test

import (
	"context"
	"fmt"
	"math"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/prometheus"
	"github.com/hvpa-dev/hvpa/usage"
)

// The played usage of the history specs: CPU constant within each hour (250m to 550m in turn), memory 200 to
// 260 MiB with a spike of half as much again at minute 17 of every hour.
func histCPU(t time.Time) float64 { return 0.25 + 0.1*float64(t.Add(-time.Second).Hour()%4) }

func histMemory(t time.Time) float64 {
	m := float64(200+30*(t.Hour()%3)) * float64(mi)
	if t.Minute() == 17 {
		return m * 1.5
	}
	return m
}

// histPods are 8 days of Deployment hist's pods: hist-0 (alive, labels app=hist and pod-template-hash=1)
// and hist-gone (of an older ReplicaSet, gone two days ago, using twice the CPU and 80% of the memory).
func histPods(ns string, end time.Time) []prometheus.Pod {
	return []prometheus.Pod{
		{Namespace: ns, Name: "hist-0", Container: "app", ReplicaSet: "hist-1", Deployment: "hist", Labels: map[string]string{"app": "hist", "pod-template-hash": "1"},
			From: end.Add(-8 * 24 * time.Hour), To: end, CPU: histCPU, Memory: histMemory},
		{Namespace: ns, Name: "hist-gone", Container: "app", ReplicaSet: "hist-0", Deployment: "hist", Labels: map[string]string{"app": "hist", "pod-template-hash": "0"},
			From: end.Add(-8 * 24 * time.Hour), To: end.Add(-2 * 24 * time.Hour),
			// a steady 1 CPU, above hist-0's peak: without its history (its labels are known only through its
			// owner) the CPU targets differ. It holds about a fifth of the decayed weight, so the 90th percentile
			// lies well inside its samples; when it used twice hist-0's four hourly levels, each level held 5% of
			// the weight and the 90th percentile sat exactly on a level boundary, so the two paths' rounding picked
			// different levels at some hours (813m against 1038m). Less memory, so that its old peaks (decayed by
			// days) stay clear of the 95th percentile.
			CPU: func(time.Time) float64 { return 1 }, Memory: func(t time.Time) float64 { return 0.8 * histMemory(t) }},
	}
}

// checkpointOf is what the checkpoint path keeps for the same usage: every per-minute sample of every pod
// fed into one aggregate, as the live loop does, saved at end.
func checkpointOf(pods []prometheus.Pod, end time.Time) vpav1.VerticalPodAutoscalerCheckpointStatus {
	m, err := recommender.NewModel(recommender.Defaults())
	Expect(err).NotTo(HaveOccurred())
	a := m.NewAggregate()
	for _, p := range pods {
		c := m.NewContainer(a)
		for t := p.From.Add(time.Minute); !t.After(p.To); t = t.Add(time.Minute) {
			m.AddCPU(c, t.Add(-time.Minute), p.CPU(t))
			m.AddMemory(c, t, p.Memory(t))
		}
	}
	return recommenderctrl.CheckpointStatus(m.SaveAggregate(a, nil, end), end)
}

// histWorkload is Deployment hist with its live pod hist-0 (using the current hour's played usage) and a VPA.
func histWorkload(ctx context.Context, ns string, now time.Time) {
	deployment(ctx, ns, "hist", "app")
	for _, p := range runPods(ctx, ns, "hist", 1, nil, "app") {
		played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: int64(histCPU(now) * 1000), MemoryBytes: int64(histMemory(now))})
	}
	Expect(k8s.Create(ctx, vpaFor(ns, "hist", "hist", vpav1.UpdateModeOff))).To(Succeed())
}

var _ = Describe("usage history from a real Prometheus", Ordered, func() {
	ctx := context.Background()
	var prom *prometheus.Server
	var end time.Time
	var nsProm, nsCheckpoint string

	BeforeAll(func() {
		// the history ends on a whole hour: the Prometheus path reads up to its last whole step (the partial hour
		// after it comes from live usage), so the checkpoint path gets the same samples; with a partial hour of
		// 550m at the end of its history only, the checkpoint path's decayed 90th percentile moved a bucket
		// boundary away (1038m against 813m at hh:26)
		end = time.Now().Truncate(time.Hour)
		nsProm, nsCheckpoint = framework.NewNamespace(k8s, "hist"), framework.NewNamespace(k8s, "hist")
		var err error
		// kube-state-metrics v2 defaults: kube_pod_labels without the pods' labels
		prom, err = prometheus.Start(ctx, GinkgoT().TempDir(), prometheus.Options{Backfill: prometheus.History{Pods: histPods(nsProm, end)}.OpenMetrics()})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(prom.Stop)
	})

	It("gives the first recommendation after start the checkpoint path gives for the same usage, with enough confidence", func() {
		histWorkload(ctx, nsProm, end)
		pc := usage.DefaultPrometheusConfig()
		pc.Address = prom.URL
		hp, err := usage.NewPrometheus(pc, func() time.Time { return end })
		Expect(err).NotTo(HaveOccurred())
		fromProm := newRecommender(func(o *recommenderctrl.Options) {
			o.Storage = recommenderctrl.StoragePrometheus
			o.Namespaces = []string{nsProm}
		}, hp)
		runs(fromProm, 1)

		histWorkload(ctx, nsCheckpoint, end)
		cp := &vpav1.VerticalPodAutoscalerCheckpoint{ObjectMeta: metav1.ObjectMeta{Namespace: nsCheckpoint, Name: recommenderctrl.CheckpointName("hist", "app")},
			Spec: vpav1.VerticalPodAutoscalerCheckpointSpec{VPAObjectName: "hist", ContainerName: "app"}}
		cp.Status = checkpointOf(histPods(nsProm, end), end)
		Expect(k8s.Create(ctx, cp)).To(Succeed())
		fromCheckpoint := newRecommender(func(o *recommenderctrl.Options) { o.Namespaces = []string{nsCheckpoint} }, nil)
		runs(fromCheckpoint, 1)

		p, c := getVPA(ctx, nsProm, "hist"), getVPA(ctx, nsCheckpoint, "hist")
		pr, cr := containerRec(p, "app"), containerRec(c, "app")
		Expect(pr).NotTo(BeNil(), "status %+v", p.Status)
		Expect(cr).NotTo(BeNil(), "status %+v", c.Status)
		AddReportEntry("targets from Prometheus and from the checkpoint", fmt.Sprintf("%v / %v", pr.Target, cr.Target))
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			got, want := pr.Target[r], cr.Target[r]
			// one bucket of the histograms: they grow by 5% a bucket
			Expect(math.Abs(got.AsApproximateFloat64()/want.AsApproximateFloat64()-1)).To(BeNumerically("<=", 0.05),
				"%s: %s from Prometheus, %s from the checkpoint", r, got.String(), want.String())
		}
		low := condition(p, vpav1.LowConfidence)
		Expect(low).NotTo(BeNil())
		Expect(low.Status).To(Equal(corev1.ConditionFalse), "8 days of history: %s", low.Message)
	})

	It("starts from its checkpoints when Prometheus is down, and says so", func() {
		// the first spec's recommender wrote nsProm's checkpoint (checkpoints are written with --storage=prometheus too)
		var l vpav1.VerticalPodAutoscalerCheckpointList
		Expect(k8s.List(ctx, &l)).To(Succeed())
		written := false
		for _, cp := range l.Items {
			written = written || (cp.Namespace == nsProm && cp.Spec.VPAObjectName == "hist")
		}
		Expect(written).To(BeTrue(), "no checkpoint of %s/hist", nsProm)
		before := containerRec(getVPA(ctx, nsProm, "hist"), "app").Target.DeepCopy()

		prom.Stop()
		pc := usage.DefaultPrometheusConfig()
		pc.Address, pc.Timeout = prom.URL, 5*time.Second
		hp, err := usage.NewPrometheus(pc, func() time.Time { return end })
		Expect(err).NotTo(HaveOccurred())
		restarted := newRecommender(func(o *recommenderctrl.Options) {
			o.Storage = recommenderctrl.StoragePrometheus
			o.Namespaces = []string{nsProm}
		}, hp)
		runs(restarted, 1) // the failed read is logged with its reason, and the metric says where the history came from
		Expect(testutil.ToFloat64(restarted.Metrics.HistorySource.WithLabelValues("checkpoint-fallback"))).To(Equal(1.0))
		after := containerRec(getVPA(ctx, nsProm, "hist"), "app")
		Expect(after).NotTo(BeNil())
		low := condition(getVPA(ctx, nsProm, "hist"), vpav1.LowConfidence)
		Expect(low.Status).To(Equal(corev1.ConditionFalse), "the checkpoint's 8 days: %s", low.Message)
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			got, want := after.Target[r], before[r]
			Expect(math.Abs(got.AsApproximateFloat64()/want.AsApproximateFloat64()-1)).To(BeNumerically("<=", 0.05), "%s: %s after the restart, %s before", r, got.String(), want.String())
		}
	})
})
