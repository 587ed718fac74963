package certs_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/hvpa-dev/hvpa/test/testenv"
)

var (
	env *envtest.Environment
	k8s client.Client
)

func TestCerts(t *testing.T) {
	if testing.Short() {
		t.Skip("the webhook certificates suite needs the local control plane; runs in `make test`, not under -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "Webhook certificates suite")
}

var _ = BeforeSuite(func() {
	logf.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	env, _, k8s, err = testenv.StartWithClient()
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
