package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"math/big"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// testSpec has lifetimes in seconds: a CA lives 900 s (renewed after 600 s), a serving certificate 90 s
// (renewed after 60 s; backdated by 9 s).
var testSpec = Spec{
	DNSNames:     []string{"hvpa-webhook.hvpa-system.svc", "hvpa-webhook.hvpa-system.svc.cluster.local", "hvpa-webhook", "localhost"},
	IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	CAValidity:   900 * time.Second,
	CertValidity: 90 * time.Second,
}

func TestRenewal(t *testing.T) {
	cert := &x509.Certificate{NotBefore: t0, NotAfter: t0.Add(300 * time.Second)}
	if got, want := RenewAt(cert), t0.Add(200*time.Second); !got.Equal(want) {
		t.Fatalf("RenewAt = %v, want %v (a third of the lifetime before NotAfter)", got, want)
	}
	for name, tc := range map[string]struct {
		now                    time.Time
		wantRenew, wantExpired bool
	}{
		"before NotBefore":               {now: t0.Add(-time.Second)},
		"just issued":                    {now: t0},
		"just before two thirds":         {now: t0.Add(200*time.Second - time.Nanosecond)},
		"at two thirds":                  {now: t0.Add(200 * time.Second), wantRenew: true},
		"just before expiry":             {now: t0.Add(300*time.Second - time.Nanosecond), wantRenew: true},
		"at NotAfter":                    {now: t0.Add(300 * time.Second), wantRenew: true, wantExpired: true},
		"long expired":                   {now: t0.Add(24 * time.Hour), wantRenew: true, wantExpired: true},
		"at two thirds, other time zone": {now: t0.Add(200 * time.Second).In(time.FixedZone("UTC+2", 7200)), wantRenew: true},
	} {
		t.Run(name, func(t *testing.T) {
			if got := NeedsRenewal(cert, tc.now); got != tc.wantRenew {
				t.Errorf("NeedsRenewal = %v, want %v", got, tc.wantRenew)
			}
			if got := Expired(cert, tc.now); got != tc.wantExpired {
				t.Errorf("Expired = %v, want %v", got, tc.wantExpired)
			}
		})
	}
}

func TestIssue(t *testing.T) {
	ca, err := NewCA("test-ca", t0, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !ca.Cert.IsCA || ca.Cert.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Fatalf("CA certificate: IsCA %v, key usage %v", ca.Cert.IsCA, ca.Cert.KeyUsage)
	}
	for name, tc := range map[string]struct {
		validity                    time.Duration
		wantNotBefore, wantNotAfter time.Time
	}{
		"within the CA's lifetime": {validity: 10 * time.Minute, wantNotBefore: t0.Add(-time.Minute), wantNotAfter: t0.Add(10 * time.Minute)},
		"capped at the CA's expiry, not before the CA": {validity: 48 * time.Hour, wantNotBefore: ca.Cert.NotBefore,
			wantNotAfter: ca.Cert.NotAfter},
	} {
		t.Run(name, func(t *testing.T) {
			certPEM, keyPEM, err := ca.Issue(testSpec.DNSNames, testSpec.IPAddresses, t0, tc.validity)
			if err != nil {
				t.Fatal(err)
			}
			cert := onlyCert(t, certPEM)
			if diff := cmp.Diff(testSpec.DNSNames, cert.DNSNames); diff != "" {
				t.Errorf("DNS names (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"127.0.0.1"}, ipStrings(cert.IPAddresses)); diff != "" {
				t.Errorf("IP addresses (-want +got):\n%s", diff)
			}
			if got, want := cert.Subject.CommonName, testSpec.DNSNames[0]; got != want {
				t.Errorf("common name %q, want %q", got, want)
			}
			if !cert.NotBefore.Equal(tc.wantNotBefore) || !cert.NotAfter.Equal(tc.wantNotAfter) {
				t.Errorf("valid %v to %v, want %v to %v", cert.NotBefore, cert.NotAfter, tc.wantNotBefore, tc.wantNotAfter)
			}
			if diff := cmp.Diff([]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, cert.ExtKeyUsage); diff != "" {
				t.Errorf("extended key usage (-want +got):\n%s", diff)
			}
			pub, ok := cert.PublicKey.(*ecdsa.PublicKey)
			if !ok || pub.Curve != elliptic.P256() {
				t.Errorf("public key %T, want ECDSA P-256", cert.PublicKey)
			}
			if r, _ := certReason(certPEM, keyPEM, []*x509.Certificate{ca.Cert}, t0, testSpec); r != "" {
				t.Errorf("a fresh certificate is not fine: %s", r)
			}
			pool := x509.NewCertPool()
			pool.AddCert(ca.Cert)
			for _, host := range append(testSpec.DNSNames, "127.0.0.1") {
				if _, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: pool, CurrentTime: t0}); err != nil {
					t.Errorf("does not verify for %s: %v", host, err)
				}
			}
			if _, err := cert.Verify(x509.VerifyOptions{DNSName: "other.example", Roots: pool, CurrentTime: t0}); err == nil {
				t.Error("verifies for a name it was not issued for")
			}
		})
	}
}

func TestDropExpired(t *testing.T) {
	a := &x509.Certificate{SerialNumber: bigInt(1), NotAfter: t0.Add(time.Hour)}
	b := &x509.Certificate{SerialNumber: bigInt(2), NotAfter: t0.Add(2 * time.Hour)}
	for name, tc := range map[string]struct {
		in   []*x509.Certificate
		now  time.Time
		want []*x509.Certificate
	}{
		"none":               {now: t0},
		"both valid":         {in: []*x509.Certificate{a, b}, now: t0, want: []*x509.Certificate{a, b}},
		"first expires":      {in: []*x509.Certificate{a, b}, now: t0.Add(time.Hour), want: []*x509.Certificate{b}},
		"order kept":         {in: []*x509.Certificate{b, a}, now: t0.Add(time.Hour - time.Nanosecond), want: []*x509.Certificate{b, a}},
		"all expired":        {in: []*x509.Certificate{a, b}, now: t0.Add(3 * time.Hour)},
		"second one expired": {in: []*x509.Certificate{b, a}, now: t0.Add(90 * time.Minute), want: []*x509.Certificate{b}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(serials(tc.want), serials(DropExpired(tc.in, tc.now))); diff != "" {
				t.Errorf("kept serials (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseCerts(t *testing.T) {
	a, b := mustCA(t, t0), mustCA(t, t0)
	bundle := EncodeCerts([]*x509.Certificate{a.Cert, b.Cert})
	for name, tc := range map[string]struct {
		data    []byte
		want    int
		wantErr bool
	}{
		"empty":          {},
		"two":            {data: bundle, want: 2},
		"trailing junk":  {data: append(bytes.Clone(bundle), "junk"...), want: 2, wantErr: true},
		"a key inside":   {data: append(bytes.Clone(bundle), mustKeyPEM(t, a)...), want: 2, wantErr: true},
		"only junk":      {data: []byte("junk"), wantErr: true},
		"trailing space": {data: append(bytes.Clone(bundle), "\n\n"...), want: 2},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ParseCerts(tc.data)
			if len(got) != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("ParseCerts = %d certificates, error %v; want %d, error %v", len(got), err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	start := mustDesired(t, Material{}, t0, testSpec)
	startCert := onlyCert(t, start.Cert)
	other := mustDesired(t, Material{}, t0, testSpec) // another CA and certificate
	otherName := testSpec
	otherName.DNSNames = append([]string{"hvpa-webhook.other.svc"}, testSpec.DNSNames[1:]...)
	fewerNames := testSpec
	fewerNames.DNSNames, fewerNames.IPAddresses = testSpec.DNSNames[:3], nil
	otherIP := testSpec
	otherIP.IPAddresses = []net.IP{net.ParseIP("::1")}

	for name, tc := range map[string]struct {
		current  Material
		now      time.Time
		spec     Spec
		want     []Reason
		sameCA   bool
		sameCert bool
	}{
		"nothing yet": {now: t0, spec: testSpec, want: []Reason{ReasonCAMissing, ReasonCertMissing}},
		"current":     {current: start, now: t0.Add(30 * time.Second), spec: testSpec, sameCA: true, sameCert: true},
		"just before the certificate's renewal": {current: start, now: RenewAt(startCert).Add(-time.Nanosecond), spec: testSpec,
			sameCA: true, sameCert: true},
		"certificate due":        {current: start, now: RenewAt(startCert), spec: testSpec, want: []Reason{ReasonCertExpiring}, sameCA: true},
		"certificate expired":    {current: start, now: startCert.NotAfter.Add(10 * time.Second), spec: testSpec, want: []Reason{ReasonCertExpiring}, sameCA: true},
		"a name missing":         {current: start, now: t0, spec: otherName, want: []Reason{ReasonNamesChanged}, sameCA: true},
		"an IP missing":          {current: start, now: t0, spec: otherIP, want: []Reason{ReasonNamesChanged}, sameCA: true},
		"names no longer wanted": {current: start, now: t0, spec: fewerNames, sameCA: true, sameCert: true},
		"names reordered":        {current: start, now: t0, spec: reversed(testSpec), sameCA: true, sameCert: true},
		"clock behind the other": {current: start, now: startCert.NotBefore.Add(-time.Minute), spec: testSpec, sameCA: true, sameCert: true},
		"certificate of another CA": {current: Material{CABundle: start.CABundle, CAKey: start.CAKey, Cert: other.Cert, Key: other.Key},
			now: t0, spec: testSpec, want: []Reason{ReasonCertUntrusted}, sameCA: true},
		"key of another certificate": {current: Material{CABundle: start.CABundle, CAKey: start.CAKey, Cert: start.Cert, Key: other.Key},
			now: t0, spec: testSpec, want: []Reason{ReasonCertInvalid}, sameCA: true},
		"no serving key":  {current: Material{CABundle: start.CABundle, CAKey: start.CAKey, Cert: start.Cert}, now: t0, spec: testSpec, want: []Reason{ReasonCertMissing}, sameCA: true},
		"CA key lost":     {current: Material{CABundle: start.CABundle, Cert: start.Cert, Key: start.Key}, now: t0, spec: testSpec, want: []Reason{ReasonCAMissing}, sameCert: true},
		"CA key of other": {current: Material{CABundle: start.CABundle, CAKey: other.CAKey, Cert: start.Cert, Key: start.Key}, now: t0, spec: testSpec, want: []Reason{ReasonCAMissing}, sameCert: true},
		"junk everywhere": {current: Material{CABundle: []byte("junk"), CAKey: []byte("junk"), Cert: []byte("junk"), Key: []byte("junk")}, now: t0,
			spec: testSpec, want: []Reason{ReasonCAInvalid, ReasonCAMissing, ReasonCertInvalid}},
	} {
		t.Run(name, func(t *testing.T) {
			got, reasons, err := Desired(tc.current, tc.now, tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, reasons); diff != "" {
				t.Errorf("reasons (-want +got):\n%s", diff)
			}
			if len(reasons) == 0 && !equalMaterial(got, tc.current) {
				t.Error("no reasons, but the material changed")
			}
			if same := bytes.Equal(got.CAKey, tc.current.CAKey); same != tc.sameCA {
				t.Errorf("same CA key: %v, want %v", same, tc.sameCA)
			}
			if same := bytes.Equal(got.Cert, tc.current.Cert) && bytes.Equal(got.Key, tc.current.Key); same != tc.sameCert {
				t.Errorf("same serving certificate: %v, want %v", same, tc.sameCert)
			}
			verifies(t, got, tc.now, tc.spec)
			if again, reasons, err := Desired(got, tc.now, tc.spec); err != nil || len(reasons) != 0 || !equalMaterial(again, got) {
				t.Errorf("not settled: again %v, error %v", reasons, err)
			}
		})
	}
}

// TestTwoVersions: replicas of two versions that want different names (a rolling upgrade) settle on one
// certificate with both sets of names instead of taking turns; a renewal drops the names no longer wanted.
func TestTwoVersions(t *testing.T) {
	old, upgraded := testSpec, testSpec
	upgraded.DNSNames = append([]string{"hvpa.hvpa-system.svc"}, testSpec.DNSNames[1:]...)
	m := mustDesired(t, Material{}, t0, old)
	m = mustDesired(t, m, t0.Add(time.Second), upgraded, ReasonNamesChanged)
	for i := range 4 {
		spec := []Spec{old, upgraded}[i%2]
		if _, reasons, err := Desired(m, t0.Add(time.Duration(2+i)*time.Second), spec); err != nil || len(reasons) != 0 {
			t.Fatalf("sync %d by the %s version: %v (%v)", i, []string{"old", "upgraded"}[i%2], reasons, err)
		}
	}
	want := []string{"hvpa.hvpa-system.svc", "hvpa-webhook.hvpa-system.svc.cluster.local", "hvpa-webhook", "localhost", "hvpa-webhook.hvpa-system.svc"}
	if diff := cmp.Diff(want, onlyCert(t, m.Cert).DNSNames); diff != "" {
		t.Errorf("names while both versions run (-want +got):\n%s", diff)
	}
	m = mustDesired(t, m, RenewAt(onlyCert(t, m.Cert)), upgraded, ReasonCertExpiring)
	if diff := cmp.Diff(upgraded.DNSNames, onlyCert(t, m.Cert).DNSNames); diff != "" {
		t.Errorf("names after the renewal (-want +got):\n%s", diff)
	}
}

// TestCARollover walks one CA rollover: the new CA joins the bundle while the old one still vouches for the
// served certificate; new certificates come from the new CA; the old CA leaves the bundle when it expires.
func TestCARollover(t *testing.T) {
	m := mustDesired(t, Material{}, t0, testSpec)
	oldCA := onlyCert(t, m.CABundle)

	// just before the CA is due, the serving certificate is renewed by the old CA
	beforeDue := RenewAt(oldCA).Add(-time.Second)
	m = mustDesired(t, m, beforeDue, testSpec, ReasonCertExpiring)
	served := m.Cert

	// the CA is due: a new CA joins, the served certificate stays and still verifies
	m = mustDesired(t, m, RenewAt(oldCA), testSpec, ReasonCAExpiring)
	if !bytes.Equal(m.Cert, served) {
		t.Fatal("the serving certificate changed with the CA; it should stay until it is due")
	}
	cas, _ := ParseCerts(m.CABundle)
	if len(cas) != 2 || !cas[0].Equal(oldCA) {
		t.Fatalf("bundle after the rollover has %d CAs (the old one first: %v), want both", len(cas), len(cas) > 0 && cas[0].Equal(oldCA))
	}
	newCA := cas[1]
	verifies(t, m, RenewAt(oldCA), testSpec)

	// the next serving certificate comes from the new CA; both CAs stay
	due := RenewAt(onlyCert(t, served))
	m = mustDesired(t, m, due, testSpec, ReasonCertExpiring)
	if got := onlyCert(t, m.Cert); !bytes.Equal(got.RawIssuer, newCA.RawSubject) {
		t.Errorf("the renewed certificate is issued by %s, want the new CA %s", got.Issuer, newCA.Subject)
	}
	if cas, _ := ParseCerts(m.CABundle); len(cas) != 2 {
		t.Errorf("bundle has %d CAs before the old one expires, want 2", len(cas))
	}

	// the old CA expires and leaves the bundle (the certificate, not renewed since, is due too)
	m = mustDesired(t, m, oldCA.NotAfter, testSpec, ReasonCAExpired, ReasonCertExpiring)
	if cas, _ := ParseCerts(m.CABundle); len(cas) != 1 || !cas[0].Equal(newCA) {
		t.Errorf("bundle after the old CA expired: %d CAs, want only the new one", len(cas))
	}
	verifies(t, m, oldCA.NotAfter, testSpec)
}

// TestNoOutage syncs at random intervals (shorter than a third of the certificate's lifetime) over three CA
// lifetimes and checks after every sync: the result is settled (no flip-flop), the served certificate
// verifies against the bundle, and the previously served certificate does too while it has not expired (a
// replica that has not synced yet is not rejected), with at most two CAs in the bundle.
func TestNoOutage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := mustDesired(t, Material{}, t0, testSpec)
	rollovers := 0
	for now := t0; now.Before(t0.Add(3 * testSpec.CAValidity)); {
		prev := m
		now = now.Add(time.Duration(1+rng.IntN(29)) * time.Second)
		var reasons []Reason
		var err error
		m, reasons, err = Desired(prev, now, testSpec)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range reasons {
			if r != ReasonCertExpiring && r != ReasonCAExpiring && r != ReasonCAExpired {
				t.Fatalf("at %v: unexpected reason %s", now.Sub(t0), r)
			}
			if r == ReasonCAExpiring {
				rollovers++
			}
		}
		if _, again, _ := Desired(m, now, testSpec); len(again) != 0 {
			t.Fatalf("at %v: not settled, again %v", now.Sub(t0), again)
		}
		verifies(t, m, now, testSpec)
		if c := onlyCert(t, prev.Cert); !Expired(c, now) {
			pool, err := Bundle(m.CABundle)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now}); err != nil {
				t.Fatalf("at %v: the previous certificate is rejected by the new bundle: %v", now.Sub(t0), err)
			}
		}
		if cas, _ := ParseCerts(m.CABundle); len(cas) > 2 {
			t.Fatalf("at %v: %d CAs in the bundle", now.Sub(t0), len(cas))
		}
	}
	if rollovers < 3 {
		t.Errorf("%d CA rollovers in three CA lifetimes, want at least 3", rollovers)
	}
}

// verifies checks that the material's serving certificate matches its key, is valid at now and verifies
// against the bundle for every name in spec.
func verifies(t *testing.T, m Material, now time.Time, spec Spec) {
	t.Helper()
	if r, _ := certReason(m.Cert, m.Key, mustParseCerts(t, m.CABundle), now, spec); r != "" {
		t.Fatalf("serving certificate: %s", r)
	}
	cert := onlyCert(t, m.Cert)
	pool, err := Bundle(m.CABundle)
	if err != nil {
		t.Fatal(err)
	}
	at := now
	if at.Before(cert.NotBefore) { // this replica's clock is behind the issuer's
		at = cert.NotBefore
	}
	for _, host := range spec.DNSNames {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: pool, CurrentTime: at}); err != nil {
			t.Fatalf("serving certificate for %s at %v: %v", host, now, err)
		}
	}
	if signer := findSigner(mustParseCerts(t, m.CABundle), m.CAKey); signer == nil {
		t.Fatal("no CA in the bundle matches the CA key")
	}
}

func mustDesired(t *testing.T, current Material, now time.Time, spec Spec, want ...Reason) Material {
	t.Helper()
	m, reasons, err := Desired(current, now, spec)
	if err != nil {
		t.Fatal(err)
	}
	if want != nil {
		if diff := cmp.Diff(want, reasons); diff != "" {
			t.Fatalf("at %v: reasons (-want +got):\n%s", now.Sub(t0), diff)
		}
	}
	return m
}

func mustCA(t *testing.T, now time.Time) *CA {
	t.Helper()
	ca, err := NewCA("test-ca", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func mustKeyPEM(t *testing.T, ca *CA) []byte {
	t.Helper()
	b, err := encodeKey(ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustParseCerts(t *testing.T, data []byte) []*x509.Certificate {
	t.Helper()
	certs, err := ParseCerts(data)
	if err != nil {
		t.Fatal(err)
	}
	return certs
}

func onlyCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	certs := mustParseCerts(t, data)
	if len(certs) == 0 {
		t.Fatal("no certificate")
	}
	return certs[0]
}

func equalMaterial(a, b Material) bool {
	return bytes.Equal(a.CABundle, b.CABundle) && bytes.Equal(a.CAKey, b.CAKey) && bytes.Equal(a.Cert, b.Cert) && bytes.Equal(a.Key, b.Key)
}

func reversed(s Spec) Spec {
	out := s
	out.DNSNames = nil
	for i := len(s.DNSNames) - 1; i >= 0; i-- {
		out.DNSNames = append(out.DNSNames, s.DNSNames[i])
	}
	return out
}

func ipStrings(ips []net.IP) []string {
	var out []string
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}

func bigInt(i int64) *big.Int { return big.NewInt(i) }

func serials(certs []*x509.Certificate) []string {
	var out []string
	for _, c := range certs {
		out = append(out, c.SerialNumber.String())
	}
	return out
}
