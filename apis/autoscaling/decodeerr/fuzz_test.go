package decodeerr_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
)

// FuzzDecode feeds arbitrary stored objects to the VPA's and the Hvpa's tolerant decoding (their
// UnmarshalJSON): it never panics; an object it decodes whole survives a round trip unchanged; an object
// it cannot decode but whose metadata names it comes back as that metadata and a message naming the field
// and the fix, never as an error that would fail the list it arrives in.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"autoscaling.k8s.io/v1","kind":"VerticalPodAutoscaler","metadata":{"name":"web","namespace":"shop"},"spec":{"targetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"resourcePolicy":{"containerPolicies":[{"containerName":"*","minAllowed":{"cpu":"250m"}}]}}}`,
		`{"apiVersion":"autoscaling.k8s.io/v1","kind":"VerticalPodAutoscaler","metadata":{"name":"web"},"spec":{"resourcePolicy":{"containerPolicies":[{"containerName":"*","minAllowed":{"cpu":"1e1.5"}}]}}}`,
		`{"metadata":{"name":"h"},"spec":{"scalingIntervals":[{"maxReplicas":2,"maxResources":{"cpu":"1e1.5"}}]}}`,
		`{"metadata":{"name":"h"},"spec":{"scalingIntervals":[{"maxReplicas":"two"}]}}`,
		`{"metadata":{"name":""},"spec":{"targetRef":7}}`,
		`{"metadata":{"name":"x","labels":{"a":"b"}},"status":{"recommendation":{"containerRecommendations":[{"containerName":"app","target":{"memory":"1Ei"}}]}}}`,
		`[1,2,3]`,
		`{`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		check(t, data, &vpav1.VerticalPodAutoscaler{}, func(o *vpav1.VerticalPodAutoscaler) (string, string) { return o.Name, o.DecodeError })
		check(t, data, &hvpav1alpha1.Hvpa{}, func(o *hvpav1alpha1.Hvpa) (string, string) { return o.Name, o.DecodeError })
	})
}

func check[T any](t *testing.T, data []byte, obj *T, nameAndError func(*T) (string, string)) {
	if err := json.Unmarshal(data, obj); err != nil {
		var probe struct {
			metav1.TypeMeta `json:",inline"`
			Metadata        metav1.ObjectMeta `json:"metadata"`
		}
		if sigsjson.UnmarshalCaseSensitivePreserveInts(data, &probe) == nil && probe.Metadata.Name != "" {
			t.Fatalf("%T: an object whose metadata names it (%q) failed to decode: %v; it would fail every list of its kind", obj, probe.Metadata.Name, err)
		}
		return // not an object at all: the list fails as it would for any decoder
	}
	name, msg := nameAndError(obj)
	if msg != "" {
		if name == "" {
			t.Fatalf("%T: an undecodable object without a name was kept: %q", obj, msg)
		}
		if !strings.HasPrefix(msg, "cannot read the stored object: ") || !strings.Contains(msg, "hvpa ignores this object until it is edited") {
			t.Fatalf("%T: message %q does not say what happened and the fix", obj, msg)
		}
		return
	}
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("%T: decoded but does not encode: %v", obj, err)
	}
	again := new(T)
	if err := json.Unmarshal(out, again); err != nil {
		t.Fatalf("%T: its own encoding %s does not decode: %v", obj, out, err)
	}
	if _, msg := nameAndError(again); msg != "" {
		t.Fatalf("%T: its own encoding %s does not decode whole: %s", obj, out, msg)
	}
	if out2, _ := json.Marshal(again); !reflect.DeepEqual(out, out2) {
		t.Fatalf("%T: round trip changed it:\n%s\n%s", obj, out, out2)
	}
}
