package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// simulatePage is the page whose `hvpa simulate` examples TestSimulateDocs checks.
const simulatePage = "docs/simulate.md"

// consoleBlock matches a console block of a page: "$ hvpa ..." lines, each followed by what it prints.
var consoleBlock = regexp.MustCompile("(?s)```console\n(.*?)```")

// measuredLine is the summary's measured line (wall time, rate and peak heap): its shape is checked, its
// numbers are the page's (measured on the machine the page names), not this run's.
var measuredLine = regexp.MustCompile(`^wall time [0-9.]+(ms|s|µs), [0-9]+ samples/s, peak heap [0-9.]+ MiB$`)

// TestSimulateDocs runs the open-loop `hvpa simulate` examples of docs/simulate.md (its console blocks; the
// closed-loop ones, `--closed-loop`, are not run here) on the committed traces and the shared ones, and
// compares every line they print with the page, but for the measured line (wall time, samples/s, peak heap),
// whose shape only is checked; and it runs `hvpa simulate --trace T --model adaptive` for every trace of the
// page's table of both models' scores and compares the table. `go test ./cmd/hvpa -run SimulateDocs -update`
// rewrites the page's outputs and table from this build (the measured lines stay): review the diff.
func TestSimulateDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs hvpa simulate on the sample traces (about a minute)")
	}
	t.Chdir(filepath.Join("..", ".."))
	page, err := os.ReadFile(simulatePage)
	if err != nil {
		t.Fatal(err)
	}
	skippedTraces = nil
	text := checkSimulateExamples(t, string(page))
	text = checkScoresTable(t, text)
	if *update && text != string(page) {
		if err := os.WriteFile(simulatePage, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(skippedTraces) > 0 {
		t.Skipf("the examples and scores of these traces were not checked: they are not on this machine (the shared traces are in ../shared/traces): %s",
			strings.Join(skippedTraces, ", "))
	}
}

// skippedTraces are the traces of the page that are not on this machine.
var skippedTraces []string

// checkSimulateExamples checks every open-loop `hvpa simulate` example of the page and returns the page with
// their outputs as this build prints them (the measured lines kept).
func checkSimulateExamples(t *testing.T, page string) string {
	var out strings.Builder
	last, examples := 0, 0
	for _, b := range consoleBlock.FindAllStringSubmatchIndex(page, -1) {
		block := page[b[2]:b[3]]
		if !strings.HasPrefix(block, "$ hvpa simulate ") || strings.Contains(block, "--closed-loop") {
			continue
		}
		out.WriteString(page[last:b[2]])
		out.WriteString(checkBlock(t, block))
		last = b[3]
		examples += strings.Count("\n"+block, "\n$ hvpa simulate ")
	}
	out.WriteString(page[last:])
	if examples < 3 {
		t.Errorf("%s has %d open-loop `hvpa simulate` examples, want at least 3 (steady-diurnal, memleak-oom, adaptive)", simulatePage, examples)
	}
	return out.String()
}

// checkBlock runs each command of a console block and returns the block with their outputs.
func checkBlock(t *testing.T, block string) string {
	var out strings.Builder
	for i, part := range strings.Split(block, "\n$ ") {
		command, want, _ := strings.Cut(strings.TrimPrefix(part, "$ "), "\n")
		if i > 0 {
			out.WriteString("\n$ ")
		} else {
			out.WriteString("$ ")
		}
		out.WriteString(command + "\n")
		got, ok := runExample(t, command)
		if !ok {
			out.WriteString(want)
			continue
		}
		trailing := want[len(strings.TrimRight(want, "\n")):] // and the blank line before the next command
		out.WriteString(compareOutput(t, command, got, strings.TrimRight(want, "\n")) + cmp.Or(trailing, "\n"))
	}
	return out.String()
}

// runExample runs `hvpa simulate ...` from the repository root, its output files in a temporary folder; it
// reports false (and skips, logging why) when the command's trace is not on this machine.
func runExample(t *testing.T, command string) (string, bool) {
	args := strings.Fields(command)[1:]
	dir := t.TempDir()
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--trace":
			if _, err := os.Stat(args[i+1]); err != nil {
				skippedTraces = append(skippedTraces, args[i+1])
				return "", false
			}
		case "--out", "--report", "--summary-json":
			if args[i+1] != "/dev/null" {
				args[i+1] = filepath.Join(dir, filepath.Base(args[i+1]))
			}
		}
	}
	got, err := runCommand(t, args...)
	if err != nil {
		t.Errorf("%s: %v\n%s", command, err, got)
	}
	return got, true
}

// compareOutput compares what a command printed with the page's lines; it returns the lines to write (without
// a final newline): the printed ones, but for the page's measured line.
func compareOutput(t *testing.T, command, got, want string) string {
	gl, wl := strings.Split(strings.TrimRight(got, "\n"), "\n"), strings.Split(want, "\n")
	out := make([]string, len(gl))
	for i, g := range gl {
		out[i] = g
		w := ""
		if i < len(wl) {
			w = wl[i]
		}
		switch {
		case measuredLine.MatchString(g) && measuredLine.MatchString(w):
			out[i] = w
		case g != w && !*update:
			t.Errorf("%s, line %d: prints\n  %s\nbut %s shows\n  %s", command, i+1, g, simulatePage, w)
		}
	}
	if len(wl) != len(gl) && !*update {
		t.Errorf("%s prints %d lines, %s shows %d", command, len(gl), simulatePage, len(wl))
	}
	return strings.Join(out, "\n")
}

// scoresHeader is the header of the page's table of both models' scores on every trace.
const scoresHeader = "| trace | model | cpu slack | memory slack | cpu over | memory over | OOM events | applied changes / container-day |"

// scoresLine matches a scores line of `hvpa simulate`: the model, then its six scores.
var scoresLine = regexp.MustCompile(`^scores \((adaptive|upstream, beside it)\): cpu slack ([0-9.]+%), memory slack ([0-9.]+%), cpu over ([0-9.]+%), memory over ([0-9.]+%), OOM events ([0-9]+), applied changes per container-day ([0-9.]+) `)

// checkScoresTable runs `hvpa simulate --trace T --model adaptive` for each trace of the scores table and
// compares its rows; it returns the page with the rows this build gives.
func checkScoresTable(t *testing.T, page string) string {
	start := strings.Index(page, scoresHeader+"\n|---")
	if start < 0 {
		t.Fatalf("%s has no table of both models' scores (header %q)", simulatePage, scoresHeader)
	}
	body := start + len(scoresHeader) + 1
	body += strings.Index(page[body:], "\n") + 1
	end := body + strings.Index(page[body:], "\n\n")
	var rows []string
	seen := map[string]bool{}
	for _, row := range strings.Split(page[body:end], "\n") {
		name := strings.TrimSpace(strings.Split(row, "|")[1])
		if seen[name] {
			continue
		}
		seen[name] = true
		rows = append(rows, scoreRows(t, name, page[body:end])...)
	}
	return page[:body] + strings.Join(rows, "\n") + page[end:]
}

// scoreRows are the table's rows of one trace (upstream, then adaptive) as this build gives them; when the
// trace is not on this machine, the page's rows.
func scoreRows(t *testing.T, name, table string) []string {
	var pageRows []string
	for _, row := range strings.Split(table, "\n") {
		if strings.HasPrefix(row, "| "+name+" |") {
			pageRows = append(pageRows, row)
		}
	}
	path := ""
	for _, p := range []string{filepath.Join("..", "shared", "traces", name+".csv.gz"), filepath.Join("recommender", "simulate", "testdata", "traces", name+".csv.gz")} {
		if _, err := os.Stat(p); err == nil {
			path = p
		}
	}
	if path == "" {
		skippedTraces = append(skippedTraces, name)
		return pageRows
	}
	got, err := runCommand(t, "simulate", "--trace", path, "--model", "adaptive", "--out", "/dev/null")
	if err != nil {
		t.Fatalf("hvpa simulate --trace %s --model adaptive: %v\n%s", path, err, got)
	}
	byModel := map[string]string{}
	for _, line := range strings.Split(got, "\n") {
		if m := scoresLine.FindStringSubmatch(line); m != nil {
			model := strings.TrimSuffix(m[1], ", beside it")
			byModel[model] = fmt.Sprintf("| %s | %s | %s |", name, model, strings.Join(m[2:], " | "))
		}
	}
	rows := []string{byModel["upstream"], byModel["adaptive"]}
	if rows[0] == "" || rows[1] == "" {
		t.Fatalf("hvpa simulate --trace %s --model adaptive printed no scores of both models:\n%s", path, got)
	}
	if strings.Join(rows, "\n") != strings.Join(pageRows, "\n") && !*update {
		t.Errorf("the scores of %s:\n%s\nbut %s shows\n%s", name, strings.Join(rows, "\n"), simulatePage, strings.Join(pageRows, "\n"))
	}
	return rows
}
