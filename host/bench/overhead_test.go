package bench

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/timeline"
)

// BenchmarkTimelineRecord measures what one timeline event costs the daemon: a
// partition leaves about a dozen (budget wait, synthesis, stage, dispatch, the
// backend's phases, finalize). `zkhost bench --no-timeline` measures the same
// end to end.
func BenchmarkTimelineRecord(b *testing.B) {
	w, err := timeline.Create(filepath.Join(b.TempDir(), "tl.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	t0 := time.Now()
	ev := timeline.Event{Job: "01JD3Q2Z8V6Y3W4X5T6R7P8N9M", Partition: 3, Attempt: 1, Class: "normal", Circuit: "merkle-d16-k4",
		Lane: "dev0", Phase: "msm_g1", Start: t0, End: t0.Add(time.Second), DeviceBusy: 900 * time.Millisecond}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ev.Partition = i
		w.Record(ev)
		if i%100000 == 0 {
			w.Flush() // the daemon flushes every second
		}
	}
}
