package daemon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/device"
	"github.com/zkhost/zkhost/host/finalize"
	"github.com/zkhost/zkhost/host/journal"
	"github.com/zkhost/zkhost/host/queue"
	"github.com/zkhost/zkhost/host/timeline"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// proveOutcome is what a device slot hands the finalizer.
type proveOutcome struct {
	res        sdk.ProveResult
	err        error
	proveStart time.Time
	proveEnd   time.Time
}

// deviceEntry is a device and what the daemon tracks about it.
type deviceEntry struct {
	dev     *device.Device
	backend string
	busy    *busyWindow
	util    *utilWindow // utilization samples (utilization.go)

	mu       sync.Mutex
	tooSmall map[string]string // keys the device refused for good (keyTooLarge), with why
}

// synthesisWorker takes partitions in priority order, reserves their memory,
// solves the circuit and stages the result in shared memory.
func (d *Daemon) synthesisWorker(lane string, staged bool, pop func(context.Context) (queue.Item[*task], error)) {
	for {
		// While the journal cannot write (a full disk), take no new partition:
		// its proof could not be recorded, and its staging may need the space.
		if d.journal.WaitWritable(d.ctx) != nil {
			return
		}
		if staged {
			select {
			case d.stageTokens <- struct{}{}:
			case <-d.ctx.Done():
				return
			}
		}
		it, err := pop(d.ctx)
		if err != nil {
			if staged {
				<-d.stageTokens
			}
			return
		}
		t := it.Value
		t.staged = staged
		if t.job.ctx.Err() != nil {
			d.releaseTask(t)
			continue
		}
		d.synthesize(it, lane)
	}
}

func (d *Daemon) synthesize(it queue.Item[*task], lane string) {
	t := it.Value
	j, ce := t.job, t.job.circ
	queued := time.Now()
	resv, err := d.budget.Reserve(j.ctx, j.class, ce.partitionBytes(), fmt.Sprintf("%s/%d", j.id, t.idx))
	if err != nil {
		if j.ctx.Err() == nil {
			d.failTask(t, fmt.Sprintf("memory budget: %v", err))
		} else {
			// Cancelled while waiting for memory: give its staging token back,
			// or enough such cancels stall synthesis for good.
			d.releaseTask(t)
		}
		return
	}
	t.resv = resv
	// The solver's threads come out of [synthesis] cores; a worker waits here
	// only while the others hold them all.
	threads, err := d.acquireSolverThreads(j.ctx, ce)
	if err != nil {
		d.releaseTask(t)
		return
	}
	coresHeld := true
	releaseCores := func() {
		if coresHeld {
			d.cores.Release(threads)
			coresHeld = false
		}
	}
	defer releaseCores()
	d.mu.Lock()
	d.synthBusy++
	if j.started.IsZero() {
		j.started = time.Now()
		j.state = api.JobRunning
	}
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		d.synthBusy--
		d.mu.Unlock()
	}()

	start := time.Now()
	d.synthesisStarted(t, start)

	// A witness goes to the circuit's synthesizer plugin when it has one, or is
	// solved here; a wire assignment needs no solver (nor the plugin's hints) and
	// is checked here against every constraint, whatever the circuit's source.
	if ce.synth != nil && !circuit.IsAssignment(t.witness) {
		w, err := circuit.ParseWitness(t.witness, ce.c)
		if err != nil {
			d.failTask(t, fmt.Sprintf("synthesis: witness %v", err))
			return
		}
		d.synthesizeWithPlugin(it, lane, w, queued, start) // synthplugin.go
		return
	}
	var synthErr error
	var synthEnd time.Time
	var h sdk.PartitionHandle
	name := fmt.Sprintf("%s-%d-%d", j.id, t.idx, t.attempts)
	if ce.cw != nil && !ce.cw.refused.Load() {
		// W alone, packed (compact.go): the backend evaluates A and B.
		h, synthErr, err = d.writeCompact(t, name, int(threads))
		synthEnd = time.Now()
		if err == nil && synthErr == nil {
			// The reservation held the largest compact file; keep what it took.
			if err := t.resv.Release(ce.shmBytes - uint64(h.Size)); err != nil {
				d.log.Warn("budget release", "error", err)
			}
		}
	} else {
		// The partition's memory is allocated first and the solver writes W, A
		// and B straight into it: no vectors of its own, and no copy of them.
		h, err = d.shm.WriteRaw(name, ce.c.Curve,
			uint64(ce.c.NbWires), uint64(ce.c.NbConstraints), func(W, A, B []byte) error {
				w, err := circuit.SynthesizeInputRaw(ce.c, t.witness, int(threads), W, A, B)
				if err == nil {
					// The finalizer checks the proof against the public part: take
					// it from the witness parsed here, on a synthesis thread, so the
					// finalizer that device slots hand their results to does not
					// parse the witness again.
					t.public, t.publicBytes, err = publicPart(w)
				}
				synthErr, synthEnd = err, time.Now()
				return err
			})
	}
	releaseCores()
	if synthErr != nil {
		// An input that does not satisfy the circuit fails the same way everywhere.
		d.failTask(t, fmt.Sprintf("synthesis: %v", synthErr))
		return
	}
	if err != nil && journal.IsNoSpace(err) {
		d.stagingNoSpace(it, err)
		return
	}
	if err != nil {
		d.failTask(t, fmt.Sprintf("shared memory: %v", err))
		return
	}
	d.staged(it, lane, h, queued, start, synthEnd)
}

// synthesisStarted marks partition t as being synthesized since start.
func (d *Daemon) synthesisStarted(t *task, start time.Time) {
	d.transition(t.job, t.idx, api.JobEvent{Kind: api.EventPartitionSynthesizing, Attempt: t.attempts},
		func(p *api.Partition) { p.SynthStart = start })
}

// staged hands a partition whose file h is written to the device slots: the
// solver's memory goes back, the timeline and metrics get its phases, and it
// joins the ready queue. queued, start and synthEnd are when it began waiting
// for memory, began synthesis, and was solved.
func (d *Daemon) staged(it queue.Item[*task], lane string, h sdk.PartitionHandle, queued, start, synthEnd time.Time) {
	t := it.Value
	j, ce := t.job, t.job.circ
	// The solver's vectors are garbage now; its share of the reservation goes back.
	if err := t.resv.Release(ce.solverBytes); err != nil {
		d.log.Warn("budget release", "error", err)
	}
	t.handle = &h
	end := time.Now()
	d.updatePart(j, t.idx, func(p *api.Partition) { p.SynthEnd = end })
	d.record(t, lane, timeline.PhaseBudgetWait, queued, start, 0)
	d.record(t, lane, timeline.PhaseSynthesis, start, synthEnd, 0)
	// The stage event carries the size of the file handed to the backend.
	d.recordEvent(t, timeline.Event{Lane: lane, Phase: timeline.PhaseStage, Start: synthEnd, End: end, Bytes: uint64(h.Size)})
	d.metrics.ObserveSynthesis(j.class.String(), synthEnd.Sub(start))
	if err := d.readyQ.Push(it); err != nil {
		d.failTask(t, fmt.Sprintf("ready queue: %v", err))
		return
	}
	if j.ctx.Err() != nil {
		// Cancelled while this partition was synthesized: endJob emptied the
		// queues before the push, so drop it here, or its file and memory wait
		// for a device slot behind every other queued partition. (endJob cancels
		// j.ctx before it empties the queues, so one of the two removes it.)
		for _, it := range d.readyQ.Remove(j.seq) {
			d.releaseTask(it.Value)
		}
	}
}

// deviceSlot keeps one partition outstanding on a device. A device has as many
// slots as partitions in flight, so the next partition is staged and dispatched
// while the current one computes.
func (d *Daemon) deviceSlot(de *deviceEntry) {
	for {
		if d.ctx.Err() != nil {
			return
		}
		it, err := d.nextFor(de) // placement.go: health, CPU fallback, retries elsewhere
		if err != nil {
			return
		}
		t := it.Value
		d.unstage(t) // dispatched: synthesis may stage the next one
		if t.job.ctx.Err() != nil {
			d.releaseTask(t)
			continue
		}
		d.prove(de, it)
	}
}

func (d *Daemon) prove(de *deviceEntry, it queue.Item[*task]) {
	t := it.Value
	j, ce := t.job, t.job.circ
	t.attempts++
	t.device = de.dev.Name()
	start := time.Now()
	d.dispatched(t, start)
	d.record(t, t.device, timeline.PhaseDispatch, start, start, 0)

	ctx, cancel := context.WithTimeout(j.ctx, d.proveDeadline(ce))
	coldKey := !de.dev.HasKey(ce.key.ID)
	res, err := de.dev.Prove(ctx, ce.key, *t.handle)
	cancel()
	end := time.Now()
	if err == nil {
		de.busy.add(end, res.DeviceBusy)
		// Backends time phases from receiving the request, which follows any key load.
		received := end.Add(-res.Wall)
		if coldKey {
			d.record(t, t.device, timeline.PhaseKeyLoad, start, received, 0)
		}
		d.metrics.ObserveProve(t.device, start, end, res)
		for _, ph := range res.Phases {
			d.record(t, t.device, ph.Name, received.Add(ph.Start), received.Add(ph.Start+ph.Wall), ph.DeviceBusy)
		}
	}
	if errors.Is(err, context.DeadlineExceeded) && j.ctx.Err() == nil {
		// A backend that does not answer in time is treated as crashed.
		d.log.Error("backend did not answer within its deadline; killing it", "device", t.device, "job", j.id, "partition", t.idx)
		de.dev.KillHung(fmt.Sprintf("backend did not answer a proof within %s; killed", d.proveDeadline(ce)))
		err = fmt.Errorf("device %s did not answer within %s: %w", t.device, d.proveDeadline(ce), device.ErrCrashed)
	}
	if refusedForGood(err) {
		// Marked here, before this device's dispatcher looks for its next
		// partition, not in the finalizer: it takes none of the key's again.
		d.refuseKey(de, ce.key.ID, err)
	}
	// The backend's working memory is free once it returns.
	if t.resv != nil {
		t.resv.Release(min(ce.backendBytes, t.resv.Held()))
	}
	t.result = proveOutcome{res: res, err: err, proveStart: start, proveEnd: end}
	d.updatePart(j, t.idx, func(p *api.Partition) { p.ProveEnd = end })
	select {
	case d.finalQ <- t:
	case <-d.ctx.Done():
		d.releaseTask(t)
	}
}

// dispatched marks partition t as proving on its device (t.device, attempt
// t.attempts) since start.
func (d *Daemon) dispatched(t *task, start time.Time) {
	d.transition(t.job, t.idx, api.JobEvent{Kind: api.EventPartitionProving, Attempt: t.attempts, Device: t.device}, func(p *api.Partition) {
		p.Attempts = t.attempts
		p.Device = t.device
		p.ProveStart = start
	})
}

// publicPart returns the public part of a full witness, as a witness to verify
// proofs with and in the encoding the journal stores.
func publicPart(full witness.Witness) (witness.Witness, []byte, error) {
	pub, err := finalize.PublicWitness(full)
	if err != nil {
		return nil, nil, err // says "public witness: ..."
	}
	b, err := pub.MarshalBinary()
	if err != nil {
		return nil, nil, fmt.Errorf("public witness: %w", err)
	}
	return pub, b, nil
}

// proveDeadline bounds one Prove call, from the partition's size: two minutes
// plus 50 µs per constraint, about twice what the CPU backend takes on the 2-core
// dev machine (BENCHMARKS.md, "Heap per proof"), so only a hung backend meets it.
func (d *Daemon) proveDeadline(ce *circuitEntry) time.Duration {
	if t := d.cfg.Retry.ProveTimeout; t > 0 {
		return t
	}
	return 2*time.Minute + time.Duration(ce.c.DomainSize)*50*time.Microsecond
}

// finalizer verifies proofs, records them and assembles jobs.
func (d *Daemon) finalizer() {
	for {
		select {
		case <-d.ctx.Done():
			return
		case t := <-d.finalQ:
			d.finalize(t)
		}
	}
}

func (d *Daemon) finalize(t *task) {
	j, ce := t.job, t.job.circ
	if j.ctx.Err() != nil {
		d.releaseTask(t)
		return
	}
	out := t.result
	if errors.Is(out.err, device.ErrNotServing) {
		d.putBack(t, out.err)
		return
	}
	if errors.Is(out.err, device.ErrCompactRefused) {
		d.compactRefused(t, out.err) // compact.go
		return
	}
	if out.err != nil {
		reason := fmt.Sprintf("attempt %d on %s: %v", t.attempts, t.device, out.err)
		if refusedForGood(out.err) {
			d.keyTooLarge(t, reason) // placement.go
			return
		}
		d.retryOrFail(t, reason, sdk.IsRetryable(out.err) || errors.Is(out.err, device.ErrCrashed))
		return
	}
	start := time.Now()
	if _, err := finalize.Verify(ce.c.VK, out.res.Proof, t.public); err != nil {
		if lie := d.checkPluginPartition(t); lie != "" { // synthplugin.go
			d.failTask(t, lie)
			return
		}
		d.log.Error("device returned a proof that does not verify", "device", t.device, "job", j.id, "partition", t.idx, "error", err)
		d.metrics.VerifyFailure(t.device)
		d.retryOrFail(t, fmt.Sprintf("attempt %d on %s: %v", t.attempts, t.device, err), true)
		return
	}
	// Whether the job is complete is read from the job's view below, not from the
	// count this returns: finalizers commit together, and the one that sees zero
	// remaining may get there before another has updated its partition's view.
	_, err := d.journal.MarkPartitionDone(j.id, t.idx, out.res.Proof, t.publicBytes)
	if errors.Is(err, journal.ErrJobFinished) {
		// The job ended (a cancel) while this proof was verified: it is not wanted.
		d.releaseTask(t)
		return
	}
	if errors.Is(err, journal.ErrClosed) {
		// The daemon stops while the disk is full: the partition is still
		// pending in the journal, and the next start proves it again.
		d.releaseTask(t)
		return
	}
	if err != nil && !errors.Is(err, journal.ErrAlreadyProved) {
		d.failTask(t, fmt.Sprintf("journal: %v", err))
		return
	}
	end := time.Now()
	d.record(t, "", timeline.PhaseFinalize, start, end, 0)
	d.releaseTask(t)
	ev := api.JobEvent{Attempt: t.attempts, Device: t.device}
	if d.partitionVerified(j, t.idx, end, ev) {
		d.endJob(j, api.JobDone, "")
	}
}

// retryOrFail records a failed attempt, then requeues the partition (keeping its
// place in the order and its staged data) or fails its job after MaxAttempts.
func (d *Daemon) retryOrFail(t *task, reason string, retryable bool) {
	j := t.job
	t.reasons = append(t.reasons, reason)
	if t.failedOn == nil {
		t.failedOn = map[string]bool{}
	}
	t.failedOn[t.device] = true // placement.go sends the retry elsewhere when it can
	if _, err := d.journal.RecordAttempt(j.id, t.idx, reason); err != nil {
		d.log.Warn("recording attempt", "job", j.id, "partition", t.idx, "error", err)
	}
	maxAttempts := max(1, d.cfg.Retry.MaxAttempts)
	if !retryable || t.attempts >= maxAttempts {
		d.failTask(t, "")
		return
	}
	d.log.Warn("partition attempt failed; retrying", "job", j.id, "partition", t.idx, "reason", reason)
	d.metrics.Retry(j.class.String())
	d.transition(j, t.idx, api.JobEvent{Kind: api.EventPartitionRetried, Attempt: t.attempts, Device: t.device, Reason: reason},
		func(p *api.Partition) { p.Error = reason })
	backoff := d.cfg.Retry.BackoffBase << min(t.attempts-1, 10)
	if backoff > d.cfg.Retry.BackoffMax && d.cfg.Retry.BackoffMax > 0 {
		backoff = d.cfg.Retry.BackoffMax
	}
	item := queueItem(t)
	requeue := func() {
		if j.ctx.Err() != nil {
			d.releaseTask(t)
			return
		}
		q := d.readyQ
		if t.handle == nil {
			q = d.synthQ
		}
		if err := q.Requeue(item); err != nil {
			d.failTask(t, fmt.Sprintf("requeue: %v", err))
		}
	}
	if backoff <= 0 {
		requeue()
		return
	}
	// Wait in a pipeline goroutine (retryOrFail runs in the finalizer's), so Close
	// waits for it and it ends at once when the job or the daemon stops: a bare
	// timer could fire after Close into a closed journal and shared-memory dir.
	d.goRun(func() {
		select {
		case <-time.After(backoff):
			requeue()
		case <-j.ctx.Done():
			d.releaseTask(t)
		}
	})
}

// queueItem is t as the synthesis and ready queues hold it.
func queueItem(t *task) queue.Item[*task] {
	return queue.Item[*task]{Class: t.job.class, JobSeq: t.job.seq, Partition: t.idx, Value: t}
}

// putBack returns a staged partition to the ready queue without spending an
// attempt: the device it was dispatched to went down before its backend had
// it, so placement gives it to a device that serves.
func (d *Daemon) putBack(t *task, why error) {
	j := t.job
	t.attempts--
	d.log.Warn("device went down before proving a partition; it goes back to the queue", "job", j.id, "partition", t.idx, "device", t.device, "error", why)
	d.transition(j, t.idx, api.JobEvent{Kind: api.EventPartitionQueued, Attempt: t.attempts, Device: t.device, Reason: why.Error()}, func(p *api.Partition) {
		p.Attempts = t.attempts
		p.Device = ""
		p.Error = why.Error()
	})
	if err := d.readyQ.Requeue(queueItem(t)); err != nil {
		d.failTask(t, fmt.Sprintf("requeue: %v", err))
	}
}

// stagingNoSpace puts back a partition whose memfd could not be written for
// lack of space (ENOSPC: memory, or the memory cgroup's limit): no fault of the partition, so it costs no attempt,
// and it is synthesized again after a backoff, when space may have returned.
// Its watchers see it queued again, with the reason.
func (d *Daemon) stagingNoSpace(it queue.Item[*task], err error) {
	t, j := it.Value, it.Value.job
	d.log.Warn("no space to stage a partition; it waits and is synthesized again", "job", j.id, "partition", t.idx, "error", err)
	d.releaseTask(t)
	reason := "waiting for space to stage: " + err.Error()
	d.transition(j, t.idx, api.JobEvent{Kind: api.EventPartitionQueued, Attempt: t.attempts, Reason: reason},
		func(p *api.Partition) { p.Error = reason })
	backoff := max(d.cfg.Retry.BackoffMax, time.Second)
	d.goRun(func() {
		select {
		case <-time.After(backoff):
			if err := d.synthQ.Requeue(it); err != nil {
				d.failTask(t, fmt.Sprintf("requeue: %v", err))
			}
		case <-j.ctx.Done():
		}
	})
}

// failTask fails a partition for good, and with it its job. reason, when set, is
// added to the partition's attempts; the job's error lists every attempt.
func (d *Daemon) failTask(t *task, reason string) {
	j := t.job
	if reason != "" {
		t.reasons = append(t.reasons, reason)
		if _, err := d.journal.RecordAttempt(j.id, t.idx, reason); err != nil {
			d.log.Warn("recording attempt", "job", j.id, "partition", t.idx, "error", err)
		}
	}
	d.releaseTask(t)
	msg := fmt.Sprintf("partition %d failed after %d attempt(s): %s", t.idx, len(t.reasons), strings.Join(t.reasons, "; "))
	d.transition(j, t.idx, api.JobEvent{Kind: api.EventPartitionFailed, Attempt: t.attempts, Device: t.device, Reason: msg}, func(p *api.Partition) {
		if len(t.reasons) > 0 {
			p.Error = t.reasons[len(t.reasons)-1]
		}
	})
	d.endJob(j, api.JobFailed, msg)
}

// unstage returns a partition's staging token, once it is dispatched (or dropped).
func (d *Daemon) unstage(t *task) {
	if t.staged {
		t.staged = false
		<-d.stageTokens
	}
}

// releaseTask removes a partition's shared-memory file and returns its memory.
func (d *Daemon) releaseTask(t *task) {
	d.unstage(t)
	if t.handle != nil {
		if err := d.shm.Remove(*t.handle); err != nil {
			d.log.Warn("removing shared-memory file", "path", t.handle.Path, "error", err)
		}
		t.handle = nil
	}
	if t.resv != nil {
		t.resv.ReleaseAll()
		t.resv = nil
	}
}

// record writes one timeline event when a timeline is configured.
func (d *Daemon) record(t *task, lane, phase string, start, end time.Time, busy time.Duration) {
	d.recordEvent(t, timeline.Event{Lane: lane, Phase: phase, Start: start, End: end, DeviceBusy: busy})
}

// recordEvent writes ev, one of t's, filling in what names t.
func (d *Daemon) recordEvent(t *task, ev timeline.Event) {
	if d.tl == nil {
		return
	}
	ev.Job, ev.Partition, ev.Attempt, ev.Request = t.job.id, t.idx, t.attempts, t.job.reqID
	ev.Class, ev.Circuit = t.job.class.String(), t.job.circ.name
	d.tl.Record(ev)
}

// busyWindow sums device-busy time reported over a sliding window.
type busyWindow struct {
	mu     sync.Mutex
	window time.Duration
	marks  []busyMark
}

type busyMark struct {
	at   time.Time
	busy time.Duration
}

func newBusyWindow(w time.Duration) *busyWindow { return &busyWindow{window: w} }

func (b *busyWindow) add(at time.Time, busy time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.marks = append(b.marks, busyMark{at, busy})
	b.pruneLocked(at)
}

func (b *busyWindow) pruneLocked(now time.Time) {
	i := 0
	for i < len(b.marks) && now.Sub(b.marks[i].at) > b.window {
		i++
	}
	b.marks = b.marks[i:]
}

// percent returns the busy share of the window ending now, 0..100.
func (b *busyWindow) percent(now time.Time, since time.Time) float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pruneLocked(now)
	var sum time.Duration
	for _, m := range b.marks {
		sum += m.busy
	}
	span := b.window
	if el := now.Sub(since); el < span {
		span = el
	}
	if span <= 0 {
		return 0
	}
	return min(100, 100*float64(sum)/float64(span))
}

// acquireSolverThreads takes from [synthesis] cores the threads one
// partition of ce is solved with, and returns how many it took.
//
// An operator's threads setting is taken as it is. By default (threads = 0)
// the daemon sizes it: a circuit whose levels are narrow (sdk/solve's
// ParallelShare: a hash, a chain) solves no faster on more threads, so it gets
// one and the cores go to other partitions; a circuit with wide levels gets
// the cores divided by the partitions waiting for synthesis or in it, so a
// lone partition is solved on many threads and a backlog on one each, which
// is what keeps a device fed (many solvers at once, not one wide one). It
// takes what is free rather than wait for more.
func (d *Daemon) acquireSolverThreads(ctx context.Context, ce *circuitEntry) (int64, error) {
	cores := int64(d.synthCores)
	if n := d.cfg.Synthesis.Threads; n > 0 {
		threads := min(int64(n), cores)
		return threads, d.cores.Acquire(ctx, threads)
	}
	want := int64(1)
	if ce.c.SolverParallelShare() >= wideCircuitShare {
		d.mu.Lock()
		busy := d.synthBusy
		d.mu.Unlock()
		want = max(1, cores/int64(busy+d.synthQ.Len()+1))
	}
	for n := want; n > 1; n-- {
		if d.cores.TryAcquire(n) {
			return n, nil
		}
	}
	return 1, d.cores.Acquire(ctx, 1)
}

// wideCircuitShare is the share of a circuit's instructions in wide levels
// from which a partition alone gets more than one solver thread.
const wideCircuitShare = 0.5
