// Package certs gives the admission webhook server its TLS certificate.
//
// Two modes (Options.Mode, --cert-mode):
//
//   - ModeSelfManaged (the default): a Rotator keeps a CA and a serving certificate in one Secret, writes the
//     serving certificate and key into the webhook server's certificate folder, and patches the caBundle of
//     the named MutatingWebhookConfigurations and ValidatingWebhookConfigurations. It runs on every replica
//     (no leader election): any replica may create or renew the Secret, with optimistic concurrency
//     (Create, or Update with the resourceVersion read; the loser of a race reads again and adopts the
//     winner's certificates), so all replicas serve the same certificate, signed by one CA.
//   - ModeExternal: the certificate folder is filled by someone else (cert-manager, or a mounted Secret) and
//     the caBundle is injected by someone else (cert-manager's cainjector). The Rotator only checks that the
//     files are there.
//
// The Secret has type kubernetes.io/tls and the keys tls.crt, tls.key (the serving certificate and key),
// ca.crt (every CA that is not expired, PEM, as put into the caBundle) and ca.key (the key of the newest CA,
// which signs serving certificates).
//
// Rotation: the serving certificate is renewed when less than a third of its lifetime remains, when it lacks
// a wanted name, or when it no longer verifies against the bundle. The CA is replaced when less than
// a third of its lifetime remains: the new CA signs every later serving certificate, while the old one stays
// in ca.crt and in the caBundle until it expires, so a replica still serving a certificate of the old CA is
// not rejected during the switch. A serving certificate never outlives the CA that signed it.
//
// Every sync patches the caBundle before it writes new files, so a replica serves a certificate of a new CA
// only after the bundle holds that CA. The certificate and key switch together, in one rename: the folder has
// the layout of a mounted Secret (the files in a generation folder, a ..data symlink to it, and tls.crt and
// tls.key as symlinks through ..data). controller-runtime's webhook server reads them through a certwatcher
// and picks up a new certificate without a restart.
//
// RBAC: get, create and update on secrets in the Secret's namespace (a Role); get and update on
// mutatingwebhookconfigurations and validatingwebhookconfigurations (admissionregistration.k8s.io, a
// ClusterRole, which may name them in resourceNames). RBAC cannot restrict an update to a field: the chart
// adds a ValidatingAdmissionPolicy that lets this identity change only the webhooks' caBundle (nothing else
// of the configurations, no delete), and patchCABundle changes nothing else. CertDir must be writable in
// ModeSelfManaged (an emptyDir).
package certs
