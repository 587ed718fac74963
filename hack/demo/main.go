// Command demo is `make demo`: it starts the local control plane (kube-apiserver and etcd built by
// `make controlplane`) with the hvpa CRDs installed, applies examples/hvpa-kube-apiserver.yaml with the real
// kubectl, shows `kubectl get hvpa`, and keeps the control plane running until Ctrl-C (or --hold runs out).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/hvpa-dev/hvpa/internal/testenv"
)

func main() {
	hold := flag.String("hold", "forever", "how long to keep the control plane running after the demo: a duration (0s exits at once) or forever (until Ctrl-C)")
	flag.Parse()
	if err := run(*hold, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(hold string, out io.Writer) error {
	holdFor := time.Duration(-1)
	if hold != "forever" {
		d, err := time.ParseDuration(hold)
		if err != nil || d < 0 {
			return fmt.Errorf("--hold %q: want a duration such as 30s, 0s, or forever", hold)
		}
		holdFor = d
	}
	root, err := testenv.ModuleRoot()
	if err != nil {
		return err
	}
	assets, err := testenv.AssetsDir()
	if err != nil {
		return err
	}

	fmt.Fprintln(out, "== starting the local control plane (kube-apiserver + etcd", testenv.K8sVersion+") with the hvpa CRDs")
	env, _, err := testenv.Start()
	if err != nil {
		return err
	}
	defer func() {
		fmt.Fprintln(out, "== stopping the local control plane")
		_ = env.Stop()
	}()

	user, err := env.AddUser(envtest.User{Name: "demo", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return err
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, ".cache", "demo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	kubeconfigPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfigPath, kubeconfig, 0o600); err != nil {
		return err
	}
	kubectl := func(args ...string) error {
		fmt.Fprintln(out, "$ kubectl", joinArgs(args))
		cmd := exec.Command(filepath.Join(assets, "kubectl"), append([]string{"--kubeconfig", kubeconfigPath}, args...)...)
		cmd.Stdout, cmd.Stderr = out, out
		return cmd.Run()
	}

	steps := [][]string{
		{"create", "namespace", "demo"},
		{"apply", "-n", "demo", "-f", filepath.Join(root, "examples", "hvpa-kube-apiserver.yaml")},
		{"get", "hvpa", "-n", "demo"},
		{"get", "hvpa", "-n", "demo", "-o", "wide"},
		{"get", "crd", "-o", "custom-columns=NAME:.metadata.name,APPROVED:.metadata.annotations.api-approved\\.kubernetes\\.io"},
	}
	for _, s := range steps {
		if err := kubectl(s...); err != nil {
			return fmt.Errorf("kubectl %s: %w", joinArgs(s), err)
		}
	}
	fmt.Fprintln(out, "\n== an Hvpa whose maxReplicas decrease is refused by the API server:")
	fmt.Fprintln(out, "$ kubectl apply -n demo -f - <<< '<Hvpa with maxReplicas 3, then 2>'")
	bad := exec.Command(filepath.Join(assets, "kubectl"), "--kubeconfig", kubeconfigPath, "apply", "-n", "demo", "-f", "-")
	bad.Stdin = bytes.NewBufferString(invalidHvpa)
	bad.Stdout, bad.Stderr = out, out
	if err := bad.Run(); err == nil {
		return fmt.Errorf("the API server accepted an Hvpa with decreasing maxReplicas")
	}

	fmt.Fprintln(out, "\nThe Hvpa controllers are not part of this build yet, so status columns stay empty; the API,")
	fmt.Fprintln(out, "its validation and the scale subresource are live. Explore it:")
	fmt.Fprintf(out, "  export KUBECONFIG=%s\n", kubeconfigPath)
	fmt.Fprintf(out, "  %s explain hvpa.spec.scalingIntervals\n", filepath.Join(assets, "kubectl"))
	fmt.Fprintf(out, "  %s get hvpa -n demo kube-apiserver -o yaml\n", filepath.Join(assets, "kubectl"))

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	switch {
	case holdFor < 0:
		fmt.Fprintln(out, "\nThe control plane keeps running; press Ctrl-C to stop it.")
		<-ctx.Done()
	case holdFor > 0:
		fmt.Fprintf(out, "\nThe control plane keeps running for %s; press Ctrl-C to stop it earlier.\n", holdFor)
		select {
		case <-ctx.Done():
		case <-time.After(holdFor):
		}
	}
	return nil
}

func joinArgs(args []string) string {
	s := ""
	for i, a := range args {
		if i > 0 {
			s += " "
		}
		s += a
	}
	return s
}

const invalidHvpa = `apiVersion: autoscaling.k8s.io/v1alpha1
kind: Hvpa
metadata:
  name: out-of-order
spec:
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: kube-apiserver}
  scalingIntervals:
    - maxReplicas: 3
      maxResources: {cpu: 1, memory: 2Gi}
    - maxReplicas: 2
      maxResources: {cpu: 2, memory: 4Gi}
`
