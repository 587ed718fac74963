// Package autoscaling_test is the CRD suite: it installs the generated CRDs into a real kube-apiserver
// (the local control plane) and checks that they accept, validate and serve the hvpa APIs.
package autoscaling_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hvpa-dev/hvpa/test/framework"
)

var (
	cluster *framework.Cluster
	env     *envtest.Environment
	cfg     *rest.Config
	k8s     client.Client
)

func TestCRDs(t *testing.T) {
	framework.RunSuite(t, "CRD suite", framework.Integration)
}

var _ = BeforeSuite(func() {
	cluster = framework.StartCluster(framework.Options{})
	env, cfg, k8s = cluster.Env, cluster.Cfg, cluster.Client
})

var _ = AfterSuite(func() { cluster.Stop() })
