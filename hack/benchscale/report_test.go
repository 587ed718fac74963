package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hvpa-dev/hvpa/test/testenv"
)

func TestParseLogLine(t *testing.T) {
	// the recommender's run line has counts at the top and the steps' durations in an object
	line := `{"level":"info","ts":"2026-11-24T02:17:23.631729654Z","msg":"recommender run","vpas":3,"pods":200,"duration":"1.2s","steps":{"pods":"100ms","status":"1s"},"nested":{"a":1}}`
	f, err := parseLogLine([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	x := run{fields: f}
	if x.int("vpas") != 3 || x.int("pods") != 200 || x.duration("pods") != 100*time.Millisecond || x.duration("duration") != 1200*time.Millisecond {
		t.Errorf("parsed %+v", f)
	}
	if x.int("absent") != -1 || x.duration("absent") != -1 {
		t.Errorf("absent fields: %d, %s", x.int("absent"), x.duration("absent"))
	}
	if _, err := parseLogLine([]byte("hvpa: starting recommender")); err == nil {
		t.Error("a plain text line parsed")
	}
}

func TestPercentile(t *testing.T) {
	d := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for q, want := range map[float64]time.Duration{0: 1, 0.5: 5, 0.95: 10, 0.99: 10, 1: 10} {
		if got := percentile(d, q); got != want {
			t.Errorf("percentile(%g) = %d, want %d", q, got, want)
		}
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("percentile of nothing is not 0")
	}
}

func TestAttributeAudit(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &result{loops: []loopStats{{from: t0, run: run{at: t0.Add(10 * time.Second)}}, {from: t0.Add(10 * time.Second), run: run{at: t0.Add(20 * time.Second)}}}}
	events := []testenv.AuditEvent{
		event("patch", "verticalpodautoscalers", "status", "ResponseComplete", t0.Add(time.Second)),
		event("patch", "verticalpodautoscalers", "status", "ResponseComplete", t0.Add(10*time.Second)), // the end of a window is in it
		event("list", "pods", "", "ResponseComplete", t0.Add(11*time.Second)),
		event("watch", "pods", "", "ResponseStarted", t0.Add(12*time.Second)),
		event("watch", "pods", "", "ResponseComplete", t0.Add(12*time.Second)), // counted at its start
		event("get", "pods", "", "ResponseComplete", t0.Add(25*time.Second)),   // after the last loop
		event("get", "pods", "", "ResponseComplete", t0),                       // before the first
	}
	r.count(events)
	want := []map[string]int{{"patch verticalpodautoscalers.autoscaling.k8s.io/status": 2}, {"list pods": 1, "watch pods": 1}}
	for i, l := range r.loops {
		if diff := cmp.Diff(want[i], l.requests); diff != "" {
			t.Errorf("loop %d (-want +got):\n%s", i, diff)
		}
	}
}

func event(verb, resource, sub, stage string, at time.Time) testenv.AuditEvent {
	e := testenv.AuditEvent{Verb: verb, Stage: stage}
	e.User.Username = hvpaUser
	e.ObjectRef = &testenv.AuditObjectRef{Resource: resource, Subresource: sub}
	if resource == "verticalpodautoscalers" {
		e.ObjectRef.APIGroup = "autoscaling.k8s.io"
	}
	e.RequestReceived.Time = at
	return e
}
