package main

import (
	"errors"
	"testing"
	"time"

	"github.com/hvpa-dev/hvpa/internal/gardenerhvpa"
	"github.com/hvpa-dev/hvpa/internal/textout"
	"github.com/hvpa-dev/hvpa/recommender/simulate"
)

// failingWriter refuses every write, like a closed pipe or a full disk, and counts the attempts.
type failingWriter struct{ writes int }

var errDiskFull = errors.New("disk full")

func (f *failingWriter) Write([]byte) (int, error) {
	f.writes++
	return 0, errDiskFull
}

// A summary that cannot be written fails the command, and nothing more is tried after the first failure.
func TestPrintRunReturnsTheWriteError(t *testing.T) {
	w := &failingWriter{}
	if err := printRun(w, simulate.Stats{}, time.Second, 0); !errors.Is(err, errDiskFull) {
		t.Fatalf("printRun on a failing writer: %v, want %v", err, errDiskFull)
	}
	if w.writes != 1 {
		t.Errorf("writes tried: %d, want 1 (none after the first failure)", w.writes)
	}
}

// hvpa convert's report on stderr (what happened to each object) that cannot be written fails the conversion.
func TestConvertDocumentsReturnsTheWriteError(t *testing.T) {
	docs := []gardenerhvpa.Document{{Where: "document 1", Kind: "ConfigMap", Name: "ns/a", Schema: gardenerhvpa.SchemaOther, JSON: []byte(`{}`)}}
	if _, _, err := convertDocuments(&failingWriter{}, docs); !errors.Is(err, errDiskFull) {
		t.Fatalf("convertDocuments on a failing stderr: %v, want %v", err, errDiskFull)
	}
}

// The closed-loop table keeps the first write error for the command to return.
func TestClosedLoopTableKeepsTheWriteError(t *testing.T) {
	o := textout.New(&failingWriter{})
	printClosedLoopTable(o, nil, true)
	if !errors.Is(o.Err(), errDiskFull) {
		t.Fatalf("table on a failing writer: %v, want %v", o.Err(), errDiskFull)
	}
}
