package autoscaling_test

import (
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

func toUnstructured(m map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: m}
}

func hvpaUnstructured(h *hvpav1alpha1.Hvpa) *unstructured.Unstructured {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(h)
	Expect(err).NotTo(HaveOccurred())
	u := toUnstructured(m)
	u.SetAPIVersion(hvpav1alpha1.GroupVersion.String())
	u.SetKind("Hvpa")
	return u
}
