package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// userHZ is the unit of utime and stime in /proc/PID/stat (USER_HZ, 100 on Linux).
const userHZ = 100

// run is one "recommender run" line of the hvpa log, with the process's CPU time and Go heap read as the line
// was seen (within 100ms of its writing).
type run struct {
	at     time.Time
	fields logFields
	cpu    float64 // seconds of user and system time since the process started
	heap   float64 // go_memstats_heap_inuse_bytes; -1 when /metrics did not answer
	// controlPlaneCPU is kube-apiserver's and etcd's user and system time so far (seconds; -1: not found)
	controlPlaneCPU float64
}

// logFields are the fields of a JSON log line, numbers and strings apart; the string fields of a nested
// object (the run line's "steps": each step's duration) count as fields of the line.
type logFields struct {
	numbers map[string]float64
	strings map[string]string
}

// parseLogLine reads a JSON log line's top-level numbers and strings, and the strings of its objects.
func parseLogLine(b []byte) (logFields, error) {
	f := logFields{numbers: map[string]float64{}, strings: map[string]string{}}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return f, fmt.Errorf("not a JSON object")
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return f, err
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return f, err
		}
		switch v := v.(type) {
		case json.Number:
			n, _ := v.Float64()
			f.numbers[k.(string)] = n
		case string:
			f.strings[k.(string)] = v
		case map[string]any:
			for name, x := range v {
				if str, ok := x.(string); ok {
					f.strings[name] = str
				}
			}
		}
	}
	return f, nil
}

// int is a numeric field of the line (-1 when absent).
func (x run) int(name string) int {
	if v, ok := x.fields.numbers[name]; ok {
		return int(v)
	}
	return -1
}

// duration is a duration field of the line, e.g. "duration" or a step's name (-1 when absent).
func (x run) duration(name string) time.Duration {
	d, err := time.ParseDuration(x.fields.strings[name])
	if err != nil {
		return -1
	}
	return d
}

// logError is an error line of the hvpa log.
type logError struct {
	at   time.Time
	text string
}

// rssSample is the process's resident set size at a time.
type rssSample struct {
	at  time.Time
	kib int64
}

// watcher follows the hvpa process: its log (recommender runs and errors) and its RSS every second.
type watcher struct {
	pid        int
	logPath    string
	metricsURL string

	mu     sync.Mutex
	runs   []run
	errors []logError
	rss    []rssSample
}

func newWatcher(pid int, logPath, metricsURL string) *watcher {
	return &watcher{pid: pid, logPath: logPath, metricsURL: metricsURL}
}

// snapshot is a copy of the runs seen so far.
func (w *watcher) snapshot() []run {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.runs)
}

// errorsSince are the error lines logged after t.
func (w *watcher) errorsSince(t time.Time) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, e := range w.errors {
		if e.at.After(t) {
			out = append(out, e.text)
		}
	}
	return out
}

// rssBetween are the RSS samples taken within (from, to].
func (w *watcher) rssBetween(from, to time.Time) []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []int64
	for _, s := range w.rss {
		if s.at.After(from) && !s.at.After(to) {
			out = append(out, s.kib)
		}
	}
	return out
}

// follow reads the log as it grows until ctx ends.
func (w *watcher) follow(ctx context.Context) {
	f, err := os.Open(w.logPath)
	if err != nil {
		return
	}
	defer func() { _ = f.Close() }() // read only: Close has nothing to lose
	r := bufio.NewReaderSize(f, 1<<20)
	var partial []byte
	for ctx.Err() == nil {
		line, err := r.ReadBytes('\n')
		partial = append(partial, line...)
		if err == io.EOF {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if err != nil {
			return
		}
		w.line(partial)
		partial = nil
	}
}

// line records one log line if it is a recommender run or an error.
func (w *watcher) line(b []byte) {
	f, err := parseLogLine(b)
	if err != nil {
		return
	}
	at, err := time.Parse(time.RFC3339Nano, f.strings["ts"])
	if err != nil {
		return
	}
	switch {
	case f.strings["msg"] == "recommender run":
		x := run{at: at, fields: f, cpu: cpuSeconds(w.pid), heap: w.heapInuse(), controlPlaneCPU: controlPlaneCPU()}
		w.mu.Lock()
		w.runs = append(w.runs, x)
		w.mu.Unlock()
	case f.strings["level"] == "error":
		w.mu.Lock()
		w.errors = append(w.errors, logError{at, f.strings["msg"] + ": " + f.strings["error"]})
		w.mu.Unlock()
	}
}

// sample reads the process's RSS every second until ctx ends.
func (w *watcher) sample(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		if kib := w.status("VmRSS"); kib >= 0 {
			w.mu.Lock()
			w.rss = append(w.rss, rssSample{time.Now(), kib})
			w.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// peakRSS is the process's peak resident set size so far (VmHWM), KiB.
func (w *watcher) peakRSS() int64 { return w.status("VmHWM") }

// status reads a "kB" line of /proc/PID/status (-1 when the process is gone).
func (w *watcher) status(field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			v, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// cpuSeconds is the user and system CPU time of process pid (/proc/PID/stat utime and stime), -1 when gone.
func cpuSeconds(pid int) float64 {
	f := procStat(pid)
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return float64(utime+stime) / userHZ
}

// procStat is the fields of /proc/PID/stat after the command name (state, ppid, ...; nil when gone).
func procStat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	// pid (comm) state ppid ...: utime and stime are fields 14 and 15, the 12th and 13th after the comm
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// controlPlaneCPU is the CPU time so far of this benchmark's kube-apiserver and etcd (its child processes of
// those names), in seconds; -1 when there are none. On this machine they share the cores with the
// recommender: what one loop's requests cost them bounds how short a loop can be.
func controlPlaneCPU() float64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	self, total, found := strconv.Itoa(os.Getpid()), 0.0, false
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			continue
		}
		if name := strings.TrimSpace(string(comm)); name != "kube-apiserver" && name != "etcd" {
			continue
		}
		if f := procStat(pid); len(f) > 1 && f[1] == self {
			if c := cpuSeconds(pid); c >= 0 {
				total, found = total+c, true
			}
		}
	}
	if !found {
		return -1
	}
	return total
}

// heapInuse scrapes go_memstats_heap_inuse_bytes from the process's /metrics (-1 when it does not answer).
func (w *watcher) heapInuse() float64 {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(w.metricsURL)
	if err != nil {
		return -1
	}
	defer func() { _ = resp.Body.Close() }() // a response body's Close has nothing to report once it is read
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
			if v, err := strconv.ParseFloat(rest, 64); err == nil {
				return v
			}
		}
	}
	return -1
}

// saveProfile writes one of the process's pprof profiles to path, for `go tool pprof`: query is the profile
// and its parameters under /debug/pprof/ on the metrics address (served with --profiling): "heap?gc=1", the
// heap after a garbage collection (what is live, not what awaits collection); "profile?seconds=N", the CPU
// over the next N seconds. timeout bounds the request.
func (w *watcher) saveProfile(path, query string, timeout time.Duration) error {
	u := strings.TrimSuffix(w.metricsURL, "/metrics") + "/debug/pprof/" + query
	resp, err := (&http.Client{Timeout: timeout}).Get(u)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }() // a response body's Close has nothing to report once it is read
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close() // the write failed; its error is the one to report
		return err
	}
	return f.Close()
}

// saveMemStats writes the process's Go memory statistics (the go_memstats_ and go_gc_ lines of /metrics) and
// its /proc status memory lines to path: where the RSS goes beyond the live heap.
func (w *watcher) saveMemStats(path string) error {
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(w.metricsURL)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }() // a response body's Close has nothing to report once it is read
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "go_memstats_") || strings.HasPrefix(l, "go_gc_") || strings.HasPrefix(l, "go_goroutines") {
			b.WriteString(l + "\n")
		}
	}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.pid)); err == nil {
		for _, l := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(l, "Vm") || strings.HasPrefix(l, "Rss") {
				b.WriteString(l + "\n")
			}
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
