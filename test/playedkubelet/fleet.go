package playedkubelet

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Fleet plays the kubelets of many Nodes at once, for scale runs with thousands of pods: it binds pending pods
// to its Nodes in turn and marks them Running with parallel workers (a binding and a status patch per pod, no
// read), and reports each pod's played usage through a metrics server from the moment it runs.
type Fleet struct {
	Kubelets []*Kubelet
	// Workers bind and run pods in parallel.
	Workers int
	// Metrics and Usage: when both are set, every container of a pod the fleet runs reports Usage's usage.
	Metrics *MetricsServer
	Usage   func(pod *corev1.Pod, container string) Usage

	next    atomic.Uint64
	started atomic.Int64
}

// NewFleet creates enough Nodes named prefix-1, prefix-2, ... for pods pods (PodsPerNode each) and returns
// their played kubelets as one fleet with 16 workers.
func NewFleet(ctx context.Context, c client.Client, prefix string, pods int) (*Fleet, error) {
	f := &Fleet{Workers: 16}
	for i := range max(1, (pods+PodsPerNode-1)/PodsPerNode) {
		k, err := New(ctx, c, fmt.Sprintf("%s-%d", prefix, i+1))
		if err != nil {
			return nil, err
		}
		f.Kubelets = append(f.Kubelets, k)
	}
	return f, nil
}

// Started counts the pods the fleet has run.
func (f *Fleet) Started() int { return int(f.started.Load()) }

// RunPending binds every pod of the cluster that has no Node yet (the API server filters them with a field
// selector: no full list of pods) to the fleet's Nodes in turn and marks it Running; it returns how many it
// started.
func (f *Fleet) RunPending(ctx context.Context) (int, error) {
	c := f.Kubelets[0].Client
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.MatchingFields{"spec.nodeName": ""}); err != nil {
		return 0, fmt.Errorf("listing pods without a node: %w", err)
	}
	var g errgroup.Group
	g.SetLimit(max(1, f.Workers))
	var n atomic.Int64
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.DeletionTimestamp != nil {
			continue
		}
		k := f.Kubelets[f.next.Add(1)%uint64(len(f.Kubelets))]
		g.Go(func() error {
			if err := f.start(ctx, k, p); err != nil {
				return err
			}
			n.Add(1)
			return nil
		})
	}
	err := g.Wait()
	f.started.Add(n.Load())
	return int(n.Load()), err
}

// start binds one pod to k's Node, marks it Running with a status merge patch and plays its usage.
func (f *Fleet) start(ctx context.Context, k *Kubelet, p *corev1.Pod) error {
	binding := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name},
		Target: corev1.ObjectReference{Kind: "Node", Name: k.Node}}
	if err := k.Client.SubResource("binding").Create(ctx, p, binding); err != nil {
		return fmt.Errorf("binding %s/%s: %w", p.Namespace, p.Name, err)
	}
	before := p.DeepCopy()
	setRunning(p, metav1.Now())
	if err := k.Client.Status().Patch(ctx, p, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("marking %s/%s Running: %w", p.Namespace, p.Name, err)
	}
	if f.Metrics != nil && f.Usage != nil {
		for _, ct := range p.Spec.Containers {
			f.Metrics.Set(p.Namespace, p.Name, ct.Name, f.Usage(p, ct.Name))
		}
	}
	return nil
}

// Loop runs pending pods every interval until ctx ends; errors (a pod deleted while it was bound) are retried
// on the next round.
func (f *Fleet) Loop(ctx context.Context, interval time.Duration) {
	for ctx.Err() == nil {
		_, _ = f.RunPending(ctx)
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
}
