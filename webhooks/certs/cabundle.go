package certs

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// patchCABundles sets the caBundle of every webhook in the named configurations to bundle. A configuration
// that does not exist (yet) is logged and tried again at the next sync.
func (r *Rotator) patchCABundles(ctx context.Context, bundle []byte) error {
	var errs []error
	for _, name := range r.opts.MutatingWebhookConfigurations {
		errs = append(errs, r.patchCABundle(ctx, "MutatingWebhookConfiguration", name, bundle,
			func() client.Object { return &admissionregistrationv1.MutatingWebhookConfiguration{} }))
	}
	for _, name := range r.opts.ValidatingWebhookConfigurations {
		errs = append(errs, r.patchCABundle(ctx, "ValidatingWebhookConfiguration", name, bundle,
			func() client.Object { return &admissionregistrationv1.ValidatingWebhookConfiguration{} }))
	}
	return errors.Join(errs...)
}

// patchCABundle reads the configuration and updates it when a webhook's caBundle differs, again on conflict.
func (r *Rotator) patchCABundle(ctx context.Context, kind, name string, bundle []byte, newObj func() client.Object) error {
	logger := logf.FromContext(ctx)
	patched := 0
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj := newObj()
		if err := r.client.Get(ctx, client.ObjectKey{Name: name}, obj); err != nil {
			return err
		}
		patched = SetCABundle(obj, bundle)
		if patched == 0 {
			return nil
		}
		return r.client.Update(ctx, obj)
	})
	switch {
	case apierrors.IsNotFound(err):
		logger.Info("webhook configuration not found; setting its caBundle at the next sync", "kind", kind, "name", name)
		return nil
	case err != nil:
		return fmt.Errorf("setting the caBundle of %s %s: %w", kind, name, err)
	case patched > 0:
		logger.Info("set the caBundle of a webhook configuration", "kind", kind, "name", name, "webhooks", patched)
	}
	return nil
}

// SetCABundle sets the caBundle of every webhook of a MutatingWebhookConfiguration or
// ValidatingWebhookConfiguration to bundle and returns how many differed (0 for other objects).
func SetCABundle(obj client.Object, bundle []byte) int {
	var configs []*admissionregistrationv1.WebhookClientConfig
	switch c := obj.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for i := range c.Webhooks {
			configs = append(configs, &c.Webhooks[i].ClientConfig)
		}
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for i := range c.Webhooks {
			configs = append(configs, &c.Webhooks[i].ClientConfig)
		}
	}
	changed := 0
	for _, cc := range configs {
		if !bytes.Equal(cc.CABundle, bundle) {
			cc.CABundle = bytes.Clone(bundle)
			changed++
		}
	}
	return changed
}
