package updater

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestPermanentRefusal(t *testing.T) {
	pods := schema.GroupResource{Resource: "pods"}
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "web-1", field.ErrorList{field.Forbidden(field.NewPath("spec"), "pod updates may not change fields other than ...")})
	cases := map[string]struct {
		err  error
		want bool
	}{
		"invalid":                {invalid, true},
		"invalid, wrapped":       {fmt.Errorf("resizing web-1: %w", invalid), true},
		"pod gone":               {apierrors.NewNotFound(pods, "web-1"), true},
		"no pods/resize":         {apierrors.NewMethodNotSupported(pods, "patch"), true},
		"forbidden by admission": {apierrors.NewForbidden(pods, "web-1", errors.New("pod security: privileged")), true},
		"over quota":             {apierrors.NewForbidden(pods, "web-1", errors.New("exceeded quota: compute, requested: requests.cpu=2")), false},
		"timeout":                {apierrors.NewTimeoutError("request did not complete", 1), false},
		"server error":           {apierrors.NewInternalError(errors.New("etcd leader changed")), false},
		"conflict":               {apierrors.NewConflict(pods, "web-1", errors.New("the object has been modified")), false},
		"not an API error":       {errors.New("connection refused"), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := permanentRefusal(tc.err); got != tc.want {
				t.Errorf("permanentRefusal(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
