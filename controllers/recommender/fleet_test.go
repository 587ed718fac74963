package recommender_test

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/usage"
)

// workloadObjects is a Deployment name in ns with a VPA of the same name (mode Off) and its running pods
// name-0, name-1, ... of one container "app" (for the in-memory fake client: no controllers run).
func workloadObjects(ns, name string, pods int) ([]client.Object, []*corev1.Pod) {
	labels := map[string]string{"app": name}
	objs := []client.Object{&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}}}, vpaFor(ns, name, name, vpav1.UpdateModeOff)}
	var out []*corev1.Pod
	for p := range pods {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s-%d", name, p), Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		objs = append(objs, pod)
		out = append(out, pod)
	}
	return objs, out
}

// fleet is n workloadObjects app-0, app-1, ... spread over namespaces ns-0 .. ns-(namespaces-1) ("ns" for
// one), and the played usage of their pods: pod p of app-d uses load(d, p) (millicores, bytes).
func fleet(n, namespaces, pods int, load func(d, p int) (int64, int64)) ([]client.Object, *playedUsage) {
	var objs []client.Object
	played := &playedUsage{t: time.Now()}
	for d := range n {
		ns := "ns"
		if namespaces > 1 {
			ns = fmt.Sprintf("ns-%d", d%namespaces)
		}
		o, ps := workloadObjects(ns, fmt.Sprintf("app-%d", d), pods)
		objs = append(objs, o...)
		for p, pod := range ps {
			cpu, mem := load(d, p)
			played.samples = append(played.samples, usage.ContainerUsage{Namespace: ns, Pod: pod.Name, Container: "app", CPUMilli: cpu, MemoryBytes: mem})
		}
	}
	return objs, played
}
