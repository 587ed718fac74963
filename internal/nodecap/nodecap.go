// Package nodecap reads the cluster's nodes and DaemonSets into the room each node leaves a pod
// (scaling.Nodes), for the node caps of the Hvpa controller and the recommender.
package nodecap

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/hvpa-dev/hvpa/scaling"
)

// Read lists the Nodes and DaemonSets (from the manager's cache, without copying them: scaling.Nodes only
// reads them) into each node's room.
func Read(ctx context.Context, c client.Reader) (*scaling.Nodes, error) {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	var daemonSets appsv1.DaemonSetList
	if err := c.List(ctx, &daemonSets, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing DaemonSets: %w", err)
	}
	return scaling.NewNodes(nodes.Items, daemonSets.Items), nil
}
