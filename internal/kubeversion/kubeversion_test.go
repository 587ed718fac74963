package kubeversion

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
)

func TestCheck(t *testing.T) {
	withResize := &metav1.APIResourceList{APIResources: []metav1.APIResource{{Name: "pods"}, {Name: "pods/resize"}, {Name: "pods/eviction"}}}
	without := &metav1.APIResourceList{APIResources: []metav1.APIResource{{Name: "pods"}, {Name: "pods/eviction"}}}
	for _, tc := range []struct {
		name              string
		v                 *version.Info
		core              *metav1.APIResourceList
		supported, resize bool
		says              string
	}{
		{"1.36 with pods/resize", &version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.3"}, withResize, true, true,
			"Kubernetes v1.36.3: supported (1.30 or later); in-place resize: pods/resize is served"},
		{"1.30, the oldest supported, without pods/resize: eviction", &version.Info{Major: "1", Minor: "30", GitVersion: "v1.30.1"}, without, true, false,
			"pods/resize is not served (Kubernetes 1.33 or later has it on by default), updateMode InPlaceOrRecreate evicts"},
		{"a provider's 1.29+", &version.Info{Major: "1", Minor: "29+", GitVersion: "v1.29.4-eks-1"}, without, false, false,
			"Kubernetes v1.29.4-eks-1 is older than 1.30, the oldest hvpa supports"},
		{"an unrecognised version", &version.Info{Major: "", Minor: "", GitVersion: "v0.0.0-master"}, withResize, true, true, "version not recognised"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Check(tc.v, tc.core)
			if s.Supported != tc.supported || s.InPlaceResize != tc.resize {
				t.Errorf("%+v, want supported %v, in-place %v", s, tc.supported, tc.resize)
			}
			if !strings.Contains(s.Message(), tc.says) {
				t.Errorf("message %q, want it to say %q", s.Message(), tc.says)
			}
		})
	}
}
