package scaling

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// limitRangerPod is the pod's request (or limit, with limits) of r as the API server's LimitRanger sums it
// for a LimitRange of type Pod (plugin/pkg/admission/limitranger, podRequests and podLimits), written here
// from that code's steps and independently of ApplyPodLimitRange: the app containers summed, each restartable
// init container (sidecar) added to that sum and to the sidecars seen so far, each other init container
// counted with the sidecars before it, and the largest of those against the sum. has: some container holds r.
func limitRangerPod(app, init []Container, r Resource, limits bool) (total float64, has bool) {
	get := func(k Container) (float64, bool) {
		if limits {
			return k.Limits.Get(r)
		}
		return k.Requests.Get(r)
	}
	var sum, sidecars, initMax float64
	for _, k := range app {
		x, ok := get(k)
		sum, has = sum+x, has || ok
	}
	for _, k := range init {
		x, ok := get(k)
		has = has || ok
		own := x
		if k.Kind == SidecarContainer {
			sum += x
			sidecars += x
			own = sidecars
		} else {
			own += sidecars
		}
		initMax = max(initMax, own)
	}
	return max(sum, initMax), has
}

// limitRangerRefusals is what the LimitRanger refuses in a pod of the app and init containers under lr (pod
// min, max and maxLimitRequestRatio; container max and maxLimitRequestRatio of every container), each a
// message like the API server's; none: the pod is admitted.
func limitRangerRefusals(app, init []Container, lr LimitRange) []string {
	var out []string
	for _, r := range Resources {
		req, hasReq := limitRangerPod(app, init, r, false)
		lim, hasLim := limitRangerPod(app, init, r, true)
		if m, ok := lr.PodMin.Get(r); ok && (!hasReq || req < m || (hasLim && lim < m)) {
			out = append(out, fmt.Sprintf("minimum %s usage per Pod is %v, but request %v limit %v", r, m, req, lim))
		}
		if m, ok := lr.PodMax.Get(r); ok && (!hasLim || lim > m || (hasReq && req > m)) {
			out = append(out, fmt.Sprintf("maximum %s usage per Pod is %v, but limit %v request %v", r, m, lim, req))
		}
		if x, ok := lr.PodMaxLimitRequestRatio.Get(r); ok && (req == 0 || lim == 0 || lim/req*1000 > math.Round(x*1000)) {
			out = append(out, fmt.Sprintf("%s max limit to request ratio per Pod is %v, but %v/%v", r, x, lim, req))
		}
		for _, k := range slices.Concat(app, init) {
			q, _ := k.Requests.Get(r)
			l, hasL := k.Limits.Get(r)
			if m, ok := lr.ContainerMax.Get(r); ok && (!hasL || l > m || q > m) {
				out = append(out, fmt.Sprintf("maximum %s usage per Container is %v, but %s has limit %v request %v", r, m, k.Name, l, q))
			}
			if x, ok := lr.MaxLimitRequestRatio.Get(r); ok && hasL && (q == 0 || l/q*1000 > math.Round(x*1000)) {
				out = append(out, fmt.Sprintf("%s max limit to request ratio per Container is %v, but %s has %v/%v", r, x, k.Name, l, q))
			}
		}
	}
	return out
}

// TestApplyPodLimitRange: the pod bounds of a LimitRange as the API server's LimitRanger checks them: pod min
// raises the scaled containers, pod max counts init containers and sidecars as the LimitRanger does (the sum
// of app containers and sidecars, or an init container with the sidecars started before it, whichever is
// larger), the request and the limit sums are each bounded, and the pod maxLimitRequestRatio raises
// requests. Every pod that can fit is one the LimitRanger (limitRangerRefusals) admits.
func TestApplyPodLimitRange(t *testing.T) {
	const mi = float64(1 << 20)
	type sized struct {
		Name             string
		Requests, Limits Values
	}
	sidecar := func(name string, req, lim Values) Container {
		return Container{Name: name, Requests: req, Limits: lim, Kind: SidecarContainer}
	}
	initC := func(name string, req, lim Values) Container {
		return Container{Name: name, Requests: req, Limits: lim, Kind: InitContainer}
	}
	cases := map[string]struct {
		cs        []ContainerDecision
		fixed     []Container
		lr        LimitRange
		want      []sized
		wantNotes []string
		unfit     bool // the pod cannot fit: the LimitRanger still refuses it
	}{
		"pod min raises request and limit together": {
			cs:        []ContainerDecision{{Name: "app", Requests: V(100, -1), Limits: V(200, -1)}},
			fixed:     []Container{{Name: "log", Requests: V(50, -1), Limits: V(50, -1)}},
			lr:        LimitRange{PodMin: V(500, -1)},
			want:      []sized{{"app", V(450, -1), V(900, -1)}},
			wantNotes: []string{"cpu requests of the scaled containers raised by 4.500 to the LimitRange pod min 500m"}},
		"pod min on memory counts a sidecar": {
			cs:        []ContainerDecision{{Name: "app", Requests: V(-1, 100*mi), Limits: V(-1, 100*mi)}},
			fixed:     []Container{sidecar("proxy", V(-1, 156*mi), V(-1, 156*mi))},
			lr:        LimitRange{PodMin: V(-1, 512*mi)},
			want:      []sized{{"app", V(-1, 356*mi), V(-1, 356*mi)}},
			wantNotes: []string{"memory requests of the scaled containers raised by 3.560 to the LimitRange pod min 512Mi"}},
		"pod min: the limit sum too": {
			cs:    []ContainerDecision{{Name: "app", Requests: V(300, -1), Limits: V(300, -1)}},
			fixed: []Container{{Name: "log", Requests: V(100, -1)}},
			lr:    LimitRange{PodMin: V(500, -1)},
			want:  []sized{{"app", V(500, -1), V(500, -1)}},
			wantNotes: []string{"cpu requests of the scaled containers raised by 1.333 to the LimitRange pod min 500m",
				"cpu of the scaled containers raised by 1.250 to the LimitRange pod min 500m"}},
		"pod min: a RequestsOnly request rises under its unchanged limit": {
			cs:        []ContainerDecision{{Name: "app", RequestsOnly: true, Requests: V(100, -1), Limits: V(1000, -1)}},
			lr:        LimitRange{PodMin: V(600, -1)},
			want:      []sized{{"app", V(600, -1), V(1000, -1)}},
			wantNotes: []string{"cpu requests of the scaled containers raised by 6.000 to the LimitRange pod min 600m"}},
		"pod min stops at the container max, and says so": {
			cs:    []ContainerDecision{{Name: "app", Requests: V(100, -1), Limits: V(100, -1)}},
			fixed: []Container{sidecar("proxy", V(100, -1), V(100, -1))},
			lr:    LimitRange{PodMin: V(500, -1), ContainerMax: V(300, -1)},
			want:  []sized{{"app", V(300, -1), V(300, -1)}},
			wantNotes: []string{"cpu requests of the scaled containers raised by 4.000 to the LimitRange pod min 500m",
				"cpu: the pod stays below the LimitRange pod min 500m: the scaled containers cannot rise further (container max, unchanged limits, pod max)"},
			unfit: true},
		"pod min and max: max wins for the limit, the request rises alone under it": {
			cs:   []ContainerDecision{{Name: "app", Requests: V(100, -1), Limits: V(400, -1)}},
			lr:   LimitRange{PodMin: V(500, -1), PodMax: V(600, -1)},
			want: []sized{{"app", V(500, -1), V(600, -1)}},
			wantNotes: []string{"cpu requests of the scaled containers raised by 5.000 to the LimitRange pod min 500m",
				"cpu of the scaled containers lowered by 0.300 to fit the LimitRange pod max 600m",
				"cpu requests of the scaled containers raised by 3.333 to the LimitRange pod min 500m under their limits"}},
		"pod max counts a sidecar": {
			cs:        []ContainerDecision{{Name: "app", Requests: V(800, -1), Limits: V(800, -1)}},
			fixed:     []Container{sidecar("proxy", V(300, -1), V(300, -1))},
			lr:        LimitRange{PodMax: V(1000, -1)},
			want:      []sized{{"app", V(700, -1), V(700, -1)}},
			wantNotes: []string{"cpu of the scaled containers lowered by 0.875 to fit the LimitRange pod max 1"}},
		"pod max: an init container runs alone, it is not added": {
			cs:    []ContainerDecision{{Name: "app", Requests: V(400, -1), Limits: V(400, -1)}},
			fixed: []Container{initC("migrate", V(900, -1), V(900, -1))},
			lr:    LimitRange{PodMax: V(1000, -1)},
			want:  []sized{{"app", V(400, -1), V(400, -1)}}},
		"pod max: an init container counts with the sidecars started before it": {
			cs:    []ContainerDecision{{Name: "app", Requests: V(700, -1), Limits: V(700, -1)}},
			fixed: []Container{sidecar("proxy", V(200, -1), V(200, -1)), initC("migrate", V(900, -1), V(900, -1))},
			lr:    LimitRange{PodMax: V(1000, -1)},
			want:  []sized{{"app", V(700, -1), V(700, -1)}},
			wantNotes: []string{"cpu: the containers not scaled (init containers and sidecars included) already use the LimitRange pod max 1; " +
				"the scaled containers are left unfitted"},
			unfit: true},
		"pod max: a sidecar started after an init container does not count with it": {
			cs:    []ContainerDecision{{Name: "app", Requests: V(700, -1), Limits: V(700, -1)}},
			fixed: []Container{initC("migrate", V(900, -1), V(900, -1)), sidecar("proxy", V(200, -1), V(200, -1))},
			lr:    LimitRange{PodMax: V(1000, -1)},
			want:  []sized{{"app", V(700, -1), V(700, -1)}}},
		"pod max: the request sum of containers without a limit is bounded too": {
			cs:        []ContainerDecision{{Name: "app", Requests: V(600, -1)}},
			fixed:     []Container{{Name: "log", Requests: V(200, -1), Limits: V(300, -1)}},
			lr:        LimitRange{PodMax: V(700, -1)},
			want:      []sized{{"app", V(500, -1), Values{}}},
			wantNotes: []string{"cpu requests of the scaled containers lowered by 0.833 to fit the LimitRange pod max 700m"}},
		"pod max on memory: rounding keeps the container maxLimitRequestRatio": {
			cs:   []ContainerDecision{{Name: "app", Requests: V(-1, 250), Limits: V(-1, 1000)}},
			lr:   LimitRange{PodMax: V(-1, 333), MaxLimitRequestRatio: V(-1, 4)},
			want: []sized{{"app", V(-1, 84), V(-1, 333)}},
			wantNotes: []string{"memory of the scaled containers lowered by 0.333 to fit the LimitRange pod max 333",
				"memory request raised to 84 to keep limit/request within the LimitRange maxLimitRequestRatio 4"}},
		"pod maxLimitRequestRatio raises requests under their limits": {
			cs:        []ContainerDecision{{Name: "app", RequestsOnly: true, Requests: V(100, -1), Limits: V(1000, -1)}},
			fixed:     []Container{{Name: "log", Requests: V(100, -1), Limits: V(100, -1)}},
			lr:        LimitRange{PodMaxLimitRequestRatio: V(2, -1)},
			want:      []sized{{"app", V(450, -1), V(1000, -1)}},
			wantNotes: []string{"cpu requests of the scaled containers raised to keep the pod's limit/request within the LimitRange pod maxLimitRequestRatio 2"}},
		"pod maxLimitRequestRatio counts the init container's limit": {
			cs:        []ContainerDecision{{Name: "app", Requests: V(100, -1), Limits: V(200, -1)}},
			fixed:     []Container{initC("migrate", V(100, -1), V(1000, -1))},
			lr:        LimitRange{PodMaxLimitRequestRatio: V(4, -1)},
			want:      []sized{{"app", V(200, -1), V(200, -1)}},
			wantNotes: []string{"cpu: the pod's limit/request stays above the LimitRange pod maxLimitRequestRatio 4: the scaled requests cannot rise further (up to their limits)"},
			unfit:     true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cs := slices.Clone(tc.cs)
			notes := ApplyPodLimitRange(cs, tc.fixed, tc.lr)
			var got []sized
			var app []Container
			for _, c := range cs {
				got = append(got, sized{c.Name, c.Requests, c.Limits})
				app = append(app, Container{Name: c.Name, Requests: c.Requests, Limits: c.Limits})
				for _, r := range Resources {
					q, _ := c.Requests.Get(r)
					if l, ok := c.Limits.Get(r); ok && q > l {
						t.Errorf("%s: %s request %v above its limit %v", c.Name, r, q, l)
					}
				}
			}
			if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(Values{})); d != "" {
				t.Errorf("sizes (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantNotes, NoteTexts(notes), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
			var init []Container
			for _, k := range tc.fixed {
				if k.Kind == AppContainer {
					app = append(app, k)
				} else {
					init = append(init, k)
				}
			}
			refused := limitRangerRefusals(app, init, tc.lr)
			if !tc.unfit && len(refused) > 0 {
				t.Errorf("the LimitRanger refuses the fitted pod: %s", strings.Join(refused, "; "))
			}
			if tc.unfit && len(refused) == 0 {
				t.Errorf("a pod said to be unfitted is admitted by the LimitRanger")
			}
		})
	}
}

// TestSizePodCountsInitContainers: SizePod sizes sidecars like app containers under their own policies, never
// sizes init containers (even with a target and a "*" policy), and counts both toward the pod max as the
// LimitRanger does.
func TestSizePodCountsInitContainers(t *testing.T) {
	containers := []Container{
		{Name: "app", Requests: V(100, -1), Limits: V(100, -1)},
		{Name: "migrate", Requests: V(900, -1), Limits: V(900, -1), Kind: InitContainer},
		{Name: "proxy", Requests: V(300, -1), Limits: V(300, -1), Kind: SidecarContainer},
	}
	targets := map[string]Values{"app": V(800, -1), "proxy": V(50, -1), "migrate": V(50, -1)}
	lr := &LimitRange{PodMax: V(1000, -1)}
	out := SizePod(containers, targets, nil, [NumResources]*ChangeParams{}, lr)
	if len(out) != 2 || out[0].Name != "app" || out[1].Name != "proxy" {
		t.Fatalf("sized %+v, want the app container and the sidecar", out)
	}
	if q, _ := out[1].Requests.Get(CPU); q != 50 {
		t.Errorf("sidecar request %v, want its target 50m", q)
	}
	if q, _ := out[0].Requests.Get(CPU); q != 800 {
		t.Errorf("app request %v, want its target 800m (app and sidecar 850m; the init container alone 900m)", q)
	}

	// the sidecar's own policy: Off leaves it at 300m, which counts toward the pod max
	off := []ContainerPolicy{{Name: "proxy", Off: true}}
	out = SizePod(containers, targets, off, [NumResources]*ChangeParams{}, lr)
	if len(out) != 1 || out[0].Name != "app" {
		t.Fatalf("sized %+v, want the app container only (the sidecar's policy is Off)", out)
	}
	if q, _ := out[0].Requests.Get(CPU); q != 700 {
		t.Errorf("app request %v, want 700 (pod max 1000 - sidecar 300; the init container alone is 900)", q)
	}
	if l, _ := out[0].Limits.Get(CPU); l != 700 {
		t.Errorf("app limit %v, want 700", l)
	}
}

// TestFromPodLimitRange: FromInitContainers marks sidecars by their restartPolicy; FromLimitRanges reads the pod
// bounds, the pod maxLimitRequestRatio among them, the tightest of several LimitRanges winning.
func TestFromPodLimitRange(t *testing.T) {
	spec := &corev1.PodSpec{
		Containers:     []corev1.Container{{Name: "app"}},
		InitContainers: []corev1.Container{{Name: "migrate"}, {Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
	}
	var kinds []ContainerKind
	for _, k := range FromPodContainers(spec) {
		kinds = append(kinds, k.Kind)
	}
	if want := []ContainerKind{AppContainer, InitContainer, SidecarContainer}; !slices.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	item := func(typ corev1.LimitType, minCPU, maxCPU, ratio string) corev1.LimitRange {
		return corev1.LimitRange{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: typ,
			Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(minCPU)}, Max: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(maxCPU)},
			MaxLimitRequestRatio: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(ratio)}}}}}
	}
	lr := FromLimitRanges([]corev1.LimitRange{item(corev1.LimitTypePod, "100m", "4", "3"), item(corev1.LimitTypePod, "200m", "2", "1.5"),
		item(corev1.LimitTypeContainer, "10m", "1", "10")})
	want := LimitRange{PodMin: V(200, -1), PodMax: V(2000, -1), PodMaxLimitRequestRatio: V(1.5, -1),
		ContainerMin: V(10, -1), ContainerMax: V(1000, -1), MaxLimitRequestRatio: V(10, -1)}
	if d := cmp.Diff(&want, lr, cmp.AllowUnexported(Values{})); d != "" {
		t.Errorf("FromLimitRanges (-want +got):\n%s", d)
	}
}

// FuzzApplyPodLimitRange: whatever the pod (app containers scaled or not, RequestsOnly ones, containers
// without a limit, init containers and sidecars in any order) and the pod bounds, the sized pod is one the
// LimitRanger admits, unless a note says it cannot fit (or the LimitRanger refuses the pod whatever the sizes:
// no request under a pod min, no limit under a pod max or ratio); no request ends above its limit.
func FuzzApplyPodLimitRange(f *testing.F) {
	f.Add(uint64(1), 500.0, 2000.0, 2.0)
	f.Add(uint64(7), 0.0, 1000.0, 0.0)
	f.Add(uint64(42), 800.0, 0.0, 1.5)
	f.Fuzz(func(t *testing.T, seed uint64, podMin, podMax, ratio float64) {
		for _, x := range []float64{podMin, podMax, ratio} {
			if !(x >= 0 && x < 1e6) {
				t.Skip()
			}
		}
		lr := LimitRange{}
		podMin, podMax = RoundUp(podMin), RoundUp(podMax)
		if podMin > 0 {
			lr.PodMin = V(podMin, -1)
		}
		if podMax > 0 && podMax >= podMin {
			lr.PodMax = V(podMax, -1)
		}
		if ratio >= 1 { // a LimitRange's ratio is read at its milli value
			lr.PodMaxLimitRequestRatio = V(math.Round(ratio*1000)/1000, -1)
		}
		cs, fixed := fuzzPod(seed)
		notes := strings.Join(NoteTexts(ApplyPodLimitRange(cs, fixed, lr)), "; ")
		var app, init []Container
		for _, c := range cs {
			q, _ := c.Requests.Get(CPU)
			if l, ok := c.Limits.Get(CPU); ok && q > l {
				t.Fatalf("%s: request %v above its limit %v", c.Name, q, l)
			}
			app = append(app, Container{Name: c.Name, Requests: c.Requests, Limits: c.Limits})
		}
		for _, k := range fixed {
			if k.Kind == AppContainer {
				app = append(app, k)
			} else {
				init = append(init, k)
			}
		}
		_, hasReq := limitRangerPod(app, init, CPU, false)
		_, hasLim := limitRangerPod(app, init, CPU, true)
		if !hasReq || (!hasLim && (lr.PodMax.Has(CPU) || lr.PodMaxLimitRequestRatio.Has(CPU))) ||
			strings.Contains(notes, "unfitted") || strings.Contains(notes, "stays") {
			return
		}
		if refused := limitRangerRefusals(app, init, lr); len(refused) > 0 {
			t.Errorf("the LimitRanger refuses the sized pod: %s (notes: %s)", strings.Join(refused, "; "), notes)
		}
	})
}

// fuzzPod makes a pod from seed: 1-3 scaled app containers (some RequestsOnly, some without a limit), and 0-4
// other containers (app containers not scaled, init containers, sidecars), cpu only.
func fuzzPod(seed uint64) ([]ContainerDecision, []Container) {
	next := func(n uint64) uint64 {
		seed = seed*6364136223846793005 + 1442695040888963407
		return (seed >> 33) % n
	}
	values := func(limit bool) (Values, Values) {
		q := float64(1 + next(2000))
		if !limit {
			return V(q, -1), Values{}
		}
		return V(q, -1), V(q*float64(1+next(4)), -1)
	}
	var cs []ContainerDecision
	for i := range 1 + next(3) {
		req, lim := values(next(4) != 0)
		cs = append(cs, ContainerDecision{Name: fmt.Sprintf("app%d", i), Requests: req, Limits: lim, RequestsOnly: next(3) == 0})
	}
	var fixed []Container
	for i := range next(5) {
		req, lim := values(next(4) != 0)
		fixed = append(fixed, Container{Name: fmt.Sprintf("other%d", i), Requests: req, Limits: lim, Kind: ContainerKind(next(3))})
	}
	return cs, fixed
}

// TestDecideCountsInitContainersInPodLimitRange: the Hvpa decision sizes the intent with the pod's sidecars and
// init containers (State.InitContainers) toward the LimitRange pod max, so that the webhook and the updater,
// which size pods with them, agree with it.
func TestDecideCountsInitContainersInPodLimitRange(t *testing.T) {
	st := vpaState(1, V(100, -1), 400, -1)
	st.Containers[0].Limits = V(100, -1)
	st.LimitRange = &LimitRange{PodMax: V(600, -1)}
	st.InitContainers = []Container{{Name: "migrate", Requests: V(500, -1), Limits: V(500, -1), Kind: InitContainer},
		{Name: "proxy", Requests: V(300, -1), Limits: V(300, -1), Kind: SidecarContainer}}
	d, err := Decide(epSpec(), st)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Containers) != 1 || d.Containers[0].Name != "app" {
		t.Fatalf("containers %+v, want app only", d.Containers)
	}
	q, _ := d.Containers[0].Requests.Get(CPU)
	l, _ := d.Containers[0].Limits.Get(CPU)
	if q != 300 || l != 300 {
		t.Errorf("app request %v limit %v, want 300 and 300 (pod max 600 - the sidecar's 300; notes %v)", q, l, NoteTexts(d.Containers[0].Notes))
	}
}
