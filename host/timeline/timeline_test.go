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
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Record(Event{Job: "j", Partition: p, Phase: PhaseSynthesis, Start: t0, End: t0.Add(time.Duration(p) * time.Millisecond), DeviceBusy: time.Duration(p)})
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Record(Event{Job: "after close"}) // dropped, no panic
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
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
	w, err := Open(path, Rotation{MaxBytes: 1024, Keep: 2})
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
	w, err = Open(path, Rotation{MaxBytes: 1024, Keep: 2})
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
	w, err := Open(path, Rotation{MaxBytes: 512, Keep: 0})
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
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}
