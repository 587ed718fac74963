package e2e_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/test/framework"
	"github.com/hvpa-dev/hvpa/test/testenv"
	"github.com/hvpa-dev/hvpa/test/wrappers"
)

// badVPA is a VPA on Deployment target with one container policy for every container.
func badVPA(ns, name, target string, policy vpav1.ContainerResourcePolicy, annotations map[string]string) *vpav1.VerticalPodAutoscaler {
	policy.ContainerName = "*"
	v := wrappers.MakeVPA(ns, name).Target("Deployment", target).Mode(vpav1.UpdateModeOff).ContainerPolicy(policy)
	for k, a := range annotations {
		v.Annotation(k, a)
	}
	return v.Obj()
}

// rawObject is a manifest as kubectl sends it: JSON, not decoded into our types first (which could not
// hold a bad quantity).
func rawObject(json string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	Expect(u.UnmarshalJSON([]byte(json))).To(Succeed())
	return u
}

// The bad-input catalogue of docs/reliability.md, on the running binary: every hostile manifest, annotation
// and file is refused with the message the user sees (asserted whole), or made harmless with a condition
// saying why; and the objects beside the bad ones are still served.
var _ = Describe("the bad-input catalogue", Ordered, func() {
	ctx := context.Background()
	var ns string

	BeforeAll(func() {
		ns = framework.NewNamespace(k8s, "catalogue")
		for _, app := range []string{"good", "bad-override", "stored-before"} {
			deployment(ns, app, 1, "accept", rl("100m", "128Mi"), nil)
			loads.SetPerPod(ns, app, 200, 200<<20)
		}
	})

	It("refuses hostile manifests in the API server itself, with the field and the fix (no webhook needed)", func() {
		huge := resource.MustParse("1e19")
		small, big := resource.MustParse("2"), resource.MustParse("1")
		refused := []struct {
			name string
			obj  client.Object
			want string
		}{
			{"a quantity no resource holds", badVPA(ns, "huge", "good", vpav1.ContainerResourcePolicy{MinAllowed: corev1.ResourceList{corev1.ResourceCPU: huge}}, nil),
				"cpu must be at most 100G (1e11 cores)"},
			{"minAllowed above maxAllowed", badVPA(ns, "inverted", "good", vpav1.ContainerResourcePolicy{
				MinAllowed: corev1.ResourceList{corev1.ResourceCPU: small}, MaxAllowed: corev1.ResourceList{corev1.ResourceCPU: big}}, nil),
				"minAllowed must not be above maxAllowed for any resource; lower minAllowed or raise maxAllowed"},
			{"linear intervals to 4,000,000 replicas", wrappers.MakeHvpa(ns, "millions").Target("Deployment", "good").
				Interval(4_000_000, "1", "").Extrapolation(hvpav1alpha1.ExtrapolationLinear).Obj(),
				"with effectiveIntervalExtrapolation (one effective interval per replica count) every maxReplicas must be at most 1000; lower maxReplicas or drop the extrapolation"},
			// int32's maximum: before the bound, the decision's replica loop wrapped around and allocated until
			// the process died
			{"a scaling interval to 2147483647 replicas", wrappers.MakeHvpa(ns, "int32-interval").Target("Deployment", "good").
				Interval(math.MaxInt32, "1", "").Obj(),
				"spec.scalingIntervals[0].maxReplicas: Invalid value: 2147483647: spec.scalingIntervals[0].maxReplicas in body should be less than or equal to 100000"},
			{"hpa.template.maxReplicas 2147483647", wrappers.MakeHvpa(ns, "int32-hpa").Target("Deployment", "good").
				HPA(false, 1, math.MaxInt32).Interval(4, "1", "").Obj(),
				"spec.hpa.template.maxReplicas: Invalid value: 2147483647: spec.hpa.template.maxReplicas in body should be less than or equal to 100000"},
		}
		for _, r := range refused {
			err := k8s.Create(ctx, r.obj)
			Expect(err).To(HaveOccurred(), r.name)
			Expect(err.Error()).To(ContainSubstring(r.want), r.name)
		}
		// a string the schema's pattern accepts but no decoder reads: sent as raw JSON, as kubectl would
		err := k8s.Create(ctx, rawObject(fmt.Sprintf(`{"apiVersion":"autoscaling.k8s.io/v1","kind":"VerticalPodAutoscaler","metadata":{"name":"unparsable","namespace":%q},`+
			`"spec":{"targetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"good"},"resourcePolicy":{"containerPolicies":[{"containerName":"*","minAllowed":{"cpu":"1e1.5"}}]}}}`, ns)))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("every value must be a Kubernetes quantity such as 500m, 2 or 512Mi"))
	})

	It("makes bad annotations and objects stored before the rules harmless, with a condition naming the field, and serves the others", func() {
		Expect(k8s.Create(ctx, badVPA(ns, "bad-override", "bad-override", vpav1.ContainerResourcePolicy{},
			map[string]string{"recommender.hvpa.dev/oom-bump-up-ratio": "Inf"}))).To(Succeed())

		// stored while the CRD had no CEL rules (an older hvpa, or upstream's CRD) and the webhook was down
		// (failurePolicy Ignore): the list of every VPA must still decode
		admission := proc("admission")
		admission.stopGracefully()
		restore, err := testenv.WithoutCELRules(ctx, k8s, "verticalpodautoscalers.autoscaling.k8s.io")
		Expect(err).NotTo(HaveOccurred())
		stored := fmt.Sprintf(`{"apiVersion":"autoscaling.k8s.io/v1","kind":"VerticalPodAutoscaler","metadata":{"name":"stored-before","namespace":%q},`+
			`"spec":{"targetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"stored-before"},"updatePolicy":{"updateMode":"Off"},`+
			`"resourcePolicy":{"containerPolicies":[{"containerName":"*","minAllowed":{"cpu":"1e1.5"}}]}}}`, ns)
		Eventually(func() error { return k8s.Create(ctx, rawObject(stored)) }, framework.LongTimeout, framework.Interval).Should(Succeed())
		Expect(restore()).To(Succeed())
		admission.start()

		Expect(k8s.Create(ctx, badVPA(ns, "good", "good", vpav1.ContainerResourcePolicy{}, nil))).To(Succeed())

		reported := []struct{ name, reason, message string }{
			{"bad-override", "InvalidOverride", `annotation recommender.hvpa.dev/oom-bump-up-ratio: "Inf" is not a number in [1, 10] (e.g. 1.5)`},
			{"stored-before", "InvalidObject", `cannot read the stored object: spec.resourcePolicy.containerPolicies[0].minAllowed.cpu: "1e1.5" is not a quantity (e.g. 250m, 2, 512Mi)`},
		}
		for _, r := range reported {
			Eventually(func() string {
				// read as JSON, as kubectl shows it (our typed decode keeps only the metadata of an object
				// that does not decode)
				raw := &unstructured.Unstructured{}
				raw.SetGroupVersionKind(vpav1.GroupVersion.WithKind("VerticalPodAutoscaler"))
				if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: r.name}, raw); err != nil {
					return err.Error()
				}
				conds, _, _ := unstructured.NestedSlice(raw.Object, "status", "conditions")
				for _, c := range conds {
					m, _ := c.(map[string]any)
					if m["type"] == string(vpav1.ConfigUnsupported) && m["status"] == "True" && m["reason"] == r.reason &&
						strings.Contains(fmt.Sprint(m["message"]), r.message) {
						return ""
					}
				}
				return fmt.Sprintf("conditions %v", conds)
			}, framework.LongTimeout, framework.Interval).Should(BeEmpty(), r.name)
		}
		Eventually(func() int64 { cpu, _, _ := target(ns, "good"); return cpu }, framework.LongTimeout, framework.Interval).Should(BeNumerically(">", 0),
			"the VPA beside the bad ones gets its recommendation")
		Expect(proc("recommender").cmd.ProcessState).To(BeNil(), "the recommender is still running")
	})

	It("ignores a forged kubelet eviction Event: evictions count only from the pod's own status", func() {
		Eventually(func() int64 { _, mem, _ := target(ns, "good"); return mem }, framework.LongTimeout, framework.Interval).Should(BeNumerically(">", 0))
		_, before, _ := target(ns, "good")
		pod := livePods(ns, "good")[0]
		Expect(k8s.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "forged-"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod.Name, UID: pod.UID, APIVersion: "v1"},
			Reason:         "Evicted", Type: corev1.EventTypeWarning, Source: corev1.EventSource{Component: "kubelet"},
			Message: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container app was using 1Ti, request is 128Mi, has larger consumption of memory.",
		})).To(Succeed())
		Consistently(func() int64 { _, mem, _ := target(ns, "good"); return mem }, 5*time.Second, framework.Interval).Should(BeNumerically("<", 2*before),
			"a forged Event moved the memory target")
	})

	It("refuses bad files with the line, field and fix", func() {
		dir := GinkgoT().TempDir()
		write := func(name, text string) string {
			p := filepath.Join(dir, name)
			Expect(os.WriteFile(p, []byte(text), 0o600)).To(Succeed())
			return p
		}
		header := "timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event\n"
		hvpaFile := write("hvpa.yaml", "apiVersion: autoscaling.k8s.io/v1alpha1\nkind: Hvpa\nmetadata: {name: web, namespace: shop}\n"+
			"spec:\n  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  scalingIntervals:\n  - maxReplicas: 2\n    maxResources: {cpu: \"1\"}\n")
		files := []struct {
			name string
			args []string
			want string
		}{
			{"a trace with a NaN usage", []string{"simulate", "--trace", write("nan.csv", header+"2026-01-01T00:00:00Z,shop,web,web-1,app,NaN,1000,,,\n")},
				`trace: line 2, column 6 (cpu_millicores): want a decimal >= 0 or nothing, got "NaN"`},
			{"a trace going back in time", []string{"simulate", "--trace", write("back.csv", header+
				"2026-01-01T00:01:00Z,shop,web,web-1,app,100,1000,,,\n2026-01-01T00:00:00Z,shop,web,web-1,app,100,1000,,,\n")},
				"trace: line 3, column 1 (timestamp): 1767225600 is before the previous row's 1767225660: rows must be sorted by timestamp"},
			{"a decide state with negative replicas", []string{"decide", "-f", hvpaFile, "--state", write("neg.yaml", "replicas: -3\n")},
				"replicas: Invalid value: -3: must not be negative"},
			{"a decide state with an unknown field", []string{"decide", "-f", hvpaFile, "--state", write("unknown.yaml", "replicas: 1\nhpa: {desired: 3}\n")},
				`unknown field "hpa.desired"`},
		}
		for _, f := range files {
			out, err := exec.Command(binary, f.args...).CombinedOutput()
			Expect(err).To(HaveOccurred(), "%s: hvpa %s succeeded:\n%s", f.name, strings.Join(f.args, " "), out)
			Expect(string(out)).To(ContainSubstring(f.want), f.name)
		}
	})
})
