package updater

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Loop detection survives a restart and a change of leader: the records of resizes and evictions within
// LoopWindow are kept in a ConfigMap (Options.LoopRecords, "namespace/name"; the chart names one in its
// namespace). The updater reads it before its first loop and writes it after a loop that changed the
// records. A ConfigMap in hvpa's own namespace needs no permission on the users' objects: recording on the
// pods would need `patch pods`, which would let the updater change their images too.

// loopRecordsKey is the ConfigMap's data key.
const loopRecordsKey = "records.json"

// maxLoopRecordBytes keeps the ConfigMap well under its 1 MiB limit: the oldest records go first.
const maxLoopRecordBytes = 512 << 10

// loopRecords is the ConfigMap's content.
type loopRecords struct {
	// Resized: per "pod UID|change", when the pod was resized for it.
	Resized map[string][]time.Time `json:"resized,omitempty"`
	// Evicted: per "controller|change", the last eviction for it and the pods the workload had at the first.
	Evicted map[string]evictionRecord `json:"evicted,omitempty"`
}

type evictionRecord struct {
	At    time.Time   `json:"at"`
	Known []types.UID `json:"known,omitempty"`
}

// loadLoopRecords reads the records into memory (those within LoopWindow). A missing ConfigMap is no
// error; an unreadable one is logged and loop detection starts empty, as before a first run.
func (u *Updater) loadLoopRecords(ctx context.Context) {
	key, ok := u.loopRecordsKey()
	if !ok {
		return
	}
	cm := &corev1.ConfigMap{}
	if err := u.Live.Get(ctx, key, cm); err != nil {
		if !apierrors.IsNotFound(err) {
			logf.FromContext(ctx).Error(err, "reading the loop records; loop detection starts empty", "configmap", key.String())
		}
		return
	}
	var recs loopRecords
	if err := json.Unmarshal([]byte(cm.Data[loopRecordsKey]), &recs); err != nil {
		logf.FromContext(ctx).Error(err, "the loop records do not decode; loop detection starts empty", "configmap", key.String())
		return
	}
	now := u.Clock.Now()
	for k, ts := range recs.Resized {
		u.resized[k] = append(u.resized[k], ts...)
	}
	for k, e := range recs.Evicted {
		if now.Sub(e.At) < u.Options.LoopWindow {
			known := map[types.UID]bool{}
			for _, uid := range e.Known {
				known[uid] = true
			}
			u.evicted[k] = eviction{at: e.At, known: known}
		}
	}
	u.forget(now)
	u.savedRecords = u.encodeLoopRecords()
}

// saveLoopRecords writes the records when they differ from what was last read or written.
func (u *Updater) saveLoopRecords(ctx context.Context) error {
	key, ok := u.loopRecordsKey()
	if !ok {
		return nil
	}
	data := u.encodeLoopRecords()
	if data == u.savedRecords {
		return nil
	}
	cm := &corev1.ConfigMap{}
	err := u.Live.Get(ctx, key, cm)
	switch {
	case apierrors.IsNotFound(err):
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "hvpa-updater"}}, Data: map[string]string{loopRecordsKey: data}}
		err = u.Live.Create(ctx, cm)
	case err == nil:
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[loopRecordsKey] = data
		err = u.Live.Update(ctx, cm)
	}
	if err != nil {
		return fmt.Errorf("writing the loop records to ConfigMap %s: %w", key, err)
	}
	u.savedRecords = data
	return nil
}

// encodeLoopRecords is the records as JSON, the oldest dropped beyond maxLoopRecordBytes.
func (u *Updater) encodeLoopRecords() string {
	recs := loopRecords{Resized: u.resized, Evicted: map[string]evictionRecord{}}
	for k, e := range u.evicted {
		known := slices.Sorted(maps.Keys(e.known))
		recs.Evicted[k] = evictionRecord{At: e.at, Known: known}
	}
	b, _ := json.Marshal(recs) // maps of strings and times: cannot fail
	for len(b) > maxLoopRecordBytes && (len(recs.Resized) > 0 || len(recs.Evicted) > 0) {
		dropOldest(&recs)
		b, _ = json.Marshal(recs)
	}
	return string(b)
}

// dropOldest removes the record with the oldest time.
func dropOldest(recs *loopRecords) {
	var oldest time.Time
	var key string
	evicted := false
	for k, ts := range recs.Resized {
		if len(ts) > 0 && (key == "" || ts[len(ts)-1].Before(oldest)) {
			oldest, key = ts[len(ts)-1], k
		}
	}
	for k, e := range recs.Evicted {
		if key == "" || e.At.Before(oldest) {
			oldest, key, evicted = e.At, k, true
		}
	}
	if evicted {
		delete(recs.Evicted, key)
	} else {
		if recs.Resized != nil {
			recs.Resized = maps.Clone(recs.Resized) // the updater's own map stays whole
		}
		delete(recs.Resized, key)
	}
}

func (u *Updater) loopRecordsKey() (types.NamespacedName, bool) {
	ns, name, ok := strings.Cut(u.Options.LoopRecords, "/")
	return types.NamespacedName{Namespace: ns, Name: name}, ok && ns != "" && name != ""
}
