package recommender

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	"github.com/hvpa-dev/hvpa/internal/nodecap"
	"github.com/hvpa-dev/hvpa/internal/podstore"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

// Node-aware caps of VPA recommendations: a target no node can hold is lowered to the room of the largest
// node the VPA's pods may go to (scaling.Nodes.RoomFor, recommender.FitNode), and CappedToNode says so.

// readNodes reads the Nodes and DaemonSets (from the cache) into each node's room; nil when they cannot be
// read (no cap). A failed read is logged and caps nothing.
func (r *Recommender) readNodes(ctx context.Context) *scaling.Nodes {
	nodes, err := nodecap.Read(ctx, r.Client)
	if err != nil {
		logf.FromContext(ctx).Error(err, "reading the nodes' room; recommendations are not capped to the largest node this run")
	}
	return nodes
}

// globalMax fills a policy's maxAllowed from --container-recommendation-max-allowed-cpu and -memory.
func (r *Recommender) globalMax(p recommender.Policy) recommender.Policy {
	return recommender.WithGlobalMax(p, r.Opts.MaxAllowedCPU, r.Opts.MaxAllowedMemory)
}

// fitNode caps a served VPA's recommendations to the room of the largest node its pods may be scheduled on
// (the tolerations, nodeSelector and required node affinity of one of its running pods; a pod without
// constraints when none runs), counting the requests of that pod's other containers, and sets CappedToNode.
func (r *Recommender) fitNode(s *served, recs []recommender.ContainerRecommendation, st *vpav1.VerticalPodAutoscalerStatus, now time.Time) []recommender.ContainerRecommendation {
	if r.nodes == nil {
		return recs
	}
	var where *corev1.PodSpec
	if s.pod != nil {
		where = s.pod.Scheduling
	}
	room := r.nodes.RoomFor(where)
	if room == nil {
		return recs
	}
	limit := recommender.Amounts{CPUMilli: -1, MemoryBytes: -1}
	if x, ok := room.Room.Get(scaling.CPU); ok {
		limit.CPUMilli = int64(x)
	}
	if x, ok := room.Room.Get(scaling.Memory); ok {
		limit.MemoryBytes = int64(x)
	}
	out, caps := recommender.FitNode(recs, otherContainers(s.pod, recs), limit)
	if len(caps) == 0 {
		// the condition appears when a cap applies, and says so when it no longer does
		if condition(st.Conditions, vpav1.CappedToNode) != nil {
			st.Conditions = SetCondition(st.Conditions, cond(vpav1.CappedToNode, false, vpav1.ReasonFitsLargestNode, "every target fits the largest schedulable node"), now)
		}
		return out
	}
	parts := make([]string, len(caps))
	for i, c := range caps {
		res := scaling.Memory
		if c.CPU {
			res = scaling.CPU
		}
		parts[i] = fmt.Sprintf("%s (%s)", c, room.Explain(res))
	}
	msg := "targets lowered so that the pod fits the largest schedulable node: " + strings.Join(parts, "; ")
	if !hasCondition(s.vpa.Status.Conditions, vpav1.CappedToNode, vpav1.ReasonNodeAllocatable) {
		r.event(s.vpa, corev1.EventTypeWarning, vpav1.ReasonNodeAllocatable, msg)
	}
	st.Conditions = SetCondition(st.Conditions, cond(vpav1.CappedToNode, true, vpav1.ReasonNodeAllocatable, msg), now)
	return out
}

// otherContainers are the requests in force of the pod's containers without a recommendation (nil pod: none).
func otherContainers(p *podstore.Pod, recs []recommender.ContainerRecommendation) recommender.Amounts {
	var out recommender.Amounts
	if p == nil {
		return out
	}
	for _, c := range p.Containers {
		recommended := false
		for _, rc := range recs {
			recommended = recommended || rc.Container == c.Name
		}
		if !recommended {
			out.CPUMilli += int64(c.CPUMilli)
			out.MemoryBytes += int64(c.MemoryBytes)
		}
	}
	return out
}

func condition(conds []vpav1.VerticalPodAutoscalerCondition, t vpav1.VerticalPodAutoscalerConditionType) *vpav1.VerticalPodAutoscalerCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
