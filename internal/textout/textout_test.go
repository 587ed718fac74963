package textout_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/hvpa-dev/hvpa/internal/textout"
)

type failAfter struct {
	n   int
	buf bytes.Buffer
}

var errFull = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errFull
	}
	f.n--
	return f.buf.Write(p)
}

// TestKeepsTheFirstError: after a failed write nothing more is written and Err is that failure.
func TestKeepsTheFirstError(t *testing.T) {
	w := &failAfter{n: 1}
	o := textout.New(w)
	o.Printf("a %d\n", 1)
	if o.Err() != nil {
		t.Fatalf("first write: %v", o.Err())
	}
	o.Println("b")
	w.n = 5 // the writer would take more now: nothing more is sent
	o.Println("c")
	if !errors.Is(o.Err(), errFull) || w.buf.String() != "a 1\n" {
		t.Errorf("err %v, written %q; want the first error and only the line before it", o.Err(), w.buf.String())
	}
}
