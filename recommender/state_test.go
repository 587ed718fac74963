package recommender

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestFeeding: the containers feeding an aggregate are those of its namespace and container name whose
// aggregate the match accepts, as pods come and go (Collect forgets the ones not seen for the memory
// aggregation interval, ForgetContainer one at once).
func TestFeeding(t *testing.T) {
	m := mustModel(t)
	s := NewState()
	now := t0
	add := func(ns, pod, container, group string, at time.Time) *Container {
		return s.Container(m, ContainerKey{ns, pod, container}, group, map[string]string{"app": group}, at).State
	}
	web1 := add("a", "web-1", "app", "web", now)
	web2 := add("a", "web-2", "app", "web", now)
	add("a", "web-1", "sidecar", "web", now) // another container name
	add("b", "web-1", "app", "web", now)     // another namespace
	db := add("a", "db-1", "app", "db", now) // another group of the same name
	old := add("a", "web-0", "app", "web", now.Add(-2*m.Config.MemoryAggregationInterval))
	byGroup := func(g string) func(string, map[string]string) bool {
		return func(group string, _ map[string]string) bool { return group == g }
	}
	same := func(got, want []*Container) bool {
		return len(got) == len(want) && !slices.ContainsFunc(want, func(c *Container) bool { return !slices.Contains(got, c) })
	}
	if got := s.Feeding("a", "app", byGroup("web"), nil); !same(got, []*Container{web1, web2, old}) {
		t.Errorf("feeding web/app in a: %d containers, want web-0, web-1 and web-2", len(got))
	}
	if got := s.Feeding("a", "app", byGroup("db"), nil); !same(got, []*Container{db}) {
		t.Errorf("feeding db/app in a: %d containers, want db-1", len(got))
	}
	// a pod that does not run any more (deleted): its last window stays in a checkpoint
	running := func(pod string) bool { return pod != "web-2" }
	if got := s.Feeding("a", "app", byGroup("web"), running); !same(got, []*Container{web1, old}) {
		t.Errorf("web-2 not running: %d containers, want web-0 and web-1", len(got))
	}
	s.Collect(m, now) // web-0 not seen for longer than the memory aggregation interval
	if got := s.Feeding("a", "app", byGroup("web"), nil); !same(got, []*Container{web1, web2}) {
		t.Errorf("after Collect: %d containers, want web-1 and web-2", len(got))
	}
	s.ForgetContainer(ContainerKey{"a", "web-2", "app"})
	if got := s.Feeding("a", "app", byGroup("web"), nil); !same(got, []*Container{web1}) {
		t.Errorf("after ForgetContainer: %d containers, want web-1", len(got))
	}
	s.ForgetContainer(ContainerKey{"a", "web-1", "app"})
	if got := s.Feeding("a", "app", byGroup("web"), nil); len(got) != 0 {
		t.Errorf("every web pod gone: %d containers feed it", len(got))
	}
	if again := add("a", "web-1", "app", "web", now); !same(s.Feeding("a", "app", byGroup("web"), nil), []*Container{again}) {
		t.Error("a pod seen again does not feed its aggregate")
	}
}

// BenchmarkFeeding is the lookup the recommender makes per checkpoint it writes, in a cluster of 100,000
// pod containers (10,000 workloads of 10 pods, 10 workloads a namespace): what it costs grows with the
// containers of one name in one namespace, not with the cluster.
func BenchmarkFeeding(b *testing.B) {
	m := mustModel(b)
	s := NewState()
	for w := range 10000 {
		ns, group := fmt.Sprintf("ns-%d", w/10), fmt.Sprintf("app-%d", w)
		for p := range 10 {
			s.Container(m, ContainerKey{ns, fmt.Sprintf("%s-%d", group, p), "app"}, group, map[string]string{"app": group}, t0)
		}
	}
	match := func(group string, _ map[string]string) bool { return group == "app-5005" }
	b.ReportAllocs()
	for b.Loop() {
		if got := s.Feeding("ns-500", "app", match, nil); len(got) != 10 {
			b.Fatalf("%d containers feed app-5005, want 10", len(got))
		}
	}
}
