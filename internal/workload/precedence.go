package workload

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
)

// Autoscaler is one VPA or Hvpa in the rule of several autoscalers on one workload: of those that act, the one
// that serves it is the oldest (creationTimestamp), then by kind, then by name; the other actors do not act
// and report MultipleAutoscalers naming it. An observer (a VPA that only watches: vpav1.Observes) is always
// served and never in conflict. The recommender, the Hvpa controller, the admission webhook and the updater
// all follow this rule (the updater acts only on objects without ConfigUnsupported).
type Autoscaler struct {
	Kind     string // VerticalPodAutoscaler or Hvpa
	Name     string
	Created  metav1.Time
	Observer bool
}

func (a Autoscaler) String() string { return a.Kind + " " + a.Name }

// VPAAutoscaler is a VPA in the rule, an observer when it only watches (vpav1.Observes) to hvpa, whose
// recommender is named recommender.
func VPAAutoscaler(v *vpav1.VerticalPodAutoscaler, recommender string) Autoscaler {
	return Autoscaler{Kind: vpav1.KindVerticalPodAutoscaler, Name: v.Name, Created: v.CreationTimestamp, Observer: v.Observes(recommender)}
}

// Before reports whether a serves the workload rather than b: actors before observers, then the oldest.
func (a Autoscaler) Before(b Autoscaler) bool {
	if a.Observer != b.Observer {
		return !a.Observer
	}
	if !a.Created.Equal(&b.Created) {
		return a.Created.Before(&b.Created)
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return a.Name < b.Name
}

// SortAutoscalers orders autoscalers of one workload, the one that serves it first.
func SortAutoscalers(as []Autoscaler) {
	sort.Slice(as, func(i, j int) bool { return as[i].Before(as[j]) })
}

// NotServing is the MultipleAutoscalers message of an autoscaler that does not serve its workload because
// first does, or "" when self serves it (an observer always is). all holds every autoscaler of the workload,
// self included; observers among them are no conflict.
func NotServing(self Autoscaler, all []Autoscaler, workloadKind, workloadName string) string {
	if self.Observer {
		return ""
	}
	first := self
	var others []string
	for _, a := range all {
		if a == self || a.Observer {
			continue
		}
		others = append(others, a.String())
		if a.Before(first) {
			first = a
		}
	}
	if first == self {
		return ""
	}
	sort.Strings(others)
	return fmt.Sprintf("%s %s is also the target of %s: the oldest, %s, serves it and this one does not act; keep one autoscaler per workload",
		workloadKind, workloadName, strings.Join(others, ", "), first)
}
