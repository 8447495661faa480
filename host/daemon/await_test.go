package daemon

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// partitionOrder is the order a partition's events must come in (no retries).
var partitionOrder = map[api.EventKind]int{
	api.EventPartitionQueued:       1,
	api.EventPartitionSynthesizing: 2,
	api.EventPartitionProving:      3,
	api.EventPartitionVerified:     4,
}

// checkStream checks one Await stream of a job that ends done without retries:
// a snapshot first, each partition's events in pipeline order and each partition
// verified (in the snapshot or by an event), exactly one terminal event, last, and it
// carries the proofs. It returns the terminal event's job.
func checkStream(t *testing.T, jobID string, n int, events []api.JobEvent) api.Job {
	t.Helper()
	if len(events) < 2 {
		t.Fatalf("%d events, want at least a snapshot and a terminal event", len(events))
	}
	snap := events[0]
	if snap.Kind != api.EventSnapshot || snap.Job == nil {
		t.Fatalf("first event is %s (job %v), want a snapshot with the job", snap.Kind, snap.Job != nil)
	}
	verified := map[int]bool{}
	for _, p := range snap.Job.Partitions {
		if len(p.Proof) != 0 || len(p.PublicWitness) != 0 {
			t.Errorf("the snapshot carries proof bytes of partition %d", p.Index)
		}
		if p.State == api.PartitionVerified {
			verified[p.Index] = true
		}
	}
	last := map[int]int{}
	lastTime := map[int]time.Time{}
	for i, e := range events {
		if e.JobID != jobID {
			t.Errorf("event %d (%s) is for job %q", i, e.Kind, e.JobID)
		}
		if e.Kind.Terminal() != (i == len(events)-1) {
			t.Errorf("event %d of %d is %s: the terminal event must come once, last", i, len(events), e.Kind)
		}
		if !e.Kind.IsPartition() {
			continue
		}
		rank, ok := partitionOrder[e.Kind]
		if !ok {
			t.Errorf("event %d: partition %d %s (%s) in a job without failures", i, e.Partition, e.Kind, e.Reason)
			continue
		}
		if rank <= last[e.Partition] {
			t.Errorf("event %d: partition %d %s after a later step", i, e.Partition, e.Kind)
		}
		if e.Time.Before(lastTime[e.Partition]) {
			t.Errorf("event %d: partition %d %s stamped %s, before its previous event", i, e.Partition, e.Kind, e.Time)
		}
		last[e.Partition], lastTime[e.Partition] = rank, e.Time
		if rank >= partitionOrder[api.EventPartitionProving] && (e.Device == "" || e.Attempt != 1) {
			t.Errorf("event %d: partition %d %s on device %q attempt %d; want a device, attempt 1", i, e.Partition, e.Kind, e.Device, e.Attempt)
		}
		if e.Kind == api.EventPartitionVerified {
			verified[e.Partition] = true
		}
	}
	for i := range n {
		if !verified[i] {
			t.Errorf("partition %d: neither verified in the snapshot nor by an event", i)
		}
	}
	end := events[len(events)-1]
	if end.Kind != api.EventJobDone || end.Job == nil {
		t.Fatalf("last event %s (job %v), want job_done with the job", end.Kind, end.Job != nil)
	}
	return *end.Job
}

// TestAwaitEvents follows a job from its submission, and a second follower joins
// in the middle: both see a snapshot, then the job's steps in order, then one
// terminal event with the proofs. Await on the finished job returns the snapshot
// and the terminal event at once.
func TestAwaitEvents(t *testing.T) {
	f := start(t, opts{circuits: []string{small, big}})
	ctx := testCtx(t, 2*time.Minute)
	ws := witnesses(t, big, 3, 51)
	job := f.submit(ctx, big, api.ClassNormal, ws)

	var mu sync.Mutex
	var early, late []api.JobEvent
	var earlyJob, lateJob api.Job
	var earlyErr, lateErr error
	firstVerified := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	wg.Go(func() {
		earlyJob, earlyErr = f.c.Await(ctx, job.ID, func(e api.JobEvent) error {
			mu.Lock()
			early = append(early, e)
			mu.Unlock()
			if e.Kind == api.EventPartitionVerified {
				once.Do(func() { close(firstVerified) })
			}
			return nil
		})
	})
	wg.Go(func() {
		select {
		case <-firstVerified:
		case <-ctx.Done():
			return
		}
		lateJob, lateErr = f.c.Await(ctx, job.ID, func(e api.JobEvent) error {
			mu.Lock()
			late = append(late, e)
			mu.Unlock()
			return nil
		})
	})
	wg.Wait()
	if earlyErr != nil || lateErr != nil {
		t.Fatalf("await: %v; late: %v", earlyErr, lateErr)
	}
	for name, evs := range map[string][]api.JobEvent{"early": early, "late": late} {
		t.Run(name, func(t *testing.T) {
			final := checkStream(t, job.ID, len(ws), evs)
			verifyProofs(t, big, final, ws)
		})
	}
	if v := late[0].Job.Count(api.PartitionVerified); v < 1 {
		t.Errorf("late follower's snapshot shows %d partitions verified; it joined after the first", v)
	}
	verifyProofs(t, big, earlyJob, ws)
	verifyProofs(t, big, lateJob, ws)

	// Await on a finished job: snapshot and terminal event, nothing else.
	var after []api.JobEvent
	final, err := f.c.Await(ctx, job.ID, func(e api.JobEvent) error { after = append(after, e); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 2 || after[0].Kind != api.EventSnapshot || after[0].Job.State != api.JobDone || after[1].Kind != api.EventJobDone {
		kinds := []api.EventKind{}
		for _, e := range after {
			kinds = append(kinds, e.Kind)
		}
		t.Errorf("Await on a done job sent %v, want [snapshot(done) job_done]", kinds)
	}
	checkStream(t, job.ID, len(ws), after)
	verifyProofs(t, big, final, ws)
}

// TestAwaitClientGoesAway cancels a follower's context: its Await ends at once, and
// the job goes on to completion.
func TestAwaitClientGoesAway(t *testing.T) {
	f := start(t, opts{circuits: []string{small, big}})
	ctx := testCtx(t, 2*time.Minute)
	ws := witnesses(t, big, 2, 52)
	job := f.submit(ctx, big, api.ClassNormal, ws)
	actx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := f.c.Await(actx, job.ID, func(e api.JobEvent) error {
			if reached(e, 0, api.PartitionProving) {
				cancel()
			}
			return nil
		})
		errc <- err
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("await after its context was cancelled: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Await did not end when its context was cancelled")
	}
	verifyProofs(t, big, f.await(ctx, job.ID), ws)
}

// TestAwaitWhileHostStops stops `zkhost serve` (SIGTERM) while a client follows a
// job: the client's Await ends at once with an "unavailable" error saying the
// daemon is stopping (an open Await stream used to hold the API's graceful stop
// until its 2s timeout), the process exits, and a restarted host finishes the job.
func TestAwaitWhileHostStops(t *testing.T) {
	cfgPath, socket := processConfig(t)
	ctx := testCtx(t, 2*time.Minute)
	p, c := startServe(t, socket, nil, "--config", cfgPath)
	ws := witnesses(t, big, 2, 53)
	job, err := c.Submit(ctx, api.SubmitRequest{Circuit: big, Witnesses: ws})
	if err != nil {
		t.Fatal(err)
	}
	proving := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		var once sync.Once
		_, err := c.Await(ctx, job.ID, func(e api.JobEvent) error {
			if reached(e, 0, api.PartitionProving) {
				once.Do(func() { close(proving) })
			}
			return nil
		})
		errc <- err
	}()
	<-proving
	stopAt := time.Now()
	if err := p.stop(20 * time.Second); err != nil {
		t.Errorf("zkhost serve exited with %v after SIGTERM", err)
	}
	select {
	case err := <-errc:
		// The daemon says it is stopping (not a transport error after a timeout).
		checkErr(t, err, api.ErrUnavailable, "stopping")
	case <-time.After(10 * time.Second):
		t.Fatal("Await did not end when the host stopped")
	}
	took := time.Since(stopAt)
	t.Logf("host stopped and Await ended %s after SIGTERM", took)
	c.Close()

	_, c2 := startServe(t, socket, nil, "--config", cfgPath)
	defer c2.Close()
	final, err := c2.Await(ctx, job.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	verifyProofs(t, big, final, ws)
}
