package testenv

import (
	"context"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WithoutCELRules takes the CEL rules (x-kubernetes-validations) off a CRD, so that a test can store an
// object the API server accepted before hvpa's rules existed; restore puts them back (call it before the
// test ends, and again in a cleanup: a second call does nothing).
func WithoutCELRules(ctx context.Context, c client.Client, crdName string) (restore func() error, err error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		return nil, err
	}
	withRules := crd.Spec.DeepCopy()
	for i := range crd.Spec.Versions {
		if s := crd.Spec.Versions[i].Schema; s != nil && s.OpenAPIV3Schema != nil {
			withoutRules(s.OpenAPIV3Schema)
		}
	}
	if err := c.Update(ctx, crd); err != nil {
		return nil, err
	}
	restored := false
	return func() error {
		if restored {
			return nil
		}
		if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
			return err
		}
		crd.Spec = *withRules
		if err := c.Update(ctx, crd); err != nil {
			return err
		}
		restored = true
		return nil
	}, nil
}

func withoutRules(p *apiextensionsv1.JSONSchemaProps) {
	p.XValidations = nil
	for k, sub := range p.Properties {
		withoutRules(&sub)
		p.Properties[k] = sub
	}
	if p.Items != nil && p.Items.Schema != nil {
		withoutRules(p.Items.Schema)
	}
	if p.AdditionalProperties != nil && p.AdditionalProperties.Schema != nil {
		withoutRules(p.AdditionalProperties.Schema)
	}
}
