package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The kinds of this package, as objects and references name them.
const (
	KindHvpa           = "Hvpa"
	KindHvpaCheckpoint = "HvpaCheckpoint"
)

var (
	// GroupVersion is the group and version of the objects in this package.
	GroupVersion = schema.GroupVersion{Group: "autoscaling.k8s.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types of this package with a runtime.Scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Hvpa{}, &HvpaList{}, &HvpaCheckpoint{}, &HvpaCheckpointList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
