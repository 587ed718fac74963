package autoscaling_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// quantityCall finds quantity(string(X)) calls on a field (not on a literal such as quantity('100G')).
var quantityCall = regexp.MustCompile(`(?:^|[^A-Za-z])quantity\((string\([^()]*(?:\([^()]*\))?[^()]*\))\)`)

// Every CEL rule of the CRDs that parses a field as a quantity first checks that it is one. A rule whose
// quantity() fails at evaluation is an error, not a verdict, and the API server's ratcheting does not spare
// it: an object stored before the rules with a value such as "1e1.5" would refuse every later write, the
// controllers' status reports included. The value itself is refused by its own isQuantity rule.
func TestCELQuantityCallsAreGuarded(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "charts", "hvpa", "crds", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under charts/hvpa/crds (from the repository root): %v", err)
	}
	calls := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(raw, crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			walkRules(v.Schema.OpenAPIV3Schema, crd.Name+"/"+v.Name, func(path, rule string) {
				for _, m := range quantityCall.FindAllStringSubmatchIndex(rule, -1) {
					calls++
					arg := rule[m[2]:m[3]]
					if !strings.Contains(rule[:m[0]], "isQuantity("+arg+")") {
						t.Errorf("%s: rule %q parses %s without first checking isQuantity(%s)", path, rule, arg, arg)
					}
				}
			})
		}
	}
	if calls == 0 {
		t.Fatal("no quantity() call found in any rule: the pattern no longer matches the CRDs")
	}
}

func walkRules(p *apiextensionsv1.JSONSchemaProps, path string, f func(path, rule string)) {
	for _, r := range p.XValidations {
		f(path, r.Rule)
	}
	for k, sub := range p.Properties {
		walkRules(&sub, path+"."+k, f)
	}
	if p.Items != nil && p.Items.Schema != nil {
		walkRules(p.Items.Schema, path+"[]", f)
	}
	if p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil {
		walkRules(p.AdditionalProperties.Schema, path+"{}", f)
	}
}
