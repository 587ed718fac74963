package hvpa

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// IndexHvpaPodLabel indexes Hvpas by a label "key=value" that every pod their target selects has (from
// status.selector), so that a pod event finds its Hvpas with one lookup per label of the pod instead of
// listing, and copying, every Hvpa of the namespace. An Hvpa whose selector has no such label (only
// matchExpressions like Exists or NotIn) is indexed under IndexAnyPod and looked at for every pod.
const IndexHvpaPodLabel = "hvpa.status.selector.label"

// IndexAnyPod is the IndexHvpaPodLabel value of the Hvpas whose selector names no label value.
const IndexAnyPod = "*"

// SetupIndexes adds the controller's field indexes to the manager's cache (before it starts).
func SetupIndexes(ctx context.Context, fi client.FieldIndexer) error {
	if err := fi.IndexField(ctx, &hvpav1alpha1.Hvpa{}, IndexHvpaPodLabel, HvpaPodLabels); err != nil {
		return fmt.Errorf("indexing Hvpas by %s: %w", IndexHvpaPodLabel, err)
	}
	return nil
}

// HvpaPodLabels is the IndexHvpaPodLabel index function: the "key=value" pairs of the first requirement of
// the Hvpa's selector that a pod can only meet with one of them (= or in), or IndexAnyPod; none while the
// selector is unknown or does not parse (such an Hvpa selects no pod).
func HvpaPodLabels(obj client.Object) []string {
	h, ok := obj.(*hvpav1alpha1.Hvpa)
	if !ok || h.Status.Selector == "" {
		return nil
	}
	sel, err := labels.Parse(h.Status.Selector)
	if err != nil {
		return nil
	}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			var out []string
			for _, v := range r.ValuesUnsorted() {
				out = append(out, r.Key()+"="+v)
			}
			return out
		}
	}
	return []string{IndexAnyPod}
}
