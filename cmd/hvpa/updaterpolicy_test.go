package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// updaterPolicyRefusal is the message of the chart's policy (templates/updaterpolicy.yaml).
const updaterPolicyRefusal = "the updater may create pods only as a server-side dry run (dryRun=All)"

// TestChartUpdaterCreatesPodsOnlyAsDryRun: the updater may create pods (its ClusterRole) only to dry-run an
// evicted pod's replacement, which RBAC cannot restrict to dry runs; the chart's ValidatingAdmissionPolicy
// does. With the updater's ServiceAccount's own token (a TokenRequest; the API server names it
// system:serviceaccount:<namespace>:<name>) against the local API server with the chart's RBAC and
// policies: a dry-run create of a pod is admitted (and stores nothing); a real create is refused with the
// policy's message, in a workload namespace (a pod running as that namespace's most powerful
// ServiceAccount: the escalation the grant would open) and in the release namespace; the updater still
// evicts; a cluster admin still creates pods.
func TestChartUpdaterCreatesPodsOnlyAsDryRun(t *testing.T) {
	root, helm := helmAndRoot(t)
	objs := renderChart(t, helm, filepath.Join(root, "charts", "hvpa"))
	upd := findComponent(deployments(t, objs), app.Updater)
	if upd == nil {
		t.Fatal("the chart deploys no updater")
	}
	sa := upd.dep.Spec.Template.Spec.ServiceAccountName

	env, cfg, c, err := testenv.StartWithClient()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, o := range []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNamespace}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "powerful"}}} {
		if err := c.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	policies := 0
	for _, o := range objs {
		switch o.obj.GetKind() {
		case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			policies++
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
		default:
			continue
		}
		if err := c.Create(ctx, o.obj.DeepCopy()); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
	}
	t.Logf("the chart renders %d ValidatingAdmissionPolicy objects", policies)
	asUpdater := serviceAccountClient(ctx, t, c, cfg, sa)

	pod := func(ns string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "replacement-"},
			Spec: corev1.PodSpec{ServiceAccountName: "default", Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
	}
	// the policy takes effect a moment after it is created: until then the updater's real create goes through
	// (its ClusterRole allows it), and the pod is deleted again
	waitUntil(ctx, t, "the policy refuses the updater's real create of a pod", 30*time.Second, func() error {
		p := pod("shop")
		switch err := asUpdater.Create(ctx, p); {
		case err == nil:
			_ = c.Delete(ctx, p)
			return fmt.Errorf("a real create as %s: admitted", sa)
		case !strings.Contains(err.Error(), updaterPolicyRefusal):
			return fmt.Errorf("a real create as %s: %w", sa, err)
		}
		return nil
	})

	escalation := pod("shop")
	escalation.Spec.ServiceAccountName = "powerful"
	for what, p := range map[string]*corev1.Pod{"running as ServiceAccount powerful": escalation, "in the release namespace": pod(chartNamespace)} {
		dry := p.DeepCopy()
		if err := asUpdater.Create(ctx, dry, client.DryRunAll); err != nil {
			t.Errorf("%s: the updater's dry run is refused: %v", what, err)
		}
		err := asUpdater.Create(ctx, p.DeepCopy())
		if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), updaterPolicyRefusal) {
			t.Errorf("%s: the updater's real create: %v, want the policy's refusal (403 %q)", what, err, updaterPolicyRefusal)
		}
	}
	var stored corev1.PodList
	if err := c.List(ctx, &stored); err != nil || len(stored.Items) != 0 {
		t.Errorf("pods stored after the updater's dry runs and refused creates: %d (%v)", len(stored.Items), err)
	}

	// a cluster admin is not matched; the updater evicts that pod (pods/eviction is not a pod create)
	victim := pod("shop")
	if err := c.Create(ctx, victim); err != nil {
		t.Fatalf("a cluster admin cannot create a pod: %v", err)
	}
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: victim.Namespace, Name: victim.Name}}
	if err := asUpdater.SubResource("eviction").Create(ctx, victim, ev); err != nil {
		t.Errorf("the updater cannot evict a pod under the policy: %v", err)
	}
}
