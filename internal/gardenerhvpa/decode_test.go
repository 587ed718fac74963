package gardenerhvpa

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

const gardenerDoc = `apiVersion: autoscaling.k8s.io/v1alpha1
kind: Hvpa
metadata:
  name: kube-apiserver
  namespace: shoot
spec:
  hpa:
    deploy: true
    template:
      spec:
        maxReplica: 4
        metrics:
        - type: Resource
          resource:
            name: cpu
            targetAverageUtilisation: 80
  targetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: kube-apiserver
status:
  hpaWeight: 100
  lastScaling:
    lastScaleTime: "2024-01-01T00:00:00Z"
`

func TestDecode(t *testing.T) {
	input := "---\n# only a comment\n---\n" + gardenerDoc + `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: kube-apiserver
  namespace: shoot
spec:
  replicas: 2
---
apiVersion: v1
kind: List
items:
- apiVersion: autoscaling.k8s.io/v1alpha1
  kind: Hvpa
  metadata:
    name: ours
  spec:
    targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    scalingIntervals:
    - maxReplicas: 3
- apiVersion: autoscaling.k8s.io/v1alpha1
  kind: Hvpa
  metadata:
    name: ours-flat-template
  spec:
    targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    hpa:
      template:
        maxReplicas: 3
`
	docs, err := Decode([]byte(input))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	type summary struct{ Where, Kind, Name, Why string }
	var got []summary
	schemas := map[string]Schema{}
	for _, d := range docs {
		got = append(got, summary{d.Where, d.Kind, d.Name, d.Why})
		schemas[d.Name] = d.Schema
	}
	want := []summary{
		{"document 2", "Hvpa", "shoot/kube-apiserver", ""},
		{"document 3", "Deployment", "shoot/kube-apiserver", ""},
		{"document 4, item 1", "Hvpa", "ours", "spec.scalingIntervals"},
		{"document 4, item 2", "Hvpa", "ours-flat-template", "spec.hpa.template.maxReplicas"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("documents = %+v, want %+v", got, want)
	}
	if schemas["ours"] != SchemaHvpa || schemas["ours-flat-template"] != SchemaHvpa || docs[1].Schema != SchemaOther ||
		docs[0].Schema != SchemaGardener {
		t.Errorf("schemas = %v (and %s, %s), want the Hvpas of the List in hvpa's schema, the Deployment other, the first gardener's",
			schemas, docs[0].Schema, docs[1].Schema)
	}
	var unknown []string
	for _, l := range docs[0].Unknown {
		if l.Kind != Unknown {
			t.Errorf("loss %s has kind %s, want %s", l, l.Kind, Unknown)
		}
		unknown = append(unknown, l.Path)
	}
	wantUnknown := []string{"spec.hpa.template.spec.maxReplica", "spec.hpa.template.spec.metrics[0].resource.targetAverageUtilisation"}
	if !reflect.DeepEqual(unknown, wantUnknown) {
		t.Errorf("unknown fields = %q, want %q", unknown, wantUnknown)
	}
	var deployment map[string]any
	if err := json.Unmarshal(docs[1].JSON, &deployment); err != nil || deployment["spec"].(map[string]any)["replicas"] != float64(2) {
		t.Errorf("the Deployment is not passed through as read: %s (%v)", docs[1].JSON, err)
	}
}

// TestDecodeUnreadable: input that cannot be read is an error naming the document and the field.
func TestDecodeUnreadable(t *testing.T) {
	for name, tc := range map[string]struct{ input, want string }{
		"not YAML":      {"kind: Hvpa\n  spec: [", "document 1 is not valid YAML or JSON"},
		"not an object": {"- a\n- b\n", "document 1 is not a Kubernetes object"},
		"wrong type": {"apiVersion: autoscaling.k8s.io/v1alpha1\nkind: Hvpa\nmetadata: {name: a}\nspec:\n  hpa:\n    template:\n" +
			"      spec:\n        maxReplicas: many\n", "maxReplicas"},
		"bad list": {"apiVersion: v1\nkind: List\nitems: 3\n", "items is not a list of objects"},
		"key twice": {"apiVersion: autoscaling.k8s.io/v1alpha1\nkind: Hvpa\nmetadata: {name: a}\nspec:\n  replicas: 1\n" +
			"  replicas: 2\n", `line 6: key "replicas" already set in map; remove the repeated key`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(tc.input))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode: error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
