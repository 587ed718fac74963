package gardenerhvpa

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Schema says what a document of the input is.
type Schema string

const (
	// SchemaGardener is a gardener hvpa-controller Hvpa: Convert it.
	SchemaGardener Schema = "gardener"
	// SchemaHvpa is an Hvpa already in hvpa's schema: it is passed through unchanged.
	SchemaHvpa Schema = "hvpa"
	// SchemaOther is any other object (a Deployment, a Service, ...): it is passed through unchanged.
	SchemaOther Schema = "other"
)

// Document is one object of the input.
type Document struct {
	// Where names the object in the input: "document 2", or "document 2, item 1" for an item of a List.
	Where string
	// Kind and Name (namespace/name) identify the object.
	Kind, Name string
	Schema     Schema
	// Gardener is the decoded object when Schema is SchemaGardener.
	Gardener *GardenerHvpa
	// Unknown lists the fields of a gardener Hvpa that gardener's schema does not have (they are not converted).
	Unknown []Loss
	// Why says, for SchemaHvpa, which field shows that the object is in hvpa's schema.
	Why string
	// JSON is the object as read, as JSON: what is passed through for SchemaHvpa and SchemaOther.
	JSON json.RawMessage
}

// Decode reads a YAML or JSON stream of one or more documents (separated by ---; a List's items count as
// objects of their own) and classifies every object. Empty documents are skipped. A gardener Hvpa is decoded
// strictly: a field its schema does not have is listed in Unknown by its path and not converted. The error is
// for input that cannot be read (not YAML, not an object, or a value of the wrong type); it names the
// document and the field.
func Decode(data []byte) ([]Document, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []Document
	for n := 1; ; n++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", n, err)
		}
		j, err := yaml.YAMLToJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("document %d is not valid YAML or JSON: %w", n, err)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			continue
		}
		more, err := classify(j, fmt.Sprintf("document %d", n))
		if err != nil {
			return nil, err
		}
		if err := duplicateKeys(raw, more); err != nil {
			return nil, err
		}
		docs = append(docs, more...)
	}
}

// duplicateKeys refuses a gardener Hvpa whose YAML gives a key twice (reading it would silently keep the last
// value); other objects are passed through as they are.
func duplicateKeys(raw []byte, docs []Document) error {
	for _, d := range docs {
		if d.Schema != SchemaGardener {
			continue
		}
		if _, err := yaml.YAMLToJSONStrict(raw); err != nil {
			return fmt.Errorf("%s (Hvpa %s): %w; remove the repeated key", d.Where, d.Name, err)
		}
	}
	return nil
}

// header is what classify reads of every object.
type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec  json.RawMessage `json:"spec"`
	Items json.RawMessage `json:"items"`
}

func classify(j []byte, where string) ([]Document, error) {
	var h header
	if err := json.Unmarshal(j, &h); err != nil {
		return nil, fmt.Errorf("%s is not a Kubernetes object (a map with apiVersion and kind): %w", where, err)
	}
	if strings.HasSuffix(h.Kind, "List") && h.Items != nil {
		var items []json.RawMessage
		if err := json.Unmarshal(h.Items, &items); err != nil {
			return nil, fmt.Errorf("%s (%s): items is not a list of objects: %w", where, h.Kind, err)
		}
		var docs []Document
		for i, item := range items {
			more, err := classify(item, fmt.Sprintf("%s, item %d", where, i+1))
			if err != nil {
				return nil, err
			}
			docs = append(docs, more...)
		}
		return docs, nil
	}
	d := Document{Where: where, Kind: h.Kind, Name: h.Metadata.Name, Schema: SchemaOther, JSON: j}
	if h.Metadata.Namespace != "" {
		d.Name = h.Metadata.Namespace + "/" + h.Metadata.Name
	}
	if h.APIVersion != APIVersion || h.Kind != "Hvpa" {
		return []Document{d}, nil
	}
	var spec map[string]json.RawMessage
	_ = json.Unmarshal(h.Spec, &spec) // a spec that is not a map is reported by decodeGardener
	if why := hvpaSchema(spec); why != "" {
		d.Schema, d.Why = SchemaHvpa, why
		return []Document{d}, nil
	}
	g, unknown, err := decodeGardener(j)
	if err != nil {
		return nil, fmt.Errorf("%s (Hvpa %s): %w", where, d.Name, err)
	}
	d.Schema, d.Gardener, d.Unknown = SchemaGardener, g, unknown
	return []Document{d}, nil
}

// hvpaSchema names the field that shows an Hvpa is in hvpa's schema, or returns "" for gardener's: the
// top-level spec fields that only hvpa's schema has, and hvpa's flat hpa and vpa templates (gardener's have
// metadata and spec).
func hvpaSchema(spec map[string]json.RawMessage) string {
	for _, f := range []string{"scalingIntervals", "scalingIntervalsOverlap", "baseResourcesPerReplica", "scaleUp", "scaleDown", "limitsRequestsGapScaleParams"} {
		if _, ok := spec[f]; ok {
			return "spec." + f
		}
	}
	for _, part := range []struct{ name, fields string }{
		{"hpa", "minReplicas maxReplicas metrics behavior"},
		{"vpa", "resourcePolicy updatePolicy"},
	} {
		var p struct {
			Template map[string]json.RawMessage `json:"template"`
		}
		if json.Unmarshal(spec[part.name], &p) != nil {
			continue
		}
		for _, f := range strings.Fields(part.fields) {
			if _, ok := p.Template[f]; ok {
				return "spec." + part.name + ".template." + f
			}
		}
	}
	return ""
}

// decodeGardener decodes strictly: an unknown field is returned as a Loss naming its path; a value of the
// wrong type is an error.
func decodeGardener(j []byte) (*GardenerHvpa, []Loss, error) {
	g := &GardenerHvpa{}
	strict, err := sigsjson.UnmarshalStrict(j, g)
	if err != nil {
		return nil, nil, fmt.Errorf("%w; fix the value to the type gardener's schema has", err)
	}
	var unknown []Loss
	for _, e := range strict {
		path := e.Error()
		var fe sigsjson.FieldError
		if errors.As(e, &fe) {
			path = fe.FieldPath()
		}
		unknown = append(unknown, Loss{Path: path, Kind: Unknown, Reason: "not a field of gardener's Hvpa schema " +
			"(autoscaling.k8s.io/v1alpha1), not converted; check its spelling and place, or remove it"})
	}
	return g, unknown, nil
}
