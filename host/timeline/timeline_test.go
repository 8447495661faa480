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
