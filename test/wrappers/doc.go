// Package wrappers builds the objects test suites create, one fluent builder per kind: Make<Kind>(namespace,
// name) gives a wrapper with the defaults every suite uses, each method sets one thing and returns the wrapper,
// and Obj returns the object (a pointer to the wrapper's copy; call Obj once per object you create). The
// defaults follow the played cluster: a workload's pods carry app=<name>, which is also its selector, and a
// container's image is "played" (no image runs here).
//
//	d := wrappers.MakeDeployment(ns, "web").Replicas(2).
//		Container(wrappers.MakeContainer("app").Requests("100m", "128Mi").Obj()).Obj()
//	v := wrappers.MakeVPA(ns, "web").Mode(vpav1.UpdateModeRecreate).Obj()
package wrappers

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Image is the image of every played container.
const Image = "played"

// Resources is a ResourceList of cpu and memory; an empty string leaves that resource out.
func Resources(cpu, memory string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		l[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return l
}

// quantity is q parsed, or nil for "".
func quantity(q string) *resource.Quantity {
	if q == "" {
		return nil
	}
	v := resource.MustParse(q)
	return &v
}

// setKey sets k to v in *m, making the map when it is nil (labels, annotations).
func setKey(m *map[string]string, k, v string) {
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = v
}
