// Command shootoutgoals reads the summary JSON files of `hvpa simulate --closed-loop --summary-json` (the
// shoot-out's, hack/shootout.sh) and writes the goal report of closedloop.CheckGoals: every workload's Hvpa
// run against its best baseline, its VPA run and its HPA churn, and the median over the workloads. It exits
// with 1 when a goal is missed.
//
//	hack/run.sh shootoutgoals [--hvpa LABEL] FILE.json...
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/hvpa-dev/hvpa/closedloop"
)

func main() {
	label := flag.String("hvpa", string(closedloop.PolicyHvpa), "the label of the Hvpa runs to judge (the other hvpa* runs are left out)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "shootoutgoals: name the summary JSON files (hvpa simulate --closed-loop --summary-json)")
		os.Exit(2)
	}
	var all []closedloop.Summary
	for _, path := range flag.Args() {
		sums, err := closedloop.ReadSummaries(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "shootoutgoals:", err)
			os.Exit(2)
		}
		all = append(all, sums...)
	}
	rep := closedloop.CheckGoals(all, *label)
	if err := closedloop.WriteGoals(os.Stdout, rep); err != nil {
		fmt.Fprintln(os.Stderr, "shootoutgoals:", err)
		os.Exit(2)
	}
	if !rep.Met() {
		os.Exit(1)
	}
}
