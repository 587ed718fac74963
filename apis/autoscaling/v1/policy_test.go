package v1

import "testing"

func TestPolicyFor(t *testing.T) {
	names := func(ns ...string) *PodResourcePolicy {
		rp := &PodResourcePolicy{}
		for _, n := range ns {
			rp.ContainerPolicies = append(rp.ContainerPolicies, ContainerResourcePolicy{ContainerName: n})
		}
		return rp
	}
	cases := map[string]struct {
		rp        *PodResourcePolicy
		container string
		want      int // index in rp.ContainerPolicies; -1: none
	}{
		"no policy":                         {nil, "app", -1},
		"its own":                           {names("sidecar", "app"), "app", 1},
		"its own before a later wildcard":   {names("app", "*"), "app", 0},
		"its own after an earlier wildcard": {names("*", "app"), "app", 1},
		"the wildcard":                      {names("sidecar", "*"), "app", 1},
		"the last of two wildcards":         {names("*", "sidecar", "*"), "app", 2},
		"the first of two of its own":       {names("app", "app"), "app", 0},
		"an empty name is no wildcard":      {names(""), "app", -1},
		"another container's only":          {names("sidecar"), "app", -1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.rp.PolicyFor(tc.container)
			switch {
			case tc.want < 0 && got != nil:
				t.Fatalf("PolicyFor(%q) = %q, want none", tc.container, got.ContainerName)
			case tc.want >= 0 && got != &tc.rp.ContainerPolicies[tc.want]:
				t.Fatalf("PolicyFor(%q) = %v, want policy %d", tc.container, got, tc.want)
			}
		})
	}
}
