package certs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestOptions(t *testing.T) {
	valid := testOptions(t.TempDir())
	for name, tc := range map[string]struct {
		change  func(*Options)
		wantErr string
	}{
		"valid":                              {change: func(*Options) {}},
		"defaults need names":                {change: func(o *Options) { *o = DefaultOptions() }, wantErr: "Secret's namespace and name"},
		"external defaults":                  {change: func(o *Options) { *o = DefaultOptions(); o.Mode = ModeExternal }},
		"unknown mode":                       {change: func(o *Options) { o.Mode = "manual" }, wantErr: `mode "manual"`},
		"no service":                         {change: func(o *Options) { o.ServiceName = "" }, wantErr: "Service's name"},
		"no folder":                          {change: func(o *Options) { o.CertDir = "" }, wantErr: "folder"},
		"certificate outlives the CA":        {change: func(o *Options) { o.CertValidity = 2 * o.CAValidity }, wantErr: "exceeds the CA validity"},
		"no interval":                        {change: func(o *Options) { o.Interval = 0 }, wantErr: "must be positive"},
		"external without Secret or Service": {change: func(o *Options) { o.Mode, o.SecretName, o.ServiceName = ModeExternal, "", "" }},
	} {
		t.Run(name, func(t *testing.T) {
			o := valid
			tc.change(&o)
			err := o.Validate()
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("Validate = %v, want an error with %q", err, tc.wantErr)
			}
		})
	}

	o := DefaultOptions()
	o.SecretNamespace, o.ServiceName, o.ExtraDNSNames = "hvpa-system", "hvpa-webhook", []string{"localhost", "hvpa-webhook"}
	want := []string{"hvpa-webhook.hvpa-system.svc", "hvpa-webhook.hvpa-system.svc.cluster.local", "hvpa-webhook", "localhost"}
	if diff := cmp.Diff(want, o.DNSNames()); diff != "" {
		t.Errorf("DNS names, the Service namespace defaulting to the Secret's (-want +got):\n%s", diff)
	}
	o.ServiceNamespace = "web"
	if got := o.DNSNames()[0]; got != "hvpa-webhook.web.svc" {
		t.Errorf("first DNS name %q with the Service in web", got)
	}
}

func TestWritePair(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "serving-certs")
	for _, step := range []struct {
		name      string
		cert, key string
		wantWrote bool
	}{
		{name: "first", cert: "cert 1", key: "key 1", wantWrote: true},
		{name: "unchanged", cert: "cert 1", key: "key 1"},
		{name: "renewed", cert: "cert 2", key: "key 2", wantWrote: true},
		{name: "key only", cert: "cert 2", key: "key 3", wantWrote: true},
	} {
		wrote, err := writePair(dir, []file{{"tls.crt", []byte(step.cert), 0o644}, {"tls.key", []byte(step.key), 0o600}})
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if wrote != step.wantWrote {
			t.Errorf("%s: wrote %v, want %v", step.name, wrote, step.wantWrote)
		}
		got := map[string]string{"tls.crt": readString(t, dir, "tls.crt"), "tls.key": readString(t, dir, "tls.key")}
		if diff := cmp.Diff(map[string]string{"tls.crt": step.cert, "tls.key": step.key}, got); diff != "" {
			t.Errorf("%s: files (-want +got):\n%s", step.name, diff)
		}
		if fi, err := os.Stat(filepath.Join(dir, "tls.key")); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: key mode %v (%v), want 0600", step.name, fi.Mode(), err)
		}
		if got := len(generations(t, dir)); got != 1 {
			t.Errorf("%s: %d generation folders, want 1 (older ones removed)", step.name, got)
		}
	}
}

// TestWritePairOverRegularFiles: a folder written by something else (regular files) is taken over.
func TestWritePairOverRegularFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"tls.crt", "tls.key"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := writePair(dir, []file{{"tls.crt", []byte("cert"), 0o644}, {"tls.key", []byte("key"), 0o600}}); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, dir, "tls.crt") + " " + readString(t, dir, "tls.key"); got != "cert key" {
		t.Errorf("files hold %q", got)
	}
	if target, err := os.Readlink(filepath.Join(dir, "tls.crt")); err != nil || target != filepath.Join(dataLink, "tls.crt") {
		t.Errorf("tls.crt links to %q (%v), want through %s", target, err, dataLink)
	}
}

func readString(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func generations(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), generationPrefix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestSetCABundle(t *testing.T) {
	bundle := []byte("bundle")
	for name, tc := range map[string]struct {
		obj  client.Object
		want int
	}{
		"mutating, one of two differs": {obj: &admissionregistrationv1.MutatingWebhookConfiguration{Webhooks: []admissionregistrationv1.MutatingWebhook{
			{Name: "a", ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: bundle}}, {Name: "b"}}}, want: 1},
		"validating, both differ": {obj: &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: "a", ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: []byte("old")}}, {Name: "b"}}}, want: 2},
		"validating, current": {obj: &admissionregistrationv1.ValidatingWebhookConfiguration{Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: "a", ClientConfig: admissionregistrationv1.WebhookClientConfig{CABundle: bundle}}}}},
		"no webhooks":  {obj: &admissionregistrationv1.MutatingWebhookConfiguration{}},
		"other object": {obj: &corev1.Secret{}},
	} {
		t.Run(name, func(t *testing.T) {
			if got := SetCABundle(tc.obj, bundle); got != tc.want {
				t.Errorf("SetCABundle = %d, want %d", got, tc.want)
			}
			if again := SetCABundle(tc.obj, bundle); again != 0 {
				t.Errorf("SetCABundle again = %d, want 0", again)
			}
		})
	}
}

// TestEnsureRaces: a replica that loses the race to create or to renew the Secret adopts the winner's
// certificates.
func TestEnsureRaces(t *testing.T) {
	ctx := context.Background()
	clk := clocktesting.NewFakePassiveClock(t0)
	o := testOptions(t.TempDir())
	key := client.ObjectKey{Namespace: o.SecretNamespace, Name: o.SecretName}
	winner := mustDesired(t, Material{}, t0, o.Spec())

	t.Run("create", func(t *testing.T) {
		raced := false
		c := newFakeClient(interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if s, ok := obj.(*corev1.Secret); ok && !raced {
				raced = true
				other := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name}, Type: corev1.SecretTypeTLS}
				winner.into(other)
				if err := c.Create(ctx, other); err != nil {
					return err
				}
			}
			return c.Create(ctx, obj, opts...)
		}})
		r := mustRotator(t, c, clk, o)
		if err := r.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		if !raced {
			t.Fatal("the race was not played")
		}
		assertServes(t, c, key, o.CertDir, winner)
	})

	t.Run("renew", func(t *testing.T) {
		existing := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Type: corev1.SecretTypeTLS}
		winner.into(existing)
		due := RenewAt(onlyCert(t, winner.Cert))
		clk := clocktesting.NewFakePassiveClock(due)
		renewed := mustDesired(t, winner, due, o.Spec(), ReasonCertExpiring)
		raced := false
		c := newFakeClient(interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*corev1.Secret); ok && !raced {
				raced = true
				var other corev1.Secret
				if err := c.Get(ctx, key, &other); err != nil {
					return err
				}
				renewed.into(&other)
				if err := c.Update(ctx, &other); err != nil {
					return err
				}
			}
			return c.Update(ctx, obj, opts...) // stale resourceVersion: Conflict
		}}, existing)
		o := o
		o.CertDir = t.TempDir()
		r := mustRotator(t, c, clk, o)
		if err := r.Ensure(ctx); err != nil {
			t.Fatal(err)
		}
		if !raced {
			t.Fatal("the race was not played")
		}
		assertServes(t, c, key, o.CertDir, renewed)
	})
}

// TestEnsureMissingWebhookConfiguration: a configuration that does not exist yet does not fail the sync; one
// that exists gets the bundle.
func TestEnsureMissingWebhookConfiguration(t *testing.T) {
	ctx := context.Background()
	o := testOptions(t.TempDir())
	o.MutatingWebhookConfigurations = []string{"missing", "hvpa"}
	existing := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "hvpa"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "pods.hvpa.dev"}}}
	c := newFakeClient(interceptor.Funcs{}, existing)
	r := mustRotator(t, c, clocktesting.NewFakePassiveClock(t0), o)
	if err := r.ReadyCheck(nil); err == nil {
		t.Error("ready before the first sync")
	}
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.ReadyCheck(nil); err != nil {
		t.Errorf("not ready after the sync: %v", err)
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: o.SecretNamespace, Name: o.SecretName}, &s); err != nil {
		t.Fatal(err)
	}
	var got admissionregistrationv1.MutatingWebhookConfiguration
	if err := c.Get(ctx, client.ObjectKey{Name: "hvpa"}, &got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Webhooks[0].ClientConfig.CABundle, s.Data[CACertKey]) {
		t.Error("caBundle not set")
	}
}

// TestEnsurePatchFails: when a caBundle cannot be set, a replica keeps serving its valid files rather than a
// certificate the bundle may not trust yet; without valid files it writes them anyway.
func TestEnsurePatchFails(t *testing.T) {
	ctx := context.Background()
	o := testOptions(t.TempDir())
	o.ValidatingWebhookConfigurations = []string{"hvpa"}
	existing := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "hvpa"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "hvpas.hvpa.dev"}}}
	failing := false
	c := newFakeClient(interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
		if _, ok := obj.(*admissionregistrationv1.ValidatingWebhookConfiguration); ok && failing {
			return errors.New("forbidden, say")
		}
		return c.Update(ctx, obj, opts...)
	}}, existing)
	clk := clocktesting.NewFakePassiveClock(t0)
	r := mustRotator(t, c, clk, o)
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	before := readString(t, o.CertDir, "tls.crt")
	resetCABundle := func() {
		t.Helper()
		var vwc admissionregistrationv1.ValidatingWebhookConfiguration
		if err := c.Get(ctx, client.ObjectKey{Name: "hvpa"}, &vwc); err != nil {
			t.Fatal(err)
		}
		vwc.Webhooks[0].ClientConfig.CABundle = nil
		if err := c.Update(ctx, &vwc); err != nil {
			t.Fatal(err)
		}
	}

	// the configuration lost its caBundle (reinstalled, say) and cannot be updated while the certificate is due
	resetCABundle()
	failing = true
	clk.SetTime(RenewAt(onlyCert(t, []byte(before))))
	if err := r.Ensure(ctx); err == nil {
		t.Fatal("no error while the caBundle cannot be set")
	}
	if readString(t, o.CertDir, "tls.crt") != before {
		t.Error("the files changed although the bundle may not trust the new certificate")
	}

	failing = false
	if err := r.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if got := readString(t, o.CertDir, "tls.crt"); got == before || got != string(secretData(t, c, o)[corev1.TLSCertKey]) {
		t.Error("the files do not follow the Secret once the caBundle is set")
	}

	resetCABundle()
	failing = true
	empty := o
	empty.CertDir = t.TempDir()
	r2 := mustRotator(t, c, clk, empty)
	if err := r2.Ensure(ctx); err == nil {
		t.Error("no error while the caBundle cannot be set")
	}
	if err := r2.ReadyCheck(nil); err != nil {
		t.Errorf("a replica without files did not write them: %v", err)
	}
}

func secretData(t *testing.T, c client.Client, o Options) map[string][]byte {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: o.SecretNamespace, Name: o.SecretName}, &s); err != nil {
		t.Fatal(err)
	}
	return s.Data
}

func TestExternalMode(t *testing.T) {
	o := testOptions(t.TempDir())
	o.Mode = ModeExternal
	clk := clocktesting.NewFakePassiveClock(t0)
	c := newFakeClient(interceptor.Funcs{})
	r := mustRotator(t, c, clk, o)
	if err := r.Ensure(context.Background()); err == nil {
		t.Error("Ensure succeeds without files")
	}
	m := mustDesired(t, Material{}, t0, o.Spec())
	for name, data := range map[string][]byte{o.CertName: m.Cert, o.KeyName: m.Key} {
		if err := os.WriteFile(filepath.Join(o.CertDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Ensure(context.Background()); err != nil {
		t.Errorf("Ensure with valid files: %v", err)
	}
	var secrets corev1.SecretList
	if err := c.List(context.Background(), &secrets); err != nil || len(secrets.Items) != 0 {
		t.Errorf("external mode wrote %d Secrets (%v)", len(secrets.Items), err)
	}
	clk.SetTime(onlyCert(t, m.Cert).NotAfter)
	if err := r.ReadyCheck(nil); err == nil {
		t.Error("ready with an expired certificate")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := r.Start(ctx); err != nil {
		t.Errorf("Start = %v", err)
	}
}

func testOptions(dir string) Options {
	o := DefaultOptions()
	o.CertDir = dir
	o.SecretNamespace, o.SecretName, o.ServiceName = "hvpa-system", "hvpa-webhook-certs", "hvpa-webhook"
	o.ExtraDNSNames = testSpec.DNSNames[3:]
	o.IPAddresses = testSpec.IPAddresses
	o.CAValidity, o.CertValidity = testSpec.CAValidity, testSpec.CertValidity
	return o
}

func newFakeClient(funcs interceptor.Funcs, objs ...client.Object) client.WithWatch {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
}

func mustRotator(t *testing.T, c client.Client, clk *clocktesting.FakePassiveClock, o Options) *Rotator {
	t.Helper()
	r, err := NewRotator(c, clk, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// assertServes checks that the Secret and the files hold want.
func assertServes(t *testing.T, c client.Client, key client.ObjectKey, dir string, want Material) {
	t.Helper()
	var s corev1.Secret
	if err := c.Get(context.Background(), key, &s); err != nil {
		t.Fatal(err)
	}
	if !equalMaterial(materialOf(&s), want) {
		t.Error("the Secret does not hold the winner's certificates")
	}
	for name, data := range map[string][]byte{"tls.crt": want.Cert, "tls.key": want.Key} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s does not hold the winner's (%v)", name, err)
		}
	}
}
