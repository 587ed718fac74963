package updater

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
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

// TestResizeLoop: a pod resized twice within the window for the same change, with no other resize between,
// is not resized a third time (UpdateLoopDetected, counted as loop); a pod the updater moved back and forth
// between two changes because its target went there and back (an Hvpa's intent while the HPA settles on 3 or
// 4 replicas) is resized every time. Before the rule took the pod's last change into account, the second
// sequence stopped at its fifth resize and the pod stayed at the other size for an hour (CI's red run of
// cmd/hvpa/app: two pods left at 934m under an intent of 2333m).
func TestResizeLoop(t *testing.T) {
	cases := map[string]struct {
		changes []float64 // the cpu request, in millicores, each loop asks for
		loops   int       // the resize that loop detection refuses (0: none)
	}{
		"the same change again and again":            {[]float64{500, 500, 500}, 3},
		"back and forth with the target":             {[]float64{500, 900, 500, 900, 500, 900}, 0},
		"one change twice, another, the first twice": {[]float64{500, 500, 900, 500, 500, 500}, 6},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", UID: "u1"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}}}
			patches := 0
			c := fake.NewClientBuilder().WithScheme(testenv.Scheme()).WithObjects(pod.DeepCopy()).
				WithInterceptorFuncs(interceptor.Funcs{SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
					patches++
					return nil
				}}).Build()
			clk := clocktesting.NewFakeClock(now)
			u := New(c, c, record.NewFakeRecorder(100), clk, nil, DefaultOptions(), NewMetrics(nil))
			s := served{ctl: Controller{Kind: "Hvpa", Namespace: "shop", Name: "web"}, obj: pod}
			for i, m := range tc.changes {
				clk.Step(time.Minute)
				sized := []scaling.ContainerDecision{{Name: "app", Requests: scaling.V(m, -1)}}
				a := &Action{Kind: Resize, Sized: sized, Fingerprint: fingerprint(sized), Message: fmt.Sprintf("app cpu request -> %.0fm", m)}
				before := patches
				u.resizeInPlace(context.Background(), s, pod, a, clk.Now())
				refused := patches == before
				if want := i+1 == tc.loops; refused != want {
					t.Fatalf("resize %d (%.0fm) of %v: refused as a loop %v, want %v", i+1, m, tc.changes, refused, want)
				}
				if refused {
					break
				}
			}
			if got, want := testutil.ToFloat64(u.Metrics.Resizes.WithLabelValues("loop")), float64(min(tc.loops, 1)); got != want {
				t.Errorf("resizes{outcome=loop} = %v, want %v", got, want)
			}
		})
	}
}

// TestResizeRecordsLoaded: records read back from the ConfigMap keep, per pod, only its newest change,
// whatever order the map gives them in: an updater restarted after a pod went back and forth does not take
// the older change's resizes for a loop.
func TestResizeRecordsLoaded(t *testing.T) {
	older, newer := "u1|app cpu=500;", "u1|app cpu=900;"
	for range 20 { // map order varies from run to run
		u := &Updater{resized: map[string][]time.Time{}, lastResized: map[types.UID]string{}}
		recs := map[string][]time.Time{older: {now.Add(-3 * time.Minute), now.Add(-2 * time.Minute)}, newer: {now.Add(-time.Minute)}, "u2|app cpu=500;": {now}}
		for k, ts := range recs {
			for _, at := range ts {
				u.recordResize(resizedPod(k), k, at)
			}
		}
		if _, ok := u.resized[older]; ok || len(u.resized[newer]) != 1 || len(u.resized["u2|app cpu=500;"]) != 1 {
			t.Fatalf("records %v: want u1's newer change only, and u2's", u.resized)
		}
		if u.lastResized["u1"] != newer {
			t.Fatalf("u1's last change %q, want %q", u.lastResized["u1"], newer)
		}
	}
}
