package v1_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// A list with one object the API server stored before the CRD's rules ("1e1.5" is no quantity) decodes, through
// the codecs the clients and informers use: the good objects in full, the bad one as its metadata and a message
// naming the field and the fix.
func TestListWithAnUndecodableObject(t *testing.T) {
	s := runtime.NewScheme()
	if err := vpav1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := hvpav1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	dec := serializer.NewCodecFactory(s).UniversalDeserializer()
	vpas := `{"apiVersion":"autoscaling.k8s.io/v1","kind":"VerticalPodAutoscalerList","metadata":{},"items":[
	 {"metadata":{"name":"good","namespace":"a","resourceVersion":"7"},"spec":{"targetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},
	  "resourcePolicy":{"containerPolicies":[{"containerName":"*","minAllowed":{"cpu":"100m"}}]}}},
	 {"metadata":{"name":"bad","namespace":"a","uid":"u-1"},"spec":{"targetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"db"},
	  "resourcePolicy":{"containerPolicies":[{"containerName":"app","minAllowed":{"cpu":"100m"}},{"containerName":"db","maxAllowed":{"memory":"1Gi","cpu":"1e1.5"}}]}},
	  "status":{"recommendation":{"containerRecommendations":[{"containerName":"db","target":{"cpu":"250m"}}]}}}]}`
	obj, _, err := dec.Decode([]byte(vpas), nil, nil)
	if err != nil {
		t.Fatalf("the list fails as a whole: %v", err)
	}
	l := obj.(*vpav1.VerticalPodAutoscalerList)
	if len(l.Items) != 2 {
		t.Fatalf("%d items, want 2", len(l.Items))
	}
	good, bad := l.Items[0], l.Items[1]
	if good.DecodeError != "" || good.Spec.TargetRef.Name != "web" || good.ResourceVersion != "7" ||
		good.Spec.ResourcePolicy.ContainerPolicies[0].MinAllowed.Cpu().String() != "100m" {
		t.Errorf("the good VPA changed: %+v", good)
	}
	want := `spec.resourcePolicy.containerPolicies[1].maxAllowed.cpu: "1e1.5" is not a quantity`
	if bad.Name != "bad" || bad.Namespace != "a" || bad.UID != "u-1" || !strings.Contains(bad.DecodeError, want) ||
		!strings.Contains(bad.DecodeError, "edited to fix the field") || bad.Spec.TargetRef != nil || bad.Status.Recommendation != nil {
		t.Errorf("the bad VPA: %q (metadata %s/%s %s, spec %+v), want its metadata only and %q", bad.DecodeError, bad.Namespace, bad.Name, bad.UID, bad.Spec, want)
	}

	hvpas := `{"apiVersion":"autoscaling.k8s.io/v1alpha1","kind":"HvpaList","metadata":{},"items":[
	 {"metadata":{"name":"bad","namespace":"a"},"spec":{"targetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"api"},
	  "scalingIntervals":[{"maxReplicas":2,"maxResources":{"cpu":"2"}},{"maxReplicas":4,"maxResources":{"memory":"8Gi x"}}]}}]}`
	obj, _, err = dec.Decode([]byte(hvpas), nil, nil)
	if err != nil {
		t.Fatalf("the Hvpa list fails as a whole: %v", err)
	}
	h := obj.(*hvpav1alpha1.HvpaList).Items[0]
	if want := `spec.scalingIntervals[1].maxResources.memory: "8Gi x" is not a quantity`; h.Name != "bad" || !strings.Contains(h.DecodeError, want) {
		t.Errorf("the bad Hvpa: %q, want %q", h.DecodeError, want)
	}

	// no metadata to report under: the error, as before
	if _, _, err := dec.Decode([]byte(`{"apiVersion":"autoscaling.k8s.io/v1","kind":"VerticalPodAutoscaler","spec":{"targetRef":7}}`), nil, nil); err == nil {
		t.Error("an object without a name decoded; want the decoder's error")
	}
}
