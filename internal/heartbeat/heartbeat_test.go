package heartbeat

import (
	"strings"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// TestCheck: the check passes before the first beat and within the bound of the last one, and fails, naming
// what is missing, beyond it; a nil heartbeat always passes.
func TestCheck(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC))
	h := New("update loop started", StallAfter(time.Minute), clk)
	if err := h.Check(nil); err != nil {
		t.Fatalf("before the first beat: %v", err)
	}
	h.Beat()
	clk.SetTime(clk.Now().Add(8 * time.Minute))
	if err := h.Check(nil); err != nil {
		t.Fatalf("at the bound (8m for a 1m loop): %v", err)
	}
	clk.SetTime(clk.Now().Add(time.Second))
	if err := h.Check(nil); err == nil || !strings.Contains(err.Error(), "no update loop started for 8m1s (allowed: 8m0s)") {
		t.Fatalf("beyond the bound: %v", err)
	}
	h.Beat()
	if err := h.Check(nil); err != nil {
		t.Fatalf("after a new beat: %v", err)
	}
	var none *Heartbeat
	none.Beat()
	if err := none.Check(nil); err != nil {
		t.Fatal(err)
	}
}
