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

	"github.com/hvpa-dev/hvpa/scaling"
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
	// Resized: per "pod UID|change", when the pod was resized for it: its newest change, and the changes it
	// was set back from by something else (recordResize).
	Resized map[string][]time.Time `json:"resized,omitempty"`
	// Evicted: per "controller|change", the last eviction for it, the pods the workload had at the first, and
	// the changes the workload was evicted for since.
	Evicted map[string]evictionRecord `json:"evicted,omitempty"`
}

type evictionRecord struct {
	At      time.Time   `json:"at"`
	Known   []types.UID `json:"known,omitempty"`
	MovedTo []string    `json:"movedTo,omitempty"`
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
	u.loadResized(recs.Resized)
	for k, e := range recs.Evicted {
		if now.Sub(e.At) < u.Options.LoopWindow {
			known := map[types.UID]bool{}
			for _, uid := range e.Known {
				known[uid] = true
			}
			u.evicted[k] = eviction{at: e.At, EvictedChange: EvictedChange{Known: known, MovedTo: e.MovedTo}}
		}
	}
	u.forget(now)
	u.savedRecords = u.encodeLoopRecords(ctx)
}

// lastResize is a pod's newest resize: its loop-detection key and the sizes it asked for (nil when read back
// from the ConfigMap, which keeps only keys and times).
type lastResize struct {
	key   string
	sized []scaling.ContainerDecision
}

// recordResize records a resize of pod uid for key ("pod UID|change") at t that asked for sized. endPrevious
// ends the pod's records of its previous change: a loop is the same change made again after something else
// moved the pod away from it, whatever other changes the updater made between; a pod that still held the
// updater's previous change when the updater moved it on, because its target moved (an Hvpa's intent while an
// HPA settles), was not moved away, and going back to that change later is no loop (heldPrevious decides).
func (u *Updater) recordResize(uid types.UID, key string, sized []scaling.ContainerDecision, t time.Time, endPrevious bool) {
	if prev, ok := u.lastResized[uid]; ok && prev.key != key && endPrevious {
		delete(u.resized, prev.key)
	}
	u.resized[key] = append(u.resized[key], t)
	u.lastResized[uid] = lastResize{key: key, sized: sized}
}

// heldPrevious says whether the pod's spec still has what the updater's previous resize of it asked for, so
// that nothing else has moved it since: that resize's records end when the pod moves on to another change.
// With the previous sizes unknown (records read back after a restart) it says yes: the records of an
// updater that ran on would have ended too, unless the pod was reset, which the next resizes show again.
func (u *Updater) heldPrevious(pod *corev1.Pod, key string) bool {
	prev, ok := u.lastResized[pod.UID]
	if !ok || prev.key == key {
		return false
	}
	if prev.sized == nil {
		return true
	}
	// the previous resize's sizes against the pod's spec, as the planner compares a target with a pod
	current := scaling.FromPodContainers(&pod.Spec)
	asked := make([]scaling.ContainerDecision, len(prev.sized))
	for i, d := range prev.sized {
		j := slices.IndexFunc(current, func(k scaling.Container) bool { return k.Name == d.Name })
		if j < 0 {
			return false
		}
		d.Current = current[j]
		asked[i] = d
	}
	return !changed(asked)
}

// loadResized takes the resize records read back from the ConfigMap as they were in memory (the ConfigMap
// holds exactly those: a pod's newest change, and the changes it was reset from), with each pod's newest
// change as its last (ties by key, so that any map order gives the same). Their sizes are not known:
// heldPrevious takes the pod's next move to another change as a move on.
func (u *Updater) loadResized(recs map[string][]time.Time) {
	newest := map[types.UID]time.Time{}
	for k, ts := range recs {
		u.resized[k] = append(u.resized[k], ts...)
		uid := resizedPod(k)
		for _, t := range ts {
			last, ok := newest[uid]
			if !ok || t.After(last) || t.Equal(last) && k > u.lastResized[uid].key {
				newest[uid] = t
				u.lastResized[uid] = lastResize{key: k}
			}
		}
	}
}

// resizedPod is the pod UID of a resize record's key.
func resizedPod(key string) types.UID {
	uid, _, _ := strings.Cut(key, "|")
	return types.UID(uid)
}

// saveLoopRecords writes the records when they differ from what was last read or written.
func (u *Updater) saveLoopRecords(ctx context.Context) error {
	key, ok := u.loopRecordsKey()
	if !ok {
		return nil
	}
	data := u.encodeLoopRecords(ctx)
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

// encodeLoopRecords is the records as JSON, the oldest dropped beyond maxLoopRecordBytes (see
// encodeRecords); the dropped ones are forgotten in memory too, so that what the process remembers and what a
// restarted one reads are the same, and each record is counted once when it is dropped.
func (u *Updater) encodeLoopRecords(ctx context.Context) string {
	evicted := make(map[string]evictionRecord, len(u.evicted))
	for k, e := range u.evicted {
		evicted[k] = evictionRecord{At: e.at, Known: slices.Sorted(maps.Keys(e.Known)), MovedTo: e.MovedTo}
	}
	data, dropped := encodeRecords(loopRecords{Resized: u.resized, Evicted: evicted}, maxLoopRecordBytes)
	if n := len(dropped); n > 0 {
		for _, k := range dropped {
			if k.evicted {
				delete(u.evicted, k.key)
			} else {
				delete(u.resized, k.key)
			}
		}
		u.Metrics.LoopRecordsDropped.Add(float64(n))
		logf.FromContext(ctx).Info("loop records dropped: the ConfigMap holds only the newest; loop detection forgets the oldest",
			"dropped", n, "kept", len(u.resized)+len(u.evicted), "maxBytes", maxLoopRecordBytes, "configmap", u.Options.LoopRecords.String())
	}
	return data
}

// recordEntry is one record of loopRecords, encoded on its own: its time, and where `"key":value`, as it
// stands in the JSON object of its kind, is in the encoding buffer.
type recordEntry struct {
	key        string
	evicted    bool
	at         time.Time
	start, end int
}

// recordKey names a record: its key in Resized, or in Evicted.
type recordKey struct {
	key     string
	evicted bool
}

// encodeRecords encodes recs as JSON of at most limit bytes, as json.Marshal would (the same members; each
// object's members in key order): when the whole does not fit, the newest records that fit are kept and the
// others returned as dropped (a record's time is its last resize, or the eviction's). Each record is encoded
// once, the records are sorted by time once and a prefix is kept by the exact size the JSON will have, so the
// work is O(n log n) whatever is dropped (re-marshalling the whole after each dropped record took 41 s at
// 8,000 records).
func encodeRecords(recs loopRecords, limit int) (string, []recordKey) {
	entries := make([]recordEntry, 0, len(recs.Resized)+len(recs.Evicted))
	buf := make([]byte, 0, 256*cap(entries))
	for k, ts := range recs.Resized {
		e := recordEntry{key: k, start: len(buf)}
		buf = appendTimes(appendKey(buf, k), ts)
		e.end = len(buf)
		for _, t := range ts {
			if t.After(e.at) {
				e.at = t
			}
		}
		entries = append(entries, e)
	}
	for k, r := range recs.Evicted {
		e := recordEntry{key: k, evicted: true, at: r.At, start: len(buf)}
		buf = appendEviction(appendKey(buf, k), r)
		e.end = len(buf)
		entries = append(entries, e)
	}
	// newest first; evictions before resizes of the same time (they guard more than one pod), then by key, so
	// that the same records always keep the same ones
	slices.SortFunc(entries, func(a, b recordEntry) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		if c := sectionIndex(b.evicted) - sectionIndex(a.evicted); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	kept := keptPrefix(entries, limit)
	var dropped []recordKey
	for _, e := range entries[kept:] {
		dropped = append(dropped, recordKey{e.key, e.evicted})
	}
	return assemble(buf, entries[:kept]), dropped
}

// keptPrefix is how many of entries (newest first) fit in limit bytes of JSON.
func keptPrefix(entries []recordEntry, limit int) int {
	size := len(`{}`)
	sections := [2]int{} // members so far in "resized" and "evicted"
	for i, e := range entries {
		s := sectionIndex(e.evicted)
		add := e.end - e.start
		switch {
		case sections[s] > 0:
			add++ // the comma before the member
		case sections[1-s] > 0:
			add += len(`,"resized":{}`) // "evicted" is as long
		default:
			add += len(`"resized":{}`)
		}
		if size+add > limit {
			return i
		}
		size += add
		sections[s]++
	}
	return len(entries)
}

// assemble writes `{"resized":{...},"evicted":{...}}` (an empty object left out) from the members of entries
// in buf, each object's members in key order, as json.Marshal writes maps.
func assemble(buf []byte, entries []recordEntry) string {
	slices.SortFunc(entries, func(a, b recordEntry) int { return strings.Compare(a.key, b.key) })
	size := len(`{"resized":{},"evicted":{}}`)
	for _, e := range entries {
		size += e.end - e.start + 1
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, name := range []string{`"resized":{`, `"evicted":{`} {
		n := 0
		for _, e := range entries {
			if sectionIndex(e.evicted) != i {
				continue
			}
			switch {
			case n > 0:
				b = append(b, ',')
			case len(b) > 1:
				b = append(append(b, ','), name...)
			default:
				b = append(b, name...)
			}
			b = append(b, buf[e.start:e.end]...)
			n++
		}
		if n > 0 {
			b = append(b, '}')
		}
	}
	return string(append(b, '}'))
}

func sectionIndex(evicted bool) int {
	if evicted {
		return 1
	}
	return 0
}

// appendKey appends `"key":` in JSON.
func appendKey(b []byte, key string) []byte {
	return append(appendString(b, key), ':')
}

// appendString appends s as a JSON string, as encoding/json writes it (HTML characters escaped too).
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string: cannot fail
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendTime appends t as encoding/json writes a time.Time (RFC 3339 with nanoseconds, quoted).
func appendTime(b []byte, t time.Time) []byte {
	return append(t.AppendFormat(append(b, '"'), time.RFC3339Nano), '"')
}

func appendTimes(b []byte, ts []time.Time) []byte {
	if ts == nil {
		return append(b, `null`...)
	}
	b = append(b, '[')
	for i, t := range ts {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTime(b, t)
	}
	return append(b, ']')
}

func appendEviction(b []byte, r evictionRecord) []byte {
	b = appendTime(append(b, `{"at":`...), r.At)
	if len(r.Known) > 0 {
		b = append(b, `,"known":[`...)
		for i, uid := range r.Known {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, string(uid))
		}
		b = append(b, ']')
	}
	if len(r.MovedTo) > 0 {
		b = append(b, `,"movedTo":[`...)
		for i, fp := range r.MovedTo {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, fp)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func (u *Updater) loopRecordsKey() (types.NamespacedName, bool) {
	return u.Options.LoopRecords, u.Options.LoopRecords.Name != ""
}
