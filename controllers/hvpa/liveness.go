package hvpa

import (
	"context"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	hvpav1alpha1 "github.com/hvpa-dev/hvpa/apis/autoscaling/v1alpha1"
	"github.com/hvpa-dev/hvpa/internal/heartbeat"
)

// Liveness is the Hvpa controller's liveness check (/healthz "hvpa-controller"). The controller is event
// driven, so time without a reconcile says nothing (there may be nothing to do). What must not happen is
// that a request waits in its work queue for ever: a reconcile that never returns holds its worker (with
// the one worker the controller runs, every other Hvpa waits behind it), or the queue is too long to get
// through. So every period a probe request goes through the controller's own queue, and Reconcile answers it
// with no API call. The controller is stalled when no probe has been answered for
// heartbeat.StallAfter(period): three periods and five minutes, with the period the Hvpa sync period (every
// Hvpa is decided again within it, so a probe waits behind at most one round of every Hvpa).
type Liveness struct {
	period time.Duration
	clock  clock.WithTicker
	beat   *heartbeat.Heartbeat
	probes chan event.GenericEvent
}

var (
	_ manager.Runnable               = &Liveness{}
	_ manager.LeaderElectionRunnable = &Liveness{}
)

// livenessProbe is the probe's request: no namespace, so never the key of an Hvpa (a namespaced kind).
var livenessProbe = types.NamespacedName{Name: "hvpa-controller-liveness-probe"}

// NewLiveness returns the liveness of a controller that sends a probe every period (30s when not positive).
func NewLiveness(period time.Duration, clk clock.WithTicker) *Liveness {
	if period <= 0 {
		period = 30 * time.Second
	}
	return &Liveness{period: period, clock: clk, probes: make(chan event.GenericEvent, 1),
		beat: heartbeat.New("liveness probe answered by the Hvpa controller", heartbeat.StallAfter(period), clk)}
}

// NeedLeaderElection: the probes go where the controller runs, on the leader; a replica that does not lead
// sends none and its check passes.
func (*Liveness) NeedLeaderElection() bool { return true }

// Start sends a probe every period until ctx ends. The clock of the check starts now: a controller that never
// answers its first probe is stalled too.
func (l *Liveness) Start(ctx context.Context) error {
	l.beat.Beat()
	t := l.clock.NewTicker(l.period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
			select {
			case l.probes <- event.GenericEvent{Object: &hvpav1alpha1.Hvpa{ObjectMeta: metav1.ObjectMeta{Name: livenessProbe.Name}}}:
			default: // a probe is still on its way: one is enough
			}
		}
	}
}

// Check is the liveness check.
func (l *Liveness) Check(req *http.Request) error { return l.beat.Check(req) }

// LastAnswer is when the last probe was answered (or the probes started).
func (l *Liveness) LastAnswer() time.Time { return l.beat.Last() }

// answer reports whether req is a probe, and answers it.
func (l *Liveness) answer(req types.NamespacedName) bool {
	if l == nil || req != livenessProbe {
		return false
	}
	l.beat.Beat()
	return true
}
