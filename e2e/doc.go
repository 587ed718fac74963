// Package e2e will hold the Ginkgo suites that start the local control plane, run the built hvpa binary as a
// process and drive it only through the API (issue 9). `make test-e2e` runs them. No suite exists yet.
package e2e
