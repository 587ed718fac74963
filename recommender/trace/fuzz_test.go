package trace

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReader: any bytes after the header are read without a panic; every row read has amounts in
// [0, maxAmount] and non-decreasing timestamps, and a rejected row names its line.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"1700000000,ns,wl,pod-0,app,250,104857600,500,268435456,\n",
		"1700000000,ns,wl,pod-0,app,1e1.5,NaN,Inf,-1,oom\n",
		"1700000000,ns,wl,pod-0,app,,,,,\n1699999999,ns,wl,pod-0,app,1,1,1,1,\n",
		"1700000000,ns,wl,pod-0,app,99999999999999999999,1e300,0.5,3.000001,\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := NewReader(bytes.NewReader(append([]byte(Header+"\n"), body...)))
		if err != nil {
			return
		}
		var row Row
		last := int64(-1 << 62)
		for {
			err := r.Next(&row)
			if err != nil {
				if msg := err.Error(); msg != "EOF" && !strings.Contains(msg, "line") {
					t.Fatalf("an error that names no line: %v", err)
				}
				return
			}
			for _, v := range []int64{row.CPU, row.Memory, row.CPURequest, row.MemoryRequest} {
				if v < 0 || v > maxAmount {
					t.Fatalf("line %d: amount %d outside [0, %g]", row.Line, v, float64(maxAmount))
				}
			}
			if row.Time < last {
				t.Fatalf("line %d: time %d before %d", row.Line, row.Time, last)
			}
			last = row.Time
		}
	})
}
