package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Mode says who provides the webhook server's certificate.
type Mode string

const (
	// ModeSelfManaged: the Rotator creates, stores, rotates and distributes the certificates (the default).
	ModeSelfManaged Mode = "self-managed"
	// ModeExternal: the files in CertDir come from elsewhere (cert-manager, a mounted Secret), and so does the
	// caBundle; the Rotator only checks the files.
	ModeExternal Mode = "external"
)

// Modes lists the valid modes.
var Modes = []Mode{ModeSelfManaged, ModeExternal}

// Secret data keys besides tls.crt and tls.key (corev1.TLSCertKey, corev1.TLSPrivateKeyKey).
const (
	CACertKey = "ca.crt"
	CAKeyKey  = "ca.key"
)

// maxAttempts bounds the create/update attempts of one sync that lose a race to another replica.
const maxAttempts = 5

// Options configure the certificates (flags of `hvpa run`).
type Options struct {
	// Mode is ModeSelfManaged or ModeExternal (--cert-mode).
	Mode Mode
	// CertDir is the webhook server's certificate folder (--cert-dir); CertName and KeyName are the file names
	// in it (tls.crt, tls.key).
	CertDir, CertName, KeyName string
	// SecretNamespace and SecretName name the Secret holding the CA and the serving certificate
	// (--webhook-secret-namespace, --webhook-secret-name).
	SecretNamespace, SecretName string
	// ServiceNamespace and ServiceName name the webhook Service (--webhook-service-namespace,
	// --webhook-service-name); the namespace defaults to SecretNamespace. The serving certificate is for
	// <service>, <service>.<namespace>.svc and <service>.<namespace>.svc.cluster.local.
	ServiceNamespace, ServiceName string
	// ExtraDNSNames and IPAddresses are added to the serving certificate's names.
	ExtraDNSNames []string
	IPAddresses   []net.IP
	// MutatingWebhookConfigurations and ValidatingWebhookConfigurations name the configurations whose
	// webhooks get the CA bundle (--mutating-webhook-configurations, --validating-webhook-configurations).
	MutatingWebhookConfigurations, ValidatingWebhookConfigurations []string
	// CAValidity and CertValidity are the lifetimes of a new CA (10 years) and of a new serving
	// certificate (1 year); each is renewed when a third of its lifetime remains.
	CAValidity, CertValidity time.Duration
	// Interval between syncs (1m).
	Interval time.Duration
}

// DefaultOptions returns the defaults (CertDir is controller-runtime's default folder); the Secret and Service
// names are left to the caller.
func DefaultOptions() Options {
	return Options{
		Mode:         ModeSelfManaged,
		CertDir:      filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs"),
		CertName:     corev1.TLSCertKey,
		KeyName:      corev1.TLSPrivateKeyKey,
		CAValidity:   10 * 365 * 24 * time.Hour,
		CertValidity: 365 * 24 * time.Hour,
		Interval:     time.Minute,
	}
}

// Validate checks the options for their mode.
func (o Options) Validate() error {
	var errs []error
	if !slices.Contains(Modes, o.Mode) {
		errs = append(errs, fmt.Errorf("mode %q: must be one of %v", o.Mode, Modes))
	}
	if o.CertDir == "" || o.CertName == "" || o.KeyName == "" {
		errs = append(errs, errors.New("the certificate folder and file names must be set"))
	}
	if o.Mode != ModeSelfManaged {
		return errors.Join(errs...)
	}
	if o.SecretNamespace == "" || o.SecretName == "" {
		errs = append(errs, errors.New("self-managed certificates need the Secret's namespace and name"))
	}
	if o.ServiceName == "" {
		errs = append(errs, errors.New("self-managed certificates need the webhook Service's name"))
	}
	if filepath.Base(o.CertName) != o.CertName || filepath.Base(o.KeyName) != o.KeyName || o.CertName == o.KeyName {
		errs = append(errs, fmt.Errorf("certificate and key file names %q, %q: must be two plain file names", o.CertName, o.KeyName))
	}
	if o.CAValidity <= 0 || o.CertValidity <= 0 || o.Interval <= 0 {
		errs = append(errs, fmt.Errorf("validities and interval must be positive (CA %v, certificate %v, interval %v)",
			o.CAValidity, o.CertValidity, o.Interval))
	}
	if o.CertValidity > o.CAValidity {
		errs = append(errs, fmt.Errorf("certificate validity %v exceeds the CA validity %v", o.CertValidity, o.CAValidity))
	}
	return errors.Join(errs...)
}

// DNSNames returns the serving certificate's DNS names: the Service's names, then ExtraDNSNames.
func (o Options) DNSNames() []string {
	ns := o.ServiceNamespace
	if ns == "" {
		ns = o.SecretNamespace
	}
	names := []string{o.ServiceName + "." + ns + ".svc", o.ServiceName + "." + ns + ".svc.cluster.local", o.ServiceName}
	for _, n := range o.ExtraDNSNames {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// Spec returns what the certificates must look like.
func (o Options) Spec() Spec {
	return Spec{DNSNames: o.DNSNames(), IPAddresses: o.IPAddresses, CAValidity: o.CAValidity, CertValidity: o.CertValidity}
}

// WebhookServerOptions returns the webhook server options that read the certificate from CertDir; set the
// port and the rest on the result.
func (o Options) WebhookServerOptions() webhook.Options {
	return webhook.Options{CertDir: o.CertDir, CertName: o.CertName, KeyName: o.KeyName}
}

// Rotator keeps the webhook server's certificate: on every replica (no leader election), at start (Ensure)
// and then every Interval (Start).
type Rotator struct {
	client client.Client
	clock  clock.PassiveClock
	opts   Options
	mu     sync.Mutex // one sync at a time
}

var (
	_ manager.Runnable               = &Rotator{}
	_ manager.LeaderElectionRunnable = &Rotator{}
	_ healthz.Checker                = (&Rotator{}).ReadyCheck
)

// NewRotator returns a Rotator. c must read from the API server, not from an informer cache: the Rotator runs
// before the manager starts and reads one Secret (client.New, or a client whose cache skips Secrets and
// webhook configurations).
func NewRotator(c client.Client, clk clock.PassiveClock, opts Options) (*Rotator, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("webhook certificates: %w", err)
	}
	return &Rotator{client: c, clock: clk, opts: opts}, nil
}

// NeedLeaderElection: every replica serves the webhook, so every replica keeps its certificate files.
func (r *Rotator) NeedLeaderElection() bool { return false }

// Start syncs every Interval until ctx ends; a failed sync is logged and retried at the next interval. In
// ModeExternal it only waits for ctx.
func (r *Rotator) Start(ctx context.Context) error {
	if r.opts.Mode == ModeExternal {
		<-ctx.Done()
		return nil
	}
	logger := logf.FromContext(ctx).WithName("webhook-certs")
	ctx = logf.IntoContext(ctx, logger)
	t := time.NewTicker(r.opts.Interval)
	defer t.Stop()
	for {
		if err := r.Ensure(ctx); err != nil {
			logger.Error(err, "syncing the webhook certificates failed; retrying at the next interval")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Ensure does one full sync: it creates or renews the Secret when needed, patches the caBundles and then
// writes the serving certificate and key into CertDir when they differ. Call it before the webhook server
// starts, which needs the files. A missing webhook configuration is logged, not an error; when patching a
// caBundle fails, valid files on disk are kept until a later sync succeeds. In ModeExternal it only checks
// that the files hold a valid certificate.
func (r *Rotator) Ensure(ctx context.Context) error {
	if r.opts.Mode == ModeExternal {
		if err := r.checkFiles(); err != nil {
			return fmt.Errorf("external webhook certificate: %w", err)
		}
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m, err := r.syncSecret(ctx)
	if err != nil {
		return err
	}
	if err := r.patchCABundles(ctx, m.CABundle); err != nil {
		if r.checkFiles() == nil {
			// the files on disk are still valid: keep them until the bundles are known to trust the new ones
			return err
		}
		return errors.Join(err, r.writeFiles(ctx, m))
	}
	return r.writeFiles(ctx, m)
}

// ReadyCheck fails until CertDir holds a certificate and key that match and are valid now (a
// healthz.Checker for the readiness probe).
func (r *Rotator) ReadyCheck(_ *http.Request) error {
	return r.checkFiles()
}

func (r *Rotator) checkFiles() error {
	certPath, keyPath := filepath.Join(r.opts.CertDir, r.opts.CertName), filepath.Join(r.opts.CertDir, r.opts.KeyName)
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return fmt.Errorf("webhook certificate %s: %w", certPath, err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return fmt.Errorf("webhook certificate %s: %w", certPath, err)
	}
	if now := r.clock.Now(); now.Before(cert.NotBefore) || Expired(cert, now) {
		return fmt.Errorf("webhook certificate %s is valid from %s to %s, not now", certPath,
			cert.NotBefore.Format(time.RFC3339), cert.NotAfter.Format(time.RFC3339))
	}
	return nil
}

// syncSecret returns the Secret's content after creating or renewing it if needed. Losing a race to another
// replica (AlreadyExists, Conflict) means reading again and adopting what the other replica wrote.
func (r *Rotator) syncSecret(ctx context.Context) (Material, error) {
	logger := logf.FromContext(ctx)
	key := types.NamespacedName{Namespace: r.opts.SecretNamespace, Name: r.opts.SecretName}
	spec := r.opts.Spec()
	for range maxAttempts {
		now := r.clock.Now()
		var s corev1.Secret
		err := r.client.Get(ctx, key, &s)
		if apierrors.IsNotFound(err) {
			m, reasons, err := Desired(Material{}, now, spec)
			if err != nil {
				return Material{}, err
			}
			s = corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
					Labels: map[string]string{"app.kubernetes.io/managed-by": "hvpa"}},
				Type: corev1.SecretTypeTLS,
			}
			m.into(&s)
			err = r.client.Create(ctx, &s)
			if apierrors.IsAlreadyExists(err) {
				logger.V(1).Info("another replica created the webhook certificate Secret first; reading it", "secret", key)
				continue
			}
			if err != nil {
				return Material{}, fmt.Errorf("creating the webhook certificate Secret %s: %w", key, err)
			}
			logger.Info("created the webhook certificate Secret", "secret", key, "reasons", reasons, "certNotAfter", notAfter(m.Cert))
			return m, nil
		}
		if err != nil {
			return Material{}, fmt.Errorf("reading the webhook certificate Secret %s: %w", key, err)
		}
		current := materialOf(&s)
		m, reasons, err := Desired(current, now, spec)
		if err != nil {
			return Material{}, err
		}
		if len(reasons) == 0 {
			logger.V(2).Info("webhook certificates are current", "secret", key, "certNotAfter", notAfter(m.Cert))
			return current, nil
		}
		m.into(&s)
		err = r.client.Update(ctx, &s) // carries the resourceVersion read: fails if another replica wrote since
		if apierrors.IsConflict(err) {
			logger.V(1).Info("another replica updated the webhook certificate Secret first; reading it", "secret", key)
			continue
		}
		if err != nil {
			return Material{}, fmt.Errorf("updating the webhook certificate Secret %s: %w", key, err)
		}
		logger.Info("renewed the webhook certificates", "secret", key, "reasons", reasons, "certNotAfter", notAfter(m.Cert))
		return m, nil
	}
	return Material{}, fmt.Errorf("webhook certificate Secret %s: still racing other replicas after %d attempts", key, maxAttempts)
}

func materialOf(s *corev1.Secret) Material {
	return Material{CABundle: s.Data[CACertKey], CAKey: s.Data[CAKeyKey], Cert: s.Data[corev1.TLSCertKey], Key: s.Data[corev1.TLSPrivateKeyKey]}
}

func (m Material) into(s *corev1.Secret) {
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data[CACertKey] = m.CABundle
	s.Data[CAKeyKey] = m.CAKey
	s.Data[corev1.TLSCertKey] = m.Cert
	s.Data[corev1.TLSPrivateKeyKey] = m.Key
}

// notAfter is the expiry of the first certificate in PEM data, for logs.
func notAfter(certPEM []byte) string {
	certs, _ := ParseCerts(certPEM)
	if len(certs) == 0 {
		return ""
	}
	return certs[0].NotAfter.Format(time.RFC3339)
}
