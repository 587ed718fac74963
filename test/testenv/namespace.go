package testenv

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NewNamespace creates a namespace named prefix-<random> for one spec and returns its name.
func NewNamespace(ctx context.Context, c client.Client, prefix string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := c.Create(ctx, ns); err != nil {
		return "", err
	}
	return ns.Name, nil
}
