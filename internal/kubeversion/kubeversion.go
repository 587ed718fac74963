// Package kubeversion checks, at start, that the cluster runs a Kubernetes version hvpa supports and whether
// it serves in-place resize (the pods/resize subresource): without it the updater evicts instead.
package kubeversion

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
)

// MinMinor is the oldest Kubernetes minor version (1.MinMinor) hvpa supports: the CRDs' validation rules use
// CEL's quantity library, the chart's policy is a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1),
// and native sidecars are on by default.
const MinMinor = 30

// InPlaceMinor is the first minor version whose pods/resize is on by default (beta); the check is by
// discovery, so a cluster that enables the alpha gate earlier is found too.
const InPlaceMinor = 33

// Support is what the cluster offers hvpa.
type Support struct {
	// Version is the server's version as it reports it (e.g. v1.36.3).
	Version string
	// Minor is the server's minor version (0: unknown).
	Minor int
	// Supported: Minor >= MinMinor (an unparsable version is taken as supported, and said).
	Supported bool
	// InPlaceResize: the core API serves pods/resize.
	InPlaceResize bool
}

// Check reads the server's version and the core API's resources (v1) into Support.
func Check(v *version.Info, core *metav1.APIResourceList) Support {
	s := Support{Supported: true}
	if v != nil {
		s.Version = v.GitVersion
		if v.Major == "1" {
			if m, err := strconv.Atoi(strings.TrimRight(v.Minor, "+")); err == nil {
				s.Minor = m
				s.Supported = m >= MinMinor
			}
		}
	}
	if core != nil {
		for _, r := range core.APIResources {
			if r.Name == "pods/resize" {
				s.InPlaceResize = true
			}
		}
	}
	return s
}

// Message is the log line of the check.
func (s Support) Message() string {
	var b strings.Builder
	switch {
	case s.Minor == 0:
		fmt.Fprintf(&b, "Kubernetes %q: version not recognised, taken as supported (hvpa supports 1.%d or later)", s.Version, MinMinor)
	case s.Supported:
		fmt.Fprintf(&b, "Kubernetes %s: supported (1.%d or later)", s.Version, MinMinor)
	default:
		fmt.Fprintf(&b, "Kubernetes %s is older than 1.%d, the oldest hvpa supports (CRD validation with CEL quantities, ValidatingAdmissionPolicy v1, native sidecars): upgrade the cluster", s.Version, MinMinor)
	}
	if s.InPlaceResize {
		b.WriteString("; in-place resize: pods/resize is served, pods are resized in place")
	} else {
		fmt.Fprintf(&b, "; in-place resize: pods/resize is not served (Kubernetes 1.%d or later has it on by default), updateMode InPlaceOrRecreate evicts and InPlace leaves pods as they are", InPlaceMinor)
	}
	return b.String()
}

// Discover asks the API server for its version and the core API's resources.
func Discover(dc discovery.DiscoveryInterface) (Support, error) {
	v, err := dc.ServerVersion()
	if err != nil {
		return Support{}, fmt.Errorf("reading the Kubernetes version: %w", err)
	}
	core, err := dc.ServerResourcesForGroupVersion("v1")
	if err != nil {
		return Support{}, fmt.Errorf("reading the core API's resources: %w", err)
	}
	return Check(v, core), nil
}
