package testenv_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// TestControllerManager: the real deployment and replicaset controllers create pods, which the played
// kubelet binds and runs.
func TestControllerManager(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local control plane")
	}
	env, _, c, err := testenv.StartWithClient()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := env.Stop(); err != nil {
			t.Error(err)
		}
	}()
	cm, err := testenv.StartControllerManager(env, []string{"deployment-controller", "replicaset-controller", "garbage-collector-controller"}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cm.Stop()
	ctx := context.Background()
	k, err := playedkubelet.New(ctx, c, "node-1")
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](2),
		Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played"}}}}}}
	if err := c.Create(ctx, d); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	running := 0
	for running < 2 {
		n, err := k.RunPending(ctx, "default")
		if err != nil {
			t.Fatal(err)
		}
		running += n
		if time.Now().After(deadline) {
			t.Fatalf("%d of 2 pods running after 60s; kube-controller-manager said:\n%s", running, cm.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	for time.Now().Before(deadline) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(d), d); err == nil && d.Status.ReadyReplicas == 2 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("the Deployment never saw 2 ready replicas: %+v", d.Status)
}
