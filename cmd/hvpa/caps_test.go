package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestClusterCheck: at start `hvpa run` reads the cluster's version and finds pods/resize by discovery (the
// local control plane, Kubernetes v1.36, serves it). TestRunRecommender runs `hvpa run` with the check.
func TestClusterCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the local control plane")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := startPlayedCluster(ctx, t)

	s, err := checkCluster(cl.env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Supported || !s.InPlaceResize || !strings.HasPrefix(s.Version, "v1.") ||
		!strings.Contains(s.Message(), "supported (1.30 or later); in-place resize: pods/resize is served") {
		t.Errorf("cluster check %+v: %s", s, s.Message())
	}

}
