package vpa_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
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
