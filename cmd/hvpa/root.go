package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/hvpa-dev/hvpa/internal/version"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "hvpa",
		Short: "hvpa scales Kubernetes workloads horizontally and vertically from one set of scaling intervals",
		Long: `hvpa is a Kubernetes autoscaler: Hvpa objects scale a workload's replicas and per-pod resources
together, and standalone VerticalPodAutoscaler objects work as users of the upstream VPA expect.`,
		SilenceUsage: true,
	}
	root.AddCommand(newVersionCommand(), newIntervalsCommand(), newDecideCommand(), newSimulateCommand(), newRunCommand(), newConvertCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of this build",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := version.Get()
			switch output {
			case "", "text":
				_, err := fmt.Fprintln(cmd.OutOrStdout(), info.String())
				return err
			case "json":
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			default:
				return fmt.Errorf("--output %q is not supported: use text or json", output)
			}
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
