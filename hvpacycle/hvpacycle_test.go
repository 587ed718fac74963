package hvpacycle

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
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
	decision := func(replicas, sizedFor int32, cpuMilli float64) scaling.Decision {
		var req scaling.Values
		req.Set(scaling.CPU, cpuMilli)
		return scaling.Decision{Replicas: replicas, SizedFor: sizedFor, Containers: []scaling.ContainerDecision{{Name: "app", Requests: req}}}
	}
	cases := map[string]struct {
		prev *hvpav1alpha1.DesiredState
		next scaling.Decision
		want Change
	}{
		"the first intent is no scaling":          {nil, decision(2, 2, 500), Initial},
		"the same intent":                         {intent(2, "0.5"), decision(2, 2, 500), Unchanged},
		"replicas changed":                        {intent(2, "500m"), decision(3, 3, 500), Scaling},
		"a per-pod request changed":               {intent(2, "500m"), decision(2, 2, 600), Scaling},
		"a request rounded to the same millicore": {intent(2, "500m"), decision(2, 2, 499.2), Unchanged},
		"a memory request added": {intent(2, "500m"), func() scaling.Decision {
			d := decision(2, 2, 500)
			d.Containers[0].Requests.Set(scaling.Memory, 1<<30)
			return d
		}(), Scaling},
		"only the replicas the pods are sized for": {intent(2, "500m"), decision(2, 1, 500), Unchanged},
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

	// the minutes a recurring burst is read from take the pods' whole usage: a steady 1600m whose pod is
	// resized every hour from 14 CPUs (a base of 1400m: 200m of load) to 2 (200m: 1400m of load) is no burst
	steadyKey := recommender.OwnerKey{Namespace: "ns", Owner: "Hvpa/steady", Container: "app"}
	steadyTotal := st.Total(m, steadyKey, t0)
	for i := 0; i <= 4*60+13; i++ {
		request := 2000.0
		if i%60 < 15 {
			request = 14000
		}
		l := Load{Base: base}
		l.Add(t0.Add(time.Duration(i)*time.Minute), 1600, -1, request, 0)
		l.Record(steadyTotal)
	}
	recs, _ = st.WorkloadRecommendation("ns", "Hvpa/steady", func(string) recommender.Policy { return recommender.Policy{ControlCPU: true, ControlMem: true} })
	if len(recs) != 1 {
		t.Fatalf("%d container recommendations, want 1", len(recs))
	}
	if recs[0].RecurringCPU != 0 || !recs[0].RecurringFrom.IsZero() {
		t.Errorf("a steady usage on pods resized every hour: a recurring burst of %vm, ahead from %v; want none", recs[0].RecurringCPU, recs[0].RecurringFrom)
	}
}

// TestPodMinShare: each container of an Hvpa's workload gets its share of the recommender's pod minimum (25m
// and 250Mi split over the two scaled containers, truncated as upstream's; a third one whose policy is Off
// takes no share), and the decision reads it as the container's PodMin.
func TestPodMinShare(t *testing.T) {
	m, err := recommender.NewModel(recommender.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	st := recommender.NewState()
	t0 := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	for _, c := range []string{"app", "log", "sidecar"} {
		l := Load{}
		l.Add(t0, 5, 10<<20, 10, 20<<20)
		l.Record(st.Total(m, recommender.OwnerKey{Namespace: "ns", Owner: "Hvpa/h", Container: c}, t0))
	}
	load, _ := st.WorkloadRecommendation("ns", "Hvpa/h", func(c string) recommender.Policy {
		return recommender.Policy{Off: c == "log", ControlCPU: true, ControlMem: true}
	})
	if len(load) != 2 {
		t.Fatalf("load recommendations %+v, want two containers", load)
	}
	want := recommender.Amounts{CPUMilli: 12, MemoryBytes: 125 << 20}
	for _, l := range load {
		if l.PodMin != want {
			t.Errorf("%s: pod minimum share %+v, want %+v", l.Container, l.PodMin, want)
		}
	}
	recs := WithRecent(scaling.LoadRecommendations(Status(load)), load)
	for _, r := range recs {
		if cpu, _ := r.PodMin.Get(scaling.CPU); cpu != 12 {
			t.Errorf("%s: the decision's pod minimum cpu %v, want 12", r.Name, cpu)
		}
		if mem, _ := r.PodMin.Get(scaling.Memory); mem != 125<<20 {
			t.Errorf("%s: the decision's pod minimum memory %v, want 125Mi", r.Name, mem)
		}
	}
}

// TestSameContainersIsSemanticEquality: the intent's typed comparison of the containers in force with a
// decision's says what equality.Semantic.DeepEqual says of them and the decision's rendering
// (Decision.DesiredState, the rule it replaced) on random pairs drawn from a small domain (names, orders, nil
// and empty lists, quantities spelt two ways, values that round to the same millicore), and both outcomes
// occur.
func TestSameContainersIsSemanticEquality(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	quantities := []string{"500m", "0.5", "1", "1000m", "1Gi", "1024Mi"}
	amounts := map[scaling.Resource][]float64{scaling.CPU: {500, 499.5, 1000}, scaling.Memory: {1 << 30, 1<<30 - 0.5, 1 << 20}}
	list := func() corev1.ResourceList {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return corev1.ResourceList{}
		}
		l := corev1.ResourceList{}
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if rng.IntN(3) > 0 {
				l[r] = resource.MustParse(quantities[rng.IntN(len(quantities))])
			}
		}
		return l
	}
	values := func() scaling.Values {
		var v scaling.Values
		for _, r := range scaling.Resources {
			if rng.IntN(3) > 0 {
				v.Set(r, amounts[r][rng.IntN(len(amounts[r]))])
			}
		}
		return v
	}
	decided := func() []scaling.ContainerDecision {
		out := make([]scaling.ContainerDecision, rng.IntN(3))
		for i := range out {
			out[i] = scaling.ContainerDecision{Name: []string{"app", "side"}[rng.IntN(2)], Requests: values(), Limits: values()}
		}
		return out
	}
	seen := map[bool]int{}
	for range 20000 {
		b := decided()
		rendered := scaling.Decision{Containers: b}.DesiredState().Containers
		var a []hvpav1alpha1.ContainerResources
		switch rng.IntN(3) {
		case 0: // any containers in force
			if n := rng.IntN(3); n > 0 || rng.IntN(2) == 0 {
				a = make([]hvpav1alpha1.ContainerResources, n)
				for i := range a {
					a[i] = hvpav1alpha1.ContainerResources{Name: []string{"app", "side"}[rng.IntN(2)], Requests: list(), Limits: list()}
				}
			}
		case 1: // the decision's own rendering
			a = rendered
		default: // the same values spelt anew
			for _, c := range rendered {
				a = append(a, hvpav1alpha1.ContainerResources{Name: c.Name, Requests: respell(c.Requests), Limits: respell(c.Limits)})
			}
		}
		want := equality.Semantic.DeepEqual(a, rendered)
		if got := sameContainers(a, b); got != want {
			t.Fatalf("sameContainers(%v, %+v) = %v, Semantic.DeepEqual with its rendering %v", a, b, got, want)
		}
		seen[want]++
	}
	if seen[true] == 0 || seen[false] == 0 {
		t.Fatalf("outcomes %v: want both", seen)
	}
}

// respell is l with every quantity parsed again from its string (500m stays 500m; the value is the same).
func respell(l corev1.ResourceList) corev1.ResourceList {
	if l == nil {
		return nil
	}
	out := corev1.ResourceList{}
	for k, q := range l {
		out[k] = resource.MustParse(q.String())
	}
	return out
}

// TestBufferReadsAsThePackage pins that a Buffer's recommendations (the closed-loop simulator's, reused from
// one decision to the next) are what the Hvpa controller reads for the same load, decision after decision:
// targets that stay, move, a container that comes and goes, recent loads that grow and shrink (a part of one
// container outgrowing the array the other's part is in), samples missing a resource.
func TestBufferReadsAsThePackage(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	recent := func(n int, cpu float64) []recommender.LoadSample {
		var out []recommender.LoadSample
		for i := range n {
			s := recommender.LoadSample{At: t0.Add(time.Duration(i) * time.Minute), CPUMilli: cpu + float64(i), MemoryBytes: 1 << 30}
			if i%4 == 3 {
				s.MemoryBytes = -1
			}
			out = append(out, s)
		}
		return out
	}
	app := func(cpu int64, n int) recommender.ContainerLoad {
		return recommender.ContainerLoad{Container: "app", Target: recommender.Amounts{CPUMilli: cpu, MemoryBytes: 2 << 30},
			Recent: recent(n, float64(cpu)), MemoryRise: float64(n) / 100, RecurringCPU: float64(cpu) * 3}
	}
	side := func(mem int64, n int) recommender.ContainerLoad {
		return recommender.ContainerLoad{Container: "sidecar", Target: recommender.Amounts{CPUMilli: -1, MemoryBytes: mem}, Recent: recent(n, 7)}
	}
	rounds := [][]recommender.ContainerLoad{
		{app(500, 3)},
		{app(500, 4)}, // the same target, one sample more
		{app(600, 4)}, // the target moves
		{app(600, 2), side(1<<30, 60)},
		{app(600, 90), side(1<<30, 60)}, // the first part outgrows the array
		{app(600, 90), side(2<<30, 1)},
		{side(2<<30, 1)}, // a container goes
		{},
		{app(600, 5)},
	}
	var b Buffer
	for i, load := range rounds {
		got, want := b.Recommendations(load), WithRecent(scaling.LoadRecommendations(Status(load)), load) // the controller's path
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: the buffer gives %+v, the package %+v", i, got, want)
		}
	}
}

// TestBufferFollowsASlidingWindow: a Buffer reuses what it converted of a recent load that is the same memory
// as the last one it read (the recommender's window, which appends past its end, moves on by reslicing and
// changes a sample only in a copy), and reads as the package does, decision after decision: a window that
// grows in place, moves on, moves into a new array, has its last sample changed in a copy (an OOM kill's
// memory), starts again shorter, and a caller's other slice with the same times.
func TestBufferFollowsASlidingWindow(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	sample := func(m int) recommender.LoadSample {
		s := recommender.LoadSample{At: t0.Add(time.Duration(m) * time.Minute), CPUMilli: float64(100 + m), MemoryBytes: float64(1<<30 + m)}
		if m%5 == 4 {
			s.CPUMilli = -1
		}
		return s
	}
	window := make([]recommender.LoadSample, 0, 8) // room for 8: the appends below outgrow it
	var b Buffer
	check := func(step string, recent []recommender.LoadSample) {
		t.Helper()
		load := []recommender.ContainerLoad{{Container: "app", Target: recommender.Amounts{CPUMilli: 500, MemoryBytes: 1 << 30}, Recent: recent}}
		got, want := b.Recommendations(load), WithRecent(scaling.LoadRecommendations(Status(load)), load)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the buffer gives %+v, the package %+v", step, got[0].Recent, want[0].Recent)
		}
	}
	m := 0
	for ; m < 6; m++ { // grows in place
		window = append(window, sample(m))
		check(fmt.Sprintf("minute %d", m), window[:len(window):len(window)])
	}
	for ; m < 20; m++ { // moves on by reslicing (4 samples kept), into a new array when full
		window = append(window, sample(m))
		window = window[max(len(window)-4, 0):]
		check(fmt.Sprintf("minute %d", m), window[:len(window):len(window)])
	}
	// the last sample changed in a copy: same times, other memory
	changed := slices.Clone(window)
	changed[len(changed)-1].MemoryBytes *= 2
	check("the last sample changed in a copy", changed)
	window = changed
	window = append(window, sample(m))
	check("appended after the copy", window[:len(window):len(window)])
	check("starts again shorter", window[len(window)-1:])
	other := slices.Clone(window)
	other[0].CPUMilli = 7
	check("another slice with the same times", other)
}

// TestWithRecentCarriesTheRecurringBurst checks that a decision reads every field of the recurring burst the
// recommender reports (the anticipation, the burst ahead last and its end, the next one), each set to a value
// of its own: a field not carried reads as none, and the rule that reads it (section 2a) silently stops.
func TestWithRecentCarriesTheRecurringBurst(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	load := []recommender.ContainerLoad{{Container: "app", Target: recommender.Amounts{CPUMilli: 500, MemoryBytes: 1 << 30},
		RecurringCPU: 2800, RecurringEvery: time.Hour, RecurringFrom: t0.Add(-20 * time.Minute), RecurringEnded: t0.Add(-4 * time.Minute),
		RecurringBefore: 400, RecurringEndedEarliest: t0.Add(-9 * time.Minute), RecurringNext: t0.Add(40 * time.Minute)}}
	l := load[0]
	for name, recs := range map[string][]scaling.Recommendation{
		"WithRecent": WithRecent(scaling.LoadRecommendations(Status(load)), load),
		"Buffer":     new(Buffer).Recommendations(load),
	} {
		if len(recs) != 1 {
			t.Fatalf("%s: %d recommendations, want 1", name, len(recs))
		}
		r := recs[0]
		if r.RecurringCPU != l.RecurringCPU || r.RecurringEvery != l.RecurringEvery || !r.RecurringFrom.Equal(l.RecurringFrom) ||
			!r.RecurringEnded.Equal(l.RecurringEnded) || r.RecurringBefore != l.RecurringBefore ||
			!r.RecurringEndedEarliest.Equal(l.RecurringEndedEarliest) || !r.RecurringNext.Equal(l.RecurringNext) {
			t.Errorf("%s: recurring burst %v every %v, ahead from %v, ended %v (earliest %v) after %v, next %v; want the recommender's %+v", name,
				r.RecurringCPU, r.RecurringEvery, r.RecurringFrom, r.RecurringEnded, r.RecurringEndedEarliest, r.RecurringBefore, r.RecurringNext, l)
		}
	}
}
