package updater

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/hvpa-dev/hvpa/scaling"
	"github.com/hvpa-dev/hvpa/test/testenv"
)

// TestResizeLoop: the updater does not make a change a third time within the window when something else
// moved the pod away from it after each of the first two (a loop: the change does not stick), whether or not
// it resized the pod to other changes between; a pod that held each change until the updater moved it on,
// because its target went back and forth (an Hvpa's intent while the HPA settles on 3 or 4 replicas), is
// resized every time. Before the rule asked whether the pod held the previous change, the "held" sequence
// stopped at its fifth resize and the pod stayed at the other size for an hour (CI's red run of
// cmd/hvpa/app: two pods left at 934m under an intent of 2333m).
func TestResizeLoop(t *testing.T) {
	type step struct {
		cpu   int64 // the cpu request, in millicores, the loop asks for
		reset bool  // something else sets the pod back to its first size after the resize
	}
	held := func(cpus ...int64) []step {
		out := make([]step, len(cpus))
		for i, c := range cpus {
			out[i] = step{cpu: c}
		}
		return out
	}
	reset := func(cpus ...int64) []step {
		out := held(cpus...)
		for i := range out {
			out[i].reset = true
		}
		return out
	}
	cases := map[string]struct {
		steps []step
		loop  int // the resize that loop detection refuses (0: none)
	}{
		"back and forth with the target, the pod holding each change": {held(500, 900, 500, 900, 500, 900, 500), 0},
		"the same change, reset each time":                            {reset(500, 500, 500), 3},
		"back and forth, reset each time":                             {reset(500, 900, 500, 900, 500), 5},
		"one change held, then another reset twice":                   {append(held(900), reset(500, 500, 500)...), 4},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "u1"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}}}
			first := pod.Spec.Containers[0].Resources.DeepCopy()
			var asked []int64
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(pod.DeepCopy()).
				WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(_ context.Context, _ client.Client, sub string, obj client.Object, p client.Patch, _ ...client.SubResourcePatchOption) error {
					// the API server's answer to pods/resize: the pod with the spec's new requests
					body, err := p.Data(obj)
					if err != nil || sub != "resize" {
						t.Fatalf("patch of %q: %v", sub, err)
					}
					var patch struct {
						Spec struct {
							Containers []struct {
								Resources corev1.ResourceRequirements `json:"resources"`
							} `json:"containers"`
						} `json:"spec"`
					}
					if err := json.Unmarshal(body, &patch); err != nil {
						t.Fatal(err)
					}
					cpu := patch.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]
					asked = append(asked, cpu.MilliValue())
					obj.(*corev1.Pod).Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = cpu
					return nil
				}}).Build()
			clk := clocktesting.NewFakeClock(now)
			u := New(c, c, record.NewFakeRecorder(100), clk, nil, DefaultOptions(), NewMetrics(nil))
			s := served{ctl: Controller{Kind: "Hvpa", Namespace: "shop", Name: "web"}, obj: pod}
			for i, st := range tc.steps {
				clk.Step(time.Minute)
				sized := []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(float64(st.cpu), -1)}}
				a := &Action{Kind: Resize, Sized: sized, Fingerprint: fingerprint(sized), Message: fmt.Sprintf("app cpu request -> %dm", st.cpu)}
				before := len(asked)
				u.resizeInPlace(context.Background(), s, pod, a, clk.Now())
				refused := len(asked) == before
				if want := i+1 == tc.loop; refused != want {
					t.Fatalf("resize %d of %+v: refused as a loop %v, want %v (asked before: %v)", i+1, tc.steps, refused, want, asked[:before])
				}
				if refused {
					break
				}
				if st.reset {
					pod.Spec.Containers[0].Resources = *first.DeepCopy()
				}
			}
			if got, want := testutil.ToFloat64(u.Metrics.Resizes.WithLabelValues("loop")), float64(min(tc.loop, 1)); got != want {
				t.Errorf("resizes{outcome=loop} = %v, want %v (asked %v)", got, want, asked)
			}
		})
	}
}

// TestResizeRecordsLoaded: an updater that starts reads the resize records back from the ConfigMap in time
// order, whatever order its map gives them in: a pod that an older version recorded as A, B, A keeps only
// its newest change (A once), so a restarted updater neither takes its earlier A for a loop nor forgets the
// newest, which would leave the pod's next change unable to end it.
func TestResizeRecordsLoaded(t *testing.T) {
	a, b, other := "u1|app cpu=500;", "u1|app cpu=900;", "u2|app cpu=500;"
	recs := loopRecords{Resized: map[string][]time.Time{
		a:     {now.Add(-5 * time.Minute), now.Add(-time.Minute)},
		b:     {now.Add(-3 * time.Minute)},
		other: {now.Add(-4 * time.Minute), now.Add(-2 * time.Minute)},
	}}
	data, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.LoopRecords = types.NamespacedName{Namespace: "hvpa", Name: "loops"}
	for range 20 { // map order varies from run to run
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "hvpa", Name: "loops"}, Data: map[string]string{loopRecordsKey: string(data)}}
		c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(cm).Build()
		u := New(c, c, record.NewFakeRecorder(10), clocktesting.NewFakeClock(now), nil, o, NewMetrics(nil))
		u.loadLoopRecords(context.Background())
		if _, ok := u.resized[b]; ok || len(u.resized[a]) != 1 || !u.resized[a][0].Equal(now.Add(-time.Minute)) || len(u.resized[other]) != 2 {
			t.Fatalf("records %v: want u1's newest A only, and both of u2's", u.resized)
		}
		if u.lastResized["u1"].key != a || u.lastResized["u2"].key != other {
			t.Fatalf("last changes %+v, want u1 %q and u2 %q", u.lastResized, a, other)
		}
	}
}
