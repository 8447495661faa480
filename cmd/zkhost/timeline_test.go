package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/timeline"
)

func TestTimelineCommand(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "tl.jsonl")
	w, err := timeline.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	w.Record(timeline.Event{Job: "j", Lane: "synth0", Phase: timeline.PhaseSynthesis, Start: ms(0), End: ms(400)})
	w.Record(timeline.Event{Job: "j", Lane: "synth0", Phase: timeline.PhaseStage, Start: ms(400), End: ms(450)})
	w.Record(timeline.Event{Job: "j", Attempt: 1, Lane: "dev0", Phase: timeline.PhaseDispatch, Start: ms(450), End: ms(450)})
	w.Record(timeline.Event{Job: "j", Attempt: 1, Lane: "dev0", Phase: "msm_g1", Start: ms(450), End: ms(1450), DeviceBusy: time.Second})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "page.html")
	var stdout, stderr bytes.Buffer
	// Flags after the file, as in the documented usage.
	if code := run([]string{"timeline", src, "-o", out, "--title", "run 1"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "<title>run 1</title>") || !strings.Contains(string(page), `data-cause="synthesis"`) {
		t.Errorf("page lacks its title or the synthesis gap")
	}
	// dev0 idles 450 ms of 1450 waiting on synthesis: busy 69.0%.
	if s := stdout.String(); !strings.Contains(s, "dev0") || !strings.Contains(s, "69.0") || !strings.Contains(s, "waiting on synthesis") {
		t.Errorf("summary:\n%s", s)
	}

	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"timeline", src, src}, 2, "want at most one timeline file"},
		{[]string{"timeline", src, "--config", src}, 2, "without FILE"},
		{[]string{"timeline", src, "--last", "-1s"}, 2, "negative"},
		{[]string{"timeline", filepath.Join(dir, "missing.jsonl")}, 1, "no such file"},
		{[]string{"timeline", src, "--width", "5"}, 2, "--width 5"},
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte("{\"job\":\"j\",\"phase\":\"ntt\"}\nnot json\n"), 0o600)
	stderr.Reset()
	if code := run([]string{"timeline", bad}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "line 2") {
		t.Errorf("bad file: exit %d, %q", code, stderr.String())
	}
}

// TestTimelineTornLastLine: a timeline whose last line was cut off (the
// daemon's disk filled, or it stopped mid-line) is read up to it, and the
// command says which line it skipped.
func TestTimelineTornLastLine(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "tl.jsonl")
	t0 := time.Unix(1_800_000_000, 0)
	w, err := timeline.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	w.Record(timeline.Event{Job: "j", Attempt: 1, Lane: "dev0", Phase: "msm_g1", Start: t0, End: t0.Add(time.Second), DeviceBusy: time.Second})
	w.Record(timeline.Event{Job: "j", Attempt: 1, Lane: "dev0", Phase: "msm_g2", Start: t0.Add(time.Second), End: t0.Add(2 * time.Second), DeviceBusy: time.Second})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"job":"j","attempt":1,"lane":"dev0","pha`)
	f.Close()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"timeline", src, "-o", filepath.Join(dir, "p.html")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), src+": line 3 is cut off") {
		t.Errorf("stderr %q does not name the torn line", stderr.String())
	}
	if !strings.Contains(stdout.String(), "(2 events") {
		t.Errorf("stdout %q: want the two whole events read", stdout.String())
	}
}

// TestTimelineDefaultFile: without FILE the command reads the default
// daemon's timeline in the state directory, its rotated files first, and
// --last keeps the newest events only.
func TestTimelineDefaultFile(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dir := filepath.Join(state, "zkhost")
	os.MkdirAll(dir, 0o700)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"timeline", "-o", filepath.Join(t.TempDir(), "p.html")}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), filepath.Join(dir, "timeline.jsonl")) {
		t.Fatalf("no timeline yet: exit %d, %q; want exit 1 naming the default file", code, stderr.String())
	}
	t0 := time.Unix(1_800_000_000, 0)
	write := func(path string, job string, from int) {
		w, err := timeline.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		s := t0.Add(time.Duration(from) * time.Second)
		w.Record(timeline.Event{Job: job, Attempt: 1, Lane: "dev0", Phase: "msm_g1", Start: s, End: s.Add(time.Second), DeviceBusy: time.Second})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "timeline.jsonl.1"), "old", 0)
	write(filepath.Join(dir, "timeline.jsonl"), "new", 60)
	for _, tc := range []struct {
		args   []string
		events string
	}{
		{nil, "2 events"},
		{[]string{"--last", "10s"}, "1 events"},
	} {
		stdout.Reset()
		stderr.Reset()
		out := filepath.Join(t.TempDir(), "p.html")
		if code := run(append([]string{"timeline", "-o", out}, tc.args...), &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr.String())
		}
		if !strings.Contains(stdout.String(), tc.events) {
			t.Errorf("%v: %q, want %s", tc.args, stdout.String(), tc.events)
		}
	}
}
