package main

import "github.com/hvpa-dev/hvpa/internal/textout"

// output is a command's text output: it keeps the first write error for the command to return.
type output = textout.Writer
