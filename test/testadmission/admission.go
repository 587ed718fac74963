// Package testadmission installs hvpa's admission webhooks into a local control plane for the suites and
// the demo: the configurations pointed at a webhook server on 127.0.0.1, and the certificate options.
package testadmission

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/hvpa-dev/hvpa/webhooks"
	"github.com/hvpa-dev/hvpa/webhooks/certs"
)

// AdmissionNamespace holds the webhook's certificate Secret and the admission Lease in the suites.
const AdmissionNamespace = "hvpa-system"

// AdmissionLease is the Lease the suites' webhook renews and their updaters check.
var AdmissionLease = types.NamespacedName{Namespace: AdmissionNamespace, Name: "hvpa-admission"}

// URLConfig points the API server at a webhook server on this machine.
func URLConfig(port int) func(string) admissionregistrationv1.WebhookClientConfig {
	return func(path string) admissionregistrationv1.WebhookClientConfig {
		u := (&url.URL{Scheme: "https", Host: fmt.Sprintf("127.0.0.1:%d", port), Path: path}).String()
		return admissionregistrationv1.WebhookClientConfig{URL: &u}
	}
}

// InstallAdmission installs the webhook configurations named name as the chart does, pointed at a webhook
// server on 127.0.0.1:port and without a caBundle (the certificate rotator fills it in), creates
// AdmissionNamespace, and returns the certificate and webhook server options for a manager serving them.
// The pod webhook is not called for the namespaces in exclude (nor the defaults and AdmissionNamespace).
func InstallAdmission(ctx context.Context, c client.Client, name string, port int, certDir string, exclude ...string) (certs.Options, webhook.Options, error) {
	mutating, validating := webhooks.Configurations(name, URLConfig(port), webhooks.DefaultTimeoutSeconds,
		append(append(slices.Clone(webhooks.DefaultExcludedNamespaces), AdmissionNamespace), exclude...))
	for _, o := range []client.Object{mutating, validating, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: AdmissionNamespace}}} {
		if err := c.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return certs.Options{}, webhook.Options{}, err
		}
	}
	co := certs.DefaultOptions()
	co.CertDir = certDir
	co.SecretNamespace, co.SecretName = AdmissionNamespace, "hvpa-webhook-certs"
	co.ServiceNamespace, co.ServiceName = AdmissionNamespace, "hvpa-webhook"
	co.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	co.MutatingWebhookConfigurations, co.ValidatingWebhookConfigurations = []string{name}, []string{name}
	wo := co.WebhookServerOptions()
	wo.Host, wo.Port = "127.0.0.1", port
	return co, wo, nil
}
