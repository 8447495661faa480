package daemon

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/journal"
)

// TestRecoverJobProvedBeforeCrash restarts on a journal whose job has every proof
// but is not marked done: a host killed between recording the last proof and
// ending the job leaves exactly that. The restarted host must finish the job, not
// leave it running forever.
func TestRecoverJobProvedBeforeCrash(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	f := start(t, opts{})
	ws := witnesses(t, small, 2, 11)
	done := f.await(ctx, f.submit(ctx, small, api.ClassNormal, ws).ID)
	verifyProofs(t, small, done, ws)
	f.shutdown()

	// The journal as the killed host left it: all proofs in, state not done.
	jr, err := journal.Open(f.cfg.Journal.Path)
	if err != nil {
		t.Fatal(err)
	}
	req := api.SubmitRequest{Circuit: small, Witnesses: ws, Class: api.ClassNormal}
	rec, _, err := jr.CreateJob(journal.Job{Circuit: small, Class: api.ClassNormal, ContentDigest: req.Digest(), Partitions: len(ws)}, ws)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range done.Partitions {
		if _, err := jr.MarkPartitionDone(rec.ID, i, p.Proof, p.PublicWitness); err != nil {
			t.Fatal(err)
		}
	}
	if err := jr.SetJobState(rec.ID, api.JobRunning, ""); err != nil {
		t.Fatal(err)
	}
	jr.Close()

	f2 := start(t, opts{stateDir: f.stateDir})
	final := f2.awaitWithin(ctx, rec.ID, 10*time.Second, "await the recovered job")
	verifyProofs(t, small, final, ws)
}

// TestAwaitAfterRestart follows a job that finished before a restart: the new
// daemon answers from the journal with the snapshot and the terminal event, and
// cancelled jobs stay cancelled rather than resuming.
func TestAwaitAfterRestart(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	f := start(t, opts{})
	ws := witnesses(t, small, 2, 12)
	done := f.submit(ctx, small, api.ClassNormal, ws)
	f.await(ctx, done.ID)
	cancelled := f.submit(ctx, small, api.ClassLow, witnesses(t, small, 40, 13))
	if _, err := f.c.Cancel(ctx, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	f.shutdown()

	f2 := start(t, opts{stateDir: f.stateDir})
	var kinds []api.EventKind
	final, err := f2.c.Await(ctx, done.ID, func(e api.JobEvent) error {
		kinds = append(kinds, e.Kind)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) != 2 || kinds[0] != api.EventSnapshot || kinds[1] != api.EventJobDone {
		t.Errorf("events of a job finished before the restart: %v, want [snapshot job_done]", kinds)
	}
	verifyProofs(t, small, final, ws)
	for _, p := range final.Partitions {
		// Proved on the first try: one attempt, as the live daemon counted it.
		if p.Attempts != 1 {
			t.Errorf("partition %d read back from the journal: %d attempts, want 1", p.Index, p.Attempts)
		}
	}

	cj, err := f2.c.Get(ctx, cancelled.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cj.State != api.JobCancelled {
		t.Errorf("a job cancelled before the restart is %s after it", cj.State)
	}
	st, err := f2.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range st.Queues {
		if q.Partitions != 0 {
			t.Errorf("class %s has %d partitions queued after the restart; nothing should resume", q.Class, q.Partitions)
		}
	}
}

// TestParkedWhileCircuitMissing restarts on a journal with unfinished jobs of a
// circuit the new config lacks: they are not failed but wait (Get says why, Await
// refuses with the reason, Cancel drops one), and a later restart that serves the
// circuit again proves the other one.
func TestParkedWhileCircuitMissing(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	f := start(t, opts{circuits: []string{small}})
	f.shutdown()

	jr, err := journal.Open(f.cfg.Journal.Path)
	if err != nil {
		t.Fatal(err)
	}
	ws := witnesses(t, big, 2, 14)
	var ids []string
	for range 2 {
		req := api.SubmitRequest{Circuit: big, Witnesses: ws, Class: api.ClassNormal}
		rec, _, err := jr.CreateJob(journal.Job{Circuit: big, Class: api.ClassNormal, ContentDigest: req.Digest(), Partitions: len(ws)}, ws)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.ID)
	}
	jr.Close()
	keep, drop := ids[0], ids[1]

	f2 := start(t, opts{circuits: []string{small}, stateDir: f.stateDir})
	j, err := f2.c.Get(ctx, keep)
	if err != nil {
		t.Fatal(err)
	}
	if j.State.Terminal() || !strings.Contains(j.Error, "waiting for circuit") || !strings.Contains(j.Error, big) {
		t.Errorf("a job of a circuit the daemon does not serve: state %s, error %q; want it waiting, saying for which circuit", j.State, j.Error)
	}
	if _, err := f2.c.Await(ctx, keep, nil); !errors.Is(err, api.ErrUnavailable) || !strings.Contains(err.Error(), "does not serve") {
		t.Errorf("await a parked job: %v, want unavailable with the reason", err)
	}
	if cj, err := f2.c.Cancel(ctx, drop); err != nil || cj.State != api.JobCancelled {
		t.Errorf("cancel a parked job: %v, state %s", err, cj.State)
	}
	// The daemon goes on serving its own circuit meanwhile.
	sws := witnesses(t, small, 1, 15)
	verifyProofs(t, small, f2.await(ctx, f2.submit(ctx, small, api.ClassNormal, sws).ID), sws)
	f2.shutdown()

	f3 := start(t, opts{circuits: []string{small, big}, stateDir: f.stateDir})
	final, err := f3.c.Await(ctx, keep, nil)
	if err != nil {
		t.Fatalf("await the parked job once its circuit is served: %v", err)
	}
	verifyProofs(t, big, final, ws)
	if dj, err := f3.c.Get(ctx, drop); err != nil || dj.State != api.JobCancelled {
		t.Errorf("the parked job cancelled before the restart: %v, state %s", err, dj.State)
	}
}
