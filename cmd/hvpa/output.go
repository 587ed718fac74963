package main

import (
	"fmt"
	"io"
)

// output is a command's output that keeps the first write error: once a write fails nothing more is
// written, and the command returns that error, so a table or summary cut short (a closed pipe, a full disk)
// fails the command instead of ending as if it were whole.
type output struct {
	w   io.Writer
	err error
}

func (o *output) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	o.err = err
	return n, err
}

// printf and println keep their write error in o.err.
func (o *output) printf(format string, args ...any) { _, _ = fmt.Fprintf(o, format, args...) }
func (o *output) println(args ...any)               { _, _ = fmt.Fprintln(o, args...) }
