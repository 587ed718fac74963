// Package textout is a command's text output that keeps the first write error: once a write fails nothing
// more is written, and the command returns that error, so that a table or summary cut short (a closed pipe,
// a full disk) fails the command instead of ending as if it were whole.
package textout

import (
	"fmt"
	"io"
)

// Writer writes to w until a write fails; Err is that failure.
type Writer struct {
	w   io.Writer
	err error
}

// New is a Writer onto w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes p unless an earlier write failed.
func (o *Writer) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	o.err = err
	return n, err
}

// Printf formats to the output; a write error is kept (Err).
func (o *Writer) Printf(format string, args ...any) { _, _ = fmt.Fprintf(o, format, args...) }

// Println prints a line to the output; a write error is kept (Err).
func (o *Writer) Println(args ...any) { _, _ = fmt.Fprintln(o, args...) }

// Err is the first write error, nil while every write has succeeded.
func (o *Writer) Err() error { return o.err }
