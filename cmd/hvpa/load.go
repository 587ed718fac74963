package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	vpav1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1"
	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/scaling"
)

// readInput reads a file, or standard input for "-".
func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}

// loadHvpa reads the one Hvpa in a (possibly multi-document) YAML or JSON file, decoding strictly: an
// unknown field is an error that names it. It returns the Hvpa and its spec as plain values, validated.
func loadHvpa(path string, stdin io.Reader) (*hvpav1alpha1.Hvpa, *scaling.Spec, error) {
	data, err := readInput(path, stdin)
	if err != nil {
		return nil, nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var found []*hvpav1alpha1.Hvpa
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(raw, &meta); err != nil {
			return nil, nil, fmt.Errorf("%s: document %d: %w", path, doc, err)
		}
		if meta.Kind != hvpav1alpha1.KindHvpa {
			continue
		}
		h := &hvpav1alpha1.Hvpa{}
		if err := strictDecode(raw, h); err != nil {
			return nil, nil, fmt.Errorf("%s: document %d (Hvpa): %w", path, doc, err)
		}
		found = append(found, h)
	}
	if len(found) != 1 {
		return nil, nil, fmt.Errorf("%s: want exactly one object of kind Hvpa, found %d", path, len(found))
	}
	spec, errs := scaling.FromHvpa(found[0])
	if len(errs) > 0 {
		return nil, nil, fieldErrors(path, errs)
	}
	return found[0], spec, nil
}

func fieldErrors(path string, errs field.ErrorList) error {
	lines := make([]string, 0, len(errs))
	for _, e := range errs {
		lines = append(lines, "  "+e.Error())
	}
	return fmt.Errorf("%s is invalid:\n%s", path, strings.Join(lines, "\n"))
}

// plainHvpa and plainVPA are the API types without their UnmarshalJSON methods.
type (
	plainHvpa hvpav1alpha1.Hvpa
	plainVPA  vpav1.VerticalPodAutoscaler
)

// strictDecode decodes YAML or JSON into obj the way the API server does with strict field validation: an
// unknown or duplicate field is an error naming its full path (e.g. spec.scalingIntervals[0].maxReplica).
func strictDecode(data []byte, obj any) error {
	// the API types decode tolerantly on their own (an object stored before the CRD's rules becomes its
	// metadata and a DecodeError, see apis/autoscaling/decodeerr): a file is decoded strictly through their
	// plain fields
	switch o := obj.(type) {
	case *hvpav1alpha1.Hvpa:
		obj = (*plainHvpa)(o)
	case *vpav1.VerticalPodAutoscaler:
		obj = (*plainVPA)(o)
	}
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	strict, err := sigsjson.UnmarshalStrict(j, obj)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		msgs := make([]string, 0, len(strict))
		for _, e := range strict {
			msgs = append(msgs, e.Error())
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}
