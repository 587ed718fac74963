// Package trace reads workload usage traces in the v1 format of TRACE-FORMAT.md (plain or gzip CSV) and
// writes recommendation files in that document's format.
package trace

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// Header is the trace file's header line.
const Header = "timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event"

var columns = []string{"timestamp", "namespace", "workload", "pod", "container", "cpu_millicores", "memory_bytes", "cpu_request_millicores", "memory_request_bytes", "event"}

// Row is one trace row. The byte slices are valid until the next call of Next.
type Row struct {
	Line                                int
	Time                                int64 // unix seconds
	Namespace, Workload, Pod, Container []byte
	// CPU (millicores) and Memory (bytes), rounded up to whole units; Has* false when the column is empty.
	CPU, Memory          int64
	HasCPU, HasMemory    bool
	CPURequest           int64
	MemoryRequest        int64
	HasCPUReq, HasMemReq bool
	OOM                  bool
}

// Reader reads rows from a trace.
type Reader struct {
	br       *bufio.Reader
	line     int
	lastTime int64
	started  bool
	fields   [10][]byte
}

// NewReader reads the header of a trace (gzip detected by its magic bytes) and returns a Reader.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("trace: gzip: %w", err)
		}
		br = bufio.NewReaderSize(gz, 1<<20)
	}
	t := &Reader{br: br}
	for {
		line, err := t.readLine()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("trace: line %d: the file ends before the header %q", t.line, Header)
		}
		if err != nil {
			return nil, err
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if string(line) != Header {
			return nil, fmt.Errorf("trace: line %d: want the header %q, got %q", t.line, Header, line)
		}
		return t, nil
	}
}

func (t *Reader) readLine() ([]byte, error) {
	line, err := t.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("trace: line %d: longer than %d bytes", t.line+1, t.br.Size())
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	t.line++
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, nil
}

// Next reads the next row into row; io.EOF at the end.
func (t *Reader) Next(row *Row) error {
	for {
		line, err := t.readLine()
		if err != nil {
			return err
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		n := 0
		for n < len(t.fields) {
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				t.fields[n] = line
				n++
				line = nil
				break
			}
			t.fields[n] = line[:i]
			line = line[i+1:]
			n++
		}
		if n != len(t.fields) || line != nil {
			got := n
			if line != nil {
				got = n + 1 + countCommas(line)
			}
			return fmt.Errorf("trace: line %d: want %d comma-separated columns (%s), got %d", t.line, len(columns), Header, got)
		}
		return t.parse(row)
	}
}

func countCommas(b []byte) int { return bytes.Count(b, []byte{','}) }

func (t *Reader) errorf(col int, format string, args ...any) error {
	return fmt.Errorf("trace: line %d, column %d (%s): %s", t.line, col+1, columns[col], fmt.Sprintf(format, args...))
}

func (t *Reader) parse(row *Row) error {
	f := &t.fields
	*row = Row{Line: t.line}
	ts, ok := parseUint(f[0])
	if !ok {
		tm, err := time.Parse(time.RFC3339, string(f[0]))
		if err != nil {
			return t.errorf(0, "want unix seconds or an RFC 3339 time, got %q", f[0])
		}
		ts = tm.Unix()
	}
	if t.started && ts < t.lastTime {
		return t.errorf(0, "%d is before the previous row's %d: rows must be sorted by timestamp", ts, t.lastTime)
	}
	t.started, t.lastTime, row.Time = true, ts, ts
	row.Namespace = f[1]
	for col := 2; col <= 4; col++ {
		if len(f[col]) == 0 {
			return t.errorf(col, "must not be empty")
		}
	}
	row.Workload, row.Pod, row.Container = f[2], f[3], f[4]
	var err error
	if row.CPU, row.HasCPU, err = t.amount(5); err != nil {
		return err
	}
	if row.Memory, row.HasMemory, err = t.amount(6); err != nil {
		return err
	}
	if row.CPURequest, row.HasCPUReq, err = t.amount(7); err != nil {
		return err
	}
	if row.MemoryRequest, row.HasMemReq, err = t.amount(8); err != nil {
		return err
	}
	switch string(f[9]) {
	case "":
	case "OOM":
		row.OOM = true
		row.HasCPU, row.HasMemory = false, false // an event, never usage
	default:
		return t.errorf(9, "want empty or OOM, got %q", f[9])
	}
	return nil
}

// amount parses a decimal >= 0 (or empty) and rounds it up to a whole unit.
func (t *Reader) amount(col int) (int64, bool, error) {
	b := t.fields[col]
	if len(b) == 0 {
		return 0, false, nil
	}
	if v, ok := parseUint(b); ok {
		if v > maxAmount {
			return 0, false, t.errorf(col, "%q is larger than %g, the largest amount a resource holds", b, float64(maxAmount))
		}
		return v, true, nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false, t.errorf(col, "want a decimal >= 0 or nothing, got %q", b)
	}
	if v > maxAmount {
		return 0, false, t.errorf(col, "%q is larger than %g, the largest amount a resource holds", b, float64(maxAmount))
	}
	return int64(math.Ceil(v)), true, nil
}

// maxAmount is the largest amount a trace value may hold (1e14, the largest resource amount).
const maxAmount = 1e14

// parseUint parses plain digits (the common case, without allocating).
func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, true
}

// Each reads every row of a trace and calls fn for it (the row is reused between calls), stopping at the
// first error.
func Each(r io.Reader, fn func(*Row) error) error {
	tr, err := NewReader(r)
	if err != nil {
		return err
	}
	var row Row
	for {
		err := tr.Next(&row)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(&row); err != nil {
			return err
		}
	}
}

// Tick is the first multiple of iv (seconds) at or after t (unix seconds), also before 1970: the recommendation
// ticks of TRACE-FORMAT section 2 are these multiples.
func Tick(t, iv int64) int64 {
	r := t % iv
	if r < 0 {
		r += iv
	}
	if r != 0 {
		return t + iv - r
	}
	return t
}
