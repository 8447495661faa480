package daemon

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/journal"
	"github.com/zkhost/zkhost/host/metrics"
	"github.com/zkhost/zkhost/host/queue"
)

// TestTransitionsEmitTheirState: every step of the pipeline that moves a
// partition to another state sends exactly one partition event, and the state
// that event's kind says is the one the job's view holds once it is out.
// Staging that runs out of space is one of them: its watchers see the
// partition queued again, with the reason.
func TestTransitionsEmitTheirState(t *testing.T) {
	errDown := errors.New("device dev0 went down")
	for _, tc := range []struct {
		name string
		from api.PartitionState
		step func(d *Daemon, tk *task)
		want api.PartitionState
		kind api.EventKind
	}{
		{"enqueue", api.PartitionQueued, func(d *Daemon, tk *task) { d.enqueue(tk) },
			api.PartitionQueued, api.EventPartitionQueued},
		{"synthesis starts", api.PartitionQueued, func(d *Daemon, tk *task) { d.synthesisStarted(tk, time.Now()) },
			api.PartitionSynthesizing, api.EventPartitionSynthesizing},
		{"no space to stage", api.PartitionSynthesizing, func(d *Daemon, tk *task) {
			d.stagingNoSpace(queueItem(tk), syscall.ENOSPC)
		}, api.PartitionQueued, api.EventPartitionQueued},
		{"synthesizer plugin retried", api.PartitionSynthesizing, func(d *Daemon, tk *task) {
			tk.synthAttempts = 1
			d.retrySynthesis(tk, "synthesizer crashed", true)
		}, api.PartitionQueued, api.EventPartitionRetried},
		{"dispatched", api.PartitionSynthesizing, func(d *Daemon, tk *task) { d.dispatched(tk, time.Now()) },
			api.PartitionProving, api.EventPartitionProving},
		{"device went down before proving", api.PartitionProving, func(d *Daemon, tk *task) { d.putBack(tk, errDown) },
			api.PartitionQueued, api.EventPartitionQueued},
		{"compact partition refused", api.PartitionProving, func(d *Daemon, tk *task) { d.compactRefused(tk, errDown) },
			api.PartitionQueued, api.EventPartitionQueued},
		{"attempt retried", api.PartitionProving, func(d *Daemon, tk *task) { d.retryOrFail(tk, "bad proof", true) },
			api.PartitionQueued, api.EventPartitionRetried},
		{"attempt failed for good", api.PartitionProving, func(d *Daemon, tk *task) { d.retryOrFail(tk, "bad witness", false) },
			api.PartitionFailed, api.EventPartitionFailed},
		{"verified", api.PartitionProving, func(d *Daemon, tk *task) {
			d.partitionVerified(tk.job, tk.idx, time.Now(), api.JobEvent{Attempt: tk.attempts})
		}, api.PartitionVerified, api.EventPartitionVerified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := transitionDaemon(t)
			sub := make(chan api.JobEvent, 16)
			ctx, cancel := context.WithCancel(context.Background())
			j := &liveJob{id: "j", seq: 1, circ: &circuitEntry{name: "c"}, class: api.ClassNormal, ctx: ctx, cancel: cancel,
				state: api.JobRunning, parts: []api.Partition{{}, {Index: 1, State: tc.from}},
				subs: map[chan api.JobEvent]struct{}{sub: {}}}
			tk := &task{job: j, idx: 1, attempts: 1, device: "dev0"}
			tc.step(d, tk)
			// A step that waits to requeue ends with the job.
			cancel()
			d.wg.Wait()

			var events []api.JobEvent
			for len(sub) > 0 {
				if ev := <-sub; ev.Kind.IsPartition() {
					events = append(events, ev)
				}
			}
			if len(events) != 1 {
				t.Fatalf("%d partition events %+v, want 1", len(events), events)
			}
			ev := events[0]
			if ev.Kind != tc.kind || ev.Partition != 1 || ev.JobID != "j" || ev.Time.IsZero() {
				t.Errorf("event %+v, want a stamped %s of job j's partition 1", ev, tc.kind)
			}
			if got := d.jobView(j, false).Partitions[1].State; got != tc.want || ev.Kind.PartitionState() != got {
				t.Errorf("partition is %s after event %s, want %s", got, ev.Kind, tc.want)
			}
		})
	}
}

// TestTransitionAfterEnd: once a job has ended, a step still winding down
// changes no partition and sends no event.
func TestTransitionAfterEnd(t *testing.T) {
	d := &Daemon{}
	sub := make(chan api.JobEvent, 1)
	j := &liveJob{id: "j", state: api.JobCancelled, parts: []api.Partition{{State: api.PartitionCancelled}},
		subs: map[chan api.JobEvent]struct{}{sub: {}}}
	if d.transition(j, 0, api.JobEvent{Kind: api.EventPartitionRetried}, nil) {
		t.Error("transition of an ended job's partition reported a change")
	}
	if j.parts[0].State != api.PartitionCancelled || len(sub) != 0 {
		t.Errorf("partition %s, %d events after the job ended; want cancelled and none", j.parts[0].State, len(sub))
	}
}

// TestEndJobStateWithEvent: a job's end changes its state, its partitions'
// states and its final event in one step. An observer holding d.mu while the
// job ends (as Get and Await's snapshot do) sees either the running job and no
// event, or the ended job with every unverified partition cancelled and its
// final event already out; never the one without the other.
func TestEndJobStateWithEvent(t *testing.T) {
	d := transitionDaemon(t)
	// A job the journal holds, so that ending it is a durable write: the time
	// a step between the two changes would leave them apart.
	rec, _, err := d.journal.CreateJob(journal.Job{Circuit: "c", Class: api.ClassNormal, Partitions: 2}, [][]byte{{1}, {2}})
	if err != nil {
		t.Fatal(err)
	}
	sub := make(chan api.JobEvent, 16)
	ctx, cancel := context.WithCancel(context.Background())
	j := &liveJob{id: rec.ID, seq: rec.Seq, circ: &circuitEntry{name: "c"}, class: api.ClassNormal, ctx: ctx, cancel: cancel,
		state: api.JobRunning, parts: []api.Partition{{State: api.PartitionVerified}, {Index: 1, State: api.PartitionProving}},
		subs: map[chan api.JobEvent]struct{}{sub: {}}}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		d.endJob(j, api.JobCancelled, "cancelled by a client")
	}()
	for done := false; !done; {
		select {
		case <-ended:
			done = true
		default:
		}
		d.mu.Lock()
		state, parts, events := j.state, append([]api.Partition(nil), j.parts...), len(sub)
		d.mu.Unlock()
		switch {
		case events == 0 && (state != api.JobRunning || parts[1].State != api.PartitionProving):
			t.Fatalf("job %s, partition 1 %s before the final event went out", state, parts[1].State)
		case events > 0 && (state != api.JobCancelled || parts[0].State != api.PartitionVerified || parts[1].State != api.PartitionCancelled):
			t.Fatalf("final event out while the job is %s, its partitions %s and %s", state, parts[0].State, parts[1].State)
		}
	}
	if len(sub) != 1 {
		t.Fatalf("%d events, want the one final event", len(sub))
	}
	ev := <-sub
	if ev.Kind != api.EventJobCancelled || ev.Job == nil || ev.Job.State != api.JobCancelled || ev.Job.Partitions[1].State != api.PartitionCancelled {
		t.Errorf("final event %+v, want %s carrying the cancelled job", ev, api.EventJobCancelled)
	}
}

// transitionDaemon is a Daemon with what the pipeline's steps touch besides
// the devices: a journal, queues, metrics, and no backoff.
func transitionDaemon(t *testing.T) *Daemon {
	jr, err := journal.Open(filepath.Join(t.TempDir(), "journal.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jr.Close() })
	d := &Daemon{
		cfg: &config.Config{Retry: config.Retry{MaxAttempts: 3}}, log: hclog.NewNullLogger(), journal: jr, metrics: metrics.New(),
		synthQ: queue.New[*task](), readyQ: queue.New[*task](), jobs: map[string]*liveJob{},
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	t.Cleanup(d.cancel)
	return d
}

// TestEndedJobViewsAgree: once a job ends, failed or cancelled, the live view
// of its partitions is the one read back from the journal (which knows only
// which were proved), so a client sees the same job whichever it asks.
func TestEndedJobViewsAgree(t *testing.T) {
	for _, end := range []api.JobState{api.JobFailed, api.JobCancelled} {
		t.Run(end.String(), func(t *testing.T) {
			d := transitionDaemon(t)
			rec, _, err := d.journal.CreateJob(journal.Job{Circuit: "c", Class: api.ClassNormal, Partitions: 4}, [][]byte{{1}, {2}, {3}, {4}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.journal.MarkPartitionDone(rec.ID, 0, []byte{1}, []byte{2}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			j := &liveJob{id: rec.ID, seq: rec.Seq, circ: &circuitEntry{name: "c"}, class: api.ClassNormal, ctx: ctx, cancel: cancel,
				state: api.JobRunning, subs: map[chan api.JobEvent]struct{}{},
				parts: []api.Partition{{State: api.PartitionVerified}, {Index: 1, State: api.PartitionFailed},
					{Index: 2, State: api.PartitionProving}, {Index: 3, State: api.PartitionQueued}}}
			d.endJob(j, end, "the job ended")
			live := d.jobView(j, false)
			stored, err := d.journal.GetJob(rec.ID)
			if err != nil {
				t.Fatal(err)
			}
			read, err := d.recordView(stored, false)
			if err != nil {
				t.Fatal(err)
			}
			if live.State != end || read.State != end {
				t.Fatalf("job %s live, %s read back; want %s", live.State, read.State, end)
			}
			for i := range live.Partitions {
				want := end.RecordedPartitionState(i == 0)
				if got, back := live.Partitions[i].State, read.Partitions[i].State; got != want || back != want {
					t.Errorf("partition %d: %s live, %s read back; want %s", i, got, back, want)
				}
			}
		})
	}
}
