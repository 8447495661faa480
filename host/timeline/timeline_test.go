package timeline

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWriteRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tl.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
	var wg sync.WaitGroup
	for p := range 8 {
		wg.Go(func() {
			w.Record(Event{Job: "j", Partition: p, Phase: PhaseSynthesis, Start: t0, End: t0.Add(time.Duration(p) * time.Millisecond), DeviceBusy: time.Duration(p)})
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Record(Event{Job: "after close"}) // dropped, no panic
	evs := readFile(t, path)
	if len(evs) != 8 {
		t.Fatalf("read %d events, want 8", len(evs))
	}
	seen := map[int]bool{}
	for _, ev := range evs {
		if ev.End.Sub(ev.Start) != time.Duration(ev.Partition)*time.Millisecond || ev.DeviceBusy != time.Duration(ev.Partition) {
			t.Errorf("event %+v did not round trip", ev)
		}
		seen[ev.Partition] = true
	}
	if len(seen) != 8 {
		t.Errorf("partitions seen: %v", seen)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}

func TestReadBadLine(t *testing.T) {
	_, err := Read(strings.NewReader("{\"job\":\"a\"}\nnot json\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("got %v, want an error naming line 2", err)
	}
}

func TestRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tl.jsonl")
	// A line is about 150 bytes: 1 KiB files hold a few lines each.
	w, err := Open(path, Rotation{MaxBytes: 1024, Keep: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
	const n = 100
	for i := range n {
		w.Record(Event{Job: "j", Partition: i, Phase: PhaseSynthesis, Start: t0, End: t0})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files := Files(path)
	if want := []string{path + ".2", path + ".1", path}; strings.Join(files, " ") != strings.Join(want, " ") {
		t.Fatalf("files %v, want %v (two rotated kept, the third dropped)", files, want)
	}
	last := -1
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 1024 || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %d bytes, mode %v; want at most 1024, 0600", f, st.Size(), st.Mode().Perm())
		}
		evs := readFile(t, f)
		// Oldest first, in order, with no event lost between kept files.
		for _, ev := range evs {
			if last >= 0 && ev.Partition != last+1 {
				t.Fatalf("%s: partition %d after %d", f, ev.Partition, last)
			}
			last = ev.Partition
		}
	}
	if last != n-1 {
		t.Fatalf("the newest event is %d, want %d", last, n-1)
	}
	// Reopening appends to the current file and keeps counting its size.
	w, err = Open(path, Rotation{MaxBytes: 1024, Keep: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		w.Record(Event{Job: "k", Partition: i, Phase: PhaseSynthesis, Start: t0, End: t0})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Size() > 1024 {
		t.Fatalf("after reopening, %s grew to %d bytes", path, st.Size())
	}
}

func TestRotationKeepNone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tl.jsonl")
	w, err := Open(path, Rotation{MaxBytes: 512, Keep: 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		w.Record(Event{Job: "j", Partition: i, Phase: PhaseStage})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if files := Files(path); len(files) != 1 {
		t.Fatalf("files %v, want the current one only", files)
	}
}

func readFile(t *testing.T, path string) []Event {
	t.Helper()
	evs, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestReadTornLastLine(t *testing.T) {
	const ev = `{"job":"a","partition":1,"phase":"synthesis"}`
	for _, tc := range []struct {
		name     string
		text     string
		events   int
		torn     int
		errorSay string
	}{
		{"whole lines", ev + "\n" + ev + "\n", 2, 0, ""},
		{"torn last line", ev + "\n" + ev + "\n" + `{"job":"a","parti`, 2, 3, ""},
		{"last line whole without its newline", ev + "\n" + ev, 2, 0, ""},
		{"blank lines", "\n" + ev + "\n\n", 1, 0, ""},
		{"bad line with its newline", ev + "\n" + `{"job":"a","parti` + "\n", 0, 0, "line 2"},
		{"torn line in the middle", `{"job":"a","parti` + ev + "\n" + ev + "\n", 0, 0, "line 1"},
		{"empty", "", 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ReadAll(strings.NewReader(tc.text))
			if tc.errorSay != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errorSay) {
					t.Fatalf("got %v, want an error naming %s", err, tc.errorSay)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Events) != tc.events || c.TornLine != tc.torn {
				t.Errorf("%d events, torn line %d; want %d, %d", len(c.Events), c.TornLine, tc.events, tc.torn)
			}
			evs, err := Read(strings.NewReader(tc.text))
			if err != nil || len(evs) != tc.events {
				t.Errorf("Read: %d events, %v; want %d", len(evs), err, tc.events)
			}
		})
	}
}

func TestReadLongLine(t *testing.T) {
	long := `{"job":"` + strings.Repeat("x", 200<<10) + `","phase":"stage"}`
	c, err := ReadAll(strings.NewReader(long + "\n" + long + "\n"))
	if err != nil || len(c.Events) != 2 || len(c.Events[1].Job) != 200<<10 {
		t.Fatalf("%d events, %v; want 2 with their long job names", len(c.Events), err)
	}
	huge := `{"job":"` + strings.Repeat("x", 2<<20) + `"}` + "\n"
	if _, err := ReadAll(strings.NewReader(huge)); err == nil || !strings.Contains(err.Error(), "line 1: longer than") {
		t.Fatalf("a 2 MiB line: got %v, want an error naming line 1", err)
	}
}

// TestOpenCutsTornLine: a file an earlier writer left with a torn last line
// (a crash, a full disk) gets it cut away, so the events appended after it
// are not glued to it.
func TestOpenCutsTornLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tl.jsonl")
	const whole = `{"job":"old","partition":0,"attempt":0,"phase":"stage","start":"2023-11-14T22:13:20Z","end":"2023-11-14T22:13:20Z"}` + "\n"
	if err := os.WriteFile(path, []byte(whole+`{"job":"old","partit`), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Record(Event{Job: "new", Phase: PhaseStage})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	evs := readFile(t, path)
	if len(evs) != 2 || evs[0].Job != "old" || evs[1].Job != "new" {
		t.Fatalf("read back %+v, want the old whole event and the new one", evs)
	}
	// A file of one torn line is emptied.
	if err := os.WriteFile(path, []byte(`{"jo`), 0o600); err != nil {
		t.Fatal(err)
	}
	if w, err = Create(path); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if st, _ := os.Stat(path); st.Size() != 0 {
		t.Fatalf("a file of one torn line is %d bytes after Open, want 0", st.Size())
	}
}

// TestRecoverAfterFailedRotation: a rotation that cannot open the new file
// drops events meanwhile and opens it at a later flush.
func TestRecoverAfterFailedRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tl.jsonl")
	w, err := Open(path, Rotation{MaxBytes: 64 << 10, Keep: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A directory where PATH.1 goes makes the rename of PATH fail.
	if err := os.MkdirAll(filepath.Join(path+".1", "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	big := Event{Job: strings.Repeat("j", 40<<10), Phase: PhaseStage}
	w.Record(big)
	w.Record(big) // rotates: the rename fails
	if err := os.RemoveAll(path + ".1"); err != nil {
		t.Fatal(err)
	}
	w.Record(Event{Job: "after", Phase: PhaseStage}) // rotates, now with success
	if err := w.Close(); err != nil {
		t.Fatalf("close after recovering: %v", err)
	}
	var jobs []string
	for _, f := range Files(path) {
		for _, ev := range readFile(t, f) {
			jobs = append(jobs, ev.Job[:min(5, len(ev.Job))])
		}
	}
	if got := strings.Join(jobs, " "); !strings.HasSuffix(got, "after") {
		t.Fatalf("events read back %q, want the last one recorded after the failed rotation", got)
	}
}
