package hvpa

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// TestDecidesFromTheTemplateWithoutPods: with no pod running (a workload scaled from zero, its pods not
// started yet) the decision reads the containers of the target's pod template (workload.Resolver.PodTemplate,
// the cache's Deployment), so its intent names them.
func TestDecidesFromTheTemplateWithoutPods(t *testing.T) {
	h := wrappers.MakeHvpa("ns", "web").Controlled(corev1.ResourceCPU).CPUPerReplica("1", "1").Obj()
	c, key := reconcileOnce(t, h)
	got := &hvpav1alpha1.Hvpa{}
	if err := c.Get(context.Background(), key, got); err != nil {
		t.Fatal(err)
	}
	d := got.Status.Desired
	if d == nil || len(d.Containers) != 1 || d.Containers[0].Name != "app" {
		t.Errorf("desired %+v, want the template's container app", d)
	}
}
