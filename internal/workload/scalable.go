package workload

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A controller of a kind that is not well known (a custom resource an operator reconciles into a Deployment
// or a StatefulSet) is a workload of its own only when it has a scale subresource, as upstream's VPA decides
// (the top-most well-known or scalable controller): at one without, the chain of controllers ends below it,
// and the autoscaler names the well-known controller it owns.

// scaleProbeTTL is how long an answer of scalable is kept: pods are admitted and walked up their owners one
// by one, and the answer of an object's kind rarely changes (a CRD gains or loses its scale subresource).
const scaleProbeTTL = time.Minute

// scaleProbeMax bounds the answers kept; past it, the expired ones go.
const scaleProbeMax = 10000

type scaleProbeKey struct {
	gk              schema.GroupKind
	namespace, name string
}

type scaleProbeAnswer struct {
	scalable bool
	refused  error // a Forbidden read, kept as long as an answer: asked again for every pod it costs a call each
	at       time.Time
}

// scaleProbe keeps the answers of scalable for scaleProbeTTL (one process, every caller).
var scaleProbe = struct {
	sync.Mutex
	answers map[scaleProbeKey]scaleProbeAnswer
}{answers: map[scaleProbeKey]scaleProbeAnswer{}}

// scalable reports whether the object of gvk has a scale subresource; an error other than one saying it has
// none (notServed) is returned. A refused read (Forbidden: the chart's rbac.readScaleOfAnyKind off and the kind
// missing from rbac.extraTargets) does not say the object has none, and upstream's VPA gives up there too: it
// is kept as an answer is, so that the pods of such an owner do not each ask again; any other error is not kept.
func scalable(ctx context.Context, live client.Client, gvk schema.GroupVersionKind, namespace, name string) (bool, error) {
	key := scaleProbeKey{gvk.GroupKind(), namespace, name}
	now := time.Now()
	scaleProbe.Lock()
	a, ok := scaleProbe.answers[key]
	scaleProbe.Unlock()
	if ok && now.Sub(a.at) < scaleProbeTTL {
		return a.scalable, a.refused
	}
	_, err := GetScale(ctx, live, gvk, namespace, name)
	var refused error
	switch {
	case apierrors.IsForbidden(err):
		refused = err
	case err != nil && !notServed(err):
		return false, err
	}
	scaleProbe.Lock()
	defer scaleProbe.Unlock()
	if len(scaleProbe.answers) >= scaleProbeMax {
		for k, old := range scaleProbe.answers {
			if now.Sub(old.at) >= scaleProbeTTL {
				delete(scaleProbe.answers, k)
			}
		}
	}
	if len(scaleProbe.answers) < scaleProbeMax { // all fresh: this answer is not kept
		scaleProbe.answers[key] = scaleProbeAnswer{scalable: err == nil, refused: refused, at: now}
	}
	return err == nil, refused
}
