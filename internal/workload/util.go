package workload

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

func runtimeConvert(m map[string]any, into any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into)
}

func isNoMatch(err error) bool {
	var nm *meta.NoKindMatchError
	var nr *meta.NoResourceMatchError
	return meta.IsNoMatchError(err) || errors.As(err, &nm) || errors.As(err, &nr)
}

// notServed reports whether an error reading a scale subresource says the API server serves none for the
// object (the object, its subresource or its kind is not served).
func notServed(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) || isNoMatch(err)
}

// NoScale reports whether an error reading a scale subresource says the workload has none that can be read
// (not served, or reading it is not allowed): a configuration to report. Any other error (a timeout, 429,
// 5xx) is transient: retried, not reported as the workload's.
func NoScale(err error) bool {
	return notServed(err) || apierrors.IsForbidden(err) || apierrors.IsBadRequest(err) || apierrors.IsInvalid(err)
}
