package simulate

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hvpa-dev/hvpa/recommender"
	"github.com/hvpa-dev/hvpa/recommender/trace"
)

var update = flag.Bool("update", false, "rewrite testdata/golden.csv from this build (only on purpose: review the diff)")

const day0 = 1736121600 // 2025-01-06T00:00:00Z

// smallTrace is the golden test's input, made here so that it is reviewable: two workloads over two days at
// one sample a minute.
//   - ns-a/web: two pods (web-1 for the whole time, web-2 replaced by web-3 after 20h), containers app and
//     proxy; app's CPU follows a day curve around 400m, memory grows slowly; proxy is flat (20m, 60Mi).
//   - ns-b/batch: one pod, container worker, whose memory climbs to its 512Mi request and is OOM-killed at
//     hour 30, then restarts in the same pod.
//
// Values are deterministic functions of time (no randomness).
func smallTrace() []byte {
	var b bytes.Buffer
	b.WriteString("# golden trace: see smallTrace in simulate_test.go\n" + "timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event\n")
	for m := 0; m < 2*24*60; m++ {
		t := day0 + int64(m)*60
		h := float64(m) / 60
		curve := 400 + 250*math.Sin(2*math.Pi*h/24) + 30*math.Sin(float64(m)*0.7)
		pods := []string{"web-1", "web-2"}
		if h >= 20 {
			pods[1] = "web-3"
		}
		for i, pod := range pods {
			mem := 300e6 + float64(m)*20e3 + float64(i)*10e6
			fmt.Fprintf(&b, "%d,ns-a,web,%s,app,%.1f,%.0f,500,536870912,\n", t, pod, curve+float64(i)*15, mem)
			fmt.Fprintf(&b, "%d,ns-a,web,%s,proxy,20,62914560,50,134217728,\n", t, pod)
		}
		// the batch worker leaks 0.5 MB a minute from 200 MB; at hour 30 it reaches 512Mi and is killed
		mem := 200e6 + float64(m%(30*60))*0.5e6*(float64(512<<20)-200e6)/(30*60*0.5e6)
		if m == 30*60 {
			fmt.Fprintf(&b, "%d,ns-b,batch,batch-0,worker,,,1000,536870912,OOM\n", t)
			continue
		}
		fmt.Fprintf(&b, "%d,ns-b,batch,batch-0,worker,%.0f,%.0f,1000,536870912,\n", t, 800+100*math.Cos(h), mem)
	}
	return b.Bytes()
}

func run(t *testing.T, trace []byte, opts Options) (string, Stats) {
	t.Helper()
	var out bytes.Buffer
	s, err := New(&out, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(bytes.NewReader(trace)); err != nil {
		t.Fatal(err)
	}
	return out.String(), s.Stats
}

// TestGolden: the recommendation file for smallTrace at a 1h interval must equal testdata/golden.csv. A change
// of the model shows up here as a diff to review; regenerate with -update only on purpose.
func TestGolden(t *testing.T) {
	got, st := run(t, smallTrace(), Options{Interval: time.Hour})
	if *update {
		if err := os.WriteFile("testdata/golden.csv", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/golden.csv")
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("recommendations differ from testdata/golden.csv at line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("recommendations have %d lines, golden %d", len(gl), len(wl))
	}
	if st.OOMs != 1 || st.Aggregates != 3 || st.Ticks != 49 || st.Recommendations != 49*3 {
		t.Errorf("stats %+v: want 1 OOM, 3 aggregates, 49 ticks (0h..48h), 147 recommendations", st)
	}
}

// The OOM in the golden trace bumps the worker's memory target to at least 1.2 x 512Mi x 1.15 (margin).
func TestOOMRaisesTarget(t *testing.T) {
	out, _ := run(t, smallTrace(), Options{Interval: time.Hour})
	var before, after int64
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, ",")
		if len(f) < 6 || f[2] != "batch" {
			continue
		}
		var ts, mem int64
		if _, err := fmt.Sscan(f[0], &ts); err != nil {
			t.Fatalf("timestamp of %q: %v", line, err)
		}
		if _, err := fmt.Sscan(f[5], &mem); err != nil {
			t.Fatalf("memory target of %q: %v", line, err)
		}
		if ts == day0+29*3600 {
			before = mem
		}
		if ts == day0+31*3600 {
			after = mem
		}
	}
	if min := int64(6 * 512 * (1 << 20) / 5); after < min || after <= before {
		t.Errorf("worker memory target %d before the OOM, %d after; want after >= 1.2 x 512Mi = %d", before, after, min)
	}
}

func TestTicks(t *testing.T) {
	trace := "timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event\n" +
		"1736121630,ns,w,p,c,100,1000000,,,\n" + // first multiple >= 1736121630 is 1736121660
		"1736121660,ns,w,p,c,100,1000000,,,\n" + // at a tick: counted in that tick
		"1736121725,ns,w,p,c,100,1000000,,,\n" // last: ticks up to the first multiple >= it, 1736121780
	out, st := run(t, []byte(trace), Options{})
	var ticks []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		ticks = append(ticks, strings.SplitN(line, ",", 2)[0])
	}
	if strings.Join(ticks, " ") != "1736121660 1736121720 1736121780" {
		t.Errorf("ticks %v", ticks)
	}
	if st.ScoredCPU != 1 { // only the third sample has a recommendation strictly before it... the second is at the tick itself
		t.Errorf("scored %d samples, want 1 (a recommendation must be strictly older than the sample)", st.ScoredCPU)
	}
}

func TestGzipAndErrors(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	if _, err := w.Write(smallTrace()); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	plain, _ := run(t, smallTrace(), Options{Interval: time.Hour})
	zipped, _ := run(t, gz.Bytes(), Options{Interval: time.Hour})
	if plain != zipped {
		t.Error("a gzip trace gives other recommendations than the plain one")
	}
	header := "timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event\n"
	cases := map[string]struct{ trace, want string }{
		"wrong header":        {"time,ns\n", "line 1: want the header"},
		"no header":           {"# only a comment\n", "ends before the header"},
		"too few columns":     {header + "1736121600,ns,w,p,c,1,2\n", "line 2: want 10 comma-separated columns"},
		"bad number":          {header + "1736121600,ns,w,p,c,abc,2,,,\n", "line 2, column 6 (cpu_millicores): want a decimal >= 0"},
		"negative memory":     {header + "1736121600,ns,w,p,c,1,-2,,,\n", "line 2, column 7 (memory_bytes)"},
		"bad timestamp":       {header + "yesterday,ns,w,p,c,1,2,,,\n", "line 2, column 1 (timestamp)"},
		"empty workload":      {header + "1736121600,ns,,p,c,1,2,,,\n", "line 2, column 3 (workload): must not be empty"},
		"unknown event":       {header + "1736121600,ns,w,p,c,,,,,OOMKilled\n", "line 2, column 10 (event): want empty or OOM"},
		"backwards in time":   {header + "1736121660,ns,w,p,c,1,2,,,\n# note\n1736121600,ns,w,p,c,1,2,,,\n", "line 4, column 1 (timestamp): 1736121600 is before the previous row's 1736121660"},
		"too many columns":    {header + "1736121600,ns,w,p,c,1,1,1,1,,extra\n", "want 10 comma-separated columns (" + header[:len(header)-1] + "), got 11"},
		"amount too large":    {header + "1736121600,ns,w,p,c,1,1e19,,,\n", "line 2, column 7 (memory_bytes): \"1e19\" is larger than"},
		"RFC 3339 is allowed": {header + "2025-01-06T00:00:00Z,ns,w,p,c,1.5,2,,,\r\n", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, _ := New(nil, Options{})
			err := s.Run(strings.NewReader(tc.trace))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestPolicyAndReport(t *testing.T) {
	opts := Options{Interval: time.Hour, Series: true, Policy: func(ns, workload, container string) recommender.Policy {
		p := recommender.DefaultPolicy()
		p.Off = container == "proxy"
		p.MaxCPU = 0.3
		return p
	}}
	var out bytes.Buffer
	s, _ := New(&out, opts)
	if err := s.Run(bytes.NewReader(smallTrace())); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), ",proxy,") {
		t.Error("a container with mode Off got recommendations")
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		f := strings.Split(line, ",")
		var v int
		if _, err := fmt.Sscan(f[4], &v); err != nil || v > 300 {
			t.Fatalf("target cpu %q not at most maxAllowed 300m: %s", f[4], line)
		}
	}
	var html bytes.Buffer
	if err := WriteReport(&html, "golden", s.Stats, s.Series()); err != nil {
		t.Fatal(err)
	}
	page := html.String()
	for _, want := range []string{"<svg", "ns-b / batch / worker", "ns-a / web / app", "#d12f1f", "</html>"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(page, "<script") || strings.Contains(page, "http://") && !strings.Contains(page, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("the report must be self-contained")
	}
}

// Row order within one timestamp has no meaning: an OOM row before or after a usage row of the same
// timestamp gives the same recommendations (OOMs apply after the usage of their timestamp).
func TestRowOrderWithinATimestamp(t *testing.T) {
	header := "timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event\n"
	usage := "1736121660,ns,w,p,c,100,3145728000,,,\n"
	oom := "1736121660,ns,w,p,c,,,,1048576000,OOM\n"
	start := "1736121600,ns,w,p,c,100,1000000,,,\n"
	a, _ := run(t, []byte(header+start+usage+oom), Options{})
	b, _ := run(t, []byte(header+start+oom+usage), Options{})
	if a != b {
		t.Errorf("usage then OOM:\n%s\nOOM then usage:\n%s", a, b)
	}
}

// The pod minimum is split across the workload's scaled containers only: a container in mode Off (or
// without samples) does not halve it.
func TestPodMinimumSplitSkipsOffContainers(t *testing.T) {
	header := "timestamp,namespace,workload,pod,container,cpu_millicores,memory_bytes,cpu_request_millicores,memory_request_bytes,event\n"
	trace := header + "1736121600,ns,w,p,app,1,1,,,\n1736121600,ns,w,p,side,1,1,,,\n"
	off := func(ns, workload, container string) recommender.Policy {
		p := recommender.DefaultPolicy()
		p.Off = container == "side"
		return p
	}
	out, _ := run(t, []byte(trace), Options{Policy: off})
	if !strings.Contains(out, "1736121600,ns,w,app,25,262144000,") {
		t.Errorf("app must get the whole pod minimum (25m, 250Mi) while side is Off:\n%s", out)
	}
	out, _ = run(t, []byte(trace), Options{})
	if !strings.Contains(out, "1736121600,ns,w,app,12,131072000,") {
		t.Errorf("two scaled containers share the minimum (12m, 131072000):\n%s", out)
	}
}

func TestOptionsAndTicksBefore1970(t *testing.T) {
	for _, iv := range []time.Duration{-time.Minute, 1500 * time.Millisecond, time.Millisecond} {
		if _, err := New(nil, Options{Interval: iv}); err == nil {
			t.Errorf("interval %s accepted", iv)
		}
	}
	if _, err := New(nil, Options{SeriesStep: time.Millisecond}); err == nil {
		t.Error("series step 1ms accepted")
	}
	if got := trace.Tick(-30, 60); got != 0 {
		t.Errorf("trace.Tick(-30, 60) = %d, want 0", got)
	}
	if got := trace.Tick(-90, 60); got != -60 {
		t.Errorf("trace.Tick(-90, 60) = %d, want -60", got)
	}
}
