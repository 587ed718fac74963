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
	return changeCRD(ctx, c, crdName, func(spec *apiextensionsv1.CustomResourceDefinitionSpec) {
		for i := range spec.Versions {
			if s := spec.Versions[i].Schema; s != nil && s.OpenAPIV3Schema != nil {
				withoutRules(s.OpenAPIV3Schema)
			}
		}
	})
}

// WithStatusSubresource gives every version of a CRD a status subresource, as the CRDs of an earlier release
// had, so that a test can play a cluster where helm left them as they were; restore takes it off again (call
// it before the test ends, and again in a cleanup: a second call does nothing). The API server serves the
// change a moment later: wait for it with an object whose status a create keeps or drops.
func WithStatusSubresource(ctx context.Context, c client.Client, crdName string) (restore func() error, err error) {
	return changeCRD(ctx, c, crdName, func(spec *apiextensionsv1.CustomResourceDefinitionSpec) {
		for i := range spec.Versions {
			spec.Versions[i].Subresources = &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
		}
	})
}

// changeCRD changes a CRD's spec; restore puts the spec it had back, once.
func changeCRD(ctx context.Context, c client.Client, crdName string, change func(*apiextensionsv1.CustomResourceDefinitionSpec)) (restore func() error, err error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		return nil, err
	}
	before := crd.Spec.DeepCopy()
	change(&crd.Spec)
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
		crd.Spec = *before
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
