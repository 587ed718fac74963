// Package e2e holds the end-to-end suite: it starts the local control plane (kube-apiserver, etcd,
// kube-controller-manager with the HPA, deployment, replicaset, disruption and garbage-collector
// controllers), runs the built hvpa binary as a process with the arguments the Helm chart gives it, and
// drives everything through the API, with the played kubelet and metrics API standing in for nodes and
// container usage. `make test-e2e` runs it; `make test` includes it.
package e2e
