package daemon

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
)

// TestCancelMidJob cancels a job while its second partition computes in the
// backend and its third waits: the in-flight proof is cancelled in the backend (the
// device takes the next job at once rather than finishing the abandoned proof), the
// budget returns to what the keys hold, no partition file is left, and the job ends
// cancelled with its other partitions cancelled (the first one verified, unless
// its finalization had not reached the journal when the cancel came).
func TestCancelMidJob(t *testing.T) {
	f := start(t, opts{circuits: []string{small, big}})
	ctx := testCtx(t, 3*time.Minute)

	st, err := f.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	baseline := st.Budget.UsedBytes
	if want := keyBytes(t, small, big); baseline != want {
		t.Errorf("budget used with no job: %d bytes, want the proving keys' %d", baseline, want)
	}
	self := os.Getpid() // the daemon runs in this process: its partitions are ours

	job := f.submit(ctx, big, api.ClassNormal, witnesses(t, big, 3, 1))
	// A small low job waits for the device behind the big one: it is dispatched
	// the moment the cancel frees the slot, while the backend still winds down.
	ws := witnesses(t, small, 1, 2)
	waiting := f.submit(ctx, small, api.ClassLow, ws)
	events := make(chan api.JobEvent, 64)
	awaitDone := make(chan api.Job, 1)
	go func() {
		j, err := f.c.Await(ctx, job.ID, func(e api.JobEvent) error { events <- e; return nil })
		if err != nil {
			t.Errorf("await: %v", err)
		}
		awaitDone <- j
	}()
	// Wait for partition 1 to reach the device. It is dispatched when partition
	// 0's proof returns, not when that proof is verified and recorded: on a disk
	// with slow syncs the journal write can outlast a whole proof of partition 1,
	// so the cancel is timed from partition 1's start, never from partition 0's
	// verification.
	for proving := false; !proving; {
		select {
		case e := <-events:
			proving = reached(e, 1, api.PartitionProving)
			if e.Kind.Terminal() {
				t.Fatalf("job ended before partition 1 was proving: %s %s", e.Kind, e.Reason)
			}
		case <-ctx.Done():
			t.Fatal("partition 1 never reached the device")
		}
	}
	j, err := f.c.Get(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	p0, p1 := j.Partitions[0], j.Partitions[1]
	if p0.ProveEnd.IsZero() || p1.ProveStart.IsZero() {
		t.Fatalf("partition 1 dispatched, but partition 0 ended proving at %v and 1 started at %v", p0.ProveEnd, p1.ProveStart)
	}
	proveTime := p0.ProveEnd.Sub(p0.ProveStart)
	t.Logf("one %s proof took %s", big, proveTime)
	// A fifth into partition 1's proof: inside its MSMs, so the backend takes a
	// while to wind it down (refprover looks at the context between MSM chunks) and
	// the waiting job meets a backend still busy, and far from its end.
	time.Sleep(time.Until(p1.ProveStart.Add(proveTime / 5)))
	st, err = f.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Devices[0].InFlight != 1 {
		t.Errorf("before cancel: device has %d in flight, want 1", st.Devices[0].InFlight)
	}
	if st.Budget.UsedBytes <= baseline {
		t.Errorf("before cancel: budget used %d, want above the keys' %d", st.Budget.UsedBytes, baseline)
	}
	if n := len(partitionFiles(t, self)); n == 0 {
		t.Errorf("before cancel: no partition held")
	}

	cancelAt := time.Now()
	cj, err := f.c.Cancel(ctx, job.ID)
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if cj.State != api.JobCancelled {
		t.Errorf("cancel returned state %s", cj.State)
	}
	var final api.Job
	select {
	case final = <-awaitDone:
	case <-time.After(10 * time.Second):
		t.Fatal("Await did not end after the cancel")
	}
	if final.State != api.JobCancelled || final.Error == "" {
		t.Errorf("awaited job: state %s, error %q; want cancelled with a reason", final.State, final.Error)
	}

	// The waiting job proves on its first attempt: a backend still winding down
	// the abandoned proof must not fail it.
	sj := f.await(ctx, waiting.ID)
	verifyProofs(t, small, sj, ws)
	t.Logf("the waiting small job finished %s after the cancel", sj.FinishedAt.Sub(cancelAt))
	if p := sj.Partitions[0]; p.Attempts != 1 || p.Error != "" {
		t.Errorf("the small job dispatched right after the cancel took %d attempts (%s); a backend winding down a cancelled proof must not fail it", p.Attempts, p.Error)
	}
	// The backend stopped the abandoned proof rather than finish it: it logged
	// one proof of the big circuit (partition 0), not two. (How soon it stops is
	// the prover's business.)
	if n := strings.Count(f.log.String(), "zkhost-backend-cpu: proved:"); n != 2 {
		t.Errorf("the backend logged %d proofs, want 2 (big partition 0 and the small job): it finished the cancelled one", n)
	}

	// Everything is released: the slot, the memory, the files.
	var last api.StatusReport
	apitest.WaitFor(t, 10*time.Second, "device idle, budget back to the keys, no partition file", func() bool {
		last, err = f.c.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return last.Devices[0].InFlight == 0 && last.Budget.UsedBytes == baseline && len(partitionFiles(t, self)) == 0
	})
	for _, q := range last.Queues {
		if q.Partitions != 0 {
			t.Errorf("after cancel: %d partitions of class %s still queued", q.Partitions, q.Class)
		}
	}
	if last.Devices[0].Restarts != 0 {
		t.Errorf("the backend restarted %d times; a cancel must not kill it", last.Devices[0].Restarts)
	}

	got, err := f.c.Get(context.Background(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != api.JobCancelled {
		t.Errorf("Get after cancel: state %s", got.State)
	}
	for i, p := range got.Partitions {
		switch {
		case i == 0 && p.State == api.PartitionVerified:
		case i == 0 && p.State == api.PartitionCancelled:
			t.Logf("partition 0's proof had not reached the journal when the cancel came: it is cancelled too")
		case p.State != api.PartitionCancelled:
			t.Errorf("partition %d is %s, want cancelled", i, p.State)
		}
		if len(p.Proof) != 0 {
			t.Errorf("partition %d of a cancelled job carries a proof", i)
		}
	}
	// Cancelling again leaves the job as it is.
	if again, err := f.c.Cancel(ctx, job.ID); err != nil || again.State != api.JobCancelled {
		t.Errorf("second cancel: %v, state %s", err, again.State)
	}
}

// TestCancelDuringSynthesis cancels a low job while its partition is being
// synthesized and a normal job keeps the one device busy with another partition
// staged ahead of it: the cancelled partition's shared-memory file, memory and
// staging slot go at once, not when the device would reach it after the normal
// job's partitions. The cancel lands inside the synthesis only when synthesis is
// slow enough: reliably under -race (as `make test` runs it), rarely without.
func TestCancelDuringSynthesis(t *testing.T) {
	f := start(t, opts{circuits: []string{small, big}})
	ctx := testCtx(t, 2*time.Minute)
	self := os.Getpid() // the daemon runs in this process: its partitions are ours
	// Partition 0 on the device, 1 and 2 staged, 3 to 5 waiting for synthesis:
	// the low job's partition waits in the queue behind 3 to 5 until 4 is
	// dispatched, three proofs from now; time enough for a Submit whose journal
	// write syncs to a slow disk and for the follower to subscribe.
	normal := f.submit(ctx, big, api.ClassNormal, witnesses(t, big, 6, 71))
	apitest.WaitFor(t, 30*time.Second, "normal partition 0 proving, 3 not yet synthesized", func() bool {
		j, err := f.c.Get(ctx, normal.ID)
		if err != nil {
			t.Fatal(err)
		}
		return j.Partitions[0].State == api.PartitionProving
	})
	if j, err := f.c.Get(ctx, normal.ID); err != nil || !j.Partitions[3].SynthStart.IsZero() {
		t.Fatalf("normal partition 3 synthesized while 0 proves (%v): the staging window is not what this test expects", err)
	}

	low := f.submit(ctx, big, api.ClassLow, witnesses(t, big, 2, 72))
	cancelled := make(chan time.Time, 1)
	_, errc := followUntil(ctx, f, low.ID, func(e api.JobEvent) bool {
		if e.Kind == api.EventSnapshot && e.Job.Partitions[0].State != api.PartitionQueued {
			t.Errorf("the low partition left the queue before it was followed")
		}
		if e.Kind == api.EventPartitionSynthesizing && e.Partition == 0 {
			if _, err := f.c.Cancel(ctx, low.ID); err != nil {
				t.Errorf("cancel: %v", err)
			}
			cancelled <- time.Now()
		}
		return false
	})
	var at time.Time
	select {
	case at = <-cancelled:
	case err := <-errc:
		t.Fatalf("the low job's partition 0 was never seen synthesizing (await: %v)", err)
	}
	// Once the synthesis that was running when the cancel came has ended, nothing
	// of the low job may wait for the device: no queued partition, no file.
	apitest.WaitFor(t, 30*time.Second, "synthesis to end", func() bool {
		st, err := f.c.Status(ctx)
		return err == nil && st.SynthesisRunning == 0
	})
	st, err := f.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Queues[queueIndex(api.ClassLow)].Partitions; n != 0 {
		t.Errorf("%d low partitions still queued after the low job was cancelled", n)
	}
	for _, n := range partitionFiles(t, self) {
		if strings.HasPrefix(n, low.ID) {
			t.Errorf("partition file %s of the cancelled job left", n)
		}
	}
	j, err := f.c.Get(ctx, normal.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checked %s after the cancel; the normal job has %d/6 verified", time.Since(at), j.Count(api.PartitionVerified))
	if !j.Partitions[5].ProveStart.IsZero() {
		t.Logf("the device reached the normal job's last partition before the check; the check above proves less")
	}
	// Nothing of the cancelled job is held: once the normal job is cancelled too,
	// the budget is back to the keys and no partition file is left.
	if _, err := f.c.Cancel(ctx, normal.ID); err != nil {
		t.Fatal(err)
	}
	apitest.WaitFor(t, 5*time.Second, "budget back to the keys, no partition file", func() bool {
		st, err := f.c.Status(ctx)
		return err == nil && st.Budget.UsedBytes == keyBytes(t, small, big) && len(partitionFiles(t, self)) == 0
	})
}

// queueIndex is class c's index in StatusReport.Queues (priority order).
func queueIndex(c api.Class) int {
	for i, qc := range api.Classes {
		if qc == c {
			return i
		}
	}
	panic(fmt.Sprintf("no class %v", c))
}

// TestCancelWhileWaitingForBudget cancels jobs whose partition waits for memory
// (the budget holds one partition of the big circuit at a time), more times than
// synthesis has staging slots: the daemon still synthesizes and proves the next job.
func TestCancelWhileWaitingForBudget(t *testing.T) {
	probe := start(t, opts{circuits: []string{small, big}})
	need := probe.d.circuits[big].partitionBytes()
	probe.shutdown()
	limit := keyBytes(t, small, big) + need + need/2 // one big partition, not two
	f := start(t, opts{circuits: []string{small, big}, budget: fmt.Sprintf("bytes = %d\ncritical_reserve = 0", limit)})
	ctx := testCtx(t, 2*time.Minute)

	for i := range 3 {
		job := f.submit(ctx, big, api.ClassNormal, witnesses(t, big, 2, uint64(80+i)))
		// Partition 0 on the device, partition 1 taken by synthesis but waiting
		// for the memory partition 0 holds: in no queue and not synthesizing.
		apitest.WaitFor(t, 30*time.Second, fmt.Sprintf("job %d: partition 1 waiting for memory (synthesis stalled?)", i), func() bool {
			j, err := f.c.Get(ctx, job.ID)
			if err != nil {
				t.Fatal(err)
			}
			st, err := f.c.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			queued := 0
			for _, q := range st.Queues {
				queued += q.Partitions
			}
			return j.Partitions[0].State == api.PartitionProving && j.Partitions[1].State == api.PartitionQueued &&
				queued == 0 && st.SynthesisRunning == 0
		})
		if _, err := f.c.Cancel(ctx, job.ID); err != nil {
			t.Fatal(err)
		}
	}
	ws := witnesses(t, small, 2, 89)
	job := f.submit(ctx, small, api.ClassNormal, ws)
	final := f.awaitWithin(ctx, job.ID, 30*time.Second, "a job after the cancels (synthesis stalled?)")
	verifyProofs(t, small, final, ws)
}
