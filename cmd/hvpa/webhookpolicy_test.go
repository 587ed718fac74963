package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// webhookConfigKinds are the two webhook configurations the chart names alike.
var webhookConfigKinds = []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}

// TestChartWebhookCABundleOnly: with self-managed certificates (the default) the admission controller's
// ServiceAccount may update the release's webhook configurations, which RBAC cannot restrict to a field; the
// chart's ValidatingAdmissionPolicy restricts it to the caBundle. With that ServiceAccount's own token (a
// TokenRequest; the API server names it system:serviceaccount:<namespace>:<name>) against the local API
// server with the chart's RBAC, policy and configurations: setting the caBundle of both configurations
// succeeds; any other change is refused, the caBundle changed with it or not: rules, failurePolicy,
// timeoutSeconds, a selector, the service, a webhook added or removed, a label; so is a delete, also once RBAC
// allows it. A cluster admin may still change the configurations.
func TestChartWebhookCABundleOnly(t *testing.T) {
	root, helm := helmAndRoot(t)
	objs := renderChart(t, helm, filepath.Join(root, "charts", "hvpa"))
	adm := findComponent(deployments(t, objs), app.Admission)
	if adm == nil {
		t.Fatal("the chart deploys no admission controller")
	}
	configName, sa := adm.flag("webhook-config-name"), adm.dep.Spec.Template.Spec.ServiceAccountName

	env, cfg, c, err := testenv.StartWithClient()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNamespace}}); err != nil {
		t.Fatal(err)
	}
	policies := 0
	for _, o := range objs {
		switch o.obj.GetKind() {
		case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			policies++
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", webhookConfigKinds[0], webhookConfigKinds[1]:
		default:
			continue
		}
		if err := c.Create(ctx, o.obj.DeepCopy()); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
	}
	t.Logf("the chart renders %d ValidatingAdmissionPolicy objects", policies)

	asSA := serviceAccountClient(ctx, t, c, cfg, sa)
	change := func(cl client.Client, kind string, dryRun bool, f func(u *unstructured.Unstructured)) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kind})
		if err := cl.Get(ctx, client.ObjectKey{Name: configName}, u); err != nil {
			return err
		}
		f(u)
		var opts []client.UpdateOption
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		return cl.Update(ctx, u, opts...)
	}
	const refusal = "the admission controller may change only the caBundle"
	// the policy takes effect a moment after it is created: until then the ServiceAccount's change (a dry run,
	// which leaves the configuration as it is) goes through
	waitUntil(ctx, t, "the policy refuses the admission controller's change of a rule", 30*time.Second, func() error {
		err := change(asSA, webhookConfigKinds[0], true, func(u *unstructured.Unstructured) { setHookField(t, u, 0, "failurePolicy", "Fail") })
		switch {
		case err == nil:
			return fmt.Errorf("changing failurePolicy as %s: admitted", sa)
		case !strings.Contains(err.Error(), refusal):
			return fmt.Errorf("changing failurePolicy as %s: %w", sa, err)
		}
		return nil
	})

	for i, kind := range webhookConfigKinds {
		bundle := fmt.Sprintf("-----BEGIN CERTIFICATE-----\nY2EgJWQ=%d\n-----END CERTIFICATE-----\n", i)
		if err := change(asSA, kind, false, func(u *unstructured.Unstructured) { setCABundles(t, u, bundle) }); err != nil {
			t.Errorf("%s: the admission controller cannot set the caBundle: %v", kind, err)
		}
		for _, tc := range []struct {
			what string
			f    func(u *unstructured.Unstructured)
		}{
			{"failurePolicy", func(u *unstructured.Unstructured) { setHookField(t, u, 0, "failurePolicy", "Fail") }},
			{"timeoutSeconds", func(u *unstructured.Unstructured) { setHookField(t, u, 0, "timeoutSeconds", int64(30)) }},
			{"the rules", func(u *unstructured.Unstructured) {
				setHookField(t, u, 0, "rules", []any{map[string]any{"apiGroups": []any{""}, "apiVersions": []any{"v1"}, "operations": []any{"DELETE"}, "resources": []any{"pods"}}})
			}},
			{"the namespaceSelector", func(u *unstructured.Unstructured) {
				setHookField(t, u, 0, "namespaceSelector", map[string]any{"matchLabels": map[string]any{"hvpa.dev/webhook": "off"}})
			}},
			{"the service, with the caBundle", func(u *unstructured.Unstructured) {
				setCABundles(t, u, bundle+"x")
				setHookField(t, u, 0, "clientConfig", map[string]any{"url": "https://attacker.example/mutate", "caBundle": hooks(t, u)[0].(map[string]any)["clientConfig"].(map[string]any)["caBundle"]})
			}},
			{"a webhook added", func(u *unstructured.Unstructured) {
				hs := hooks(t, u)
				extra := deepCopyMap(hs[0].(map[string]any))
				extra["name"] = "extra.hvpa.dev"
				setHooks(t, u, append(hs, extra))
			}},
			{"a webhook removed", func(u *unstructured.Unstructured) { setHooks(t, u, hooks(t, u)[1:]) }},
			{"a label", func(u *unstructured.Unstructured) {
				l := u.GetLabels()
				l["hvpa.dev/tampered"] = "true"
				u.SetLabels(l)
			}},
		} {
			err := change(asSA, kind, true, tc.f)
			if err == nil || !strings.Contains(err.Error(), "may change only the caBundle") && !strings.Contains(err.Error(), "may not change") {
				t.Errorf("%s: the admission controller changes %s: %v, want the policy's refusal", kind, tc.what, err)
			}
			if err := change(c, kind, true, tc.f); err != nil {
				t.Errorf("%s: a cluster admin cannot change %s: %v", kind, tc.what, err)
			}
		}
	}
	checkNoDelete(ctx, t, c, asSA, configName, sa)
}

// checkNoDelete: the admission controller may not delete its webhook configurations: RBAC does not allow it,
// and once a ClusterRole allows it the policy still refuses it.
func checkNoDelete(ctx context.Context, t *testing.T, admin, asSA client.Client, configName, sa string) {
	t.Helper()
	del := func(kind string) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kind})
		u.SetName(configName)
		return asSA.Delete(ctx, u, client.DryRunAll)
	}
	for _, kind := range webhookConfigKinds {
		if err := del(kind); err == nil || !strings.Contains(err.Error(), "forbidden") {
			t.Errorf("%s: the admission controller deletes it: %v, want RBAC's refusal", kind, err)
		}
	}
	grant := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-delete-webhook-configurations"}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"},
		ResourceNames: []string{configName}, Verbs: []string{"delete"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: grant.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: grant.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: chartNamespace, Name: sa}}}
	for _, o := range []client.Object{grant, binding} {
		if err := admin.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	for _, kind := range webhookConfigKinds {
		waitUntil(ctx, t, kind+": the policy refuses a delete RBAC allows", 30*time.Second, func() error {
			switch err := del(kind); {
			case err == nil:
				return fmt.Errorf("deleting as %s with RBAC's permission: admitted", sa)
			case !strings.Contains(err.Error(), "may not delete"):
				return fmt.Errorf("deleting as %s with RBAC's permission: %w", sa, err)
			}
			return nil
		})
	}
}

// serviceAccountClient creates a token for ServiceAccount sa of the chart's namespace (TokenRequest, as the
// kubelet does for its pods) and returns a client that authenticates with that token alone, after checking
// that the API server names it system:serviceaccount:<namespace>:<sa> (SelfSubjectReview).
func serviceAccountClient(ctx context.Context, t *testing.T, admin client.Client, cfg *rest.Config, sa string) client.Client {
	t.Helper()
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
	if err := admin.SubResource("token").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: chartNamespace, Name: sa}}, tr); err != nil {
		t.Fatalf("a token for ServiceAccount %s: %v", sa, err)
	}
	saCfg := rest.AnonymousClientConfig(cfg)
	saCfg.BearerToken = tr.Status.Token
	c, err := client.New(saCfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := c.Create(ctx, review); err != nil {
		t.Fatal(err)
	}
	if want := "system:serviceaccount:" + chartNamespace + ":" + sa; review.Status.UserInfo.Username != want {
		t.Fatalf("the token authenticates as %q, want %q", review.Status.UserInfo.Username, want)
	}
	return c
}

func hooks(t *testing.T, u *unstructured.Unstructured) []any {
	t.Helper()
	hs, found, err := unstructured.NestedSlice(u.Object, "webhooks")
	if err != nil || !found || len(hs) == 0 {
		t.Fatalf("%s %s: no webhooks (%v)", u.GetKind(), u.GetName(), err)
	}
	return hs
}

func setHooks(t *testing.T, u *unstructured.Unstructured, hs []any) {
	t.Helper()
	if err := unstructured.SetNestedSlice(u.Object, hs, "webhooks"); err != nil {
		t.Fatal(err)
	}
}

// setHookField sets one field of webhook i.
func setHookField(t *testing.T, u *unstructured.Unstructured, i int, field string, value any) {
	t.Helper()
	hs := hooks(t, u)
	hs[i].(map[string]any)[field] = value
	setHooks(t, u, hs)
}

// setCABundles sets the caBundle of every webhook to the PEM bundle (base64, as the API carries it).
func setCABundles(t *testing.T, u *unstructured.Unstructured, bundle string) {
	t.Helper()
	b64 := base64.StdEncoding.EncodeToString([]byte(bundle))
	hs := hooks(t, u)
	for _, h := range hs {
		h.(map[string]any)["clientConfig"].(map[string]any)["caBundle"] = b64
	}
	setHooks(t, u, hs)
}

func deepCopyMap(m map[string]any) map[string]any {
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}
