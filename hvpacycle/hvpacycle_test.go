package hvpacycle

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/scaling"
)

func TestIntentChange(t *testing.T) {
	intent := func(replicas int32, cpu string) *hvpav1alpha1.DesiredState {
		return &hvpav1alpha1.DesiredState{Replicas: replicas, Containers: []hvpav1alpha1.ContainerResources{
			{Name: "app", Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}
	}
	cases := map[string]struct {
		prev, next *hvpav1alpha1.DesiredState
		want       Change
	}{
		"the first intent is no scaling":           {nil, intent(2, "500m"), Initial},
		"the same intent":                          {intent(2, "500m"), intent(2, "0.5"), Unchanged},
		"replicas changed":                         {intent(2, "500m"), intent(3, "500m"), Scaling},
		"a per-pod request changed":                {intent(2, "500m"), intent(2, "600m"), Scaling},
		"only the replicas the pods are sized for": {intent(2, "500m"), func() *hvpav1alpha1.DesiredState { d := intent(2, "500m"); d.SizedForReplicas = 1; return d }(), Unchanged},
		"no decision":                              {intent(2, "500m"), nil, Unchanged},
	}
	for name, tc := range cases {
		if got := IntentChange(tc.prev, tc.next); got != tc.want {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
}

// TestLoad: the load is the usage above each pod's base, summed over the pods, per resource; a resource no
// pod sampled stays out of the sample, and nothing is recorded without a sample.
func TestLoad(t *testing.T) {
	m, err := recommender.NewModel(recommender.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	st := recommender.NewState()
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	key := recommender.OwnerKey{Namespace: "ns", Owner: "Hvpa/h", Container: "app"}
	total := st.Total(m, key, t0)
	base := [scaling.NumResources]*scaling.ChangeParams{scaling.CPU: {Value: 100, HasValue: true, Percentage: 10, HasPercentage: true}}
	var empty Load
	empty.Record(total)
	if recs, _ := st.WorkloadRecommendation("ns", "Hvpa/h", func(string) recommender.Policy { return recommender.Policy{ControlCPU: true, ControlMem: true} }); len(recs) > 0 && len(recs[0].Recent) > 0 {
		t.Fatalf("a load without samples recorded %+v", recs[0].Recent)
	}
	l := Load{Base: base}
	l.Add(t0, 400, -1, 500, 0)                  // cpu base max(100, 50) = 100: 300 of load; memory not sampled
	l.Add(t0.Add(time.Second), 50, -1, 2000, 0) // base 200 above the usage: no negative load
	l.Add(t0, 1200, -1, 2000, 0)                // base 200: 1000
	l.Record(total)
	recs, _ := st.WorkloadRecommendation("ns", "Hvpa/h", func(string) recommender.Policy { return recommender.Policy{ControlCPU: true, ControlMem: true} })
	if len(recs) != 1 || len(recs[0].Recent) != 1 {
		t.Fatalf("recommendations %+v, want one container with one recent sample", recs)
	}
	s := recs[0].Recent[0]
	if s.CPUMilli != 1300 || s.MemoryBytes >= 0 || !s.At.Equal(t0.Add(time.Second)) {
		t.Errorf("sample %+v, want 1300m at the newest usage's time, no memory", s)
	}
}
