package updater

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/scaling"
)

var podsGR = schema.GroupResource{Resource: "pods"}

// nodeCapacity is kube-apiserver v1.36's PodResizeValidator refusing a resize beyond the node's allocatable:
// 403 with a cause of type NodeCapacity (test/playedkubelet pins the answer of the real API server).
func nodeCapacity() error {
	err := apierrors.NewForbidden(podsGR, "web-1", errors.New("node didn't have enough allocatable resources: cpu, requested: 100000, allocatable: 64000"))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{Type: "NodeCapacity"})
	return err
}

func TestClassifyRefusal(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "web-1", field.ErrorList{field.Forbidden(field.NewPath("spec"), "pod updates may not change fields other than ...")})
	cases := map[string]struct {
		err  error
		want RefusalKind
	}{
		"invalid":                {invalid, RefusedPolicy},
		"invalid, wrapped":       {fmt.Errorf("resizing web-1: %w", invalid), RefusedPolicy},
		"pod gone":               {apierrors.NewNotFound(podsGR, "web-1"), RefusedPolicy},
		"no pods/resize":         {apierrors.NewMethodNotSupported(podsGR, "patch"), RefusedPolicy},
		"forbidden by admission": {apierrors.NewForbidden(podsGR, "web-1", errors.New("pod security: privileged")), RefusedPolicy},
		"beyond the node":        {nodeCapacity(), RefusedCapacity},
		"over quota":             {apierrors.NewForbidden(podsGR, "web-1", errors.New("exceeded quota: compute, requested: requests.cpu=2")), RefusedQuota},
		"timeout":                {apierrors.NewTimeoutError("request did not complete", 1), RefusedTransient},
		"server error":           {apierrors.NewInternalError(errors.New("etcd leader changed")), RefusedTransient},
		"conflict":               {apierrors.NewConflict(podsGR, "web-1", errors.New("the object has been modified")), RefusedTransient},
		"throttled":              {apierrors.NewTooManyRequests("slow down", 1), RefusedTransient},
		"not an API error":       {errors.New("connection refused"), RefusedTransient},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ClassifyRefusal(tc.err); got != tc.want {
				t.Errorf("ClassifyRefusal(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

// TestAfterRefusal: what follows a resize the API refused. Only a refusal about the change itself may turn
// into an eviction, within the disruption budget and evictionRequirements; InPlace never evicts; what cannot
// be done is retried with backoff (Backoff), what may pass next loop is retried then.
func TestAfterRefusal(t *testing.T) {
	policy := apierrors.NewForbidden(podsGR, "web-1", errors.New(`admission webhook "policy.example.com" denied the request`))
	ctl := func(mode vpav1.UpdateMode, reqs ...vpav1.EvictionRequirement) *Controller {
		c := vpaCtl(mode, 500, 400, 600)
		c.EvictionRequirements = reqs
		return c
	}
	onlyUp := vpav1.EvictionRequirement{Resources: []corev1.ResourceName{corev1.ResourceCPU}, ChangeRequirement: vpav1.TargetHigherThanRequests}
	type want struct {
		Kind       Kind
		Reason     string
		Backoff    bool
		FromResize bool
		Budget     int
	}
	cases := map[string]struct {
		ctl     *Controller
		unboost bool
		req     float64 // the pod's cpu request (the target is 500m)
		err     error
		budget  int
		want    want
		fewLive bool // fewer live pods than minReplicas (Evictable false)
	}{
		"policy, budget left: evicted, the budget spent":       {ctl(vpav1.UpdateModeInPlaceOrRecreate), false, 100, policy, 1, want{Evict, ReasonResizeRefused, false, true, 0}, false},
		"beyond the node, budget left: evicted":                {ctl(vpav1.UpdateModeInPlaceOrRecreate), false, 100, nodeCapacity(), 2, want{Evict, ReasonInfeasible, false, true, 1}, false},
		"policy, no budget this loop: next loop, no backoff":   {ctl(vpav1.UpdateModeInPlaceOrRecreate), false, 100, policy, 0, want{Skip, ReasonTolerance, false, false, 0}, false},
		"policy, too few live pods: retried with backoff":      {ctl(vpav1.UpdateModeInPlaceOrRecreate), false, 100, policy, 1, want{Skip, ReasonMinReplicas, true, false, 1}, true},
		"policy, InPlace: never evicted, retried with backoff": {ctl(vpav1.UpdateModeInPlace), false, 100, policy, 3, want{Skip, ReasonResizeRefused, true, false, 3}, false},
		"beyond the node, InPlace: infeasible, backoff":        {ctl(vpav1.UpdateModeInPlace), false, 100, nodeCapacity(), 3, want{Skip, ReasonInfeasible, true, false, 3}, false},
		"an increase evictionRequirements allow: evicted":      {ctl(vpav1.UpdateModeInPlaceOrRecreate, onlyUp), false, 100, policy, 1, want{Evict, ReasonResizeRefused, false, true, 0}, false},
		"transient: next loop, no backoff, budget kept":        {ctl(vpav1.UpdateModeInPlaceOrRecreate), false, 100, apierrors.NewTimeoutError("slow", 1), 1, want{Skip, ReasonResizeRefused, false, false, 1}, false},
		"quota: the replacement would meet it too, next loop":  {ctl(vpav1.UpdateModeInPlaceOrRecreate), false, 100, apierrors.NewForbidden(podsGR, "web-1", errors.New("exceeded quota: q")), 1, want{Skip, ReasonResizeRefused, false, false, 1}, false},
		"the end of a startup boost never evicts":              {ctl(vpav1.UpdateModeInPlaceOrRecreate), true, 100, policy, 1, want{Skip, ReasonResizeRefused, false, false, 1}, false},
		"transient in InPlace: next loop, no backoff":          {ctl(vpav1.UpdateModeInPlace), false, 100, apierrors.NewInternalError(errors.New("x")), 1, want{Skip, ReasonResizeRefused, false, false, 1}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := pod("web-1", time.Hour, tc.req, 0)
			planned := Plan(tc.ctl, []Pod{p, pod("web-2", time.Hour, 500, 0)}, now, DefaultOptions())
			if len(planned) != 1 || planned[0].Kind != Resize {
				t.Fatalf("planned %+v, want one resize", summary(planned))
			}
			a := planned[0]
			a.Unboost = tc.unboost
			got, budget := AfterRefusal(tc.ctl, a, ClassifyRefusal(tc.err), tc.err, tc.budget, !tc.fewLive)
			if d := cmp.Diff(tc.want, want{got.Kind, got.Reason, got.Backoff, got.FromResize, budget}); d != "" {
				t.Errorf("(-want +got):\n%s\n%s", d, got.Message)
			}
		})
	}
}

// TestAfterDryRun: an eviction goes ahead only when the dry run of its replacement was admitted; a dry run
// the updater may not send (DryRunForbiddenError) leaves the replacement unchecked, and the pod is not
// evicted either.
func TestAfterDryRun(t *testing.T) {
	a := Action{Kind: Evict, Message: "app cpu request 100m -> 500m"}
	rbac := apierrors.NewForbidden(podsGR, "", errors.New(`User "system:serviceaccount:hvpa-system:hvpa-updater" cannot create resource "pods"`))
	for name, tc := range map[string]struct {
		err     error
		kind    Kind
		backoff bool
		reason  string
	}{
		"admitted: evicted":                                   {nil, Evict, false, ""},
		"refused by a policy: not evicted":                    {apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "", field.ErrorList{field.Invalid(field.NewPath("spec"), "500m", "too much cpu")}), Skip, true, ReasonReplacementRefused},
		"refused by a webhook: not evicted":                   {apierrors.NewForbidden(podsGR, "", errors.New(`admission webhook "k" denied the request`)), Skip, true, ReasonReplacementRefused},
		"refused by the quota: not evicted":                   {apierrors.NewForbidden(podsGR, "", errors.New("exceeded quota: q")), Skip, true, ReasonReplacementRefused},
		"the dry run failed: next loop, skip":                 {apierrors.NewTimeoutError("slow", 1), Skip, false, ReasonReplacementRefused},
		"the updater may not send it: not evicted, unchecked": {&DryRunForbiddenError{Err: rbac}, Skip, true, ReasonReplacementUnchecked},
	} {
		t.Run(name, func(t *testing.T) {
			got := AfterDryRun(a, tc.err)
			if got.Kind != tc.kind || got.Backoff != tc.backoff || got.Reason != tc.reason {
				t.Errorf("%s/%s backoff %v, want %s/%s backoff %v: %s", got.Kind, got.Reason, got.Backoff, tc.kind, tc.reason, tc.backoff, got.Message)
			}
		})
	}
}

// TestReplacement: the dry run creates the pod as its controller would create it again, with the new
// resources, and without what a create refuses when it differs from what admission computes.
func TestReplacement(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-7d9-abcde", GenerateName: "web-7d9-", UID: "u1",
		ResourceVersion: "42", Labels: map[string]string{"app": "web"},
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-7d9", Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "node-1", Priority: ptr.To[int32](1000), PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority),
			Overhead:            corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")},
			EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug"}}},
			Containers: []corev1.Container{{Name: "app", Image: "web:1", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("100Mi")}}},
				{Name: "sidecar", Image: "proxy:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	sized := []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(300, -1), Limits: scaling.V(600, -1)}}
	r := replacement(pod, sized)
	if r.Name != "" || r.GenerateName != "web-7d9-" || r.UID != "" || r.ResourceVersion != "" || r.Namespace != "shop" || r.Labels["app"] != "web" {
		t.Errorf("metadata %+v", r.ObjectMeta)
	}
	if len(r.OwnerReferences) != 1 || r.OwnerReferences[0].Name != "web-7d9" || r.OwnerReferences[0].BlockOwnerDeletion != nil {
		t.Errorf("owner references %+v", r.OwnerReferences)
	}
	if r.Spec.NodeName != "" || r.Spec.Priority != nil || r.Spec.PreemptionPolicy != nil || r.Spec.Overhead != nil || r.Spec.EphemeralContainers != nil || r.Status.Phase != "" {
		t.Errorf("spec %+v, status %+v", r.Spec, r.Status)
	}
	app := r.Spec.Containers[0]
	if app.Image != "web:1" || app.Resources.Requests.Cpu().String() != "300m" || app.Resources.Requests.Memory().String() != "100Mi" || app.Resources.Limits.Cpu().String() != "600m" {
		t.Errorf("app %+v", app)
	}
	if len(r.Spec.Containers[1].Resources.Requests) != 0 || pod.Spec.Containers[0].Resources.Requests.Cpu().String() != "100m" || pod.Spec.NodeName != "node-1" {
		t.Errorf("the sidecar changed, or the pod itself: %+v", pod.Spec)
	}
}
