package daemon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/budget"
	"github.com/zkhost/zkhost/host/journal"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// errStopping answers calls that reach a daemon that is stopping or stopped.
var errStopping = api.Unavailablef("the zkhost daemon is stopping; unfinished jobs resume when it starts again")

// stopping returns errStopping once the daemon has begun to stop (Close cancels
// d.ctx first): API calls are refused rather than reach a journal, devices and
// shared memory that are closing.
func (d *Daemon) stopping() error {
	if d.ctx.Err() != nil {
		return errStopping
	}
	return nil
}

// checkJobCall is what every API call on one job checks first: the daemon is
// not stopping, and the caller may see the job.
func (d *Daemon) checkJobCall(ctx context.Context, jobID string) error {
	if err := d.stopping(); err != nil {
		return err
	}
	return d.visible(ctx, jobID)
}

// subscriberBuffer is how many events an Await client may fall behind before it is
// cut off (it can reconnect and start again from a snapshot).
const subscriberBuffer = 4096

// liveJob is the daemon's in-memory view of an unfinished or recent job; the
// journal holds the durable truth.
type liveJob struct {
	id      string
	reqID   string
	owner   string // the identity that submitted it (tenants.go)
	seq     uint64
	circ    *circuitEntry
	class   api.Class
	created time.Time
	ctx     context.Context
	cancel  context.CancelFunc

	// Guarded by Daemon.mu.
	// ending is set by the first endJob call: from then on no partition
	// changes, and the job's final state waits only for its event (see ended).
	ending   bool
	state    api.JobState
	err      string
	started  time.Time
	finished time.Time
	parts    []api.Partition
	subs     map[chan api.JobEvent]struct{}
}

// task is one partition on its way through the pipeline.
type task struct {
	job      *liveJob
	idx      int
	witness  []byte // a gnark full witness, or a wire assignment (circuit.IsAssignment)
	staged   bool   // holds a staging token (see Daemon.stageTokens)
	attempts int
	reasons  []string
	failedOn map[string]bool // devices an attempt failed on (written before a requeue)

	// synthAttempts counts the calls to the circuit's synthesizer plugin (none
	// for the built-in solver), which a crashing or hanging plugin retries.
	synthAttempts int

	// Set as the partition moves on.
	resv   *budget.Reservation
	handle *sdk.PartitionHandle // its staged shared-memory file
	// The witness's public part, taken at synthesis, for the finalizer to verify
	// the proof with and to journal.
	public      witness.Witness
	publicBytes []byte
	device      string
	result      proveOutcome
}

// Submit implements api.Service.
func (d *Daemon) Submit(ctx context.Context, req api.SubmitRequest) (api.Job, error) {
	if err := d.stopping(); err != nil {
		return api.Job{}, err
	}
	ce, err := d.circuitFor(req.Circuit)
	if err != nil {
		return api.Job{}, err
	}
	class := ce.class
	if req.Class != api.ClassUnspecified {
		class = req.Class
	}
	inputs, noun := req.Inputs()
	assignments := len(req.Assignments) > 0
	if err := ce.checkSolvable(assignments); err != nil {
		return api.Job{}, err
	}
	for i, in := range inputs {
		if err := circuit.CheckInput(in, assignments, ce.c); err != nil {
			return api.Job{}, api.InvalidArgumentf("%s %d %v", noun, i, err)
		}
	}
	if need := ce.partitionBytes(); !d.budget.Fits(class, need) {
		return api.Job{}, api.TooLarge(fmt.Sprintf("a partition of circuit %s (class %s)", ce.name, class), need, d.budget.Limit(class))
	}
	req.Class = class
	if err := d.anyServing(); err != nil {
		return api.Job{}, err
	}
	owner := api.IdentityFrom(ctx).Name
	if err := d.admitSpace(owner, req); err != nil {
		return api.Job{}, err
	}
	if lim := d.cfg.Limits; lim.QueuedPartitions > 0 || lim.QueuedPartitionsPerClient > 0 {
		// Check and accept under one lock, so that concurrent submissions
		// cannot pass a limit together.
		d.admitMu.Lock()
		defer d.admitMu.Unlock()
		if req.RequestID == "" || d.jobForRequest(owner, req.RequestID) == "?" {
			if err := d.checkLimits(owner, len(inputs), class); err != nil {
				return api.Job{}, err
			}
		}
	}
	rec, existing, err := d.journal.CreateJob(journal.Job{
		Owner:         owner,
		RequestID:     req.RequestID,
		ContentDigest: req.Digest(),
		Circuit:       req.Circuit,
		Class:         class,
		Partitions:    len(inputs),
	}, inputs) // an assignment is told from a witness by its magic (circuit.IsAssignment)
	if errors.Is(err, journal.ErrRequestIDConflict) {
		// CreateJob returns no job with this error; find the one the id names.
		return api.Job{}, api.Conflictf("request id %q already names job %s, submitted with other content", req.RequestID, d.jobForRequest(owner, req.RequestID))
	}
	if err != nil {
		return api.Job{}, spaceRefusal(fmt.Errorf("journal: %w", err))
	}
	if existing {
		return d.Get(ctx, rec.ID)
	}
	j := d.startJob(rec, ce, class, nil)
	for i, in := range inputs {
		d.enqueue(&task{job: j, idx: i, witness: in})
	}
	d.log.Info("job accepted", "job", rec.ID, "circuit", ce.name, "class", class, "partitions", len(inputs), "input", noun)
	return d.jobView(j, false), nil
}

// CheckSubmit implements api.Service: the checks of Submit that need no input
// bytes, run on a streamed submission's header before its bytes are accepted.
func (d *Daemon) CheckSubmit(ctx context.Context, h api.SubmitHeader) error {
	if err := d.stopping(); err != nil {
		return err
	}
	ce, err := d.circuitFor(h.Circuit)
	if err != nil {
		return err
	}
	if err := ce.checkSolvable(h.Assignments); err != nil {
		return err
	}
	lo, hi := circuit.InputSizeRange(ce.c, h.Assignments)
	want := strconv.FormatInt(lo, 10)
	if hi != lo {
		want = fmt.Sprintf("%d to %d (a compact one: docs/assignment.md)", lo, hi)
	}
	var total uint64
	for i, n := range h.InputSizes {
		if n < lo || n > hi {
			return api.InvalidArgumentf("%s %d is declared as %d bytes, circuit %s wants %s", h.Noun(), i, n, ce.name, want)
		}
		total += uint64(n)
	}
	class := ce.class
	if h.Class != api.ClassUnspecified {
		class = h.Class
	}
	if need := ce.partitionBytes(); !d.budget.Fits(class, need) {
		return api.TooLarge(fmt.Sprintf("a partition of circuit %s (class %s)", ce.name, class), need, d.budget.Limit(class))
	}
	if err := d.anyServing(); err != nil {
		return err
	}
	owner := api.IdentityFrom(ctx).Name
	retry := h.RequestID != "" && d.jobForRequest(owner, h.RequestID) != "?"
	if err := d.journal.Admit(total); err != nil && !(retry && errors.Is(err, journal.ErrNoSpace)) {
		return spaceRefusal(err)
	}
	if !retry {
		if err := d.checkLimits(owner, len(h.InputSizes), class); err != nil {
			return err
		}
	}
	return nil
}

// AdmitStream implements api.Service. A streamed job's inputs sit in this
// process from their first byte until Submit journals the job, so they are
// memory the host commits like any other: they are reserved from the budget
// in the job's class before the client may send them, and a header may
// declare at most limits.stream_inputs of them. The reservation is one
// request for the whole declared size, not one per input as bytes arrive, so
// that streams never each hold part of the budget while waiting for the rest
// (which could leave them all waiting on each other); the wait ends with ctx,
// or when the daemon stops.
func (d *Daemon) AdmitStream(ctx context.Context, h api.SubmitHeader) (func(), error) {
	if err := d.stopping(); err != nil {
		return nil, err
	}
	nouns := "witnesses"
	if h.Assignments {
		nouns = "wire assignments"
	}
	if l := d.cfg.Limits.StreamInputs; l > 0 && len(h.InputSizes) > l {
		return nil, &api.ResourceExhaustedError{Need: uint64(len(h.InputSizes)), Limit: uint64(l), Message: fmt.Sprintf(
			"job refused: the stream declares %d %s, more than limits.stream_inputs = %d allows one stream; submit it as several jobs, or raise the limit in the daemon's config",
			len(h.InputSizes), nouns, l)}
	}
	ce, err := d.circuitFor(h.Circuit)
	if err != nil {
		return nil, err
	}
	class := ce.class
	if h.Class != api.ClassUnspecified {
		class = h.Class
	}
	var total uint64
	for _, n := range h.InputSizes {
		total += uint64(n) // CheckSubmit held each to the circuit's input size
	}
	owner := ownerName(api.IdentityFrom(ctx).Name)
	// The wait ends when the client goes away or the daemon stops.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(d.ctx, cancel)
	defer stop()
	resv, err := d.budget.Reserve(wctx, class, total,
		fmt.Sprintf("streamed input of %s (%d %s of circuit %s)", owner, len(h.InputSizes), nouns, ce.name))
	switch {
	case errors.Is(err, budget.ErrTooLarge):
		return nil, &api.ResourceExhaustedError{Need: total, Limit: d.budget.Limit(class), Message: fmt.Sprintf(
			"job refused: its %d streamed %s take %s of host memory until the job is journaled, more than the %s the budget can ever grant class %s; submit it as several jobs",
			len(h.InputSizes), nouns, budget.FormatBytes(total), budget.FormatBytes(d.budget.Limit(class)), class)}
	case err != nil && d.ctx.Err() != nil:
		return nil, errStopping
	case err != nil:
		return nil, err // the client went away: a context error
	}
	return func() { resv.ReleaseAll() }, nil
}

// checkSolvable refuses witnesses for a circuit this daemon cannot solve: they are
// solved here (unless the circuit's synthesizer plugin solves them, with the hints
// it links), so they are refused at submit, not once per partition. Wire
// assignments come solved.
func (ce *circuitEntry) checkSolvable(assignments bool) error {
	if assignments || ce.synth != nil {
		return nil
	}
	if err := ce.c.CheckSolvable(); err != nil {
		return api.InvalidArgumentf("%v", err)
	}
	return nil
}

// circuitFor returns the circuit named name, or an ErrNotFound that says which
// circuits the daemon serves.
func (d *Daemon) circuitFor(name string) (*circuitEntry, error) {
	ce, ok := d.circuits[name]
	if !ok && len(d.circuits) == 0 {
		return nil, api.NotFoundf("unknown circuit %q: this daemon serves no circuits (add a [[circuit]] to its config, or put key sets in %s with `zkhost keygen --out` or `zkhost key import --out`, and restart it)",
			name, filepath.Join(d.cfg.StateDir, "keys"))
	}
	if !ok {
		return nil, api.NotFoundf("unknown circuit %q (this daemon serves: %s)", name, strings.Join(d.circuitNames(), ", "))
	}
	return ce, nil
}

// anyServing refuses a new job when no device can prove now: every device is
// down, unhealthy or without usable hardware. The error names each device and
// why.
func (d *Daemon) anyServing() error {
	var why []string
	for _, de := range d.devices {
		if de.serving() {
			return nil
		}
		ds := d.deviceStatus(de, time.Now())
		why = append(why, fmt.Sprintf("%s: %s", ds.Name, ds.Error))
	}
	return api.Unavailablef("no healthy device can prove this job now, so it was not accepted (%s); submit again once a device serves (zkhost status shows them)", strings.Join(why, "; "))
}

// admitSpace refuses a new job while the journal's storage is short of space,
// or when its directory has too little free for the job's witnesses. A retried
// submission of a job already accepted passes: the journal finds it without
// writing.
func (d *Daemon) admitSpace(owner string, req api.SubmitRequest) error {
	var size uint64
	inputs, _ := req.Inputs()
	for _, in := range inputs {
		size += uint64(len(in))
	}
	err := d.journal.Admit(size)
	if err != nil && req.RequestID != "" && errors.Is(err, journal.ErrNoSpace) && d.jobForRequest(owner, req.RequestID) != "?" {
		return nil
	}
	return spaceRefusal(err)
}

// spaceRefusal turns the journal's NoSpaceError into ResourceExhausted; other
// errors pass unchanged.
func spaceRefusal(err error) error {
	var nse *journal.NoSpaceError
	if errors.As(err, &nse) {
		return api.TooLittleSpace(nse.Need, nse.Free, "new jobs are refused: "+nse.Error())
	}
	return err
}

// jobForRequest returns the id of the job owner submitted with request id
// reqID, or "?" when none is found.
func (d *Daemon) jobForRequest(owner, reqID string) string {
	if rec, ok, err := d.journal.JobForRequest(owner, reqID); err == nil && ok {
		return rec.ID
	}
	return "?"
}

// startJob registers a live job. done lists partitions already proved (on recovery).
func (d *Daemon) startJob(rec journal.Job, ce *circuitEntry, class api.Class, done map[int]bool) *liveJob {
	ctx, cancel := context.WithCancel(d.ctx)
	j := &liveJob{
		id: rec.ID, reqID: rec.RequestID, owner: rec.Owner, seq: rec.Seq, circ: ce, class: class, created: rec.Created,
		ctx: ctx, cancel: cancel, state: api.JobQueued,
		parts: make([]api.Partition, rec.Partitions),
		subs:  map[chan api.JobEvent]struct{}{},
	}
	now := time.Now()
	for i := range j.parts {
		j.parts[i] = api.Partition{Index: i, State: api.PartitionQueued, QueuedAt: now}
		if done[i] {
			j.parts[i].State = api.PartitionVerified
		}
	}
	if len(done) > 0 {
		j.state = api.JobRunning
	}
	d.mu.Lock()
	d.jobs[j.id] = j
	d.mu.Unlock()
	return j
}

// enqueue puts a partition in the synthesis queue.
func (d *Daemon) enqueue(t *task) {
	// The event goes first: once pushed, a worker may take the task (and change
	// it) and report its next step before this one.
	d.transition(t.job, t.idx, api.JobEvent{Kind: api.EventPartitionQueued, Attempt: t.attempts}, nil)
	if err := d.synthQ.Push(queueItem(t)); err != nil {
		d.log.Error("queueing partition", "job", t.job.id, "partition", t.idx, "error", err)
	}
}

// recover resumes the journal's unfinished jobs from their unproved partitions.
func (d *Daemon) recover() error {
	jobs, err := d.journal.Unfinished()
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	sort.Slice(jobs, func(a, b int) bool { return jobs[a].Seq < jobs[b].Seq })
	for _, rec := range jobs {
		ce, ok := d.circuits[rec.Circuit]
		if !ok {
			// A config that lost a circuit (a mistake, a key directory moved) must
			// not cost the queued work: the job waits in the journal for a restart
			// that serves the circuit again, or for a client to cancel it.
			why := fmt.Sprintf("waiting for circuit %q, which this daemon does not serve; it resumes when a restart serves it again (or cancel it)", rec.Circuit)
			d.log.Warn("job parked: its circuit is not served", "job", rec.ID, "circuit", rec.Circuit, "unproved", len(rec.Pending), "of", rec.Partitions)
			d.mu.Lock()
			d.parked[rec.ID] = why
			d.mu.Unlock()
			continue
		}
		class := rec.Class
		if class == api.ClassUnspecified { // journaled before jobs had classes
			class = ce.class
		}
		pending := map[int]bool{}
		for _, i := range rec.Pending {
			pending[i] = true
		}
		done := map[int]bool{}
		for i := range rec.Partitions {
			if !pending[i] {
				done[i] = true
			}
		}
		j := d.startJob(rec, ce, class, done)
		if len(rec.Pending) == 0 {
			// Every proof was recorded but the host died before ending the job:
			// nothing is left to queue, so end it here or it runs forever.
			d.log.Info("resuming job: every partition was already proved", "job", rec.ID)
			d.endJob(j, api.JobDone, "")
			continue
		}
		parts, err := d.journal.Partitions(rec.ID)
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		for _, i := range rec.Pending {
			w, err := d.journal.Witness(rec.ID, i)
			if err != nil {
				return fmt.Errorf("journal: job %s partition %d: %w", rec.ID, i, err)
			}
			t := &task{job: j, idx: i, witness: w}
			if i < len(parts) {
				t.reasons = append(t.reasons, parts[i].Attempts...)
				t.attempts = len(parts[i].Attempts)
			}
			d.enqueue(t)
		}
		d.log.Info("resuming job", "job", rec.ID, "circuit", rec.Circuit, "unproved", len(rec.Pending), "of", rec.Partitions)
	}
	return nil
}

// Get implements api.Service.
func (d *Daemon) Get(ctx context.Context, jobID string) (api.Job, error) {
	if err := d.checkJobCall(ctx, jobID); err != nil {
		return api.Job{}, err
	}
	d.mu.Lock()
	j, ok := d.jobs[jobID]
	d.mu.Unlock()
	if ok {
		return d.jobView(j, true), nil
	}
	rec, err := d.journal.GetJob(jobID)
	if errors.Is(err, journal.ErrNotFound) {
		return api.Job{}, api.NotFoundf("no job %q", jobID)
	}
	if err != nil {
		return api.Job{}, err
	}
	return d.recordView(rec, true)
}

// parkedReason says why job id waits outside the pipeline ("" when it does not).
func (d *Daemon) parkedReason(id string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.parked[id]
}

// jobView converts a live job; proofs come from the journal when the job is done.
func (d *Daemon) jobView(j *liveJob, withProofs bool) api.Job {
	d.mu.Lock()
	out := d.jobViewLocked(j)
	d.mu.Unlock()
	if withProofs && out.State == api.JobDone {
		d.attachProofs(&out)
	}
	return out
}

// jobViewLocked is jobView without proofs, for a caller holding d.mu.
func (d *Daemon) jobViewLocked(j *liveJob) api.Job {
	return api.Job{
		ID: j.id, RequestID: j.reqID, Circuit: j.circ.name, Class: j.class, State: j.state,
		CreatedAt: j.created, StartedAt: j.started, FinishedAt: j.finished, Error: j.err,
		Partitions: append([]api.Partition(nil), j.parts...),
	}
}

func (d *Daemon) attachProofs(out *api.Job) {
	proofs, err := d.storedProofs(out.ID, out.Circuit) // storedproofs.go
	if errors.Is(err, journal.ErrDamaged) {
		d.failDamaged(out, err)
		return
	}
	if err != nil {
		d.log.Warn("reading proofs", "job", out.ID, "error", err)
		return
	}
	withProofs(out, proofs)
}

// withProofs puts each stored proof into its partition of out.
func withProofs(out *api.Job, proofs []journal.Proof) {
	for _, p := range proofs {
		if p.Index >= 0 && p.Index < len(out.Partitions) {
			out.Partitions[p.Index].Proof = p.Proof
			out.Partitions[p.Index].PublicWitness = p.Public
			out.Partitions[p.Index].State = api.PartitionVerified
		}
	}
}

// recordView converts a journal record of a job no longer live.
func (d *Daemon) recordView(rec journal.Job, withProofs bool) (api.Job, error) {
	out := api.Job{
		ID: rec.ID, RequestID: rec.RequestID, Circuit: rec.Circuit, Class: rec.Class,
		State: rec.State, CreatedAt: rec.Created, FinishedAt: rec.Finished, Error: rec.Error,
	}
	if why := d.parkedReason(rec.ID); why != "" && !rec.State.Terminal() {
		out.Error = why
	}
	parts, err := d.journal.Partitions(rec.ID)
	if err != nil {
		return api.Job{}, err
	}
	for i, p := range parts {
		// The journal records failed attempts; a proved partition had one more.
		ap := api.Partition{Index: i, Attempts: len(p.Attempts)}
		if p.State == journal.PartitionProved {
			ap.Attempts++
		}
		ap.State = rec.State.RecordedPartitionState(p.State == journal.PartitionProved)
		if len(p.Attempts) > 0 {
			ap.Error = p.Attempts[len(p.Attempts)-1]
		}
		out.Partitions = append(out.Partitions, ap)
	}
	if withProofs && out.State == api.JobDone {
		d.attachProofs(&out)
	}
	return out, nil
}

// List implements api.Service.
func (d *Daemon) List(ctx context.Context, f api.ListFilter) ([]api.Job, error) {
	if err := d.stopping(); err != nil {
		return nil, err
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	jf := journal.Filter{Limit: limit, Owner: listOwner(ctx)}
	if f.State != api.JobStateUnspecified {
		jf.States = []api.JobState{f.State}
	}
	recs, err := d.journal.ListJobs(jf)
	if err != nil {
		return nil, err
	}
	var out []api.Job
	// The journal lists oldest first; the API promises newest first.
	slices.Reverse(recs)
	for _, rec := range recs {
		d.mu.Lock()
		j, live := d.jobs[rec.ID]
		d.mu.Unlock()
		if live {
			out = append(out, d.jobView(j, false))
			continue
		}
		v, err := d.recordView(rec, false)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Cancel implements api.Service: queued partitions are dropped, in-flight ones are
// cancelled in their backend, and their memory is released.
func (d *Daemon) Cancel(ctx context.Context, jobID string) (api.Job, error) {
	if err := d.checkJobCall(ctx, jobID); err != nil {
		return api.Job{}, err
	}
	d.mu.Lock()
	j, ok := d.jobs[jobID]
	_, parked := d.parked[jobID]
	d.mu.Unlock()
	if parked {
		if err := d.journal.SetJobState(jobID, api.JobCancelled, "cancelled by a client"); err != nil && !errors.Is(err, journal.ErrJobFinished) {
			return api.Job{}, fmt.Errorf("journal: %w", err)
		}
		d.mu.Lock()
		delete(d.parked, jobID)
		d.mu.Unlock()
		d.log.Info("job ended", "job", jobID, "state", api.JobCancelled, "reason", "cancelled by a client (it was parked)")
		return d.Get(ctx, jobID)
	}
	if !ok {
		return d.Get(ctx, jobID)
	}
	d.endJob(j, api.JobCancelled, "cancelled by a client")
	return d.jobView(j, false), nil
}

// endJob moves a job to a terminal state: it stops its partitions, records
// the state, and then, in one step under d.mu, gives the job and its
// partitions their final states and sends the final event to its
// subscribers, so no observer sees the one without the other. The journal
// holds the state before that event goes out, so a client acting on the event
// (a List by state) finds the job as the event says. Only the first call has
// an effect.
func (d *Daemon) endJob(j *liveJob, state api.JobState, reason string) {
	d.mu.Lock()
	if j.ended() {
		d.mu.Unlock()
		return
	}
	j.ending = true
	d.mu.Unlock()
	// Stop in-flight proofs and dispatch first: the journal write below syncs to
	// disk, which takes hundreds of milliseconds on a slow one, and a backend
	// should not spend them finishing a proof nobody wants.
	j.cancel()

	if err := d.journal.SetJobState(j.id, state, reason); err != nil {
		d.log.Error("recording job state", "job", j.id, "state", state, "error", err)
	}
	// Drop queued partitions now; in-flight ones see the cancelled context.
	for _, it := range d.synthQ.Remove(j.seq) {
		d.releaseTask(it.Value)
	}
	for _, it := range d.readyQ.Remove(j.seq) {
		d.releaseTask(it.Value)
	}
	// The final event of a done job carries its proofs: they are read from
	// the journal here, outside the lock.
	var proofs []journal.Proof
	if state == api.JobDone {
		var err error
		proofs, err = d.storedProofs(j.id, j.circ.name)
		if errors.Is(err, journal.ErrDamaged) {
			state, reason, proofs = api.JobFailed, err.Error(), nil
			d.recordDamaged(j.id, reason)
		} else if err != nil {
			d.log.Warn("reading proofs", "job", j.id, "error", err)
		}
	}

	d.mu.Lock()
	j.state = state
	j.finished = time.Now()
	if state != api.JobDone {
		j.err = reason
		// Every unverified partition takes its job's end, by the rule the
		// journal's and the cluster's records are read back with: the live
		// view and the stored one of a job say the same. Which partition
		// failed, and why, is in its event and its error.
		for i := range j.parts {
			if j.parts[i].State != api.PartitionVerified {
				j.parts[i].State = state.RecordedPartitionState(false)
			}
		}
	}
	final := d.jobViewLocked(j)
	withProofs(&final, proofs)
	d.eventLocked(j, api.JobEvent{Kind: state.EndEvent(), Reason: reason, Job: &final})
	d.mu.Unlock()
	d.log.Info("job ended", "job", j.id, "state", state, "reason", reason)
}

// ended reports whether endJob has begun on j (or the job is over for another
// reason): its partitions change no more. The caller holds d.mu.
func (j *liveJob) ended() bool { return j.ending || j.state.Terminal() }

// forgetFinished drops finished live jobs older than cutoff from memory.
func (d *Daemon) forgetFinished(cutoff time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, j := range d.jobs {
		if j.state.Terminal() && j.finished.Before(cutoff) {
			delete(d.jobs, id)
		}
	}
}

// Await implements api.Service.
func (d *Daemon) Await(ctx context.Context, jobID string, send func(api.JobEvent) error) error {
	if err := d.checkJobCall(ctx, jobID); err != nil {
		return err
	}
	d.mu.Lock()
	j, ok := d.jobs[jobID]
	var ch chan api.JobEvent
	if ok && !j.state.Terminal() {
		ch = make(chan api.JobEvent, subscriberBuffer)
		j.subs[ch] = struct{}{}
	}
	d.mu.Unlock()
	if ch != nil {
		defer func() {
			d.mu.Lock()
			delete(j.subs, ch)
			d.mu.Unlock()
		}()
	}
	snap, err := d.Get(ctx, jobID)
	if err != nil {
		return err
	}
	noProofs := snap.WithoutOutputs()
	if err := send(api.JobEvent{JobID: jobID, Kind: api.EventSnapshot, Time: time.Now(), Job: &noProofs}); err != nil {
		return err
	}
	if ch == nil {
		// Already finished: the terminal event carries the final job.
		kind := snap.State.EndEvent()
		if kind == api.EventUnspecified {
			if why := d.parkedReason(jobID); why != "" {
				return api.Unavailablef("job %s is %s, %s", jobID, snap.State, why)
			}
			return fmt.Errorf("job %s is %s but not live in this daemon", jobID, snap.State)
		}
		return send(api.JobEvent{JobID: jobID, Kind: kind, Time: time.Now(), Reason: snap.Error, Job: &snap})
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-d.ctx.Done():
			// No more events will come; the job resumes when the daemon restarts.
			return errStopping
		case ev, open := <-ch:
			if !open {
				return api.Unavailablef("event stream of job %s fell behind by %d events; Await again", jobID, subscriberBuffer)
			}
			if err := send(ev); err != nil {
				return err
			}
			if ev.Kind.Terminal() {
				return nil
			}
		}
	}
}

// event stamps ev and delivers it to the job's subscribers.
func (d *Daemon) event(j *liveJob, ev api.JobEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.eventLocked(j, ev)
}

// eventLocked is event for a caller holding d.mu.
func (d *Daemon) eventLocked(j *liveJob, ev api.JobEvent) {
	ev.JobID = j.id
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	for ch := range j.subs {
		select {
		case ch <- ev:
		default:
			// A subscriber this far behind is cut off rather than block the pipeline.
			close(ch)
			delete(j.subs, ch)
		}
	}
}

// partitionVerified records partition idx's verified proof in the job's view,
// tells the subscribers, and reports whether that completes the job (every
// partition verified). One lock covers the three, so of several finalizers
// finishing a job's last partitions at once only the last sees it complete,
// after every partition's event went out. ev is sent as an
// EventPartitionVerified, whatever its kind.
func (d *Daemon) partitionVerified(j *liveJob, idx int, at time.Time, ev api.JobEvent) (complete bool) {
	ev.Kind = api.EventPartitionVerified
	if ev.Time.IsZero() {
		ev.Time = at
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.transitionLocked(j, idx, ev, func(p *api.Partition) { p.VerifiedAt, p.Error = at, "" }) {
		return false
	}
	for _, p := range j.parts {
		if p.State != api.PartitionVerified {
			return false
		}
	}
	return true
}

// transition moves partition idx of j to the state ev's kind leaves it in
// (api.EventKind.PartitionState), lets set change the rest of its view, and
// sends ev to the job's subscribers. Every change of a partition's state goes
// through here, under one hold of d.mu, so an observer (Get, the snapshot an
// Await starts from) never sees a state whose event has not gone out, nor an
// event whose state is not in the view yet; and the two cannot disagree.
// Once endJob has begun, it gives every partition its final state with the
// last event: a step still winding down (a proof returning after a cancel)
// changes nothing and sends nothing, and transition reports false.
func (d *Daemon) transition(j *liveJob, idx int, ev api.JobEvent, set func(p *api.Partition)) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.transitionLocked(j, idx, ev, set)
}

// transitionLocked is transition for a caller holding d.mu.
func (d *Daemon) transitionLocked(j *liveJob, idx int, ev api.JobEvent, set func(p *api.Partition)) bool {
	state := ev.Kind.PartitionState()
	if state == api.PartitionStateUnspecified {
		panic(fmt.Sprintf("daemon: partition transition on %s, which is not a partition event", ev.Kind))
	}
	if j.ended() || idx < 0 || idx >= len(j.parts) {
		return false
	}
	p := &j.parts[idx]
	p.State = state
	if set != nil {
		set(p)
	}
	ev.Partition = idx
	d.eventLocked(j, ev)
	return true
}

// updatePart changes one partition's view under the lock, but never its
// state: transition does that, with the event that says so.
func (d *Daemon) updatePart(j *liveJob, idx int, f func(p *api.Partition)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	// Once a job is ending, endJob sets every partition's final state; a
	// pipeline step still winding down (a proof returning after a cancel) must
	// not overwrite it.
	if j.ended() {
		return
	}
	if idx < 0 || idx >= len(j.parts) {
		return
	}
	p := &j.parts[idx]
	state := p.State
	f(p)
	if p.State != state {
		panic(fmt.Sprintf("daemon: partition %d's state changed from %s to %s without its event (use transition)", idx, state, p.State))
	}
}

// circuitNames returns the names of the circuits the daemon serves, sorted.
func (d *Daemon) circuitNames() []string { return slices.Sorted(maps.Keys(d.circuits)) }
