// Package heartbeat is the liveness of a loop: the loop beats when it makes progress, and Check (a
// healthz.Checker, served on /healthz) fails once it has not beaten for longer than a bound, so that the
// kubelet restarts a process whose loop is stuck instead of leaving every object the loop serves without
// changes. Before the first beat (the loop has not started: another replica leads, or the process is
// starting) the check passes.
package heartbeat

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
)

// Heartbeat records a loop's last beat. The zero value is not usable: use New. A nil *Heartbeat ignores
// beats and always passes its check (a component run without liveness).
type Heartbeat struct {
	what       string
	stallAfter time.Duration
	clock      clock.PassiveClock
	last       atomic.Int64 // unix nanoseconds of the last beat; 0: none yet
}

// New returns a heartbeat whose Check fails once the loop has not beaten for stallAfter; what names the
// beat in that error ("update loop started").
func New(what string, stallAfter time.Duration, clk clock.PassiveClock) *Heartbeat {
	return &Heartbeat{what: what, stallAfter: stallAfter, clock: clk}
}

// StallAfter is the bound for a loop that beats once per period: three periods and five minutes, the rule
// the recommender loop's check follows too (a slow run, or a few runs slowed by a slow API server, is no
// stall).
func StallAfter(period time.Duration) time.Duration { return 3*period + 5*time.Minute }

// Beat records progress now.
func (h *Heartbeat) Beat() {
	if h != nil {
		h.last.Store(h.clock.Now().UnixNano())
	}
}

// Last is the time of the last beat (zero before the first).
func (h *Heartbeat) Last() time.Time {
	if h == nil || h.last.Load() == 0 {
		return time.Time{}
	}
	return time.Unix(0, h.last.Load())
}

// Check is the liveness check: an error once the last beat is more than the bound ago.
func (h *Heartbeat) Check(*http.Request) error {
	if h == nil {
		return nil
	}
	last := h.last.Load()
	if last == 0 {
		return nil
	}
	if since := h.clock.Since(time.Unix(0, last)); since > h.stallAfter {
		return fmt.Errorf("no %s for %s (allowed: %s)", h.what, since.Round(time.Second), h.stallAfter)
	}
	return nil
}
