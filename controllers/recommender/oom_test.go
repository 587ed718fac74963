package recommender

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/podstore"
	"github.com/hvpa-dev/hvpa/internal/workload"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

func TestParseMemoryEviction(t *testing.T) {
	cases := map[string]struct {
		msg  string
		want []MemoryEviction
	}{
		"kubelet message, request form": {
			msg:  "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container app was using 1Gi, request is 512Mi, has larger consumption of memory. Container sidecar was using 300Mi, request is 100Mi, has larger consumption of memory.",
			want: []MemoryEviction{{"app", 1 << 30, 512 << 20}, {"sidecar", 300 << 20, 100 << 20}},
		},
		"older message form": {
			msg:  "The node was low on resource: memory. Container worker was using 2Gi, which exceeds its request of 1Gi.",
			want: []MemoryEviction{{"worker", 2 << 30, 1 << 30}},
		},
		"not about memory":    {msg: "The node was low on resource: ephemeral-storage. Container app was using 5Gi, request is 0, has larger consumption of ephemeral-storage."},
		"unparseable amounts": {msg: "The node was low on resource: memory. Container app was using lots, request is some."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ParseMemoryEviction(tc.msg)
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("eviction %d: %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// An OOM kill of one pod of an Hvpa's workload raises its memory load to replicas x (the upstream bump of the
// killed pod - its base): with 128Mi containers the 100Mi minimum bump decides (228Mi, not 1.2 x 128Mi),
// exactly, and a memory base per replica comes off each pod's share. The memory history counts the pods that
// served: the ready ones and those not ready after a recent kill (a pod killed while its sibling was starting
// carried the load alone).
func TestHvpaOOMBumpsTheTotalByTheUpstreamRule(t *testing.T) {
	const mi = float64(1 << 20)
	m, err := recommender.NewModel(recommender.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 24, 5, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name                  string
		request, peak, base   float64
		ready, killedNotReady int // of the 2 pods
		want, wantRecent      float64
	}{
		{"128Mi request, no usage yet", 128 * mi, 0, 0, 2, 0, 2 * 228 * mi, 2 * 228 * mi},
		{"a 400Mi window peak above the 128Mi request", 128 * mi, 400 * mi, 0, 2, 0, 2 * 500 * mi, 2 * 500 * mi},
		{"a 1Gi request: the ratio decides", 1024 * mi, 0, 0, 2, 0, 2 * 1.2 * 1024 * mi, 2 * 1.2 * 1024 * mi},
		{"a 28Mi base per replica", 128 * mi, 0, 28 * mi, 2, 0, 2 * 200 * mi, 2 * 200 * mi},
		{"the killed pod restarting, its sibling ready", 128 * mi, 0, 0, 1, 1, 2 * 228 * mi, 2 * 228 * mi},
		{"both killed, both in back-off", 128 * mi, 0, 0, 0, 2, 2 * 228 * mi, 2 * 228 * mi},
		{"the killed pod served alone: its sibling starting", 128 * mi, 0, 0, 0, 1, 228 * mi, 2 * 228 * mi},
		{"ready again after the kill, its sibling starting", 128 * mi, 0, 0, 1, 0, 228 * mi, 2 * 228 * mi},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &servedHvpa{hvpa: &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}, models: &modelSet{base: m},
				pods: 2, ready: tc.ready, killedNotReady: tc.killedNotReady}
			if tc.base > 0 {
				h.base[scaling.Memory] = &scaling.ChangeParams{Value: tc.base, HasValue: true}
			}
			st := recommender.NewState()
			h.recordOOM(st, "app", now, tc.request, tc.peak, now)
			got := st.Total(m, recommender.OwnerKey{Namespace: "ns", Owner: hvpaOwner("web"), Container: "app"}, now).OpenWindowPeak()
			if got != tc.want {
				t.Errorf("memory history's load %v Mi, want %v Mi", got/mi, tc.want/mi)
			}
			load, _ := st.WorkloadRecommendation("ns", hvpaOwner("web"), func(string) recommender.Policy { return recommender.DefaultPolicy() })
			if len(load) != 1 || len(load[0].Recent) != 1 || load[0].Recent[0].MemoryBytes != tc.wantRecent {
				t.Errorf("recent load %+v, want one sample of %v Mi", load, tc.wantRecent/mi)
			}
		})
	}
}

// TestMatchPodsCountsReadyPods: an Hvpa counts the running pods of its target, the ready ones among them, and
// (countKilledNotReady) the ones not ready after an OOM kill of the last run interval or at an unknown time:
// the pods that served when this run's kills happened (docs/design/scaling.md section 2). A pending pod,
// another workload's pod and a pod not ready after an old kill count in none of them; a ready pod killed
// recently counts once.
func TestMatchPodsCountsReadyPods(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	h := &servedHvpa{hvpa: &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}},
		target: workload.Target{Namespace: "ns", Name: "web", Selector: labels.SelectorFromSet(labels.Set{"app": "web"})}}
	pod := func(name string, phase corev1.PodPhase, ready bool, app string, kills ...time.Time) *podstore.Pod {
		return &podstore.Pod{Namespace: "ns", Name: name, Labels: map[string]string{"app": app}, Phase: phase, Ready: ready,
			Containers: []podstore.Container{{Name: "side"}, {Name: "app", OOMKills: kills}}}
	}
	pods := []*podstore.Pod{
		pod("serving", corev1.PodRunning, true, "web"),
		pod("crash-looping", corev1.PodRunning, false, "web", now.Add(-20*time.Second)),
		pod("killed-at-an-unknown-time", corev1.PodRunning, false, "web", time.Time{}),
		pod("not-ready-after-an-old-kill", corev1.PodRunning, false, "web", now.Add(-5*time.Minute)),
		pod("ready-again-after-a-kill", corev1.PodRunning, true, "web", now.Add(-10*time.Second)),
		pod("pending", corev1.PodPending, false, "web"),
		pod("other", corev1.PodRunning, false, "other", now.Add(-10*time.Second)),
	}
	m := (&Recommender{}).matchPods(pods, nil, hvpaView{served: []*servedHvpa{h}})
	countKilledNotReady(m, now.Add(-time.Minute))
	if h.pods != 5 || h.ready != 2 || h.killedNotReady != 2 {
		t.Errorf("the Hvpa's pods %d, ready %d, killed and not ready %d; want 5 running, 2 ready, 2 killed in the last minute or at an unknown time", h.pods, h.ready, h.killedNotReady)
	}
	if e := m.pods[pods[1].Key()]; e == nil || e.hvpa != h || e.pod.Ready {
		t.Errorf("the crash-looping pod's match: %+v, want it matched to the Hvpa and not ready", e)
	}
}
