package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/webhooks/certs"
)

// helmInstallNamespace is the namespace TestHelmInstall installs the chart into.
const helmInstallNamespace = "hvpa-helm"

// helmCLI runs the pinned helm against the local control plane with a kubeconfig of a system:masters user, and
// its own cache, config and data folders.
type helmCLI struct {
	bin string
	env []string
}

func (h helmCLI) run(args ...string) (string, error) {
	cmd := exec.Command(h.bin, args...)
	cmd.Env = append(os.Environ(), h.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// TestHelmInstall installs the chart with `helm install` into the local control plane (kube-apiserver and etcd,
// started without the CRDs so that helm installs them from crds/), then checks with a client what the install
// created: the CRDs, the Deployments, the webhook Service, the ServiceAccounts, the ClusterRoleBindings of each
// component's ServiceAccount, and webhook configurations with the values' failurePolicy, timeouts and selectors
// and the caBundle (certificates.mode secret: the chart sets it; self-managed leaves it to the running webhook).
// `helm upgrade` with a changed timeout must change the configuration; `helm install` with a mistyped or foreign
// value must fail on the schema, naming the key, and install nothing.
//
// The local control plane has no kubelet and no controller manager: no ReplicaSet or pod ever appears, so
// nothing waits for pods (no --wait); TestChartRBAC and the e2e suite run the components themselves.
func TestHelmInstall(t *testing.T) {
	root, bin := helmAndRoot(t)
	chart := filepath.Join(root, "charts", "hvpa")
	start := time.Now()
	env, _, c, err := testenv.StartWithClient(func(env *envtest.Environment) error {
		env.CRDDirectoryPaths, env.ErrorIfCRDPathMissing = nil, false // helm installs them
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	t.Logf("local control plane started in %s", time.Since(start).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	helm := newHelmCLI(t, env, bin)

	// certificates.mode secret: a CA, and the TLS Secret it signed (pods would mount it; none runs here)
	ca, err := certs.NewCA("hvpa-test-ca", time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	crt, key, err := ca.Issue([]string{"hvpa-webhook." + helmInstallNamespace + ".svc"}, nil, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	caPEM := certs.EncodeCerts([]*x509.Certificate{ca.Cert})
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: helmInstallNamespace}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: helmInstallNamespace, Name: "hvpa-webhook-tls"}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	values := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(values, fmt.Appendf(nil, `admissionController:
  certificates:
    mode: secret
    secret: {name: hvpa-webhook-tls, caBundle: %s}
  webhooks:
    pods:
      timeoutSeconds: 4
      objectSelector: {matchLabels: {hvpa.dev/sized: "true"}}
    validation:
      failurePolicy: Fail
      timeoutSeconds: 7
      namespaceSelector: {matchLabels: {team: autoscaling}}
`, base64.StdEncoding.EncodeToString(caPEM)), 0o600); err != nil {
		t.Fatal(err)
	}

	step := time.Now()
	out, err := helm.run("install", "hvpa", chart, "--namespace", helmInstallNamespace, "-f", values)
	if err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	t.Logf("helm install took %s", time.Since(step).Round(time.Millisecond))
	if want := "failurePolicy: pods Ignore, validation Fail"; !strings.Contains(out, want) {
		t.Errorf("helm install's notes do not say %q:\n%s", want, out)
	}
	checkInstalledCRDs(ctx, t, c, filepath.Join(chart, "crds"))
	deps := checkInstalledDeployments(ctx, t, c)
	checkInstalledRBAC(ctx, t, c, deps)
	checkInstalledWebhooks(ctx, t, c, caPEM, 4, 7)

	step = time.Now()
	if out, err := helm.run("upgrade", "hvpa", chart, "--namespace", helmInstallNamespace, "-f", values,
		"--set", "admissionController.webhooks.validation.timeoutSeconds=12"); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
	t.Logf("helm upgrade took %s", time.Since(step).Round(time.Millisecond))
	checkInstalledWebhooks(ctx, t, c, caPEM, 4, 12)

	for _, tc := range []struct{ set, key string }{
		{"admision.replicas=3", "'admision'"},                     // a typo
		{"admissionController.certGen.enabled=true", "'certGen'"}, // upstream's chart's key
	} {
		out, err := helm.run("install", "typo", chart, "--namespace", helmInstallNamespace, "-f", values, "--set", tc.set)
		if err == nil || !strings.Contains(out, "values don't meet the specifications of the schema") || !strings.Contains(out, tc.key+" not allowed") {
			t.Errorf("helm install --set %s: %v, want a schema error naming %s:\n%s", tc.set, err, tc.key, out)
		}
	}
	if out, err := helm.run("list", "--namespace", helmInstallNamespace, "--all", "--short"); err != nil || !slices.Equal(strings.Fields(out), []string{"hvpa"}) {
		t.Errorf("helm list: %v, want only the release hvpa (a refused install leaves nothing):\n%s", err, out)
	}
	t.Logf("TestHelmInstall took %s", time.Since(start).Round(time.Millisecond))
}

func newHelmCLI(t *testing.T, env *envtest.Environment, bin string) helmCLI {
	t.Helper()
	user, err := env.AddUser(envtest.User{Name: "helm", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return helmCLI{bin: bin, env: []string{"KUBECONFIG=" + kubeconfig, "HELM_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"HELM_CONFIG_HOME=" + filepath.Join(dir, "config"), "HELM_DATA_HOME=" + filepath.Join(dir, "data")}}
}

// checkInstalledCRDs: every CRD of crds/ is installed and established.
func checkInstalledCRDs(ctx context.Context, t *testing.T, c client.Client, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s: %v", dir, err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var file metav1.PartialObjectMetadata
		if err := yaml.Unmarshal(raw, &file); err != nil || file.Name == "" {
			t.Fatalf("%s: no CRD name (%v)", f, err)
		}
		name := file.Name
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err != nil {
			t.Errorf("CRD %s (%s): %v", name, filepath.Base(f), err)
			continue
		}
		established := slices.ContainsFunc(crd.Status.Conditions, func(c apiextensionsv1.CustomResourceDefinitionCondition) bool {
			return c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue
		})
		if !established {
			t.Errorf("CRD %s is not established: %+v", name, crd.Status.Conditions)
		}
	}
}

// checkInstalledDeployments: the three Deployments of the default components (the Hvpa controller runs in the
// recommender's), each with its ServiceAccount, the admission webhook's with two replicas spread across nodes and
// zones, and the webhook Service selecting its pods. It returns the Deployments.
func checkInstalledDeployments(ctx context.Context, t *testing.T, c client.Client) []appsv1.Deployment {
	t.Helper()
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, client.InNamespace(helmInstallNamespace), client.MatchingLabels{"app.kubernetes.io/instance": "hvpa"}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range list.Items {
		names = append(names, d.Name)
		sa := d.Spec.Template.Spec.ServiceAccountName
		if err := c.Get(ctx, client.ObjectKey{Namespace: helmInstallNamespace, Name: sa}, &corev1.ServiceAccount{}); err != nil {
			t.Errorf("Deployment %s runs as ServiceAccount %q: %v", d.Name, sa, err)
		}
	}
	slices.Sort(names)
	if want := []string{"hvpa-admission", "hvpa-recommender", "hvpa-updater"}; !slices.Equal(names, want) {
		t.Fatalf("Deployments %v, want %v", names, want)
	}
	adm := list.Items[slices.IndexFunc(list.Items, func(d appsv1.Deployment) bool { return d.Name == "hvpa-admission" })]
	spec := adm.Spec.Template.Spec
	if ptr.Deref(adm.Spec.Replicas, 0) != 2 || spec.Affinity == nil || spec.Affinity.PodAntiAffinity == nil ||
		len(spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 || len(spec.TopologySpreadConstraints) != 1 {
		t.Errorf("Deployment hvpa-admission: %d replicas, affinity %+v, topologySpreadConstraints %+v: want 2 spread across nodes and zones",
			ptr.Deref(adm.Spec.Replicas, 0), spec.Affinity, spec.TopologySpreadConstraints)
	}
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: helmInstallNamespace, Name: "hvpa-webhook"}, svc); err != nil {
		t.Fatalf("the webhook Service: %v", err)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 443 || svc.Spec.Ports[0].TargetPort.StrVal != "webhook" {
		t.Errorf("Service hvpa-webhook: ports %+v, want 443 to the container port webhook", svc.Spec.Ports)
	}
	for k, v := range svc.Spec.Selector {
		if adm.Spec.Template.Labels[k] != v {
			t.Errorf("Service hvpa-webhook selects %v, which the admission pods (%v) do not match", svc.Spec.Selector, adm.Spec.Template.Labels)
		}
	}
	return list.Items
}

// checkInstalledRBAC: each Deployment's ServiceAccount is bound by the ClusterRoleBinding named after the
// Deployment to the ClusterRole of that name, which exists and has rules; no ClusterRoleBinding of the release
// binds anything but a ServiceAccount of the release namespace that exists.
func checkInstalledRBAC(ctx context.Context, t *testing.T, c client.Client, deps []appsv1.Deployment) {
	t.Helper()
	for _, d := range deps {
		crb := &rbacv1.ClusterRoleBinding{}
		if err := c.Get(ctx, client.ObjectKey{Name: d.Name}, crb); err != nil {
			t.Errorf("Deployment %s: its ClusterRoleBinding: %v", d.Name, err)
			continue
		}
		want := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: d.Spec.Template.Spec.ServiceAccountName, Namespace: helmInstallNamespace}
		if !slices.Contains(crb.Subjects, want) || crb.RoleRef.Kind != "ClusterRole" || crb.RoleRef.Name != d.Name {
			t.Errorf("ClusterRoleBinding %s binds %+v to %+v, want ServiceAccount %s to ClusterRole %s", crb.Name, crb.Subjects, crb.RoleRef, want.Name, d.Name)
		}
		role := &rbacv1.ClusterRole{}
		if err := c.Get(ctx, client.ObjectKey{Name: crb.RoleRef.Name}, role); err != nil || len(role.Rules) == 0 {
			t.Errorf("ClusterRole %s: %v, %d rules", crb.RoleRef.Name, err, len(role.Rules))
		}
	}
	var all rbacv1.ClusterRoleBindingList
	if err := c.List(ctx, &all, client.MatchingLabels{"app.kubernetes.io/instance": "hvpa"}); err != nil {
		t.Fatal(err)
	}
	if len(all.Items) < len(deps) {
		t.Errorf("%d ClusterRoleBindings of the release for %d Deployments", len(all.Items), len(deps))
	}
	for _, crb := range all.Items {
		for _, s := range crb.Subjects {
			err := c.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, &corev1.ServiceAccount{})
			if s.Kind != rbacv1.ServiceAccountKind || s.Namespace != helmInstallNamespace || err != nil {
				t.Errorf("ClusterRoleBinding %s: subject %+v, want an existing ServiceAccount of %s (%v)", crb.Name, s, helmInstallNamespace, err)
			}
		}
	}
}

// checkInstalledWebhooks: both configurations exist, every webhook calls the webhook Service with the CA of the
// values as caBundle, the pod webhook with failurePolicy Ignore (the default), the given timeout, the values'
// objectSelector and the generated namespace exclusion, the validating ones with Fail, their timeout and the
// values' namespaceSelector.
func checkInstalledWebhooks(ctx context.Context, t *testing.T, c client.Client, caPEM []byte, podTimeout, validationTimeout int32) {
	t.Helper()
	m := &admissionregistrationv1.MutatingWebhookConfiguration{}
	v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: "hvpa"}, m); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "hvpa"}, v); err != nil {
		t.Fatal(err)
	}
	type hook struct {
		name     string
		cc       admissionregistrationv1.WebhookClientConfig
		policy   admissionregistrationv1.FailurePolicyType
		timeout  int32
		ns, objs *metav1.LabelSelector
	}
	var hooks []hook
	for _, w := range m.Webhooks {
		hooks = append(hooks, hook{w.Name, w.ClientConfig, ptr.Deref(w.FailurePolicy, ""), ptr.Deref(w.TimeoutSeconds, 0), w.NamespaceSelector, w.ObjectSelector})
	}
	for _, w := range v.Webhooks {
		hooks = append(hooks, hook{w.Name, w.ClientConfig, ptr.Deref(w.FailurePolicy, ""), ptr.Deref(w.TimeoutSeconds, 0), w.NamespaceSelector, w.ObjectSelector})
	}
	if len(m.Webhooks) != 1 || len(v.Webhooks) != 2 {
		t.Fatalf("%d mutating and %d validating webhooks, want 1 and 2", len(m.Webhooks), len(v.Webhooks))
	}
	excluded := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: corev1.LabelMetadataName,
		Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", helmInstallNamespace}}}}
	for i, h := range hooks {
		want := hook{h.name, h.cc, admissionregistrationv1.Fail, validationTimeout, &metav1.LabelSelector{MatchLabels: map[string]string{"team": "autoscaling"}}, &metav1.LabelSelector{}}
		if i == 0 {
			want = hook{h.name, h.cc, admissionregistrationv1.Ignore, podTimeout, excluded, &metav1.LabelSelector{MatchLabels: map[string]string{"hvpa.dev/sized": "true"}}}
		}
		if d := cmp.Diff(want, h, cmp.AllowUnexported(hook{})); d != "" {
			t.Errorf("webhook %s (-want +installed):\n%s", h.name, d)
		}
		if s := h.cc.Service; s == nil || s.Name != "hvpa-webhook" || s.Namespace != helmInstallNamespace || !bytes.Equal(h.cc.CABundle, caPEM) {
			t.Errorf("webhook %s: clientConfig service %+v, caBundle %d bytes: want the Service %s/hvpa-webhook and the values' CA", h.name, s, len(h.cc.CABundle), helmInstallNamespace)
		}
	}
}
