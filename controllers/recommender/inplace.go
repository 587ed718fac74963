package recommender

import (
	"fmt"
	"time"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// inPlaceCondition sets InPlaceUnavailable on a VPA whose updateMode resizes in place while the cluster serves
// no pods/resize (Options.NoInPlaceResize), and removes it otherwise.
func (r *Recommender) inPlaceCondition(v *vpav1.VerticalPodAutoscaler, conds []vpav1.VerticalPodAutoscalerCondition, now time.Time) []vpav1.VerticalPodAutoscalerCondition {
	mode := v.EffectiveUpdateMode()
	if !r.Opts.NoInPlaceResize || !mode.ResizesInPlace() {
		return RemoveCondition(conds, vpav1.InPlaceUnavailable)
	}
	what := "pods are evicted instead"
	if mode == vpav1.UpdateModeInPlace {
		what = "pods are left as they are (updateMode InPlace never evicts)"
	}
	return SetCondition(conds, cond(vpav1.InPlaceUnavailable, true, vpav1.ReasonNoResizeSubresource,
		fmt.Sprintf("the cluster (Kubernetes %s) serves no pods/resize: %s; in-place resize is on by default from Kubernetes 1.33", r.Opts.KubernetesVersion, what)), now)
}
