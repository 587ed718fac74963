package updater

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/types"
)

// manyRecords is n loop records as a large fleet leaves them: per pod a resize record (a UID and a change of
// two containers) at its own second, and one eviction record per 10 pods knowing 20 pods (every other one
// moved on from); the i-th record is the i-th oldest.
func manyRecords(n int) loopRecords {
	recs := loopRecords{Resized: map[string][]time.Time{}, Evicted: map[string]evictionRecord{}}
	const change = "app cpu=250 memory=268435456 cpu-limit=500 memory-limit=536870912;sidecar cpu=50 memory=67108864;"
	for i := range n {
		at := now.Add(time.Duration(i-n) * time.Second)
		if i%10 == 9 {
			var known []types.UID
			for j := range 20 {
				known = append(known, types.UID(fmt.Sprintf("%08d-0000-4000-8000-%012d", i, j)))
			}
			r := evictionRecord{At: at, Known: known}
			if i%20 == 19 { // half of them moved on from (evictions for other changes since)
				r.MovedTo = []string{"app cpu=300;sidecar cpu=50;", "app cpu=400;sidecar cpu=50;"}
			}
			recs.Evicted[fmt.Sprintf("VerticalPodAutoscaler/shop/web-%d|%s", i, change)] = r
			continue
		}
		recs.Resized[fmt.Sprintf("%08d-0000-4000-8000-000000000000|%s", i, change)] = []time.Time{at.Add(-time.Minute), at}
	}
	return recs
}

// TestEncodeRecords: records that fit are encoded whole, exactly as the decoder reads them; beyond the limit
// the newest that fit are kept (JSON within the limit, and the next newest would not fit) and the others are
// returned as dropped.
func TestEncodeRecords(t *testing.T) {
	recs := manyRecords(3000)
	recs.Resized["weird \u00e9<&>\"\\\n key"] = []time.Time{now.Add(-time.Hour)} // escaped as encoding/json does
	delete(recs.Resized, fmt.Sprintf("%08d-0000-4000-8000-000000000000|app cpu=250 memory=268435456 cpu-limit=500 memory-limit=536870912;sidecar cpu=50 memory=67108864;", 0))
	whole, _ := json.Marshal(recs)
	data, none := encodeRecords(recs, len(whole))
	if data != string(whole) || len(none) != 0 {
		t.Fatalf("records that fit: %d bytes, %d dropped; want them whole (%d bytes):\n%.300s\n%.300s", len(data), len(none), len(whole), data, whole)
	}
	for _, limit := range []int{len(whole) - 1, len(whole) / 2, 100 << 10, 1000, 2} {
		data, keys := encodeRecords(recs, limit)
		dropped := loopRecords{Resized: map[string][]time.Time{}, Evicted: map[string]evictionRecord{}}
		for _, k := range keys {
			if k.evicted {
				dropped.Evicted[k.key] = recs.Evicted[k.key]
			} else {
				dropped.Resized[k.key] = recs.Resized[k.key]
			}
		}
		if len(data) > limit {
			t.Fatalf("limit %d: %d bytes", limit, len(data))
		}
		var got loopRecords
		if err := json.Unmarshal([]byte(data), &got); err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		if len(got.Resized)+len(got.Evicted)+len(dropped.Resized)+len(dropped.Evicted) != 3000 {
			t.Fatalf("limit %d: %d kept + %d dropped, want 3000", limit, len(got.Resized)+len(got.Evicted), len(dropped.Resized)+len(dropped.Evicted))
		}
		newestDropped, oldestKept := time.Time{}, now
		for _, ts := range dropped.Resized {
			newestDropped = maxTime(newestDropped, slices.MaxFunc(ts, time.Time.Compare))
		}
		for _, e := range dropped.Evicted {
			newestDropped = maxTime(newestDropped, e.At)
		}
		for _, ts := range got.Resized {
			oldestKept = minTime(oldestKept, slices.MaxFunc(ts, time.Time.Compare))
		}
		for _, e := range got.Evicted {
			oldestKept = minTime(oldestKept, e.At)
		}
		if len(got.Resized)+len(got.Evicted) > 0 && !newestDropped.Before(oldestKept) {
			t.Fatalf("limit %d: a record of %s dropped, one of %s kept", limit, newestDropped, oldestKept)
		}
		// the limit is used: with the newest dropped record added, the JSON would not fit
		if newestDropped.IsZero() {
			continue
		}
		for k, ts := range dropped.Resized {
			if slices.MaxFunc(ts, time.Time.Compare).Equal(newestDropped) {
				if got.Resized == nil {
					got.Resized = map[string][]time.Time{}
				}
				got.Resized[k] = ts
			}
		}
		for k, e := range dropped.Evicted {
			if e.At.Equal(newestDropped) {
				if got.Evicted == nil {
					got.Evicted = map[string]evictionRecord{}
				}
				got.Evicted[k] = e
			}
		}
		if b, _ := json.Marshal(got); len(b) <= limit {
			t.Fatalf("limit %d: %d bytes kept, yet the newest dropped record fits too (%d bytes)", limit, len(data), len(b))
		}
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// TestLoopRecordsDroppedAreCounted: records the ConfigMap cannot hold are dropped from memory too, counted
// once by hvpa_updater_loop_records_dropped_total; the newest stay.
func TestLoopRecordsDroppedAreCounted(t *testing.T) {
	recs := manyRecords(8000)
	u := &Updater{Metrics: NewMetrics(nil), resized: recs.Resized, evicted: map[string]eviction{}, Options: Options{LoopRecords: types.NamespacedName{Namespace: "hvpa", Name: "loops"}}}
	for k, e := range recs.Evicted {
		known := map[types.UID]bool{}
		for _, uid := range e.Known {
			known[uid] = true
		}
		u.evicted[k] = eviction{at: e.At, EvictedChange: EvictedChange{Known: known}}
	}
	newest := fmt.Sprintf("%08d-0000-4000-8000-000000000000|", 7998)
	data := u.encodeLoopRecords(context.Background())
	if len(data) > maxLoopRecordBytes {
		t.Fatalf("%d bytes", len(data))
	}
	kept := len(u.resized) + len(u.evicted)
	if got := testutil.ToFloat64(u.Metrics.LoopRecordsDropped); got != float64(8000-kept) || kept == 0 || kept == 8000 {
		t.Fatalf("%v dropped, %d kept of 8000", got, kept)
	}
	found := false
	for k := range u.resized {
		found = found || len(k) > len(newest) && k[:len(newest)] == newest
	}
	if !found {
		t.Fatal("the newest resize record was dropped")
	}
	if again := u.encodeLoopRecords(context.Background()); again != data || testutil.ToFloat64(u.Metrics.LoopRecordsDropped) != float64(8000-kept) {
		t.Fatal("a second encoding dropped or counted again")
	}
}

// BenchmarkEncodeLoopRecords encodes 10,000 loop records, about 1.6 MB of JSON of which 512 KiB are kept: the
// work before every eviction's write-ahead and at the end of every loop that changed the records.
func BenchmarkEncodeLoopRecords(b *testing.B) {
	recs := manyRecords(10000)
	b.ReportAllocs()
	for b.Loop() {
		data, dropped := encodeRecords(recs, maxLoopRecordBytes)
		if len(data) > maxLoopRecordBytes || len(dropped) == 0 {
			b.Fatalf("%d bytes, %d dropped", len(data), len(dropped))
		}
	}
}
