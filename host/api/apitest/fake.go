package apitest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// DefaultListLimit is the number of jobs Fake.List returns when the filter sets no limit.
const DefaultListLimit = 50

// Fake is an in-memory api.Service. The zero value is not usable; call NewFake.
type Fake struct {
	// Circuits, when non-nil, lists the circuits Submit accepts; others are InvalidArgument.
	Circuits map[string]bool
	// BudgetLimit, when non-zero, makes Submit refuse (TooLarge) a job whose witnesses
	// total more bytes, standing in for the daemon's memory estimate.
	BudgetLimit uint64
	// InputSize, when non-zero, is the size CheckSubmit holds every streamed
	// input's declared size to, standing in for the circuit's expected size.
	InputSize int64
	// StreamBudget, when non-zero, is the memory AdmitStream grants streams
	// together: a stream whose declared bytes do not fit beside the others
	// is refused (TooLarge), standing in for the daemon's budget.
	StreamBudget uint64
	// Report is what Status returns (KeysResident filled in from PreloadKey/EvictKey).
	Report api.StatusReport
	// OnSubmit, when set, runs in its own goroutine after Submit creates a job, so a test
	// can drive the job while the client waits on it.
	OnSubmit func(jobID string)

	mu     sync.Mutex
	jobs   map[string]*fakeJob
	order  []string            // job ids, oldest first
	byReq  map[string]string   // request id -> job id
	keys   map[string][]string // device -> circuits resident
	cancel int                 // Await calls that ended by the client going away
	held   uint64              // bytes AdmitStream granted and not yet released
	wake   chan struct{}       // closed and replaced on every change, for WaitSubscribers
}

type fakeJob struct {
	job    api.Job
	req    api.SubmitRequest
	digest [32]byte
	subs   map[chan api.JobEvent]struct{}
}

// NewFake returns a Fake whose Status reports the given devices.
func NewFake(devices ...string) *Fake {
	f := &Fake{
		jobs:  make(map[string]*fakeJob),
		byReq: make(map[string]string),
		keys:  make(map[string][]string),
		wake:  make(chan struct{}),
	}
	for _, d := range devices {
		f.Report.Devices = append(f.Report.Devices, api.DeviceStatus{Name: d, Backend: "fake", Kind: "cpu", Healthy: true, MaxInFlight: 2})
		f.keys[d] = nil
	}
	return f
}

// changed wakes WaitSubscribers; the caller holds f.mu.
func (f *Fake) changed() {
	close(f.wake)
	f.wake = make(chan struct{})
}

// CheckSubmit implements api.Service: the circuit must be known and every
// declared size InputSize (when set).
func (f *Fake) CheckSubmit(_ context.Context, h api.SubmitHeader) error {
	if f.Circuits != nil && !f.Circuits[h.Circuit] {
		return api.InvalidArgumentf("unknown circuit %q", h.Circuit)
	}
	for i, n := range h.InputSizes {
		if f.InputSize != 0 && n != f.InputSize {
			return api.InvalidArgumentf("%s %d is declared as %d bytes, want %d", h.Noun(), i, n, f.InputSize)
		}
	}
	return nil
}

// AdmitStream implements api.Service: it counts the declared bytes as held
// until release (StreamHeld reports them), refusing what StreamBudget has no
// room for.
func (f *Fake) AdmitStream(_ context.Context, h api.SubmitHeader) (func(), error) {
	var total uint64
	for _, n := range h.InputSizes {
		total += uint64(n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.StreamBudget != 0 && f.held+total > f.StreamBudget {
		return nil, api.TooLarge(fmt.Sprintf("streamed input of circuit %q", h.Circuit), total, f.StreamBudget-f.held)
	}
	f.held += total
	f.changed()
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.held -= total
			f.changed()
		})
	}, nil
}

// StreamHeld returns the bytes AdmitStream granted that are not yet released.
func (f *Fake) StreamHeld() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held
}

// WaitStreamHeld waits until the bytes AdmitStream holds are n.
func (f *Fake) WaitStreamHeld(ctx context.Context, n uint64) error {
	return f.waitFor(ctx, func() bool { return f.held == n })
}

// Submit implements api.Service.
func (f *Fake) Submit(_ context.Context, req api.SubmitRequest) (api.Job, error) {
	if err := req.Validate(); err != nil {
		return api.Job{}, err
	}
	if f.Circuits != nil && !f.Circuits[req.Circuit] {
		return api.Job{}, api.InvalidArgumentf("unknown circuit %q", req.Circuit)
	}
	inputs, _ := req.Inputs()
	var total uint64
	for _, w := range inputs {
		total += uint64(len(w))
	}
	if f.BudgetLimit != 0 && total > f.BudgetLimit {
		return api.Job{}, api.TooLarge(fmt.Sprintf("job of circuit %q", req.Circuit), total, f.BudgetLimit)
	}
	digest := req.Digest()

	f.mu.Lock()
	if req.RequestID != "" {
		if id, ok := f.byReq[req.RequestID]; ok {
			fj := f.jobs[id]
			f.mu.Unlock()
			if fj.digest != digest {
				return api.Job{}, api.Conflictf("request id %q was used for job %s with different content", req.RequestID, id)
			}
			return fj.job, nil
		}
	}
	id := fmt.Sprintf("job-%d", len(f.order)+1)
	now := time.Now()
	job := api.Job{
		ID: id, RequestID: req.RequestID, Circuit: req.Circuit, Class: req.Class.OrNormal(),
		State: api.JobQueued, CreatedAt: now,
	}
	for i := range inputs {
		job.Partitions = append(job.Partitions, api.Partition{Index: i, State: api.PartitionQueued, QueuedAt: now})
	}
	fj := &fakeJob{job: job, req: req, digest: digest, subs: make(map[chan api.JobEvent]struct{})}
	// The fake "proof" of a partition is a digest of its witness, so a test can check
	// that each output file holds its own partition's bytes.
	for i, w := range inputs {
		sum := sha256.Sum256(w)
		fj.job.Partitions[i].Proof = append([]byte("proof:"), sum[:]...)
		fj.job.Partitions[i].PublicWitness = append([]byte("public:"), w[:min(len(w), 8)]...)
	}
	f.jobs[id] = fj
	f.order = append(f.order, id)
	if req.RequestID != "" {
		f.byReq[req.RequestID] = id
	}
	f.changed()
	out := publicView(fj.job)
	f.mu.Unlock()
	if f.OnSubmit != nil {
		go f.OnSubmit(id)
	}
	return out, nil
}

// Request returns the request that created job id.
func (f *Fake) Request(id string) (api.SubmitRequest, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fj, ok := f.jobs[id]
	if !ok {
		return api.SubmitRequest{}, false
	}
	return fj.req, true
}

// publicView hides the outputs the fake prepared at Submit until the job is done.
func publicView(j api.Job) api.Job {
	if j.State == api.JobDone {
		return j
	}
	return j.WithoutOutputs()
}

// Await implements api.Service.
func (f *Fake) Await(ctx context.Context, jobID string, send func(api.JobEvent) error) error {
	f.mu.Lock()
	fj, ok := f.jobs[jobID]
	if !ok {
		f.mu.Unlock()
		return api.NotFoundf("no job %q", jobID)
	}
	snap := fj.job.WithoutOutputs()
	var final *api.JobEvent
	ch := make(chan api.JobEvent, 256)
	if fj.job.State.Terminal() {
		j := publicView(fj.job)
		final = &api.JobEvent{JobID: jobID, Kind: j.State.EndEvent(), Time: j.FinishedAt, Job: &j}
	} else {
		fj.subs[ch] = struct{}{}
		f.changed()
	}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(fj.subs, ch)
		f.mu.Unlock()
	}()

	// cancelled ends an Await whose client went away: unsubscribe and count
	// under one lock, so a test that saw the count never sees this Await as
	// still subscribed. A client may go away before a send as well as during
	// the wait (a cancel right after subscribing can beat the snapshot), and
	// both count.
	cancelled := func(err error) error {
		if ctx.Err() == nil {
			return err
		}
		f.mu.Lock()
		delete(fj.subs, ch)
		f.cancel++
		f.changed()
		f.mu.Unlock()
		return ctx.Err()
	}
	if err := send(api.JobEvent{JobID: jobID, Kind: api.EventSnapshot, Time: time.Now(), Job: &snap}); err != nil {
		return cancelled(err)
	}
	if final != nil {
		return send(*final)
	}
	for {
		select {
		case <-ctx.Done():
			return cancelled(ctx.Err())
		case e := <-ch:
			if err := send(e); err != nil {
				return cancelled(err)
			}
			if e.Kind.Terminal() {
				return nil
			}
		}
	}
}

// Get implements api.Service.
func (f *Fake) Get(_ context.Context, jobID string) (api.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fj, ok := f.jobs[jobID]
	if !ok {
		return api.Job{}, api.NotFoundf("no job %q", jobID)
	}
	return publicView(fj.job), nil
}

// Cancel implements api.Service.
func (f *Fake) Cancel(_ context.Context, jobID string) (api.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fj, ok := f.jobs[jobID]
	if !ok {
		return api.Job{}, api.NotFoundf("no job %q", jobID)
	}
	if fj.job.State.Terminal() {
		return publicView(fj.job), nil
	}
	fj.job.State = api.JobCancelled
	fj.job.FinishedAt = time.Now()
	for i := range fj.job.Partitions {
		if fj.job.Partitions[i].State != api.PartitionVerified {
			fj.job.Partitions[i].State = api.PartitionCancelled
		}
	}
	j := publicView(fj.job)
	if err := f.publish(fj, api.JobEvent{JobID: jobID, Kind: api.EventJobCancelled, Time: j.FinishedAt, Job: &j}); err != nil {
		return api.Job{}, err
	}
	return j, nil
}

// List implements api.Service.
func (f *Fake) List(_ context.Context, filter api.ListFilter) ([]api.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	limit := filter.Limit
	if limit == 0 {
		limit = DefaultListLimit
	}
	var out []api.Job
	for i := len(f.order) - 1; i >= 0 && len(out) < limit; i-- {
		j := f.jobs[f.order[i]].job
		if filter.State == api.JobStateUnspecified || filter.State == j.State {
			out = append(out, publicView(j))
		}
	}
	return out, nil
}

// Status implements api.Service.
func (f *Fake) Status(context.Context) (api.StatusReport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.Report
	r.Devices = slices.Clone(r.Devices)
	for i := range r.Devices {
		r.Devices[i].KeysResident = slices.Clone(f.keys[r.Devices[i].Name])
	}
	if r.Queues == nil {
		for _, c := range api.Classes {
			q := api.ClassQueue{Class: c}
			for _, fj := range f.jobs {
				if fj.job.Class != c || fj.job.State.Terminal() {
					continue
				}
				if n := fj.job.Count(api.PartitionQueued); n > 0 {
					q.Jobs++
					q.Partitions += n
				}
			}
			r.Queues = append(r.Queues, q)
		}
	}
	return r, nil
}

// EnableDevice implements api.Service: it marks the named device of Report healthy.
func (f *Fake) EnableDevice(_ context.Context, device string) (api.DeviceStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.Report.Devices {
		if f.Report.Devices[i].Name == device {
			f.Report.Devices[i].Healthy = true
			f.Report.Devices[i].Error = ""
			return f.Report.Devices[i], nil
		}
	}
	return api.DeviceStatus{}, api.NotFoundf("no device %q", device)
}

// PreloadKey implements api.Service.
func (f *Fake) PreloadKey(_ context.Context, circuit, device string) ([]string, error) {
	return f.keyOp(circuit, device, func(keys []string) []string {
		if slices.Contains(keys, circuit) {
			return keys
		}
		return append(keys, circuit)
	})
}

// EvictKey implements api.Service.
func (f *Fake) EvictKey(_ context.Context, circuit, device string) ([]string, error) {
	return f.keyOp(circuit, device, func(keys []string) []string {
		return slices.DeleteFunc(keys, func(k string) bool { return k == circuit })
	})
}

func (f *Fake) keyOp(circuit, device string, op func([]string) []string) ([]string, error) {
	if f.Circuits != nil && !f.Circuits[circuit] {
		return nil, api.InvalidArgumentf("unknown circuit %q", circuit)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var devices []string
	for _, d := range f.Report.Devices {
		if device == "" || device == d.Name {
			devices = append(devices, d.Name)
		}
	}
	if len(devices) == 0 {
		return nil, api.NotFoundf("no device %q", device)
	}
	for _, d := range devices {
		f.keys[d] = op(f.keys[d])
	}
	return devices, nil
}

// publish hands e to every Await of the job. The caller holds f.mu.
func (f *Fake) publish(fj *fakeJob, e api.JobEvent) error {
	f.changed()
	for ch := range fj.subs {
		select {
		case ch <- e:
		default:
			return fmt.Errorf("apitest: an Await of job %s has %d events unread; the test drives faster than its client reads", e.JobID, cap(ch))
		}
	}
	return nil
}

// Advance moves a partition to the state a partition event kind implies and publishes
// the event (reason for retried and failed, device for proving and after).
func (f *Fake) Advance(jobID string, partition int, kind api.EventKind, device, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fj, err := f.liveJob(jobID)
	if err != nil {
		return err
	}
	if partition < 0 || partition >= len(fj.job.Partitions) {
		return fmt.Errorf("apitest: job %s has no partition %d", jobID, partition)
	}
	state := kind.PartitionState()
	if state == api.PartitionStateUnspecified {
		return fmt.Errorf("apitest: %s is not a partition event", kind)
	}
	p := &fj.job.Partitions[partition]
	p.State = state
	now := time.Now()
	switch kind {
	case api.EventPartitionQueued:
		p.QueuedAt = now
	case api.EventPartitionSynthesizing:
		p.SynthStart = now
	case api.EventPartitionProving:
		p.SynthEnd, p.ProveStart = now, now
		p.Attempts++
	case api.EventPartitionVerified:
		p.ProveEnd, p.VerifiedAt = now, now
	case api.EventPartitionRetried:
		p.Error, p.QueuedAt = reason, now
	case api.EventPartitionFailed:
		p.Error = reason
	}
	if device != "" {
		p.Device = device
	}
	if fj.job.State == api.JobQueued && kind != api.EventPartitionQueued {
		fj.job.State, fj.job.StartedAt = api.JobRunning, now
	}
	return f.publish(fj, api.JobEvent{JobID: jobID, Kind: kind, Time: now, Partition: partition,
		Attempt: p.Attempts, Device: p.Device, Reason: reason})
}

// liveJob returns the job that Advance or end may change: one that exists and has
// not ended. The caller holds f.mu.
func (f *Fake) liveJob(jobID string) (*fakeJob, error) {
	fj, ok := f.jobs[jobID]
	if !ok {
		return nil, fmt.Errorf("apitest: no job %q", jobID)
	}
	if fj.job.State.Terminal() {
		return nil, fmt.Errorf("apitest: job %s has ended (%s)", jobID, fj.job.State)
	}
	return fj, nil
}

// Finish runs every unverified partition through synthesizing, proving (on device) and
// verified, then ends the job done and publishes the terminal event with the proofs.
func (f *Fake) Finish(jobID, device string) error {
	f.mu.Lock()
	fj, ok := f.jobs[jobID]
	var todo []int
	if ok {
		for i, p := range fj.job.Partitions {
			if p.State != api.PartitionVerified {
				todo = append(todo, i)
			}
		}
	}
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("apitest: no job %q", jobID)
	}
	for _, i := range todo {
		for _, k := range []api.EventKind{api.EventPartitionSynthesizing, api.EventPartitionProving, api.EventPartitionVerified} {
			if err := f.Advance(jobID, i, k, device, ""); err != nil {
				return err
			}
		}
	}
	return f.end(jobID, api.JobDone, "")
}

// Fail ends the job failed with reason and publishes the terminal event.
func (f *Fake) Fail(jobID, reason string) error { return f.end(jobID, api.JobFailed, reason) }

func (f *Fake) end(jobID string, state api.JobState, reason string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	fj, err := f.liveJob(jobID)
	if err != nil {
		return err
	}
	fj.job.State, fj.job.Error, fj.job.FinishedAt = state, reason, time.Now()
	j := publicView(fj.job)
	return f.publish(fj, api.JobEvent{JobID: jobID, Kind: state.EndEvent(), Time: j.FinishedAt, Reason: reason, Job: &j})
}

// WaitSubscribers waits until the job has at least n Await calls in progress.
func (f *Fake) WaitSubscribers(ctx context.Context, jobID string, n int) error {
	return f.waitFor(ctx, func() bool {
		fj, ok := f.jobs[jobID]
		return ok && len(fj.subs) >= n
	})
}

// WaitAwaitCancelled waits until n Await calls have ended because their client went away.
func (f *Fake) WaitAwaitCancelled(ctx context.Context, n int) error {
	return f.waitFor(ctx, func() bool { return f.cancel >= n })
}

func (f *Fake) waitFor(ctx context.Context, cond func() bool) error {
	for {
		f.mu.Lock()
		ok, wake := cond(), f.wake
		f.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
