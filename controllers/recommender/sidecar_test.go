package recommender_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	recommenderctrl "github.com/hvpa-dev/hvpa/controllers/recommender"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
)

var _ = Describe("native sidecars", func() {
	ctx := context.Background()

	It("recommends for a sidecar (a restartable init container) like for an app container, under its own policy", func() {
		ns := framework.NewNamespace(k8s, "sidecar")
		deployment(ctx, ns, "mesh", "app")
		req := corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("100m"), "memory": resource.MustParse("64Mi")}}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mesh-0", Labels: map[string]string{"app": "mesh", "pod-template-hash": "1"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played", Resources: req}},
				InitContainers: []corev1.Container{{Name: "proxy", Image: "played", Resources: req, RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}}}
		Expect(kubelet.Run(ctx, p)).To(Succeed())
		played.Set(ns, "mesh-0", "app", playedkubelet.Usage{CPUMilli: 500, MemoryBytes: 300 * mi})
		played.Set(ns, "mesh-0", "proxy", playedkubelet.Usage{CPUMilli: 250, MemoryBytes: 100 * mi})
		v := vpaFor(ns, "mesh", "mesh", vpav1.UpdateModeOff)
		v.Spec.ResourcePolicy = &vpav1.PodResourcePolicy{ContainerPolicies: []vpav1.ContainerResourcePolicy{{ContainerName: "proxy", MaxAllowed: corev1.ResourceList{"cpu": resource.MustParse("200m")}}}}
		Expect(k8s.Create(ctx, v)).To(Succeed())
		runs(newRecommender(nil, nil), 3)

		v = getVPA(ctx, ns, "mesh")
		app, proxy := containerRec(v, "app"), containerRec(v, "proxy")
		Expect(app).NotTo(BeNil(), "status %+v", v.Status)
		Expect(proxy).NotTo(BeNil(), "the sidecar has a recommendation: %+v", v.Status)
		Expect(app.Target.Cpu().MilliValue()).To(BeNumerically(">=", 500))
		Expect(proxy.Target.Cpu().MilliValue()).To(Equal(int64(200)), "the sidecar's own maxAllowed")
		Expect(proxy.UncappedTarget.Cpu().MilliValue()).To(BeNumerically(">=", 250))
	})
})

var _ = Describe("a cluster without pods/resize", func() {
	ctx := context.Background()

	It("says InPlaceUnavailable on VPAs that resize in place, and only on them", func() {
		ns := framework.NewNamespace(k8s, "noresize")
		deployment(ctx, ns, "web", "app")
		for _, p := range runPods(ctx, ns, "web", 1, corev1.ResourceList{"cpu": resource.MustParse("100m")}, "app") {
			played.Set(ns, p.Name, "app", playedkubelet.Usage{CPUMilli: 200, MemoryBytes: 100 * mi})
		}
		Expect(k8s.Create(ctx, vpaFor(ns, "inplace", "web", vpav1.UpdateModeInPlaceOrRecreate))).To(Succeed())
		Expect(k8s.Create(ctx, vpaFor(ns, "recreate", "web", vpav1.UpdateModeOff))).To(Succeed())
		runs(newRecommender(func(o *recommenderctrl.Options) { o.NoInPlaceResize, o.KubernetesVersion = true, "v1.32.4" }, nil), 2)
		c := condition(getVPA(ctx, ns, "inplace"), vpav1.InPlaceUnavailable)
		Expect(c).NotTo(BeNil())
		Expect(c.Status).To(Equal(corev1.ConditionTrue))
		Expect(c.Message).To(ContainSubstring("the cluster (Kubernetes v1.32.4) serves no pods/resize: pods are evicted instead"))
		Expect(condition(getVPA(ctx, ns, "recreate"), vpav1.InPlaceUnavailable)).To(BeNil())

		runs(newRecommender(nil, nil), 1)
		Expect(condition(getVPA(ctx, ns, "inplace"), vpav1.InPlaceUnavailable)).To(BeNil(), "gone once the cluster serves pods/resize")
	})
})
