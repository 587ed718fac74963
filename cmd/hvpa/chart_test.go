package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/cmd/hvpa/app"
	"github.com/hvpa-dev/hvpa/test/playedkubelet"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/webhooks"
)

// chartNamespace is the release namespace the chart is rendered for.
const chartNamespace = "hvpa-system"

// renderedObject is one document of `helm template`: the object and its text (with the chart's comments).
type renderedObject struct {
	obj  *unstructured.Unstructured
	text string
}

func (r renderedObject) String() string {
	if r.obj.GetNamespace() == "" {
		return r.obj.GetKind() + " " + r.obj.GetName()
	}
	return r.obj.GetKind() + " " + r.obj.GetNamespace() + "/" + r.obj.GetName()
}

// TestChart renders charts/hvpa with helm (default values and ci/nondefault-values.yaml) and checks it against
// the product: every Deployment's args parse with `hvpa run`'s flags, the webhook configurations equal
// webhooks.Configurations but for clientConfig, the names the components are given (webhook configurations,
// Service, Secret, Leases, ServiceAccounts) are the ones the chart's other objects carry, the RBAC is free of
// wildcards and cluster-admin with a comment on every rule, and the local API server accepts every object in a
// server-side dry run. helm lint runs on both value sets.
func TestChart(t *testing.T) {
	root, helm := helmAndRoot(t)
	chart := filepath.Join(root, "charts", "hvpa")
	valueSets := []struct {
		name       string
		args       []string
		dashboards bool // and NetworkPolicies
		// webhooks turns webhooks.Configurations into what the values ask for (admissionController.webhooks)
		webhooks func(*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration)
		spread   admissionSpread
		anyScale bool // rbac.readScaleOfAnyKind
	}{
		{"default values", nil, false, nil, admissionSpread{antiAffinity: "soft", zones: true}, true},
		{"ci/nondefault-values.yaml", []string{"-f", filepath.Join(chart, "ci", "nondefault-values.yaml")}, true, nondefaultWebhooks, admissionSpread{antiAffinity: "hard"}, false},
	}

	for _, vs := range valueSets {
		out, err := runHelm(helm, append([]string{"lint", chart, "--namespace", chartNamespace}, vs.args...)...)
		if err != nil || strings.Contains(out, "[ERROR]") {
			t.Fatalf("helm lint with %s: %v\n%s", vs.name, err, out)
		}
	}

	env, _, c, err := testenv.StartWithClient(withCRDFiles(ecosystemCRDs(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNamespace}}); err != nil {
		t.Fatal(err)
	}

	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			objs := renderChart(t, helm, append([]string{chart, "--include-crds"}, vs.args...)...)
			deps := deployments(t, objs)
			t.Run("deployments run hvpa with flags it knows", func(t *testing.T) { checkDeployments(t, deps) })
			t.Run("webhook configurations are webhooks.Configurations with the release's Service and the values' settings", func(t *testing.T) { checkWebhooks(t, objs, deps, vs.webhooks) })
			t.Run("the webhook's replicas spread across nodes and zones", func(t *testing.T) { checkAdmissionSpread(t, deps, vs.spread) })
			t.Run("RBAC has no wildcards, no cluster-admin, a comment on every rule, the generated rules", func(t *testing.T) { checkRBAC(t, objs, deps) })
			t.Run("every role that reads a target's scale reads the scale of any kind, as the values say", func(t *testing.T) { checkScaleOfAnyKind(t, objs, vs.anyScale) })
			t.Run("a dashboard ConfigMap per dashboard file", func(t *testing.T) { checkDashboards(t, chart, objs, vs.dashboards) })
			t.Run("a NetworkPolicy per Deployment admits only the ports it serves", func(t *testing.T) { checkNetworkPolicies(t, objs, deps, vs.dashboards) })
			t.Run("the API server accepts every object (server-side dry run)", func(t *testing.T) { dryRun(ctx, t, c, objs) })
		})
	}
}

// TestChartLongReleaseName: with the longest release name Helm allows (53), every object's name is within
// its kind's limit and no two objects of a kind share a name (found in review: the metrics Services were 67
// long and the four dashboards' ConfigMaps, truncated to 63, had one name).
func TestChartLongReleaseName(t *testing.T) {
	root, helm := helmAndRoot(t)
	chart := filepath.Join(root, "charts", "hvpa")
	release := strings.Repeat("r", 53)
	for _, args := range [][]string{nil, {"-f", filepath.Join(chart, "ci", "nondefault-values.yaml")}} {
		out, err := runHelm(helm, append([]string{"template", release, chart, "--namespace", chartNamespace}, args...)...)
		if err != nil {
			t.Fatalf("helm template %v: %v\n%s", args, err, out)
		}
		objs, err := decodeRendered(out)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, o := range objs {
			kind, name := o.obj.GetKind(), o.obj.GetName()
			limit := 253
			switch kind {
			case "Service", "Namespace", "ServiceAccount":
				limit = 63 // DNS labels
			}
			if len(name) > limit {
				t.Errorf("%v: %s %s is %d long, above %d", args, kind, name, len(name), limit)
			}
			if key := kind + "/" + o.obj.GetNamespace() + "/" + name; seen[key] {
				t.Errorf("%v: two objects %s", args, key)
			} else {
				seen[key] = true
			}
		}
	}
}

// helmAndRoot skips under -short; otherwise it returns the module root and the pinned helm `make helm` built.
func helmAndRoot(t *testing.T) (root, helm string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs helm and the local control plane")
	}
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	helm = filepath.Join(root, ".cache", "tools", "bin", "helm")
	if _, err := os.Stat(helm); err != nil {
		t.Fatalf("helm not found at %s: run `make helm` (it builds helm from its Go module)", helm)
	}
	return root, helm
}

// renderChart runs `helm template hvpa CHART [ARGS]` in the release namespace and decodes the objects.
func renderChart(t *testing.T, helm string, chartAndArgs ...string) []renderedObject {
	t.Helper()
	out, err := runHelm(helm, append([]string{"template", "hvpa", "--namespace", chartNamespace}, chartAndArgs...)...)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	objs, err := decodeRendered(out)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func runHelm(helm string, args ...string) (string, error) {
	cmd := exec.Command(helm, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	if strings.Contains(stderr.String(), "warning") {
		return stdout.String(), fmt.Errorf("helm %s warned: %s", args[0], stderr.String())
	}
	return stdout.String(), nil
}

// decodeRendered splits helm's output into objects, keeping each document's text.
func decodeRendered(out string) ([]renderedObject, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(out)))
	var objs []renderedObject
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return nil, fmt.Errorf("%w\n%s", err, doc)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, renderedObject{obj: &unstructured.Unstructured{Object: m}, text: string(doc)})
	}
}

func byKind(objs []renderedObject, kind string) []renderedObject {
	var out []renderedObject
	for _, o := range objs {
		if o.obj.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

func convert[T any](t *testing.T, o renderedObject) *T {
	t.Helper()
	var x T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.obj.Object, &x, true); err != nil {
		t.Fatalf("%s: %v", o, err)
	}
	return &x
}

// deployed is a Deployment of the chart with its container's args parsed by `hvpa run`'s flag set.
type deployed struct {
	dep        *appsv1.Deployment
	args       []string
	components []string
	flag       func(name string) string
}

func (d deployed) has(component string) bool { return slices.Contains(d.components, component) }

func deployments(t *testing.T, objs []renderedObject) []deployed {
	var out []deployed
	for _, o := range byKind(objs, "Deployment") {
		dep := convert[appsv1.Deployment](t, o)
		if n := len(dep.Spec.Template.Spec.Containers); n != 1 {
			t.Fatalf("Deployment %s: %d containers, want 1", dep.Name, n)
		}
		ct := dep.Spec.Template.Spec.Containers[0]
		d := deployed{dep: dep, args: ct.Args}
		if len(ct.Command) > 0 || len(ct.Args) == 0 || ct.Args[0] != "run" {
			t.Fatalf("Deployment %s: command %q args %q: want the image's hvpa entrypoint with `run` first", dep.Name, ct.Command, ct.Args)
		}
		cmd := newRunCommand()
		if err := cmd.Flags().Parse(ct.Args[1:]); err != nil {
			t.Fatalf("Deployment %s: `hvpa run` refuses its args: %v\nargs: %q", dep.Name, err, ct.Args)
		}
		if rest := cmd.Flags().Args(); len(rest) > 0 {
			t.Fatalf("Deployment %s: `hvpa run` takes no positional arguments, got %q", dep.Name, rest)
		}
		d.components, _ = cmd.Flags().GetStringSlice("components")
		if err := app.CheckComponents(d.components); err != nil {
			t.Fatalf("Deployment %s: %v", dep.Name, err)
		}
		if !cmd.Flags().Changed("components") {
			t.Fatalf("Deployment %s: --components is not set (the default runs every component)", dep.Name)
		}
		flags := cmd.Flags()
		d.flag = func(name string) string { return flags.Lookup(name).Value.String() }
		out = append(out, d)
	}
	if len(out) == 0 {
		t.Fatal("no Deployment rendered")
	}
	return out
}

func checkDeployments(t *testing.T, deps []deployed) {
	seen := map[string]string{}
	leases := map[string]string{}
	for _, d := range deps {
		for _, comp := range d.components {
			if other, ok := seen[comp]; ok {
				t.Errorf("component %s runs in Deployments %s and %s", comp, other, d.dep.Name)
			}
			seen[comp] = d.dep.Name
		}
		spec := d.dep.Spec.Template.Spec
		ct := spec.Containers[0]
		if d.has(app.Admission) {
			if len(d.components) != 1 || d.flag("leader-elect") != "false" {
				t.Errorf("Deployment %s: admission runs alone without leader election (every replica serves), got --components=%s --leader-elect=%s",
					d.dep.Name, strings.Join(d.components, ","), d.flag("leader-elect"))
			}
		} else if d.flag("leader-elect") == "true" {
			id := d.flag("leader-election-id")
			if other, ok := leases[id]; ok {
				t.Errorf("Deployments %s and %s elect a leader on the same Lease %s", other, d.dep.Name, id)
			}
			leases[id] = d.dep.Name
		}
		var podNamespace bool
		for _, e := range ct.Env {
			podNamespace = podNamespace || (e.Name == "POD_NAMESPACE" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace")
		}
		if !podNamespace {
			t.Errorf("Deployment %s: no POD_NAMESPACE from the downward API", d.dep.Name)
		}
		ports := map[string]int32{}
		for _, p := range ct.Ports {
			ports[p.Name] = p.ContainerPort
		}
		if ports["metrics"] == 0 || !strings.HasSuffix(d.flag("metrics-bind-address"), fmt.Sprintf(":%d", ports["metrics"])) ||
			!strings.HasSuffix(d.flag("health-probe-bind-address"), fmt.Sprintf(":%d", probePort(t, d, ct))) {
			t.Errorf("Deployment %s: ports %v, --metrics-bind-address=%s --health-probe-bind-address=%s: want metrics on the metrics port and the probes' port",
				d.dep.Name, ports, d.flag("metrics-bind-address"), d.flag("health-probe-bind-address"))
		}
		if spec.HostNetwork && spec.DNSPolicy != corev1.DNSClusterFirstWithHostNet {
			t.Errorf("Deployment %s: hostNetwork with dnsPolicy %q, want ClusterFirstWithHostNet (Service names resolve)", d.dep.Name, spec.DNSPolicy)
		}
		if ru := d.dep.Spec.Strategy.RollingUpdate; spec.HostNetwork && (ru == nil || ru.MaxSurge == nil || ru.MaxSurge.IntValue() != 0) {
			t.Errorf("Deployment %s: hostNetwork with rollingUpdate %+v, want maxSurge 0 (a surge pod's host ports are taken on every node with a replica)", d.dep.Name, ru)
		}
		var memLimit bool
		for _, e := range ct.Env {
			memLimit = memLimit || (e.Name == "GOMEMLIMIT" && e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil && e.ValueFrom.ResourceFieldRef.Resource == "limits.memory")
		}
		if !memLimit {
			t.Errorf("Deployment %s: no GOMEMLIMIT from the container's memory limit", d.dep.Name)
		}
		if ct.LivenessProbe == nil || ct.LivenessProbe.HTTPGet == nil || ct.LivenessProbe.HTTPGet.Path != "/healthz" ||
			ct.ReadinessProbe == nil || ct.ReadinessProbe.HTTPGet == nil || ct.ReadinessProbe.HTTPGet.Path != "/readyz" {
			t.Errorf("Deployment %s: want a liveness probe on /healthz and a readiness probe on /readyz", d.dep.Name)
		}
		sc := ct.SecurityContext
		if sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
			sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
			sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("Deployment %s: container securityContext %+v: want runAsNonRoot, readOnlyRootFilesystem, no privilege escalation, drop ALL, seccomp RuntimeDefault", d.dep.Name, sc)
		}
		if d.has(app.Admission) {
			if ports["webhook"] != int32(mustAtoi(t, d.flag("webhook-port"))) {
				t.Errorf("Deployment %s: containerPort webhook %d, --webhook-port=%s", d.dep.Name, ports["webhook"], d.flag("webhook-port"))
			}
			if d.flag("webhook-namespace") != chartNamespace {
				t.Errorf("Deployment %s: --webhook-namespace=%s, want the release namespace %s", d.dep.Name, d.flag("webhook-namespace"), chartNamespace)
			}
			var mounted bool
			for _, m := range ct.VolumeMounts {
				mounted = mounted || m.MountPath == d.flag("cert-dir")
			}
			if !mounted {
				t.Errorf("Deployment %s: nothing is mounted at --cert-dir=%s (read-only root filesystem)", d.dep.Name, d.flag("cert-dir"))
			}
		}
	}
	if u, a := findComponent(deps, app.Updater), findComponent(deps, app.Admission); u != nil && a != nil && u.flag("admission-lease") != a.flag("admission-lease") {
		t.Errorf("the updater checks --admission-lease=%s, the admission webhook renews --admission-lease=%s", u.flag("admission-lease"), a.flag("admission-lease"))
	}
}

func probePort(t *testing.T, d deployed, ct corev1.Container) int32 {
	if ct.ReadinessProbe == nil || ct.ReadinessProbe.HTTPGet == nil {
		return 0
	}
	p := ct.ReadinessProbe.HTTPGet.Port
	if p.StrVal == "" {
		return p.IntVal
	}
	for _, cp := range ct.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	t.Errorf("Deployment %s: the readiness probe's port %s is not a container port", d.dep.Name, p.StrVal)
	return 0
}

func mustAtoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

func findComponent(deps []deployed, component string) *deployed {
	for i := range deps {
		if deps[i].has(component) {
			return &deps[i]
		}
	}
	return nil
}

// checkWebhooks compares the chart's webhook configurations with webhooks.Configurations changed by adjust (the
// values' admissionController.webhooks; nil: none) in everything but clientConfig, whose paths are compared on
// their own, and checks that they point at the chart's webhook Service and carry what the certificate mode needs.
func checkWebhooks(t *testing.T, objs []renderedObject, deps []deployed,
	adjust func(*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration)) {
	adm := findComponent(deps, app.Admission)
	mutating, validating := byKind(objs, "MutatingWebhookConfiguration"), byKind(objs, "ValidatingWebhookConfiguration")
	if adm == nil {
		if len(mutating)+len(validating) > 0 {
			t.Error("webhook configurations without the admission component")
		}
		return
	}
	if len(mutating) != 1 || len(validating) != 1 {
		t.Fatalf("%d MutatingWebhookConfigurations and %d ValidatingWebhookConfigurations, want one each", len(mutating), len(validating))
	}
	name := adm.flag("webhook-config-name")
	paths := map[string]string{} // webhook name -> path
	wantM, wantV := webhooks.Configurations(name, func(path string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: &path}
	}, webhooks.DefaultTimeoutSeconds, append(slices.Clone(webhooks.DefaultExcludedNamespaces), adm.flag("webhook-namespace")))
	for _, w := range wantM.Webhooks {
		paths[w.Name] = *w.ClientConfig.URL
	}
	for _, w := range wantV.Webhooks {
		paths[w.Name] = *w.ClientConfig.URL
	}
	if adjust != nil {
		adjust(wantM, wantV)
	}
	gotM := convert[admissionregistrationv1.MutatingWebhookConfiguration](t, mutating[0])
	gotV := convert[admissionregistrationv1.ValidatingWebhookConfiguration](t, validating[0])

	svc := webhookService(t, objs, adm)
	mode := adm.flag("cert-mode")
	for i := range gotM.Webhooks {
		checkClientConfig(t, gotM.Webhooks[i].Name, gotM.Webhooks[i].ClientConfig, paths, svc, mode)
		gotM.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{}
	}
	for i := range gotV.Webhooks {
		checkClientConfig(t, gotV.Webhooks[i].Name, gotV.Webhooks[i].ClientConfig, paths, svc, mode)
		gotV.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{}
	}
	for i := range wantM.Webhooks {
		wantM.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{}
	}
	for i := range wantV.Webhooks {
		wantV.Webhooks[i].ClientConfig = admissionregistrationv1.WebhookClientConfig{}
	}
	if gotM.Name != name || gotV.Name != name {
		t.Errorf("webhook configurations %s and %s; the admission component keeps the caBundle of --webhook-config-name=%s", gotM.Name, gotV.Name, name)
	}
	if d := cmp.Diff(wantM.Webhooks, gotM.Webhooks); d != "" {
		t.Errorf("MutatingWebhookConfiguration differs from webhooks.Configurations (-product +chart):\n%s", d)
	}
	if d := cmp.Diff(wantV.Webhooks, gotV.Webhooks); d != "" {
		t.Errorf("ValidatingWebhookConfiguration differs from webhooks.Configurations (-product +chart):\n%s", d)
	}
	for _, obj := range []metav1.Object{gotM, gotV} {
		inject := obj.GetAnnotations()["cert-manager.io/inject-ca-from"]
		switch {
		case mode == "external" && len(byKind(objs, "Certificate")) > 0:
			cert := byKind(objs, "Certificate")[0].obj
			if inject != cert.GetNamespace()+"/"+cert.GetName() {
				t.Errorf("%s: cert-manager.io/inject-ca-from %q, want the Certificate %s/%s", obj.GetName(), inject, cert.GetNamespace(), cert.GetName())
			}
		case inject != "":
			t.Errorf("%s: cert-manager.io/inject-ca-from %q without a cert-manager Certificate", obj.GetName(), inject)
		}
	}
}

func webhookService(t *testing.T, objs []renderedObject, adm *deployed) *corev1.Service {
	name := adm.flag("webhook-service-name")
	for _, o := range byKind(objs, "Service") {
		if o.obj.GetName() != name {
			continue
		}
		svc := convert[corev1.Service](t, o)
		sel := svc.Spec.Selector
		for k, v := range sel {
			if adm.dep.Spec.Template.Labels[k] != v {
				t.Errorf("Service %s selects %v, which the admission pods (%v) do not match", name, sel, adm.dep.Spec.Template.Labels)
			}
		}
		return svc
	}
	t.Fatalf("no Service %s (--webhook-service-name of the admission component)", name)
	return nil
}

func checkClientConfig(t *testing.T, webhook string, cc admissionregistrationv1.WebhookClientConfig, paths map[string]string, svc *corev1.Service, mode string) {
	s := cc.Service
	if s == nil || cc.URL != nil {
		t.Errorf("webhook %s: clientConfig %+v, want the webhook Service", webhook, cc)
		return
	}
	if s.Name != svc.Name || s.Namespace != svc.Namespace || s.Path == nil || *s.Path != paths[webhook] {
		t.Errorf("webhook %s: clientConfig.service %s/%s path %v, want %s/%s path %s", webhook, s.Namespace, s.Name, ptrString(s.Path), svc.Namespace, svc.Name, paths[webhook])
	}
	port := int32(443)
	if s.Port != nil {
		port = *s.Port
	}
	var found bool
	for _, p := range svc.Spec.Ports {
		found = found || (p.Port == port && p.TargetPort.StrVal == "webhook")
	}
	if !found {
		t.Errorf("webhook %s: Service %s has no port %d to the container port named webhook", webhook, svc.Name, port)
	}
	if mode == "self-managed" && len(cc.CABundle) > 0 {
		t.Errorf("webhook %s: caBundle set with self-managed certificates (the running webhook sets it)", webhook)
	}
}

func ptrString(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// isScaleOfAnyKind is the one wildcard rule the chart may render (rbac.readScaleOfAnyKind): get of the scale
// subresource of any kind, as upstream VPA's system:vpa-target-reader; any other verb, resource or name in it
// makes it a wildcard rule like any.
func isScaleOfAnyKind(rule rbacv1.PolicyRule) bool {
	return slices.Equal(rule.APIGroups, []string{"*"}) && slices.Equal(rule.Resources, []string{"*/scale"}) && slices.Equal(rule.Verbs, []string{"get"}) &&
		len(rule.ResourceNames) == 0 && len(rule.NonResourceURLs) == 0
}

// checkScaleOfAnyKind: with rbac.readScaleOfAnyKind every component's ClusterRole (bound to a ServiceAccount:
// each resolves targets or pods' owners) gets the scale of any kind; without it, and in the users' roles, none
// does.
func checkScaleOfAnyKind(t *testing.T, objs []renderedObject, want bool) {
	components := map[string]bool{}
	for _, o := range byKind(objs, "ClusterRoleBinding") {
		b := convert[rbacv1.ClusterRoleBinding](t, o)
		for _, sub := range b.Subjects {
			components[b.RoleRef.Name] = components[b.RoleRef.Name] || sub.Kind == rbacv1.ServiceAccountKind
		}
	}
	n := 0
	for _, o := range byKind(objs, "ClusterRole") {
		r := convert[rbacv1.ClusterRole](t, o)
		any := slices.ContainsFunc(r.Rules, isScaleOfAnyKind)
		if components[r.Name] {
			n++
		}
		if any != (want && components[r.Name]) {
			t.Errorf("%s: scale of any kind %v, want %v (a component's role: %v)", o, any, want && components[r.Name], components[r.Name])
		}
	}
	if n < 3 {
		t.Errorf("%d components' ClusterRoles, want the recommender's, the controller's and the webhook's at least", n)
	}
}

// rbacRuleLine starts a rule in a Role or ClusterRole as the chart writes them.
var rbacRuleLine = regexp.MustCompile(`^\s*- apiGroups:`)

// checkRBAC: no wildcard anywhere, no binding to a role the chart does not render (cluster-admin or any other
// built-in role), Secrets and webhook configurations only by name (create excepted), a YAML comment before every
// rule, every Deployment's ServiceAccount rendered and bound, and allowed to use the objects its flags name.
func checkRBAC(t *testing.T, objs []renderedObject, deps []deployed) {
	roles := map[string][]rbacv1.PolicyRule{}
	for _, kind := range []string{"ClusterRole", "Role"} {
		for _, o := range byKind(objs, kind) {
			r := convert[rbacv1.ClusterRole](t, o) // a Role has the same rules
			roles[kind+"/"+o.obj.GetNamespace()+"/"+o.obj.GetName()] = r.Rules
			if r.AggregationRule != nil {
				t.Errorf("%s: aggregationRule (it would gather permissions the chart does not list)", o)
			}
			if len(r.Rules) == 0 {
				t.Errorf("%s: no rules", o)
			}
			for _, rule := range r.Rules {
				if isScaleOfAnyKind(rule) {
					continue // rbac.readScaleOfAnyKind: get only, of scale subresources only
				}
				for _, field := range [][]string{rule.Verbs, rule.APIGroups, rule.Resources, rule.ResourceNames, rule.NonResourceURLs} {
					for _, v := range field {
						if strings.Contains(v, "*") {
							t.Errorf("%s: wildcard %q in rule %+v", o, v, rule)
						}
					}
				}
				for _, res := range rule.Resources {
					sensitive := res == "secrets" || strings.HasSuffix(res, "webhookconfigurations")
					if sensitive && len(rule.ResourceNames) == 0 && !slices.Equal(rule.Verbs, []string{"create"}) {
						t.Errorf("%s: %v on %s for any name (only create cannot be restricted by resourceNames)", o, rule.Verbs, res)
					}
				}
			}
			lines := strings.Split(o.text, "\n")
			for i, l := range lines {
				if !rbacRuleLine.MatchString(l) {
					continue
				}
				if i == 0 || !strings.HasPrefix(strings.TrimSpace(lines[i-1]), "#") {
					t.Errorf("%s: the rule at %q has no comment saying what its verbs are for", o, strings.TrimSpace(l))
				}
			}
		}
	}
	checkGeneratedRules(t, roles, deps)
	bound := map[string]bool{}
	granted := map[string][]grant{} // ServiceAccount -> rules and where they apply
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		for _, o := range byKind(objs, kind) {
			b := convert[rbacv1.RoleBinding](t, o) // a ClusterRoleBinding has the same fields
			ref := b.RoleRef.Kind + "/"
			if b.RoleRef.Kind == "Role" {
				ref += o.obj.GetNamespace()
			}
			ref += "/" + b.RoleRef.Name
			rules, ok := roles[ref]
			if b.RoleRef.Name == "cluster-admin" || !ok {
				t.Errorf("%s binds %s, which the chart does not render", o, ref)
			}
			for _, s := range b.Subjects {
				if s.Kind != rbacv1.ServiceAccountKind || s.Namespace != chartNamespace {
					t.Errorf("%s: subject %+v, want a ServiceAccount of the release namespace", o, s)
				}
				bound[s.Name] = true
				for _, r := range rules {
					granted[s.Name] = append(granted[s.Name], grant{rule: r, namespace: o.obj.GetNamespace()})
				}
			}
		}
	}
	accounts := map[string]bool{}
	for _, o := range byKind(objs, "ServiceAccount") {
		accounts[o.obj.GetName()] = true
	}
	for _, d := range deps {
		sa := d.dep.Spec.Template.Spec.ServiceAccountName
		if !accounts[sa] || !bound[sa] {
			t.Errorf("Deployment %s runs as ServiceAccount %q: rendered %t, bound %t", d.dep.Name, sa, accounts[sa], bound[sa])
		}
		// the objects the flags name: the component must be allowed exactly those
		type want struct{ group, resource, namespace, name, verb string }
		var wants []want
		lease := func(flag string) (string, string) {
			ns, name, ok := strings.Cut(d.flag(flag), "/")
			if !ok {
				return chartNamespace, d.flag(flag)
			}
			return ns, name
		}
		if d.flag("leader-elect") == "true" {
			ns := d.flag("leader-election-namespace")
			for _, v := range []string{"get", "update", "create"} {
				wants = append(wants, want{"coordination.k8s.io", "leases", ns, d.flag("leader-election-id"), v})
			}
		}
		if d.has(app.Admission) {
			ns, name := lease("admission-lease")
			for _, v := range []string{"get", "update", "create"} {
				wants = append(wants, want{"coordination.k8s.io", "leases", ns, name, v})
			}
			if d.flag("cert-mode") == "self-managed" {
				for _, v := range []string{"get", "update", "create"} {
					wants = append(wants, want{"", "secrets", d.flag("webhook-namespace"), d.flag("webhook-secret-name"), v})
				}
				for _, v := range []string{"get", "update"} {
					for _, r := range []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"} {
						wants = append(wants, want{"admissionregistration.k8s.io", r, "", d.flag("webhook-config-name"), v})
					}
				}
			}
		}
		if d.has(app.Updater) {
			ns, name := lease("admission-lease")
			wants = append(wants, want{"coordination.k8s.io", "leases", ns, name, "get"})
		}
		for _, w := range wants {
			if !allowed(granted[sa], w.group, w.resource, w.namespace, w.name, w.verb) {
				t.Errorf("Deployment %s (ServiceAccount %s): not allowed to %s %s %q in %q, which its flags name", d.dep.Name, sa, w.verb, w.resource, w.name, w.namespace)
			}
		}
	}
}

// checkGeneratedRules: the rules `make manifests` generated from each component's +kubebuilder:rbac markers
// (charts/hvpa/files/rbac/<component>.yaml) are all in one rendered ClusterRole when the component is deployed.
func checkGeneratedRules(t *testing.T, roles map[string][]rbacv1.PolicyRule, deps []deployed) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(root, "charts", "hvpa", "files", "rbac", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no generated rules in charts/hvpa/files/rbac (run `make manifests`): %v", err)
	}
	for _, f := range files {
		component := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if !slices.Contains(app.Available, component) {
			t.Errorf("%s: no component %s (%v)", f, component, app.Available)
		}
		if !slices.ContainsFunc(deps, func(d deployed) bool { return d.has(component) }) {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var generated rbacv1.ClusterRole
		if err := yaml.Unmarshal(raw, &generated); err != nil || len(generated.Rules) == 0 {
			t.Fatalf("%s: no ClusterRole rules (%v)", f, err)
		}
		found := false
		for ref, rules := range roles {
			found = found || (strings.HasPrefix(ref, "ClusterRole/") && containsRules(rules, generated.Rules))
		}
		if !found {
			t.Errorf("no rendered ClusterRole has all the rules of %s", filepath.Base(f))
		}
	}
}

func containsRules(have, want []rbacv1.PolicyRule) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h rbacv1.PolicyRule) bool { return cmp.Equal(h, w, cmpopts.EquateEmpty()) }) {
			return false
		}
	}
	return true
}

// grant is a rule and the namespace it applies in ("" everywhere: a ClusterRoleBinding).
type grant struct {
	rule      rbacv1.PolicyRule
	namespace string
}

// allowed says whether the grants allow verb on the named object (create: any name, as the API server checks it).
func allowed(grants []grant, group, resource, namespace, name, verb string) bool {
	for _, g := range grants {
		r := g.rule
		if (g.namespace != "" && g.namespace != namespace) || !slices.Contains(r.APIGroups, group) || !slices.Contains(r.Resources, resource) || !slices.Contains(r.Verbs, verb) {
			continue
		}
		if len(r.ResourceNames) == 0 || (verb != "create" && slices.Contains(r.ResourceNames, name)) {
			return true
		}
	}
	return false
}

// checkDashboards: with dashboards on, one ConfigMap per charts/hvpa/dashboards/*.json, labelled for the
// Grafana sidecar, holding the file's JSON.
// checkNetworkPolicies: with enabled, each Deployment's pods (and no other) are selected by one NetworkPolicy
// that admits ingress only to the container's metrics port and, on the webhook's pods, its webhook port
// (named ports the container declares); without, there is none.
func checkNetworkPolicies(t *testing.T, objs []renderedObject, deps []deployed, enabled bool) {
	policies := byKind(objs, "NetworkPolicy")
	if !enabled {
		if len(policies) != 0 {
			t.Fatalf("%d NetworkPolicies with networkPolicy.enabled false", len(policies))
		}
		return
	}
	if len(policies) != len(deps) {
		t.Fatalf("%d NetworkPolicies for %d Deployments", len(policies), len(deps))
	}
	for _, d := range deps {
		var selecting []networkingv1.NetworkPolicy
		for _, o := range policies {
			np := convert[networkingv1.NetworkPolicy](t, o)
			sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
			if err != nil {
				t.Fatal(err)
			}
			if sel.Matches(labels.Set(d.dep.Spec.Template.Labels)) {
				selecting = append(selecting, *np)
			}
		}
		if len(selecting) != 1 {
			t.Errorf("Deployment %s: its pods are selected by %d NetworkPolicies, want 1", d.dep.Name, len(selecting))
			continue
		}
		np := selecting[0]
		if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
			t.Errorf("NetworkPolicy %s: policyTypes %v, want [Ingress]", np.Name, np.Spec.PolicyTypes)
		}
		declared := map[string]bool{}
		for _, p := range d.dep.Spec.Template.Spec.Containers[0].Ports {
			declared[p.Name] = true
		}
		want := []string{"metrics"}
		if declared["webhook"] {
			want = append(want, "webhook")
		}
		var got []string
		for _, rule := range np.Spec.Ingress {
			if len(rule.From) == 0 {
				t.Errorf("NetworkPolicy %s: a rule admits every source although the values name the peers", np.Name)
			}
			for _, p := range rule.Ports {
				if p.Port == nil || p.Port.StrVal == "" || !declared[p.Port.StrVal] {
					t.Errorf("NetworkPolicy %s: port %v is not a named port of Deployment %s's container", np.Name, p.Port, d.dep.Name)
					continue
				}
				got = append(got, p.Port.StrVal)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("NetworkPolicy %s admits ports %v, want %v", np.Name, got, want)
		}
	}
}

func checkDashboards(t *testing.T, chart string, objs []renderedObject, enabled bool) {
	files, err := filepath.Glob(filepath.Join(chart, "dashboards", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	if enabled {
		want = len(files)
	}
	var got []string
	for _, o := range byKind(objs, "ConfigMap") {
		if o.obj.GetLabels()["grafana_dashboard"] != "1" {
			continue
		}
		cm := convert[corev1.ConfigMap](t, o)
		for k, v := range cm.Data {
			got = append(got, k)
			if !json.Valid([]byte(v)) {
				t.Errorf("ConfigMap %s: %s is not JSON", cm.Name, k)
			}
		}
	}
	if len(got) != want {
		sort.Strings(got)
		t.Errorf("dashboards %v in ConfigMaps labelled grafana_dashboard=1, want %d (files %v, enabled %t)", got, want, files, enabled)
	}
	if enabled && len(files) == 0 {
		t.Log("note: charts/hvpa/dashboards has no *.json yet: no dashboard ConfigMap to check")
	}
}

// dryRun creates every object with a server-side dry run and strict field validation (CRDs, which the local
// control plane installs from the same files, are applied instead). The kinds of other projects the chart
// renders (ServiceMonitor, PrometheusRule, cert-manager's Certificate and Issuer) are served from their own
// CRDs (ecosystemCRDs), so that their schemas validate them too; a kind the API server does not serve fails.
func dryRun(ctx context.Context, t *testing.T, c client.Client, objs []renderedObject) {
	for _, o := range objs {
		u := o.obj.DeepCopy()
		gvk := u.GroupVersionKind()
		if _, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			if meta.IsNoMatchError(err) {
				t.Errorf("%s: the local API server does not serve %s: install its CRD (ecosystemCRDs)", o, gvk)
				continue
			}
			t.Fatalf("%s: %v", o, err)
		}
		var err error
		if gvk.Kind == "CustomResourceDefinition" {
			err = c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("chart-test"), client.ForceOwnership, client.DryRunAll)
		} else {
			err = c.Create(ctx, u, client.DryRunAll, client.FieldValidation("Strict"))
		}
		if err != nil {
			t.Errorf("%s: the API server refuses it: %v", o, err)
		}
	}
}

// ecosystemCRDs are the CRD files of the other projects' kinds the chart renders, read from those projects'
// Go modules (`go mod download`, from the Go module proxy, as for upstream's VPA):
//   - cert-manager's Certificate and Issuer: deploy/crds of github.com/cert-manager/cert-manager
//     (CERT_MANAGER_VERSION, v1.21.2);
//   - prometheus-operator's ServiceMonitor and PrometheusRule: example/prometheus-operator-crd of
//     github.com/prometheus-operator/prometheus-operator (PROMETHEUS_OPERATOR_VERSION, v0.85.0). The module
//     of its API types, .../pkg/apis/monitoring (v0.95.2), has Go types only and no CRD files, and the module
//     proxy serves v0.85.0 of the root module, which holds them, and no newer one.
func ecosystemCRDs(t *testing.T) []string {
	t.Helper()
	cm := goModuleDir(t, "github.com/cert-manager/cert-manager", envOr("CERT_MANAGER_VERSION", "v1.21.2"))
	po := goModuleDir(t, "github.com/prometheus-operator/prometheus-operator", envOr("PROMETHEUS_OPERATOR_VERSION", "v0.85.0"))
	return []string{
		filepath.Join(cm, "deploy", "crds", "cert-manager.io_certificates.yaml"),
		filepath.Join(cm, "deploy", "crds", "cert-manager.io_issuers.yaml"),
		filepath.Join(po, "example", "prometheus-operator-crd", "monitoring.coreos.com_servicemonitors.yaml"),
		filepath.Join(po, "example", "prometheus-operator-crd", "monitoring.coreos.com_prometheusrules.yaml"),
	}
}

// envOr is the environment variable key, or def when it is empty.
func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// goModuleDir is the folder of module path@version in the Go module cache, downloaded when missing.
func goModuleDir(t *testing.T, path, version string) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", path+"@"+version).Output()
	var m struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &m); err != nil || jerr != nil || m.Dir == "" {
		t.Fatalf("go mod download %s@%s: %v %s (%s)", path, version, err, m.Error, out)
	}
	return m.Dir
}

// withCRDFiles installs the CRDs of files too when the local control plane starts.
func withCRDFiles(files []string) testenv.Option {
	return func(env *envtest.Environment) error {
		env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, files...)
		return nil
	}
}

// chartHelperEnv makes the test binary run `hvpa` with the JSON-encoded args it holds (TestChartHelperProcess),
// so that each component of the chart runs in a process of its own, as in the cluster.
const chartHelperEnv = "HVPA_CHART_TEST_HVPA_ARGS"

// TestChartHelperProcess is not a test: it is `hvpa` for TestChartRBAC's component processes.
// TestRBACMarkersSayWhy: every +kubebuilder:rbac marker, from which `make manifests` generates the components'
// ClusterRole rules (charts/hvpa/files/rbac), has a comment above it saying what its verbs are for.
func TestRBACMarkersSayWhy(t *testing.T) {
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var markers int
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(src), "\n")
		for i, l := range lines {
			if !strings.HasPrefix(l, "// +kubebuilder:rbac:") {
				continue
			}
			markers++
			j := i - 1
			for j >= 0 && strings.HasPrefix(lines[j], "// +kubebuilder:rbac:") {
				j--
			}
			if j < 0 || !strings.HasPrefix(lines[j], "// ") || strings.HasPrefix(lines[j], "// +") {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: %s has no comment above it saying what its verbs are for", rel, i+1, l)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if markers == 0 {
		t.Fatal("no +kubebuilder:rbac markers found: the chart's generated ClusterRole rules come from them")
	}
}

func TestChartHelperProcess(t *testing.T) {
	raw := os.Getenv(chartHelperEnv)
	if raw == "" {
		t.Skip("runs only as a component process of TestChartRBAC")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	cmd := newRootCommand()
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "hvpa:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// permission is what an audited request used, e.g. "get pods in shop".
func permission(e testenv.AuditEvent) string {
	if e.ObjectRef == nil {
		return e.Verb + " " + e.RequestURI
	}
	r := e.ObjectRef.Resource
	if e.ObjectRef.Subresource != "" {
		r += "/" + e.ObjectRef.Subresource
	}
	if e.ObjectRef.APIGroup != "" {
		r += "." + e.ObjectRef.APIGroup
	}
	scope := "cluster-wide"
	if e.ObjectRef.Namespace != "" {
		scope = "in " + e.ObjectRef.Namespace
	}
	return fmt.Sprintf("%s %s %s", e.Verb, r, scope)
}

// TestChartRBAC runs the components of the chart (default values) each as its own process and as its own
// ServiceAccount, with the chart's RBAC applied to the local control plane (which authorizes with RBAC), through a
// scenario that makes every component act: a VPA gets a recommendation and its pods are evicted by the updater,
// a new pod is sized by the webhook, an Hvpa scales its Deployment, another one creates its HPA, the webhook
// keeps its certificate Secret, caBundle (under the chart's ValidatingAdmissionPolicy, which allows it the
// caBundle only: TestChartWebhookCABundleOnly) and Lease. The API server's audit log must show no request of a chart
// ServiceAccount refused; the permissions used are logged.
func TestChartRBAC(t *testing.T) {
	root, helm := helmAndRoot(t)
	objs := renderChart(t, helm, filepath.Join(root, "charts", "hvpa"))
	deps := deployments(t, objs)

	// the local control plane, with an audit log of the requests of the release namespace's ServiceAccounts
	dir := t.TempDir()
	auditLog := filepath.Join(dir, "audit.log")
	env, cfg, err := testenv.Start(testenv.WithAudit(auditLog, nil, []string{"system:serviceaccounts:" + chartNamespace}))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	defer checkAudit(t, auditLog) // after the components stopped, also when the scenario failed
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	for _, ns := range []string{chartNamespace, "shop"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	// the chart's ServiceAccounts, RBAC and webhook configurations, the latter pointed at 127.0.0.1 (no Service
	// network here)
	webhookPort := mustAtoi(t, strings.TrimPrefix(freePort(t), "127.0.0.1:"))
	for _, o := range objs {
		switch o.obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
			"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding": // the webhook sets the caBundle under the chart's policy
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			hooks, _, _ := unstructured.NestedSlice(o.obj.Object, "webhooks")
			for _, h := range hooks {
				cc := h.(map[string]any)["clientConfig"].(map[string]any)
				path := cc["service"].(map[string]any)["path"].(string)
				delete(cc, "service")
				cc["url"] = fmt.Sprintf("https://127.0.0.1:%d%s", webhookPort, path)
			}
			if err := unstructured.SetNestedSlice(o.obj.Object, hooks, "webhooks"); err != nil {
				t.Fatal(err)
			}
		default:
			continue
		}
		if err := c.Create(ctx, o.obj.DeepCopy()); err != nil {
			t.Fatalf("%s: %v", o, err)
		}
	}

	ms, kubelet, err := playedkubelet.Start(ctx, c, "node-1")
	if err != nil {
		t.Fatal(err)
	}
	defer ms.Close()

	// every Deployment of the chart as a process with its args and its ServiceAccount's identity; the local
	// differences: a kubeconfig, loopback addresses, short intervals, the webhook on 127.0.0.1
	var procs []*exec.Cmd
	var logs []string
	defer func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
		for _, p := range procs {
			done := make(chan struct{})
			go func() { _ = p.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = p.Process.Kill()
				<-done
			}
		}
		if t.Failed() {
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s (last 4000 bytes):\n%s", filepath.Base(l), tail(string(b), 4000))
			}
		}
	}()
	metricsAddrs := map[string]string{} // Deployment: its process's metrics address
	for _, d := range deps {
		sa := d.dep.Spec.Template.Spec.ServiceAccountName
		user, err := env.AddUser(envtest.User{Name: "system:serviceaccount:" + chartNamespace + ":" + sa,
			Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + chartNamespace, "system:authenticated"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		kc, err := user.KubeConfig()
		if err != nil {
			t.Fatal(err)
		}
		kubeconfig := filepath.Join(dir, sa+".kubeconfig")
		if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
			t.Fatal(err)
		}
		metricsAddr := freePort(t)
		metricsAddrs[d.dep.Name] = metricsAddr
		args := append(slices.Clone(d.args), "--kubeconfig="+kubeconfig, "--metrics-bind-address="+metricsAddr, "--health-probe-bind-address="+freePort(t),
			"--graceful-shutdown-timeout=5s", "--recommender-interval=300ms", "--hvpa-sync-period=300ms", "--updater-interval=500ms")
		if d.has(app.Admission) {
			args = append(args, "--webhook-host=127.0.0.1", fmt.Sprintf("--webhook-port=%d", webhookPort), "--webhook-cert-ips=127.0.0.1",
				"--cert-dir="+filepath.Join(dir, "certs"))
		}
		raw, _ := json.Marshal(args)
		logPath := filepath.Join(dir, d.dep.Name+".log")
		logFile, err := os.Create(logPath)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = logFile.Close() }() // the child wrote the log through its own descriptor; closing ours loses nothing
		p := exec.Command(os.Args[0], "-test.run=^TestChartHelperProcess$")
		p.Env = append(os.Environ(), chartHelperEnv+"="+string(raw), "POD_NAMESPACE="+chartNamespace)
		p.Stdout, p.Stderr = logFile, logFile
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		procs, logs = append(procs, p), append(logs, logPath)
	}

	eventually := func(what string, f func() error) {
		t.Helper()
		waitUntil(ctx, t, what, 90*time.Second, f)
	}
	adm := findComponent(deps, app.Admission)
	configName := adm.flag("webhook-config-name")
	eventually("the webhook keeps its Secret, the caBundle of both configurations and its Lease", func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: chartNamespace, Name: adm.flag("webhook-secret-name")}, &corev1.Secret{}); err != nil {
			return err
		}
		m := &admissionregistrationv1.MutatingWebhookConfiguration{}
		v := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := c.Get(ctx, client.ObjectKey{Name: configName}, m); err != nil {
			return err
		}
		if err := c.Get(ctx, client.ObjectKey{Name: configName}, v); err != nil {
			return err
		}
		if len(m.Webhooks[0].ClientConfig.CABundle) == 0 || len(v.Webhooks[0].ClientConfig.CABundle) == 0 {
			return errors.New("no caBundle yet")
		}
		ns, name, _ := strings.Cut(adm.flag("admission-lease"), "/")
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &coordinationv1.Lease{})
	})

	// workloads: a Deployment with a VPA (Recreate) whose pods run far below their usage, an Hvpa with the embedded
	// recommender on another, and an Hvpa that deploys an HPA on a third; pods owned through a ReplicaSet, as the
	// deployment controller would make them
	small := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("10Mi")}}
	workload := func(name string, replicas int32) (*appsv1.ReplicaSet, map[string]string) {
		labels := map[string]string{"app": name}
		tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "played", Resources: small}}}}
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
		if err := c.Create(ctx, dep); err != nil {
			t.Fatal(err)
		}
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name + "-1", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: name, UID: dep.UID, Controller: ptr.To(true)}}},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}}
		if err := c.Create(ctx, rs); err != nil {
			t.Fatal(err)
		}
		return rs, labels
	}
	runPod := func(rs *appsv1.ReplicaSet, name string, usage playedkubelet.Usage) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Labels: rs.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
			Spec: *rs.Spec.Template.Spec.DeepCopy()}
		if err := kubelet.Run(ctx, p); err != nil {
			t.Fatal(err)
		}
		ms.Set("shop", name, "app", usage)
		return p
	}
	busy := playedkubelet.Usage{CPUMilli: 500, MemoryBytes: 200 << 20}
	if err := c.Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "limits"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}}}}}); err != nil {
		t.Fatal(err)
	}
	webRS, _ := workload("web", 2)
	recreate := vpav1.UpdateModeRecreate
	if err := c.Create(ctx, &vpav1.VerticalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: vpav1.VerticalPodAutoscalerSpec{TargetRef: &autoscalingv1.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			UpdatePolicy: &vpav1.PodUpdatePolicy{UpdateMode: &recreate}}}); err != nil {
		t.Fatal(err)
	}
	runPod(webRS, "web-1", busy)
	runPod(webRS, "web-2", busy)
	apiRS, _ := workload("api", 1)
	runPod(apiRS, "api-1", playedkubelet.Usage{CPUMilli: 1500, MemoryBytes: 200 << 20})
	half, one := resource.MustParse("500m"), resource.MustParse("1")
	intervals := []hvpav1alpha1.ScalingInterval{{MaxReplicas: ptr.To[int32](1), MaxResources: &hvpav1alpha1.ScaledResources{CPU: &half}},
		{MaxReplicas: ptr.To[int32](3), MaxResources: &hvpav1alpha1.ScaledResources{CPU: &one}}}
	if err := c.Create(ctx, &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "api"}, Spec: hvpav1alpha1.HvpaSpec{
		TargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"},
		VPA:       &hvpav1alpha1.VpaSpec{Deploy: true}, ScalingIntervals: intervals}}); err != nil {
		t.Fatal(err)
	}
	jobsRS, _ := workload("jobs", 1)
	runPod(jobsRS, "jobs-1", busy)
	if err := c.Create(ctx, &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "jobs"}, Spec: hvpav1alpha1.HvpaSpec{
		TargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "jobs"},
		HPA:       &hvpav1alpha1.HpaSpec{Deploy: true, Template: hvpav1alpha1.HpaTemplate{MaxReplicas: 3}},
		VPA:       &hvpav1alpha1.VpaSpec{Deploy: true}, ScalingIntervals: intervals}}); err != nil {
		t.Fatal(err)
	}

	eventually("the recommender writes the VPA's recommendation", func() error {
		v := &vpav1.VerticalPodAutoscaler{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web"}, v); err != nil {
			return err
		}
		if v.Status.Recommendation == nil {
			return fmt.Errorf("no recommendation: %+v", v.Status.Conditions)
		}
		return nil
	})
	created := 2
	eventually("the webhook sizes a new pod of web from the VPA's recommendation", func() error {
		// the webhook's cache may see the recommendation a moment after this client: a new pod each time
		created++
		p := runPod(webRS, fmt.Sprintf("web-%d", created), busy)
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return err
		}
		if by := p.Annotations["autoscaling.hvpa.dev/sized-by"]; by != "VerticalPodAutoscaler/web" {
			return fmt.Errorf("pod %s not sized from the VPA (annotations %v)", p.Name, p.Annotations)
		}
		return nil
	})
	eventually("the Hvpa controller scales Deployment api to 3 through its scale subresource", deploymentReplicas(ctx, c, "shop", "api", 3))
	eventually("the Hvpa controller creates Hvpa jobs's HPA", func() error {
		return c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "jobs"}, &autoscalingv2.HorizontalPodAutoscaler{})
	})
	eventually("the updater evicts an undersized pod of web", func() error {
		for _, name := range []string{"web-1", "web-2"} {
			p := &corev1.Pod{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: name}, p); err != nil || p.DeletionTimestamp != nil {
				return nil
			}
		}
		return errors.New("web-1 and web-2 are still running")
	})
	checkSecureMetrics(ctx, t, c, objs, metricsAddrs, eventually)
	time.Sleep(2 * time.Second) // a few more loops of every component
}

// checkSecureMetrics scrapes every component's metrics (HTTPS, the chart's default) as a Prometheus would:
// with the token of a ServiceAccount bound to the chart's metrics-reader ClusterRole it gets them; without a
// token it gets 401, with the token of a ServiceAccount bound to nothing 403. Each component checks the tokens with the API server under its own ServiceAccount, so the audit log
// proves the chart gives it the TokenReview and SubjectAccessReview permissions it needs.
func checkSecureMetrics(ctx context.Context, t *testing.T, c client.Client, objs []renderedObject, addrs map[string]string, eventually func(string, func() error)) {
	t.Helper()
	reader := ""
	for _, o := range objs {
		if o.obj.GetKind() == "ClusterRole" && strings.HasSuffix(o.obj.GetName(), "-metrics-reader") {
			reader = o.obj.GetName()
		}
	}
	if reader == "" {
		t.Fatal("the chart renders no metrics-reader ClusterRole for its secure metrics")
	}
	token := func(sa string) string {
		t.Helper()
		acct := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: sa}}
		if err := c.Create(ctx, acct); err != nil {
			t.Fatal(err)
		}
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}
		if err := c.SubResource("token").Create(ctx, acct, tr); err != nil {
			t.Fatalf("a token for ServiceAccount %s: %v", sa, err)
		}
		return tr.Status.Token
	}
	prometheus, nobody := token("prometheus"), token("nobody")
	if err := c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "prometheus-hvpa-metrics"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "shop", Name: "prometheus"}}}); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the components' self-signed certificates
	get := func(url, token string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return 0, "", err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer func() { _ = resp.Body.Close() }() // a response body's Close has nothing to report once it is read
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	for name, addr := range addrs {
		eventually(name+" serves its metrics over HTTPS to the metrics-reader's token only", func() error {
			for _, x := range []struct {
				path, who, token string
				want             int
			}{{"/metrics", "no token", "", http.StatusUnauthorized}, {"/metrics", "nobody", nobody, http.StatusForbidden},
				{"/metrics", "prometheus", prometheus, http.StatusOK}} {
				code, body, err := get("https://"+addr+x.path, x.token)
				if err != nil {
					return err
				}
				if code != x.want {
					return fmt.Errorf("GET %s as %s: %d, want %d: %.200s", x.path, x.who, code, x.want, body)
				}
				if code == http.StatusOK && !strings.Contains(body, "controller_runtime_") {
					return fmt.Errorf("GET %s as %s: no metrics in %.200s", x.path, x.who, body)
				}
			}
			return nil
		})
	}
}

// checkAudit reads the audit log: every request of a chart ServiceAccount the API server refused fails the test;
// the permissions used are logged per ServiceAccount.
func checkAudit(t *testing.T, auditLog string) {
	events, err := testenv.ReadAuditLog(auditLog)
	if err != nil {
		t.Error(err)
		return
	}
	used := map[string]map[string]bool{}
	var refused []string
	for _, e := range events {
		if e.ResponseStatus == nil {
			continue
		}
		who := strings.TrimPrefix(e.User.Username, "system:serviceaccount:"+chartNamespace+":")
		switch {
		case e.ResponseStatus.Code == 403 && e.Annotations["authorization.k8s.io/decision"] == "allow":
			// authorized, then refused by the API server itself (e.g. a resize it does not allow for this pod):
			// not the chart's RBAC; the updater handles the refusal
			t.Logf("%s: %s (%s) authorized, then refused: %s", who, permission(e), e.RequestURI, e.ResponseStatus.Message)
		case e.ResponseStatus.Code == 403:
			refused = append(refused, fmt.Sprintf("%s: %s (%s)", who, permission(e), e.RequestURI))
		case e.ResponseStatus.Code < 300 || e.ResponseStatus.Code == 404 || e.ResponseStatus.Code == 409:
			if used[who] == nil {
				used[who] = map[string]bool{}
			}
			used[who][permission(e)] = true
		}
	}
	for who, perms := range used {
		var l []string
		for p := range perms {
			l = append(l, p)
		}
		sort.Strings(l)
		t.Logf("%s used:\n  %s", who, strings.Join(l, "\n  "))
	}
	if len(refused) > 0 {
		slices.Sort(refused)
		t.Errorf("the API server refused requests of the chart's ServiceAccounts (the chart's RBAC misses these):\n  %s", strings.Join(slices.Compact(refused), "\n  "))
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

// nondefaultWebhooks is what ci/nondefault-values.yaml's admissionController.webhooks asks of the generated
// configurations: the pod webhook's timeout and selectors (the namespace selector added to the exclusion of
// excludedNamespaces), the validating webhooks' failurePolicy, timeout and namespace selector.
func nondefaultWebhooks(m *admissionregistrationv1.MutatingWebhookConfiguration, v *admissionregistrationv1.ValidatingWebhookConfiguration) {
	for i := range m.Webhooks {
		w := &m.Webhooks[i]
		w.TimeoutSeconds = ptr.To[int32](5)
		w.NamespaceSelector.MatchExpressions = append(w.NamespaceSelector.MatchExpressions,
			metav1.LabelSelectorRequirement{Key: "hvpa.dev/sizing", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"off"}})
		w.ObjectSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"hvpa.dev/sized": "true"}}
	}
	for i := range v.Webhooks {
		w := &v.Webhooks[i]
		w.FailurePolicy = ptr.To(admissionregistrationv1.Fail)
		w.TimeoutSeconds = ptr.To[int32](10)
		w.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "autoscaling"}}
	}
}

// admissionSpread is how the admission webhook's replicas should be spread: antiAffinity soft (preferred), hard
// (required) or "" (none) across nodes; zones: one topology spread constraint across zones.
type admissionSpread struct {
	antiAffinity string
	zones        bool
}

// checkAdmissionSpread: the admission Deployment's pods repel each other across nodes and spread across zones as
// want says, each with a selector that matches exactly the admission pods; the other Deployments (whose values
// set no affinity) have neither.
func checkAdmissionSpread(t *testing.T, deps []deployed, want admissionSpread) {
	adm := findComponent(deps, app.Admission)
	if adm == nil {
		t.Fatal("no admission Deployment")
	}
	own := labels.Set(adm.dep.Spec.Template.Labels)
	selectsOwn := func(what string, sel *metav1.LabelSelector) {
		t.Helper()
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || sel == nil || s.Empty() || !s.Matches(own) {
			t.Errorf("%s: selector %v does not select the admission pods (%v): %v", what, sel, own, err)
			return
		}
		for _, d := range deps {
			if d.dep.Name != adm.dep.Name && s.Matches(labels.Set(d.dep.Spec.Template.Labels)) {
				t.Errorf("%s: selector %v also selects the pods of Deployment %s", what, sel, d.dep.Name)
			}
		}
	}
	spec := adm.dep.Spec.Template.Spec
	var anti *corev1.PodAntiAffinity
	if spec.Affinity != nil {
		anti = spec.Affinity.PodAntiAffinity
	}
	switch want.antiAffinity {
	case "soft":
		if anti == nil || len(anti.PreferredDuringSchedulingIgnoredDuringExecution) != 1 || len(anti.RequiredDuringSchedulingIgnoredDuringExecution) != 0 {
			t.Fatalf("admission pods: podAntiAffinity %+v, want one preferred term", anti)
		}
		term := anti.PreferredDuringSchedulingIgnoredDuringExecution[0]
		if term.Weight != 100 || term.PodAffinityTerm.TopologyKey != corev1.LabelHostname {
			t.Errorf("admission pods: preferred anti-affinity weight %d topologyKey %s, want 100 and %s", term.Weight, term.PodAffinityTerm.TopologyKey, corev1.LabelHostname)
		}
		selectsOwn("preferred pod anti-affinity", term.PodAffinityTerm.LabelSelector)
	case "hard":
		if anti == nil || len(anti.RequiredDuringSchedulingIgnoredDuringExecution) != 1 || len(anti.PreferredDuringSchedulingIgnoredDuringExecution) != 0 {
			t.Fatalf("admission pods: podAntiAffinity %+v, want one required term", anti)
		}
		term := anti.RequiredDuringSchedulingIgnoredDuringExecution[0]
		if term.TopologyKey != corev1.LabelHostname {
			t.Errorf("admission pods: required anti-affinity topologyKey %s, want %s", term.TopologyKey, corev1.LabelHostname)
		}
		selectsOwn("required pod anti-affinity", term.LabelSelector)
	default:
		if anti != nil {
			t.Errorf("admission pods: podAntiAffinity %+v, want none", anti)
		}
	}
	tsc := spec.TopologySpreadConstraints
	if !want.zones {
		if len(tsc) != 0 {
			t.Errorf("admission pods: topologySpreadConstraints %+v, want none", tsc)
		}
	} else if len(tsc) != 1 || tsc[0].TopologyKey != corev1.LabelTopologyZone || tsc[0].WhenUnsatisfiable != corev1.ScheduleAnyway ||
		tsc[0].MaxSkew != 1 || !slices.Equal(tsc[0].MatchLabelKeys, []string{appsv1.DefaultDeploymentUniqueLabelKey}) {
		t.Errorf("admission pods: topologySpreadConstraints %+v, want one across %s, maxSkew 1, ScheduleAnyway, per revision (matchLabelKeys %s)",
			tsc, corev1.LabelTopologyZone, appsv1.DefaultDeploymentUniqueLabelKey)
	} else {
		selectsOwn("topology spread constraint", tsc[0].LabelSelector)
	}
	for _, d := range deps {
		if d.dep.Name != adm.dep.Name && (d.dep.Spec.Template.Spec.Affinity != nil || len(d.dep.Spec.Template.Spec.TopologySpreadConstraints) > 0) {
			t.Errorf("Deployment %s: affinity %+v, topologySpreadConstraints %+v: want none (only the webhook's replicas are spread by default)",
				d.dep.Name, d.dep.Spec.Template.Spec.Affinity, d.dep.Spec.Template.Spec.TopologySpreadConstraints)
		}
	}
}

// TestChartAdmissionSpreadOverrides: the webhook's default anti-affinity and zone spread give way to the values'
// own affinity.podAntiAffinity and topologySpreadConstraints, are kept beside a nodeAffinity, and are left out
// with podAntiAffinityPreset.type none and topologySpreadPreset.enabled false.
func TestChartAdmissionSpreadOverrides(t *testing.T) {
	root, helm := helmAndRoot(t)
	chart := filepath.Join(root, "charts", "hvpa")
	nodeAffinity := `{requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [system]}]}]}}`
	for _, tc := range []struct {
		name, values        string
		nodeAffinity        bool
		antiAffinityTopoKey string // of the one preferred term; "" none
		spreadTopoKey       string // of the one constraint; "" none
	}{
		{"a nodeAffinity keeps the presets", `{affinity: {nodeAffinity: ` + nodeAffinity + `}}`, true, corev1.LabelHostname, corev1.LabelTopologyZone},
		{"the values' podAntiAffinity and topologySpreadConstraints replace the presets",
			`{affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 5, podAffinityTerm: {topologyKey: rack, labelSelector: {matchLabels: {app.kubernetes.io/component: admission}}}}]}},
			  topologySpreadConstraints: [{maxSkew: 2, topologyKey: region, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app.kubernetes.io/component: admission}}}]}`,
			false, "rack", "region"},
		{"the presets' own keys", `{podAntiAffinityPreset: {type: soft, topologyKey: rack}, topologySpreadPreset: {topologyKey: region, whenUnsatisfiable: DoNotSchedule}}`, false, "rack", "region"},
		{"presets off", `{podAntiAffinityPreset: {type: none}, topologySpreadPreset: {enabled: false}}`, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "values.yaml")
			if err := os.WriteFile(file, []byte("admissionController: "+tc.values+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			adm := findComponent(deployments(t, renderChart(t, helm, chart, "-f", file)), app.Admission)
			spec := adm.dep.Spec.Template.Spec
			var got struct {
				node         bool
				anti, spread []string
			}
			if a := spec.Affinity; a != nil {
				got.node = a.NodeAffinity != nil
				if a.PodAntiAffinity != nil {
					for _, p := range a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
						got.anti = append(got.anti, p.PodAffinityTerm.TopologyKey)
					}
					for _, r := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
						got.anti = append(got.anti, "required:"+r.TopologyKey)
					}
				}
			}
			for _, c := range spec.TopologySpreadConstraints {
				got.spread = append(got.spread, c.TopologyKey)
			}
			wantList := func(k string) []string {
				if k == "" {
					return nil
				}
				return []string{k}
			}
			if got.node != tc.nodeAffinity || !slices.Equal(got.anti, wantList(tc.antiAffinityTopoKey)) || !slices.Equal(got.spread, wantList(tc.spreadTopoKey)) {
				t.Errorf("nodeAffinity %t, anti-affinity terms over %q, spread over %q; want %t, %q, %q",
					got.node, got.anti, got.spread, tc.nodeAffinity, wantList(tc.antiAffinityTopoKey), wantList(tc.spreadTopoKey))
			}
		})
	}
}

// schemaNode is a node of charts/hvpa/values.schema.json, as far as TestChartValuesSchema reads it.
type schemaNode struct {
	Ref                  string                 `json:"$ref"`
	Type                 any                    `json:"type"`
	Description          string                 `json:"description"`
	Properties           map[string]*schemaNode `json:"properties"`
	AdditionalProperties any                    `json:"additionalProperties"`
	Items                *schemaNode            `json:"items"`
	Definitions          map[string]*schemaNode `json:"definitions"`
}

// TestChartValuesSchema: values.schema.json names every key of values.yaml and no other, types and describes
// every value, and closes every object whose keys are the chart's (additionalProperties false); helm then refuses
// a mistyped or foreign key, a wrong type or a value out of its enum (naming where), and accepts free-form content
// where values.yaml documents it.
func TestChartValuesSchema(t *testing.T) {
	root, helm := helmAndRoot(t)
	chart := filepath.Join(root, "charts", "hvpa")
	raw, err := os.ReadFile(filepath.Join(chart, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema schemaNode
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if raw, err = os.ReadFile(filepath.Join(chart, "values.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	checkSchemaCovers(t, &schema, "", values)

	for _, tc := range []struct{ set, want string }{
		{"admision.replicas=3", `at '': additional properties 'admision' not allowed`},
		{"admissionController.certGen.enabled=true", `at '/admissionController': additional properties 'certGen' not allowed`},
		{"recommender.image.repo=x", `at '/recommender/image': additional properties 'repo' not allowed`},
		{"admissionController.webhooks.validation.failurPolicy=Fail", `at '/admissionController/webhooks/validation': additional properties 'failurPolicy' not allowed`},
		{"admissionController.webhooks.pods.failurePolicy=Sometimes", `at '/admissionController/webhooks/pods/failurePolicy'`},
		{"admissionController.webhooks.pods.timeoutSeconds=31", `at '/admissionController/webhooks/pods/timeoutSeconds'`},
		{"admissionController.webhooks.pods.namespaceSelector.matchLabel.a=b", `additional properties 'matchLabel' not allowed`},
		{"updater.replicas=two", `at '/updater/replicas'`},
		{"prometheusRule.alerts.hvpaStalled.enabled=true", `at '/prometheusRule/alerts': additional properties 'hvpaStalled' not allowed`},
		{"prometheusRule.alerts.recommenderStalled.window=soon", `at '/prometheusRule/alerts/recommenderStalled/window'`},
		{"admissionController.podAntiAffinityPreset.type=sometimes", `at '/admissionController/podAntiAffinityPreset/type'`},
	} {
		out, err := runHelm(helm, "template", "hvpa", chart, "--set", tc.set)
		if err == nil || !strings.Contains(out, "values don't meet the specifications of the schema") || !strings.Contains(out, tc.want) {
			t.Errorf("helm template --set %s: %v, want the schema error %q:\n%s", tc.set, err, tc.want, tail(out, 2000))
		}
	}
	if out, err := runHelm(helm, "lint", chart, "--set", "admision.replicas=3"); err == nil || !strings.Contains(out, "'admision' not allowed") {
		t.Errorf("helm lint with a mistyped key: %v, want the schema error\n%s", err, tail(out, 2000))
	}
	// free-form where values.yaml says so: labels, annotations, resources, scheduling, extraArgs, featureGates
	ok := []string{"recommender.podLabels.team=a", "admissionController.service.annotations.x=y", "updater.resources.limits.cpu=2",
		"recommender.nodeSelector.pool=system", "hvpaController.tolerations[0].operator=Exists", "recommender.extraArgs.memory-saver=true",
		"updater.extraArgs.pod-min-age=5m", "global.featureGates.InPlace=true", "admissionController.affinity.nodeAffinity.foo=bar",
		"prometheusRule.ruleLabels.team=a", "admissionController.webhooks.pods.timeoutSeconds=30"}
	if out, err := runHelm(helm, "template", "hvpa", chart, "--set", strings.Join(ok, ",")); err != nil {
		t.Errorf("helm template with free-form values %v: %v\n%s", ok, err, tail(out, 2000))
	}
	if out, err := runHelm(helm, "template", "hvpa", chart, "--set", "admissionController.webhookPort=8080"); err == nil || !strings.Contains(out, "must differ") {
		t.Errorf("helm template with the webhook on the metrics port: %v, want the render refused\n%s", err, tail(out, 2000))
	}
	// two writers: more than one replica of a leader-elected component without leader election
	for _, key := range []string{"recommender", "updater", "hvpaController"} {
		set := key + ".replicas=2," + key + ".leaderElection.enabled=false"
		if key == "hvpaController" {
			set += ",hvpaController.colocateWithRecommender=false"
		}
		if out, err := runHelm(helm, "template", "hvpa", chart, "--set", set); err == nil || !strings.Contains(out, key+".replicas is 2 with "+key+".leaderElection.enabled false") {
			t.Errorf("helm template --set %s: %v, want the render refused\n%s", set, err, tail(out, 2000))
		}
	}
}

// checkSchemaCovers walks values.yaml and the schema together: every key of values.yaml has a property, every
// property of a block values.yaml fills is a key there, every property has a description and a type, and every
// object with properties (anywhere in the schema) forbids others.
func checkSchemaCovers(t *testing.T, root *schemaNode, path string, value any) {
	t.Helper()
	var walk func(n *schemaNode, path string, value any)
	walk = func(n *schemaNode, path string, value any) {
		if n.Ref != "" {
			name, ok := strings.CutPrefix(n.Ref, "#/definitions/")
			if n = root.Definitions[name]; !ok || n == nil {
				t.Errorf("%s: $ref %s is not a definition", path, name)
				return
			}
		}
		if n.Type == nil {
			t.Errorf("%s: no type", path)
		}
		if n.Properties == nil {
			return // free-form (a map or list of Kubernetes objects) or a scalar
		}
		if n.AdditionalProperties != false {
			t.Errorf("%s: an object of the chart's keys allows other keys (additionalProperties %v)", path, n.AdditionalProperties)
		}
		m, _ := value.(map[string]any)
		for k, v := range m {
			if n.Properties[k] == nil {
				t.Errorf("%s.%s: in values.yaml, not in values.schema.json", path, k)
				continue
			}
			walk(n.Properties[k], path+"."+k, v)
		}
		for k, p := range n.Properties {
			if p.Description == "" && p.Ref == "" {
				t.Errorf("%s.%s: no description", path, k)
			}
			if _, ok := m[k]; !ok && len(m) > 0 { // an empty map in values.yaml is a Kubernetes type left empty
				t.Errorf("%s.%s: in values.schema.json, not in values.yaml (every value has a default there)", path, k)
			}
		}
	}
	walk(root, path, value)
	var closed func(n *schemaNode, path string)
	closed = func(n *schemaNode, path string) {
		if n.Properties != nil && n.AdditionalProperties != false {
			t.Errorf("schema %s: an object of the chart's keys allows other keys", path)
		}
		for k, p := range n.Properties {
			closed(p, path+"/properties/"+k)
		}
		for k, d := range n.Definitions {
			closed(d, path+"/definitions/"+k)
		}
		if n.Items != nil {
			closed(n.Items, path+"/items")
		}
	}
	closed(root, "#")
}
