// Package e2e holds the end-to-end suite: it starts the local control plane (kube-apiserver, etcd,
// kube-controller-manager with the HPA, deployment, replicaset, disruption and garbage-collector
// controllers), renders the Helm chart (with e2e/testdata/values.yaml: short loops, the InPlace gate) and
// runs the built hvpa binary once per rendered Deployment with exactly its arguments, plus what this machine
// needs instead of a cluster (a kubeconfig, listen addresses, a certificate folder). It drives everything
// through the API, with the played kubelet and metrics API standing in for nodes and container usage. A real
// Prometheus (test/prometheus) scrapes the processes as the chart's ServiceMonitors would; at the end every
// dashboard query must return series over the run, and `make dashboards` renders the images from its data.
// `make test-e2e` runs it; `make test` includes it.
package e2e
