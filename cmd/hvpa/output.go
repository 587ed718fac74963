package main

import (
	"fmt"

	"github.com/hvpa-dev/hvpa/internal/textout"
)

// output is a command's text output: it keeps the first write error for the command to return.
type output = textout.Writer

func mib(kib int64) string { return fmt.Sprintf("%.0f MiB", float64(kib)/1024) }
