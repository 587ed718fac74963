// Package e2e holds the end-to-end suite: it starts the local control plane (kube-apiserver, etcd,
// kube-controller-manager with the HPA, deployment, replicaset, disruption and garbage-collector
// controllers), renders the Helm chart (with e2e/testdata/values.yaml: short loops, the InPlace gate) and
// runs the built hvpa binary once per rendered Deployment with exactly its arguments, plus what this machine
// needs instead of a cluster (a kubeconfig, listen addresses, a certificate folder). It drives everything
// through the API, with the played kubelet and metrics API standing in for nodes and container usage, and
// records the processes' /metrics for the dashboard images. `make test-e2e` runs it; `make test` includes it.
package e2e
