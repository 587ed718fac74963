// Package admissionlease is the Lease the admission webhook renews while it serves and the updater reads
// before it evicts: a pod is evicted only while a webhook is there to size its replacement.
package admissionlease

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Heartbeat renews a Lease while this replica's webhook server is serving, so that the updater evicts
// pods only when an admission webhook is there to size their replacements. Every replica renews the same
// Lease (holderIdentity says which one did last); it is not a lock.
type Heartbeat struct {
	Client    client.Client
	Namespace string
	Name      string
	Interval  time.Duration
	// Serving reports whether the webhook server answers (the server's StartedChecker).
	Serving func(*http.Request) error
	Clock   clock.PassiveClock
}

var _ manager.LeaderElectionRunnable = &Heartbeat{}

// NeedLeaderElection: every serving replica renews.
func (h *Heartbeat) NeedLeaderElection() bool { return false }

// Start renews the Lease every Interval until ctx ends.
func (h *Heartbeat) Start(ctx context.Context) error {
	for {
		wait := h.Interval
		if err := h.Beat(ctx); err != nil {
			logf.FromContext(ctx).Info("admission Lease not renewed", "lease", h.Namespace+"/"+h.Name, "reason", err.Error())
			wait = min(wait, time.Second) // e.g. the server is still starting: try again soon
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// Beat renews the Lease once, if the webhook server is serving.
func (h *Heartbeat) Beat(ctx context.Context) error {
	if h.Serving != nil {
		if err := h.Serving(nil); err != nil {
			return fmt.Errorf("the webhook server is not serving: %w", err)
		}
	}
	holder, _ := os.Hostname()
	now := metav1.NewMicroTime(h.Clock.Now())
	secs := int32(h.Interval.Seconds() * 3)
	var l coordinationv1.Lease
	err := h.Client.Get(ctx, client.ObjectKey{Namespace: h.Namespace, Name: h.Name}, &l)
	switch {
	case apierrors.IsNotFound(err):
		l = coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: h.Namespace, Name: h.Name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &now, LeaseDurationSeconds: &secs}}
		return h.Client.Create(ctx, &l)
	case err != nil:
		return err
	}
	l.Spec.HolderIdentity, l.Spec.RenewTime, l.Spec.LeaseDurationSeconds = &holder, &now, &secs
	return h.Client.Update(ctx, &l)
}

// Serving says whether the admission Lease was renewed within maxAge, and if not, why.
func Serving(ctx context.Context, c client.Reader, namespace, name string, maxAge time.Duration, now time.Time) (bool, string) {
	var l coordinationv1.Lease
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &l); err != nil {
		return false, fmt.Sprintf("admission Lease %s/%s: %v", namespace, name, err)
	}
	if l.Spec.RenewTime == nil {
		return false, fmt.Sprintf("admission Lease %s/%s was never renewed", namespace, name)
	}
	if age := now.Sub(l.Spec.RenewTime.Time); age > maxAge {
		return false, fmt.Sprintf("admission Lease %s/%s was last renewed %s ago (more than %s): no webhook sizes new pods", namespace, name, age.Round(time.Second), maxAge)
	}
	return true, ""
}
