package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-base/featuregate"

	"github.com/hvpa-dev/hvpa/internal/features"
)

// fe is a field error as the tests compare it: exact path and type, and a distinctive part of the detail.
type fe struct {
	Field  string
	Type   field.ErrorType
	Detail string
}

// checkErrors compares errs with want: paths and types exactly, details by substring, in order.
func checkErrors(t *testing.T, errs field.ErrorList, want []fe) {
	t.Helper()
	got := make([]fe, len(errs))
	for i, e := range errs {
		got[i] = fe{Field: e.Field, Type: e.Type, Detail: e.Detail}
		if i < len(want) && want[i].Detail != "" && strings.Contains(e.Detail, want[i].Detail) {
			got[i].Detail = want[i].Detail
		}
	}
	if want == nil {
		want = []fe{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s\nall: %v", diff, errs)
	}
}

// checkWarnings compares warnings with want by substring, in order.
func checkWarnings(t *testing.T, warnings, want []string) {
	t.Helper()
	got := append([]string{}, warnings...)
	for i := range got {
		if i < len(want) && strings.Contains(got[i], want[i]) {
			got[i] = want[i]
		}
	}
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s\nall: %q", diff, warnings)
	}
}

// gatesOn returns a feature gate with the named gates on (the others at their defaults).
func gatesOn(t *testing.T, names ...featuregate.Feature) featuregate.FeatureGate {
	t.Helper()
	g := features.New()
	m := map[string]bool{}
	for _, n := range names {
		m[string(n)] = true
	}
	if err := g.SetFromMap(m); err != nil {
		t.Fatal(err)
	}
	return g
}

func q(s string) resource.Quantity { return resource.MustParse(s) }

func qp(s string) *resource.Quantity {
	x := resource.MustParse(s)
	return &x
}
