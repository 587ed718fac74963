// Command hvpa is the hvpa manager and its user tools.
package main

import (
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	// SIGTERM or SIGINT cancels the context: `hvpa run` shuts down gracefully (a second signal exits at once)
	if err := newRootCommand().ExecuteContext(ctrl.SetupSignalHandler()); err != nil {
		os.Exit(1)
	}
}
