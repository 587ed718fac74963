package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/gardenerhvpa"
	"github.com/hvpa-dev/hvpa/internal/textout"
)

func newConvertCommand() *cobra.Command {
	var file, output string
	var strict bool
	cmd := &cobra.Command{
		Use:   "convert -f FILE|- [-o yaml|json] [--strict]",
		Short: "Convert gardener hvpa-controller Hvpa objects into hvpa's Hvpa",
		Long: `Convert the Hvpa objects of gardener's hvpa-controller (autoscaling.k8s.io/v1alpha1, the same kind with
another schema) into hvpa's Hvpa, and say field by field what is not carried over as it was.

The converted objects go to standard output; the fields that are dropped or approximated go to standard
error, one line per field: "path: dropped|approximated|unknown: reason", under a "# Kind name (document N)"
line per object. Other objects in the input (a Deployment, an Hvpa already in hvpa's schema) are passed
through unchanged, so a whole manifest file converts in one go; the items of a List are written as objects
of their own. See docs/migrating-from-gardener-hvpa.md.

The exit code is non-zero when the input cannot be read and, with --strict, when any field is not carried
over as it was.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "yaml" && output != "json" {
				return fmt.Errorf("--output %q is not supported: use yaml or json", output)
			}
			data, err := readInput(file, cmd.InOrStdin())
			if err != nil {
				return fmt.Errorf("--file: %w", err)
			}
			docs, err := gardenerhvpa.Decode(data)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			objects, losses, err := convertDocuments(cmd.ErrOrStderr(), docs)
			if err != nil {
				return err
			}
			if err := writeObjects(cmd.OutOrStdout(), objects, output); err != nil {
				return err
			}
			if strict && losses > 0 {
				return fmt.Errorf("--strict: %d fields are not carried over as they were (listed above); review them, "+
					"or convert without --strict to accept the conversion", losses)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "file holding gardener Hvpas (YAML or JSON, one or more documents; - for standard input)")
	cmd.Flags().StringVarP(&output, "output", "o", "yaml", "output format: yaml (documents separated by ---) or json (a List when there are several objects)")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit non-zero when any field is dropped or approximated")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// convertDocuments converts the gardener Hvpas, passes the other objects through, and writes to stderr what
// happened to each object and every field that is not carried over as it was. It returns the objects to
// write and the number of such fields.
func convertDocuments(stderr io.Writer, docs []gardenerhvpa.Document) ([]json.RawMessage, int, error) {
	o := textout.New(stderr)
	var objects []json.RawMessage
	losses := 0
	for _, d := range docs {
		what := fmt.Sprintf("# %s %s (%s)", d.Kind, d.Name, d.Where)
		switch d.Schema {
		case gardenerhvpa.SchemaGardener:
			out, lost := gardenerhvpa.Convert(*d.Gardener)
			lost = append(d.Unknown, lost...)
			j, err := encodeHvpa(out)
			if err != nil {
				return nil, 0, fmt.Errorf("%s: %w", d.Where, err)
			}
			objects = append(objects, j)
			if len(lost) == 0 {
				o.Printf("%s: converted; every field carried over\n", what)
				continue
			}
			o.Printf("%s: converted; %d fields not carried over as they were:\n", what, len(lost))
			for _, l := range lost {
				o.Println(l.String())
			}
			losses += len(lost)
		case gardenerhvpa.SchemaHvpa:
			o.Printf("%s: already in hvpa's schema (it has %s); passed through unchanged\n", what, d.Why)
			objects = append(objects, d.JSON)
		default:
			o.Printf("%s: not a gardener Hvpa; passed through unchanged\n", what)
			objects = append(objects, d.JSON)
		}
	}
	if len(docs) == 0 {
		o.Println("# the input holds no objects")
	}
	return objects, losses, o.Err()
}

// encodeHvpa is a converted Hvpa as JSON, without the status and the empty creationTimestamp that the API
// types always encode.
func encodeHvpa(h *hvpav1alpha1.Hvpa) (json.RawMessage, error) {
	j, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok && meta["creationTimestamp"] == nil {
		delete(meta, "creationTimestamp")
	}
	return json.Marshal(m)
}

// writeObjects writes YAML documents separated by ---, or JSON: the object, or a List of several.
func writeObjects(w io.Writer, objects []json.RawMessage, output string) error {
	if output == "json" {
		var j []byte
		var err error
		if len(objects) == 1 {
			j = objects[0]
		} else if j, err = json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": objects}); err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := json.Indent(&buf, j, "", "  "); err != nil {
			return err
		}
		buf.WriteByte('\n')
		_, err = w.Write(buf.Bytes())
		return err
	}
	for i, o := range objects {
		y, err := yaml.JSONToYAML(o)
		if err != nil {
			return err
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(y); err != nil {
			return err
		}
	}
	return nil
}
