package workload

import (
	"errors"

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
