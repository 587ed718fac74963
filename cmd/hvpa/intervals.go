package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hvpa-dev/hvpa/internal/textout"
	"github.com/hvpa-dev/hvpa/scaling"
)

// intervalValues is one resource of one effective interval in `hvpa intervals -o json` (a public contract:
// docs/cli.md). Totals are across all replicas; per-pod values are totals / replicas.
type intervalValues struct {
	Up           string `json:"up"`
	Down         string `json:"down"`
	PerPodMax    string `json:"perPodMax"`
	PerPodAtDown string `json:"perPodAtDown"`
	Pinned       bool   `json:"pinned,omitempty"`
}

type intervalRow struct {
	Replicas  int32                     `json:"replicas"`
	Resources map[string]intervalValues `json:"resources"`
}

func newIntervalsCommand() *cobra.Command {
	var file, output string
	cmd := &cobra.Command{
		Use:   "intervals -f hvpa.yaml [-o table|json]",
		Short: "Print the effective scaling intervals of an Hvpa",
		Long: `Print the effective scaling intervals of an Hvpa per resource: replicas, the upper (up) and lower (down)
boundaries of the TOTAL across all replicas, the per-pod maximum (up / replicas) and the per-pod value at the
down boundary (down / replicas). The file may hold other objects too; the one Hvpa in it is used.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, spec, err := loadHvpa(file, cmd.InOrStdin())
			if err != nil {
				return err
			}
			iv, err := scaling.EffectiveIntervals(spec.Intervals, spec.MinReplicas, spec.Overlap)
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			switch output {
			case "table", "":
				return printIntervalTable(cmd, iv)
			case "json":
				rows := make([]intervalRow, 0, len(iv))
				for _, e := range iv {
					row := intervalRow{Replicas: e.Replicas, Resources: map[string]intervalValues{}}
					for _, r := range scaling.Resources {
						row.Resources[r.String()] = intervalValues{Up: quantity(r, e.Up[r]), Down: quantity(r, e.Down[r]),
							PerPodMax: quantity(r, e.PerPodMax(r)), PerPodAtDown: quantity(r, e.PerPodAtDown(r)), Pinned: e.Pinned.Has(r)}
					}
					rows = append(rows, row)
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"intervals": rows})
			}
			return fmt.Errorf("--output %q is not supported: use table or json", output)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "file holding the Hvpa (YAML or JSON; - for standard input)")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

func printIntervalTable(cmd *cobra.Command, iv []scaling.EffectiveInterval) error {
	tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
	w := textout.New(tw)
	for i, r := range scaling.Resources {
		if i > 0 {
			w.Println()
		}
		w.Printf("%s\nREPLICAS\tUP (TOTAL)\tDOWN (TOTAL)\tPER-POD MAX\tPER-POD AT DOWN\n", r)
		for _, e := range iv {
			pin := ""
			if e.Pinned.Has(r) {
				pin = " (pinned)"
			}
			w.Printf("%d\t%s\t%s\t%s%s\t%s\n", e.Replicas, scaling.Format(r, e.Up[r]), scaling.Format(r, e.Down[r]),
				scaling.Format(r, e.PerPodMax(r)), pin, scaling.Format(r, e.PerPodAtDown(r)))
		}
	}
	if w.Err() != nil {
		return w.Err()
	}
	return tw.Flush()
}

// quantity renders an amount as a Kubernetes quantity string ("unbounded" for no bound).
func quantity(r scaling.Resource, x float64) string {
	if x > 1e300 {
		return "unbounded"
	}
	q := scaling.Quantity(r, x)
	return q.String()
}
