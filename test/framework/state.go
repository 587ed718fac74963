package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// State is what a namespace's autoscalers say at this moment, for a failure's message: each Hvpa's input
// replicas and status (the HPA readings, intent, totals and blocked scalings it decided with), each HPA's
// status (desired replicas, metrics, conditions with their messages) and the namespace's newest events. A
// spec that waits on a decision puts it next to its timeline, so that a failure it cannot reproduce still
// says which input was missing.
func State(ctx context.Context, c client.Client, ns string) string {
	var b strings.Builder
	var hvpas hvpav1alpha1.HvpaList
	if err := c.List(ctx, &hvpas, client.InNamespace(ns)); err != nil {
		fmt.Fprintf(&b, "hvpas: %v\n", err)
	}
	for _, h := range hvpas.Items {
		replicas := "unset"
		if h.Spec.Replicas != nil {
			replicas = fmt.Sprint(*h.Spec.Replicas)
		}
		fmt.Fprintf(&b, "hvpa %s: spec.replicas %s, status %s\n", h.Name, replicas, asJSON(h.Status))
	}
	var hpas autoscalingv2.HorizontalPodAutoscalerList
	if err := c.List(ctx, &hpas, client.InNamespace(ns)); err != nil {
		fmt.Fprintf(&b, "hpas: %v\n", err)
	}
	for _, h := range hpas.Items {
		fmt.Fprintf(&b, "hpa %s: status %s\n", h.Name, asJSON(h.Status))
	}
	var events corev1.EventList
	if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
		fmt.Fprintf(&b, "events: %v\n", err)
	}
	sort.SliceStable(events.Items, func(i, j int) bool { return newest(events.Items[i]).Before(newest(events.Items[j])) })
	const last = 30
	if n := len(events.Items); n > last {
		events.Items = events.Items[n-last:]
	}
	for _, e := range events.Items {
		fmt.Fprintf(&b, "event %s %s/%s %s x%d: %s\n", newest(e).Format("15:04:05.000"), e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Count, e.Message)
	}
	return b.String()
}

// newest is when an event last happened, whichever of its times its reporter set.
func newest(e corev1.Event) time.Time {
	if e.Series != nil && !e.Series.LastObservedTime.IsZero() {
		return e.Series.LastObservedTime.Time
	}
	for _, t := range []time.Time{e.LastTimestamp.Time, e.EventTime.Time, e.FirstTimestamp.Time} {
		if !t.IsZero() {
			return t
		}
	}
	return e.CreationTimestamp.Time
}

func asJSON(v any) string {
	out, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(out)
}
