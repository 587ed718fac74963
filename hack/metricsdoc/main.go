// Command metricsdoc prints docs/metrics.md, the reference of the metrics the hvpa binary exports:
//
//	hack/run.sh metricsdoc > docs/metrics.md   (make generate)
//
// A test (hack/internal/metricsdoc) checks that the committed page is current.
package main

import (
	"fmt"

	"github.com/hvpa-dev/hvpa/hack/internal/metricsdoc"
)

func main() {
	fmt.Print(metricsdoc.Markdown())
}
