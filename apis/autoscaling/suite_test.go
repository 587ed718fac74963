// Package autoscaling_test is the CRD suite: it installs the generated CRDs into a real kube-apiserver
// (the local control plane) and checks that they accept, validate and serve the hvpa APIs.
package autoscaling_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hvpa-dev/hvpa/test/testenv"
)

var (
	env *envtest.Environment
	cfg *rest.Config
	k8s client.Client
)

func TestCRDs(t *testing.T) {
	if testing.Short() {
		t.Skip("CRD suite needs the local control plane; runs in `make test`, not under -short")
	}
	RegisterFailHandler(Fail)
	RunSpecs(t, "CRD suite")
}

var _ = BeforeSuite(func() {
	var err error
	env, cfg, k8s, err = testenv.StartWithClient()
	Expect(err).NotTo(HaveOccurred())
})

var _ = AfterSuite(func() {
	if env != nil {
		Expect(env.Stop()).To(Succeed())
	}
})
