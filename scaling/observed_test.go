package scaling

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

func TestContainersInForce(t *testing.T) {
	rl := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	pod := []corev1.Container{
		{Name: "app", Resources: corev1.ResourceRequirements{Requests: rl("100m", "128Mi"), Limits: rl("200m", "256Mi")}},
		{Name: "sidecar", Resources: corev1.ResourceRequirements{Requests: rl("10m", "16Mi")}},
	}
	desired := &hvpav1alpha1.DesiredState{Containers: []hvpav1alpha1.ContainerResources{{Name: "app", Requests: rl("300m", "512Mi"), Limits: rl("600m", "1Gi")}}}
	cases := map[string]struct {
		desired *hvpav1alpha1.DesiredState
		want    []Container
	}{
		"no intent yet: the pod's values": {nil, []Container{
			{Name: "app", Requests: V(100, 128<<20), Limits: V(200, 256<<20)}, {Name: "sidecar", Requests: V(10, 16<<20)}}},
		"the intent where there is one, the pod's values elsewhere": {desired, []Container{
			{Name: "app", Requests: V(300, 512<<20), Limits: V(600, 1<<30)}, {Name: "sidecar", Requests: V(10, 16<<20)}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, ContainersInForce(pod, tc.desired), cmp.AllowUnexported(Values{})); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestOOMKilledSince(t *testing.T) {
	scaled := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	killed := func(at time.Time, last bool) corev1.Pod {
		s := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", FinishedAt: metav1.NewTime(at)}}
		cs := corev1.ContainerStatus{Name: "app", State: s}
		if last {
			cs = corev1.ContainerStatus{Name: "app", LastTerminationState: s, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
		}
		return corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{cs}}}
	}
	completed := corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed", FinishedAt: metav1.NewTime(scaled.Add(time.Minute))}}}}}}
	cases := map[string]struct {
		pods  []corev1.Pod
		since *time.Time
		want  bool
	}{
		"killed after the scaling, restarted since": {[]corev1.Pod{killed(scaled.Add(time.Minute), true)}, &scaled, true},
		"killed after the scaling, terminated now":  {[]corev1.Pod{killed(scaled.Add(time.Minute), false)}, &scaled, true},
		"killed before the scaling":                 {[]corev1.Pod{killed(scaled.Add(-time.Minute), true)}, &scaled, false},
		"no scaling yet: any kill":                  {[]corev1.Pod{killed(scaled.Add(-time.Hour), true)}, nil, true},
		"a container that completed":                {[]corev1.Pod{completed}, &scaled, false},
		"no pods":                                   {nil, nil, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := OOMKilledSince(tc.pods, tc.since); got != tc.want {
				t.Errorf("OOMKilledSince = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHPAInputOf(t *testing.T) {
	cpu80 := []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}}}}
	hvpa := func(deploy bool, replicas *int32, recorded *int32) *hvpav1alpha1.Hvpa {
		h := &hvpav1alpha1.Hvpa{Spec: hvpav1alpha1.HvpaSpec{Replicas: replicas,
			HPA: &hvpav1alpha1.HpaSpec{Deploy: deploy, Template: hvpav1alpha1.HpaTemplate{MinReplicas: ptr.To[int32](1), MaxReplicas: 5, Metrics: cpu80}}}}
		if recorded != nil {
			h.Status.HPA = &hvpav1alpha1.HpaStatus{DesiredReplicas: recorded, Basis: []hvpav1alpha1.ContainerResources{{Name: "app",
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}}}}
		}
		return h
	}
	inForce := []Container{{Name: "app", Requests: V(250, -1)}}
	hpa := &autoscalingv2.HorizontalPodAutoscaler{}
	deployed := Horizontal{Kind: HorizontalDeployed, HPA: hpa}
	usage := V(1000, -1) // one core over the workload: 4 x 250m at 100%, against 80%: 1000/(250 x 0.8) = 5
	if in := HPAInputOf(hvpa(false, ptr.To[int32](3), nil), Horizontal{}, HPAPods{Replicas: 4, Ready: 4}, inForce, &usage); in != nil {
		t.Errorf("nobody writes spec.replicas: input %+v, want none", in)
	}
	if in := HPAInputOf(hvpa(true, nil, nil), deployed, HPAPods{Replicas: 4, Ready: 4}, inForce, &usage); in != nil {
		t.Errorf("no spec.replicas yet: input %+v, want none", in)
	}
	in := HPAInputOf(hvpa(true, ptr.To[int32](3), ptr.To[int32](3)), deployed, HPAPods{Replicas: 4, Ready: 4}, inForce, &usage)
	if in == nil || in.Desired != 3 || in.Min != 1 || in.Max != 5 {
		t.Fatalf("input %+v, want desired 3 within 1..5", in)
	}
	if in.Raw < 4.99 || in.Raw > 5.01 {
		t.Errorf("raw %v, want 5 (usage 1000m over 250m x 80%%)", in.Raw)
	}
	if b, ok := in.Basis["app"].Get(CPU); !ok || b != 500 {
		t.Errorf("basis %+v, want app cpu 500m (status records it for these desired replicas)", in.Basis)
	}
	if in := HPAInputOf(hvpa(true, ptr.To[int32](4), ptr.To[int32](3)), Horizontal{Kind: HorizontalDeployed}, HPAPods{Replicas: 4, Ready: 4}, inForce, nil); in == nil || in.Basis != nil || in.Raw != 0 {
		t.Errorf("the HPA wants other replicas than status records, not read yet: input %+v, want no basis and no raw", in)
	}
	// another HPA (a user's, KEDA's): its own bounds and metrics, not the template's (CPU at 50%: raw 8)
	user := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To[int32](2), MaxReplicas: 9,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)}}}}}}
	in = HPAInputOf(hvpa(false, ptr.To[int32](4), nil), Horizontal{Kind: HorizontalHPA, HPA: user}, HPAPods{Replicas: 4, Ready: 4}, inForce, &usage)
	if in == nil || in.Desired != 4 || in.Min != 2 || in.Max != 9 || in.Raw < 7.99 || in.Raw > 8.01 {
		t.Errorf("a user's HPA: input %+v, want desired 4 within its 2..9, raw 8 (1000m over 250m x 50%%)", in)
	}
	// kubectl scale, no HPA: the replicas with no bounds (never pinned) and no raw reading
	in = HPAInputOf(hvpa(false, ptr.To[int32](4), nil), Horizontal{Kind: HorizontalScale}, HPAPods{Replicas: 4, Ready: 4}, inForce, &usage)
	if in == nil || in.Desired != 4 || in.Min != 0 || in.Max != 0 || in.Raw != 0 || in.AtBound() {
		t.Errorf("kubectl scale: input %+v, want desired 4, no bounds, no raw", in)
	}
}

// TestHPAInputFromItsStatus: without the recommender's usage, Raw is the HPA's reading from its status, over the
// ready pods (its status.currentReplicas is the Hvpa's spec.replicas: 7 while 4 pods ran, in the
// all-components suite), and current only while it was taken on the requests in force and the pods are settled.
func TestHPAInputFromItsStatus(t *testing.T) {
	cpu80 := []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](80)}}}}
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	hvpa := func(scaled *hvpav1alpha1.ScalingRecord) *hvpav1alpha1.Hvpa {
		return &hvpav1alpha1.Hvpa{Spec: hvpav1alpha1.HvpaSpec{Replicas: ptr.To[int32](7),
			HPA: &hvpav1alpha1.HpaSpec{Deploy: true, Template: hvpav1alpha1.HpaTemplate{MinReplicas: ptr.To[int32](1), MaxReplicas: 10, Metrics: cpu80}}},
			Status: hvpav1alpha1.HvpaStatus{LastScaling: scaled}}
	}
	scaledAgo := func(d time.Duration, from, to int32) *hvpav1alpha1.ScalingRecord {
		return &hvpav1alpha1.ScalingRecord{Time: metav1.NewTime(now.Add(-d)), FromReplicas: from, ToReplicas: to}
	}
	reading := func(avg string, util int32) *autoscalingv2.HorizontalPodAutoscaler {
		return &autoscalingv2.HorizontalPodAutoscaler{Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 7, DesiredReplicas: 7,
			CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricStatus{
				Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageValue: ptr.To(resource.MustParse(avg)), AverageUtilization: ptr.To(util)}}}}}}
	}
	settled := HPAPods{Replicas: 4, Ready: 4, Now: now}
	for _, tc := range []struct {
		name    string
		h       *hvpav1alpha1.Hvpa
		hpa     *autoscalingv2.HorizontalPodAutoscaler
		pods    HPAPods
		inForce float64
		raw     float64
		// atWork: of the pods at work (RawAtWork, which moves the totals at a bound); current: of the pods in
		// force as well (RawCurrent, which raises the basis)
		atWork, current bool
	}{
		// 4 pods of 1750m using 1250m each, 71%: 4 x 1250 / (1750 x 0.8) = 3.57, not 7 x that
		{"read on the pods in force", hvpa(nil), reading("1250m", 71), settled, 1750, 4 * 1250 / (1750 * 0.8), true, true},
		{"a resize 10 s ago, no replica change", hvpa(scaledAgo(10*time.Second, 4, 4)), reading("1250m", 71), settled, 1750, 4 * 1250 / (1750 * 0.8), true, true},
		{"the replicas changed 2 min ago", hvpa(scaledAgo(2*time.Minute, 3, 4)), reading("1250m", 71), settled, 1750, 4 * 1250 / (1750 * 0.8), true, true},
		// the same reading while the requests in force are 1000m (the pods were resized since): h_raw against
		// them, as at a bound, but not current
		{"read on pods since resized", hvpa(nil), reading("1250m", 71), settled, 1000, 4 * 1250 / (1000 * 0.8), true, false},
		// read on 3 x 1000m pods (1667m each, 167%) before they were resized to 1750m
		{"read before a resize", hvpa(nil), reading("1667m", 167), settled, 1750, 4 * 1667 / (1750 * 0.8), true, false},
		// the Hvpa went from 3 to 4 pods 30 s ago: the reading may be of the 3, their load counted over 4
		{"the replicas changed 30 s ago", hvpa(scaledAgo(30*time.Second, 3, 4)), reading("1250m", 71), settled, 1750, 4 * 1250 / (1750 * 0.8), false, false},
		// a pod not ready: the HPA's average is over the 3 ready ones
		// (at work: a pod that stays not ready, crash-looping or unschedulable, would otherwise freeze an Hvpa
		// pinned at a bound; the basis is raised only when every replica is ready)
		{"a pod not ready", hvpa(nil), reading("1250m", 71), HPAPods{Replicas: 4, Ready: 3, Now: now}, 1750, 3 * 1250 / (1750 * 0.8), true, false},
		// a resize record at 4 (From == To) 10 s after a scale-out from 3 hides it; the new pod's readiness 40 s
		// ago does not: the reading may be of the 3 pods, and the new pod's own usage of its start
		{"a pod ready 40 s ago", hvpa(scaledAgo(10*time.Second, 4, 4)), reading("1250m", 71), HPAPods{Replicas: 4, Ready: 4, LastReady: now.Add(-40 * time.Second), Now: now}, 1750, 4 * 1250 / (1750 * 0.8), false, false},
		{"the newest pod ready 90 s ago", hvpa(scaledAgo(10*time.Second, 4, 4)), reading("1250m", 71), HPAPods{Replicas: 4, Ready: 4, LastReady: now.Add(-90 * time.Second), Now: now}, 1750, 4 * 1250 / (1750 * 0.8), true, true},
		{"no reading", hvpa(nil), &autoscalingv2.HorizontalPodAutoscaler{}, settled, 1750, 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := HPAInputOf(tc.h, Horizontal{Kind: HorizontalDeployed, HPA: tc.hpa}, tc.pods, []Container{{Name: "app", Requests: V(tc.inForce, -1)}}, nil)
			if in == nil || !near(in.Raw, tc.raw) || in.RawAtWork != tc.atWork || in.RawCurrent != tc.current {
				t.Errorf("input %+v, want raw %v, at work %v, current %v", in, tc.raw, tc.atWork, tc.current)
			}
		})
	}
	// the recommender's usage is of the pods in force whatever the HPA's status says, once no pod is starting
	usage := V(5000, -1)
	// (as taken: a recommender interval may have passed since)
	for _, tc := range []struct {
		lastReady, usageAt time.Duration // before now; 0: none says
		current            bool
	}{{0, 0, true}, {2 * time.Minute, 0, true}, {30 * time.Second, 0, false}, {2 * time.Minute, 15 * time.Second, true},
		// read 30 s after the newest pod became ready, 90 s ago: of its first minute still
		{90 * time.Second, time.Minute, false}, {0, time.Minute, true}} {
		pods := HPAPods{Replicas: 4, Ready: 3, Now: now}
		if tc.lastReady > 0 {
			pods.LastReady = now.Add(-tc.lastReady)
		}
		if tc.usageAt > 0 {
			pods.UsageAt = now.Add(-tc.usageAt)
		}
		if in := HPAInputOf(hvpa(scaledAgo(time.Second, 3, 4)), Horizontal{Kind: HorizontalDeployed, HPA: reading("1667m", 167)}, pods,
			[]Container{{Name: "app", Requests: V(1750, -1)}}, &usage); in == nil || !near(in.Raw, 5000/(1750*0.8)) || in.RawAtWork != tc.current || in.RawCurrent != tc.current {
			t.Errorf("from the usage read %v ago, the newest pod ready %v ago: input %+v, want raw %v, current %v", tc.usageAt, tc.lastReady, in, 5000/(1750*0.8), tc.current)
		}
	}
}

func TestHPAPodsOf(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	pod := func(conds ...corev1.PodCondition) corev1.Pod {
		return corev1.Pod{Status: corev1.PodStatus{Conditions: conds}}
	}
	readyAgo := func(d time.Duration) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-d))}
	}
	// a pod that stopped being ready 5 s ago is not counted, nor is its transition
	notReady := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(now.Add(-5 * time.Second))}
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Second))}
	got := HPAPodsOf(4, []corev1.Pod{pod(scheduled, readyAgo(3*time.Minute)), pod(notReady), pod(scheduled), pod(readyAgo(70 * time.Second))}, now)
	if want := (HPAPods{Replicas: 4, Ready: 2, LastReady: now.Add(-70 * time.Second), Now: now}); got != want {
		t.Errorf("HPAPodsOf = %+v, want %+v", got, want)
	}
	if !got.Warm() || got.WarmIn() != 0 {
		t.Errorf("%+v: every ready pod ready for over %v, want warm (in %v)", got, HPAReadingAge, got.WarmIn())
	}
	if got := HPAPodsOf(2, []corev1.Pod{pod(readyAgo(3 * time.Minute)), pod(readyAgo(59 * time.Second))}, now); got.Warm() || got.WarmIn() != time.Second {
		t.Errorf("%+v: a pod ready 59 s ago, want not warm, warm in 1s (in %v)", got, got.WarmIn())
	}
	// readiness counts from a start: the pod's, or its running containers' last (a restart)
	started := func(p corev1.Pod, podAgo, containerAgo time.Duration) corev1.Pod {
		p.Status.StartTime = ptr.To(metav1.NewTime(now.Add(-podAgo)))
		if containerAgo > 0 {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(now.Add(-containerAgo))}}}}
		}
		return p
	}
	for name, tc := range map[string]struct {
		pod  corev1.Pod
		warm bool
	}{
		"ready 30 s ago, 90 s after its start":                       {started(pod(readyAgo(30*time.Second)), 2*time.Minute, 0), false},
		"ready 30 s ago, 9 min after its start (a slow start)":       {started(pod(readyAgo(30*time.Second)), 570*time.Second, 0), false},
		"ready 30 s ago, a day after its start (a probe under load)": {started(pod(readyAgo(30*time.Second)), 24*time.Hour, 0), true},
		"ready 30 s ago, 20 s after its container's restart":         {started(pod(readyAgo(30*time.Second)), 24*time.Hour, 50*time.Second), false},
		"ready 30 s ago, its container running for an hour":          {started(pod(readyAgo(30*time.Second)), 24*time.Hour, time.Hour), true},
	} {
		if got := HPAPodsOf(1, []corev1.Pod{tc.pod}, now); got.Ready != 1 || got.Warm() != tc.warm {
			t.Errorf("%s: %+v, want 1 ready, warm %v", name, got, tc.warm)
		}
	}
	// the kubelet's clock ahead: a transition after now counts as now, warm a minute later at most
	if got := HPAPodsOf(1, []corev1.Pod{pod(readyAgo(-5 * time.Minute))}, now); got.LastReady != now || got.WarmIn() != HPAReadingAge {
		t.Errorf("a transition 5 min ahead: %+v, warm in %v, want ready now, warm in %v", got, got.WarmIn(), HPAReadingAge)
	}
}
