package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strconv"
	"time"
)

// Reason says why Desired changed the certificates. Several can apply at once.
type Reason string

const (
	// ReasonCAMissing: no CA key, or no certificate in the bundle matches it; a new CA is created.
	ReasonCAMissing Reason = "CAMissing"
	// ReasonCAInvalid: the bundle holds something that is not a certificate; it is rewritten.
	ReasonCAInvalid Reason = "CAInvalid"
	// ReasonCAExpiring: less than a third of the signing CA's lifetime remains; a new CA is added.
	ReasonCAExpiring Reason = "CAExpiring"
	// ReasonCAExpired: an expired CA was dropped from the bundle.
	ReasonCAExpired Reason = "CAExpired"
	// ReasonCertMissing: no serving certificate or key.
	ReasonCertMissing Reason = "CertMissing"
	// ReasonCertInvalid: the serving certificate or key does not parse, or they do not match.
	ReasonCertInvalid Reason = "CertInvalid"
	// ReasonCertExpiring: less than a third of the serving certificate's lifetime remains.
	ReasonCertExpiring Reason = "CertExpiring"
	// ReasonNamesChanged: the serving certificate lacks a wanted DNS name or IP address. The new one has the
	// wanted names and the old one's, so replicas of two versions that want different names (a rolling
	// upgrade) do not take turns replacing it; a renewal for another reason drops names no longer wanted.
	ReasonNamesChanged Reason = "NamesChanged"
	// ReasonCertUntrusted: the serving certificate does not verify against the bundle.
	ReasonCertUntrusted Reason = "CertUntrusted"
)

// maxBackdate bounds how far NotBefore is put before the issue time, so that a verifier whose clock is a
// little behind accepts a fresh certificate. Short lifetimes (tests) are backdated by a tenth of the lifetime.
const maxBackdate = time.Hour

// Spec is what the certificates must look like.
type Spec struct {
	// DNSNames and IPAddresses are the serving certificate's subject alternative names; the first DNS name
	// is also its common name.
	DNSNames    []string
	IPAddresses []net.IP
	// CAValidity and CertValidity are the lifetimes of a new CA and of a new serving certificate.
	CAValidity, CertValidity time.Duration
}

// Material is the PEM content of the Secret.
type Material struct {
	// CABundle is every trusted CA certificate (ca.crt, the caBundle).
	CABundle []byte
	// CAKey is the private key of the newest CA, the one that signs (ca.key).
	CAKey []byte
	// Cert and Key are the serving certificate and its private key (tls.crt, tls.key).
	Cert, Key []byte
}

// CA is a certificate authority that can sign serving certificates.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
}

// NewCA creates a self-signed CA with an ECDSA P-256 key, valid from now (backdated a little) for validity.
// The common name gets the issue time appended, so that successive CAs have distinct subjects.
func NewCA(commonName string, now time.Time, validity time.Duration) (*CA, error) {
	if validity <= 0 {
		return nil, fmt.Errorf("CA validity %v: must be positive", validity)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName + "@" + strconv.FormatInt(now.Unix(), 10)},
		NotBefore:             now.Add(-backdate(validity)).UTC(),
		NotAfter:              now.Add(validity).UTC(),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("creating the CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// Issue creates a serving certificate (server auth) for the DNS names and IP addresses with a new ECDSA
// P-256 key, valid from now (backdated a little, not before the CA) for validity but never after the CA
// expires. It returns the certificate and key as PEM.
func (ca *CA) Issue(dnsNames []string, ips []net.IP, now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if validity <= 0 {
		return nil, nil, fmt.Errorf("certificate validity %v: must be positive", validity)
	}
	if len(dnsNames) == 0 && len(ips) == 0 {
		return nil, nil, errors.New("a serving certificate needs at least one DNS name or IP address")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the serving key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	notBefore := now.Add(-backdate(validity))
	if notBefore.Before(ca.Cert.NotBefore) {
		notBefore = ca.Cert.NotBefore
	}
	notAfter := now.Add(validity)
	if notAfter.After(ca.Cert.NotAfter) {
		notAfter = ca.Cert.NotAfter
	}
	cn := ""
	if len(dnsNames) > 0 {
		cn = dnsNames[0]
	} else {
		cn = ips[0].String()
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     slices.Clone(dnsNames),
		IPAddresses:  slices.Clone(ips),
		NotBefore:    notBefore.UTC(),
		NotAfter:     notAfter.UTC(),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, key.Public(), ca.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the serving certificate: %w", err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// RenewAt is when a certificate is due for renewal: when a third of its lifetime remains.
func RenewAt(cert *x509.Certificate) time.Time {
	return cert.NotAfter.Add(-cert.NotAfter.Sub(cert.NotBefore) / 3)
}

// NeedsRenewal tells whether the certificate is due for renewal at now.
func NeedsRenewal(cert *x509.Certificate, now time.Time) bool {
	return !now.Before(RenewAt(cert))
}

// Expired tells whether the certificate is no longer valid at now.
func Expired(cert *x509.Certificate, now time.Time) bool {
	return !now.Before(cert.NotAfter)
}

// DropExpired returns the certificates that have not expired at now, in their order.
func DropExpired(certs []*x509.Certificate, now time.Time) []*x509.Certificate {
	var out []*x509.Certificate
	for _, c := range certs {
		if !Expired(c, now) {
			out = append(out, c)
		}
	}
	return out
}

// EncodeCerts returns the certificates as concatenated PEM blocks.
func EncodeCerts(certs []*x509.Certificate) []byte {
	var b bytes.Buffer
	for _, c := range certs {
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
	}
	return b.Bytes()
}

// ParseCerts returns the certificates in PEM data. It returns the ones it could parse together with an error
// when something else is there too (another block type, a broken certificate, trailing data).
func ParseCerts(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	var errs []error
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			errs = append(errs, fmt.Errorf("unexpected PEM block %q", block.Type))
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		certs = append(certs, c)
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		errs = append(errs, errors.New("data that is not PEM"))
	}
	return certs, errors.Join(errs...)
}

// Bundle returns a pool of the certificates in the PEM bundle.
func Bundle(data []byte) (*x509.CertPool, error) {
	certs, err := ParseCerts(data)
	if err != nil {
		return nil, err
	}
	if len(certs) == 0 {
		return nil, errors.New("no certificate in the bundle")
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// Desired returns the Secret content wanted at now, starting from the current one, and why it changed (no
// reasons: nothing to do, and the returned Material is current, byte for byte). The newest CA signs; older
// CAs stay in the bundle until they expire; a serving certificate is issued only when the current one is
// missing, invalid, due for renewal, for other names, or untrusted.
func Desired(current Material, now time.Time, spec Spec) (Material, []Reason, error) {
	var reasons []Reason
	out := current

	cas, err := ParseCerts(current.CABundle)
	if err != nil {
		reasons = append(reasons, ReasonCAInvalid)
	}
	if live := DropExpired(cas, now); len(live) < len(cas) {
		cas = live
		reasons = append(reasons, ReasonCAExpired)
	}
	signer := findSigner(cas, current.CAKey)
	if signer == nil || NeedsRenewal(signer.Cert, now) {
		if signer == nil {
			reasons = append(reasons, ReasonCAMissing)
		} else {
			reasons = append(reasons, ReasonCAExpiring)
		}
		if signer, err = NewCA("hvpa-webhook-ca", now, spec.CAValidity); err != nil {
			return current, nil, err
		}
		if out.CAKey, err = encodeKey(signer.Key); err != nil {
			return current, nil, err
		}
		cas = append(cas, signer.Cert)
	}
	if len(reasons) > 0 {
		out.CABundle = EncodeCerts(cas)
	}

	if r, cert := certReason(current.Cert, current.Key, cas, now, spec); r != "" {
		reasons = append(reasons, r)
		dnsNames, ips := spec.DNSNames, spec.IPAddresses
		if r == ReasonNamesChanged {
			dnsNames, ips = union(dnsNames, cert.DNSNames), unionIPs(ips, cert.IPAddresses)
		}
		if out.Cert, out.Key, err = signer.Issue(dnsNames, ips, now, spec.CertValidity); err != nil {
			return current, nil, err
		}
	}
	if len(reasons) == 0 {
		return current, nil, nil
	}
	return out, reasons, nil
}

// certReason says why the serving certificate must be issued again, or "" when it is fine; it returns the
// parsed certificate when there is one.
func certReason(certPEM, keyPEM []byte, cas []*x509.Certificate, now time.Time, spec Spec) (Reason, *x509.Certificate) {
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return ReasonCertMissing, nil
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return ReasonCertInvalid, nil
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return ReasonCertInvalid, nil
	}
	if NeedsRenewal(cert, now) {
		return ReasonCertExpiring, cert
	}
	if !covers(cert, spec) {
		return ReasonNamesChanged, cert
	}
	pool := x509.NewCertPool()
	for _, ca := range cas {
		pool.AddCert(ca)
	}
	// verify the chain only: a replica whose clock is behind the issuer's must not issue again
	at := now
	if at.Before(cert.NotBefore) {
		at = cert.NotBefore
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: at, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return ReasonCertUntrusted, cert
	}
	return "", cert
}

// covers tells whether the certificate has every wanted DNS name and IP address.
func covers(cert *x509.Certificate, spec Spec) bool {
	for _, n := range spec.DNSNames {
		if !slices.Contains(cert.DNSNames, n) {
			return false
		}
	}
	for _, ip := range spec.IPAddresses {
		if !slices.ContainsFunc(cert.IPAddresses, ip.Equal) {
			return false
		}
	}
	return true
}

// union returns a, then the names of b that a lacks.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, n := range b {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// unionIPs returns a, then the addresses of b that a lacks.
func unionIPs(a, b []net.IP) []net.IP {
	out := slices.Clone(a)
	for _, ip := range b {
		if !slices.ContainsFunc(out, ip.Equal) {
			out = append(out, ip)
		}
	}
	return out
}

// findSigner returns the CA whose certificate in cas matches the PEM key, the newest if several do.
func findSigner(cas []*x509.Certificate, keyPEM []byte) *CA {
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return nil
	}
	var found *CA
	for _, c := range cas {
		if c.IsCA && pub.Equal(c.PublicKey) && (found == nil || c.NotAfter.After(found.Cert.NotAfter)) {
			found = &CA{Cert: c, Key: key}
		}
	}
	return found
}

func parseKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM key")
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("unexpected PEM block %q", block.Type)
	}
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("key type %T cannot sign", key)
	}
	return signer, nil
}

func encodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding the key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func newSerial() (*big.Int, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("generating a serial number: %w", err)
	}
	return serial, nil
}

func backdate(validity time.Duration) time.Duration {
	return min(maxBackdate, validity/10)
}
